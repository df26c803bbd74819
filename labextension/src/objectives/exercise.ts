/**
 * A troubleshooting exercise as the student reads it in the Objectives panel: its state
 * (going since when, or ended), its symptom (the objectives that fail because of it) and
 * the grade of the latest check (`CheckSummary.exercise`, `ExerciseView.grade`), and what
 * a give-up tells (`GiveUpAnswer`). The same words as the `%copilot exercise` magics
 * (`notebook/subcommands/lab.py`). Pure functions: the panel draws what they return.
 */
import type { ExerciseGrade, ExerciseView, GiveUpAnswer } from '../generated/answers';

export type { ExerciseGrade, ExerciseView, GiveUpAnswer, SymptomView } from '../generated/answers';
export type { ExerciseRequest } from '../generated/requests';

export type GradeTone = 'success' | 'warn' | 'info';

/** A grade as one headline and its details (objective ids replaced by their text when
 * `textOf` knows them). */
export interface GradeWords {
  headline: string;
  tone: GradeTone;
  details: string[];
}

/** `0.5 min`, `4.2 min`: the magics' unit. */
export function minutes(seconds: number): string {
  return `${(seconds / 60).toFixed(1)} min`;
}

/** `1 copilot model call`, `3 copilot model calls`. */
export function calls(count: number): string {
  return `${count} copilot model ${count === 1 ? 'call' : 'calls'}`;
}

/** `19:05`: the local time of an ISO timestamp (the server's UTC one). */
export function clockTime(iso: string): string {
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) {
    return iso;
  }
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${pad(at.getHours())}:${pad(at.getMinutes())}`;
}

/** Whether the exercise is going (`Exercise going since 19:05`) or over. */
export function stateText(view: ExerciseView): string {
  const since = clockTime(view.started_at);
  if (view.active) {
    return `Exercise going since ${since}: something in your lab is broken. These objectives fail because of it:`;
  }
  return `Your last exercise (started at ${since}) is over. What it broke:`;
}

/** The grade of a check as the student reads it: solved, or what still fails and what
 * broke since it began, with the time taken and the copilot's model calls. */
export function gradeWords(grade: ExerciseGrade, textOf: (id: string) => string = id => id): GradeWords {
  const cost = `${minutes(grade.seconds)}, ${calls(grade.copilot_calls)}`;
  if (grade.done) {
    return { headline: `Exercise solved: fixed with no regressions in ${cost}.`, tone: 'success', details: [] };
  }
  const details = [
    ...grade.still_failing.map(id => `Still failing: ${textOf(id)}`),
    ...grade.regressions.map(id => `Broken since the exercise began: ${textOf(id)}`)
  ];
  const what = grade.fixed
    ? 'what the fault broke passes again, but something that passed before fails now'
    : 'not fixed yet';
  return { headline: `Exercise not solved: ${what} (${cost} so far).`, tone: 'warn', details };
}

/** What a give-up tells: the fault, what a diagnosis had to name, and what is left to
 * set back by hand. */
export function giveUpLines(answer: GiveUpAnswer): string[] {
  const where = answer.interface ? ` (${answer.interface})` : '';
  const lines = [
    `The fault: ${answer.description}`,
    `A diagnosis names ${answer.device}${where}: ${answer.cause}.`,
    'It was taken out: the devices it changed are restarting with the configuration saved when the exercise started. Check again in a few seconds.'
  ];
  if (answer.not_undone.length) {
    lines.push(`Still to undo by hand: ${answer.not_undone.join('; ')}.`);
  }
  return lines;
}
