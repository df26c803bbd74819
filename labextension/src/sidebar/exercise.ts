/**
 * The Objectives panel's troubleshooting exercise, for a lab whose file has faults:
 * "Start an exercise" (`POST .../lab/exercises` with `{random: true}`: one fault drawn
 * for the student), then its state (going since when), its symptom (the objectives that
 * fail because of it; never which fault it is), the grade of each check the panel runs
 * (`gradeWords`), and "Give up…" (asks first) with the fault's description and cause the
 * answer tells. A refusal (409 "Finish the lab first: ...") is said in the section as
 * the server words it. The latest exercise is read again
 * (`GET .../lab/exercises/current`) each time the panel shows the project; a 409 there
 * (a server that offers no exercises) hides the section. In a class's hub the same
 * routes reach the hub service, which runs the exercise.
 */
import { ApiError, type CopilotApi } from '../api';
import { h } from '../dom';
import { withInlineMarkdown } from '../markdown';
import { type ExerciseGrade, type ExerciseView, type GiveUpAnswer, giveUpLines, gradeWords, stateText } from '../objectives/exercise';
import { message } from './notice';

export interface ExerciseOptions {
  api: CopilotApi;
  /** Ask the person to confirm giving up (true: go ahead). */
  confirmGiveUp: () => Promise<boolean>;
  /** True when `error` closed the whole sidebar (it said why). */
  closedBy?: (error: unknown) => boolean;
  /** The lab's objective text for an id (the grade names objectives by id). */
  textOf: (id: string) => string;
  /** The section starts or ends a call that changes the lab (true) or is done (false):
   * the panel's checks wait meanwhile. */
  busy: (busy: boolean) => void;
  /** The devices changed (a fault put in or taken out): the panel reads the lab again. */
  changed: () => Promise<void>;
}

export class ExerciseSection {
  readonly node: HTMLElement;
  private projectId: string | null = null;
  private available = false;
  private view: ExerciseView | null = null;
  private answer: GiveUpAnswer | null = null;
  private error = '';
  private working: string | null = null;
  private disabled = false;
  private loads = 0;

  constructor(private readonly options: ExerciseOptions) {
    this.node = h('section', { class: 'jp-gns3-copilot-sidebar-exercise', hidden: true, 'aria-label': 'Troubleshooting exercise' });
  }

  /** Show `projectId`'s latest exercise; `available`: the lab has faults. */
  async show(projectId: string | null, available: boolean): Promise<void> {
    if (projectId !== this.projectId) {
      this.projectId = projectId;
      this.view = null;
      this.answer = null;
      this.error = '';
      this.working = null;
    }
    this.available = available;
    this.draw();
    if (!projectId || !available) {
      return;
    }
    const load = ++this.loads;
    try {
      const view = await this.options.api.exercise(projectId);
      if (load === this.loads && projectId === this.projectId) {
        this.view = view;
      }
    } catch (error) {
      const status = error instanceof ApiError ? error.status : 0;
      if (load === this.loads && projectId === this.projectId) {
        if (status === 409) {
          this.available = false; // this server offers no exercises
        } else if (status !== 404) {
          this.fail(error); // 404: none started yet
        }
      }
    }
    this.draw();
  }

  /** The grade of a check the panel ran (its summary's `exercise`). */
  graded(grade: ExerciseGrade): void {
    if (this.view) {
      this.view = { ...this.view, grade, active: this.view.active && !grade.done };
      this.draw();
    }
  }

  /** Whether the panel is busy (its check running): the buttons wait. */
  setDisabled(disabled: boolean): void {
    this.disabled = disabled;
    this.draw();
  }

  /** Start an exercise with a fault drawn for the student. */
  async start(): Promise<void> {
    await this.run('Breaking something in your lab and checking what fails… this takes a minute.', async projectId => {
      this.view = await this.options.api.startExercise(projectId, { random: true });
      this.answer = null;
    });
  }

  /** Give up the exercise going, once the person confirms: what the fault was. */
  async giveUp(): Promise<void> {
    if (!this.projectId || this.working || !(await this.options.confirmGiveUp())) {
      return;
    }
    await this.run('Taking the fault out…', async projectId => {
      this.answer = await this.options.api.giveUp(projectId);
      this.view = this.view && { ...this.view, active: false };
    });
  }

  private async run(working: string, call: (projectId: string) => Promise<void>): Promise<void> {
    const projectId = this.projectId;
    if (!projectId || this.working || this.disabled) {
      return;
    }
    this.working = working;
    this.error = '';
    this.draw();
    this.options.busy(true);
    try {
      await call(projectId);
      if (this.projectId === projectId) {
        await this.options.changed();
      }
    } catch (error) {
      if (this.projectId === projectId) {
        this.fail(error);
      }
    } finally {
      this.options.busy(false);
      if (this.projectId === projectId) {
        this.working = null;
        this.draw();
      }
    }
  }

  private fail(error: unknown): void {
    if (!this.options.closedBy?.(error)) {
      this.error = message(error);
    }
  }

  private draw(): void {
    const view = this.view;
    this.node.hidden = !this.projectId || (!this.available && !view);
    if (this.node.hidden) {
      this.node.replaceChildren();
      return;
    }
    this.node.dataset.state = this.working ? 'working' : view?.active ? 'active' : view ? 'ended' : 'none';
    const going = Boolean(view?.active);
    const button = going
      ? this.button('give-up', 'Give up…', 'Stop this exercise: see what the fault was, and take it out (asks first)', () => void this.giveUp())
      : this.button('start', 'Start an exercise', 'Break one thing in your working lab for you to find and fix', () => void this.start());
    const parts: Node[] = [
      h('div', { class: 'jp-gns3-copilot-sidebar-exercise-head' }, h('span', { class: 'jp-gns3-copilot-sidebar-exercise-title', text: 'Troubleshooting exercise' }), button)
    ];
    if (view) {
      parts.push(
        h('p', { class: 'jp-gns3-copilot-sidebar-exercise-state', text: stateText(view) }),
        h(
          'ul',
          { class: 'jp-gns3-copilot-sidebar-exercise-symptom' },
          ...view.symptom.map(o => withInlineMarkdown(h('li', { 'data-objective': o.id }), o.text))
        )
      );
      if (view.grade) {
        const words = gradeWords(view.grade, this.options.textOf);
        parts.push(
          h(
            'div',
            { class: 'jp-gns3-copilot-sidebar-exercise-grade', 'data-tone': words.tone },
            h('p', { text: words.headline }),
            words.details.length ? h('ul', {}, ...words.details.map(text => h('li', { text }))) : null
          )
        );
      } else if (going) {
        parts.push(h('p', { class: 'jp-gns3-copilot-sidebar-exercise-hint', text: 'Find and fix the problem, then check: the check grades the exercise.' }));
      }
    }
    if (this.answer) {
      parts.push(h('div', { class: 'jp-gns3-copilot-sidebar-exercise-answer' }, ...giveUpLines(this.answer).map(text => h('p', { text }))));
    }
    if (this.working) {
      parts.push(h('p', { class: 'jp-gns3-copilot-sidebar-exercise-working', role: 'status', text: this.working }));
    }
    if (this.error) {
      parts.push(h('p', { class: 'jp-gns3-copilot-sidebar-exercise-error', role: 'alert', text: this.error }));
    }
    this.node.replaceChildren(...parts);
  }

  private button(key: string, text: string, title: string, click: () => void): HTMLButtonElement {
    const button = h('button', {
      class: `jp-gns3-copilot-sidebar-exercise-${key}`,
      'data-key': `exercise-${key}`,
      text,
      title,
      disabled: this.disabled || this.working !== null
    });
    button.addEventListener('click', click);
    return button;
  }
}
