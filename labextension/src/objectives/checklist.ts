/**
 * The checklist every front end draws (`ChecklistView`): the objectives grouped by stage,
 * each with its state and, once decided, its result. Built from a `%copilot check`
 * output (`fromBundle`, saved in the notebook) or from the lab route's `LabView` and the
 * last results known (`fromLab`, the sidebar); a check's stream fills it in
 * (`startChecking`, then `applyCheckEvent` per event). Pure functions: each returns a new
 * checklist and leaves its argument alone.
 */
import type { ChatEvent } from '../events';
import type { ChecksBundle, CheckStatus, CheckSummary, LabView, ObjectiveResult } from './types';

/** `pending`: being checked; `unchecked`: no result yet (the sidebar, before a check). */
export type ObjectiveState = CheckStatus | 'pending' | 'unchecked';

export interface ChecklistObjective {
  id: string;
  text: string;
  /** Null when unknown (a pending objective of an older saved checklist). */
  points: number | null;
  state: ObjectiveState;
  result: ObjectiveResult | null;
}

export interface ChecklistStage {
  id: string;
  title: string;
  /** The stage names a snapshot to catch up to (known from the lab route only). */
  catchUp: boolean;
  /** The stage the student works on (known from the lab route only). */
  current?: boolean;
  objectives: ChecklistObjective[];
}

export interface Checklist {
  title: string;
  stages: ChecklistStage[];
  /** The score the server sent at the end of the last check (null while one runs). */
  summary: CheckSummary | null;
}

/** A stage's (or the whole list's) score over its decided objectives. `decided`: no
 * objective is pending or unchecked; `passed`: decided, and every objective passed. */
export interface Score {
  score: number;
  maxScore: number;
  decided: boolean;
  passed: boolean;
  counts: Record<ObjectiveState, number>;
}

function objectiveOf(result: ObjectiveResult): ChecklistObjective {
  return { id: result.id, text: result.text, points: result.points, state: result.status, result };
}

function isBundle(value: unknown): value is ChecksBundle {
  const bundle = value as ChecksBundle;
  return (
    !!bundle &&
    typeof bundle === 'object' &&
    Array.isArray(bundle.results) &&
    Array.isArray(bundle.pending) &&
    bundle.results.every(r => !!r && typeof r.id === 'string' && typeof r.stage === 'string') &&
    bundle.pending.every(p => !!p && typeof p.id === 'string' && typeof p.stage === 'string')
  );
}

/**
 * The checklist of a `%copilot check` output; null when `bundle` is not one. Its outline
 * (`stages`) gives the stages' titles and the lab's order; without one (an older output)
 * the stages come in the order they appear, titled from the summary or by their id.
 */
export function fromBundle(bundle: unknown): Checklist | null {
  if (!isBundle(bundle)) {
    return null;
  }
  const objectives = new Map<string, { stage: string; objective: ChecklistObjective }>();
  for (const result of bundle.results) {
    objectives.set(result.id, { stage: result.stage, objective: objectiveOf(result) });
  }
  for (const pending of bundle.pending) {
    if (!objectives.has(pending.id)) {
      const objective = { id: pending.id, text: pending.text, points: pending.points ?? null, state: 'pending' as const, result: null };
      objectives.set(pending.id, { stage: pending.stage, objective });
    }
  }
  const titles = new Map((bundle.summary?.stages ?? []).map(s => [s.id, s.title]));
  const outline = Array.isArray(bundle.stages) ? bundle.stages : [];
  const stages: ChecklistStage[] = outline.map(s => ({
    id: s.id,
    title: s.title || titles.get(s.id) || s.id,
    catchUp: false,
    objectives: (s.objectives ?? []).flatMap(id => {
      const entry = objectives.get(id);
      objectives.delete(id);
      return entry ? [entry.objective] : [];
    })
  }));
  // Whatever the outline does not name (or all, without one), by stage in order of appearance.
  for (const { stage, objective } of objectives.values()) {
    let group = stages.find(s => s.id === stage);
    if (!group) {
      group = { id: stage, title: titles.get(stage) || stage, catchUp: false, objectives: [] };
      stages.push(group);
    }
    group.objectives.push(objective);
  }
  return {
    title: typeof bundle.title === 'string' ? bundle.title : '',
    stages: stages.filter(s => s.objectives.length),
    summary: bundle.summary ?? null
  };
}

/**
 * The lab's objectives, each in the state of the student's latest check (the lab route's
 * `status`, wherever the check ran), with its full result when `results` (the checks
 * seen here) has one of that same status; unchecked when neither tells.
 */
export function fromLab(lab: LabView, results: Iterable<ObjectiveResult> = []): Checklist {
  const known = new Map([...results].map(r => [r.id, r]));
  return {
    title: lab.title,
    summary: null,
    stages: lab.stages.map(stage => ({
      id: stage.id,
      title: stage.title,
      catchUp: stage.catch_up,
      current: stage.id === lab.current_stage,
      objectives: stage.objectives.map(o => {
        const result = known.get(o.id);
        if (result && (!o.status || o.status === result.status)) {
          return { ...objectiveOf(result), text: o.text, points: o.points };
        }
        return { id: o.id, text: o.text, points: o.points, state: o.status ?? ('unchecked' as const), result: null };
      })
    }))
  };
}

/**
 * `list` brought up to `view`, the lab as the server has it now (a check ran elsewhere, a
 * stage was chosen): each objective in the view's state, keeping its result (from `list`,
 * else `results`) where that has the same status; the view's current stage; the score of
 * the last check here only while no objective's state changed.
 */
export function followLab(list: Checklist | null, view: LabView, results: Iterable<ObjectiveResult> = []): Checklist {
  const fresh = fromLab(view, [...results, ...(list ? resultsOf(list) : [])]);
  const states = (l: Checklist) => l.stages.flatMap(s => s.objectives.map(o => `${o.id}:${o.state}`)).join(' ');
  return { ...fresh, summary: list && states(list) === states(fresh) ? list.summary : null };
}

/** `list` with `stage` as the stage the student works on. */
export function withCurrentStage(list: Checklist, stage: string | null | undefined): Checklist {
  return { ...list, stages: list.stages.map(s => ({ ...s, current: s.id === stage })) };
}

/** The objectives of `stage` (null: all) marked as being checked (their earlier results
 * dropped). */
export function startChecking(list: Checklist, stage: string | null = null): Checklist {
  return {
    ...list,
    summary: null,
    stages: list.stages.map(s =>
      stage !== null && s.id !== stage
        ? s
        : { ...s, objectives: s.objectives.map(o => ({ ...o, state: 'pending' as const, result: null })) }
    )
  };
}

/** One event of a check's stream applied: `check_result` decides its objective (one the
 * list does not have joins its stage, or a new stage), `check_summary` sets the score.
 * Other events leave the list as it is. */
export function applyCheckEvent(list: Checklist, event: ChatEvent): Checklist {
  if (event.type === 'check_summary') {
    return { ...list, summary: event.summary };
  }
  if (event.type !== 'check_result') {
    return list;
  }
  const result = event.result;
  let found = false;
  const stages = list.stages.map(stage => ({
    ...stage,
    objectives: stage.objectives.map(o => {
      if (o.id !== result.id) {
        return o;
      }
      found = true;
      return { ...objectiveOf(result), points: result.points };
    })
  }));
  if (!found) {
    const at = stages.findIndex(s => s.id === result.stage);
    if (at >= 0) {
      stages[at] = { ...stages[at], objectives: [...stages[at].objectives, objectiveOf(result)] };
    } else {
      const title = list.summary?.stages.find(s => s.id === result.stage)?.title ?? result.stage;
      stages.push({ id: result.stage, title, catchUp: false, objectives: [objectiveOf(result)] });
    }
  }
  return { ...list, stages };
}

/** Objectives still being checked become unchecked (a check that ended early: stopped,
 * refused, or the connection lost). */
export function endChecking(list: Checklist): Checklist {
  return {
    ...list,
    stages: list.stages.map(s => ({
      ...s,
      objectives: s.objectives.map(o => (o.state === 'pending' ? { ...o, state: 'unchecked' as const } : o))
    }))
  };
}

/** The results `list` holds (decided objectives), in its order. */
export function resultsOf(list: Checklist): ObjectiveResult[] {
  return list.stages.flatMap(s => s.objectives.flatMap(o => (o.result ? [o.result] : [])));
}

/** The points `objective` was awarded: its result's, else all of them when it passed
 * (a status known without its result), else none. */
export function pointsAwarded(objective: ChecklistObjective): number {
  return objective.result?.points_awarded ?? (objective.state === 'pass' ? (objective.points ?? 0) : 0);
}

/** The score of `objectives`: points awarded over the points of them all. */
export function scoreOf(objectives: readonly ChecklistObjective[]): Score {
  const counts: Record<ObjectiveState, number> = { pass: 0, fail: 0, error: 0, pending: 0, unchecked: 0 };
  let score = 0;
  let maxScore = 0;
  for (const o of objectives) {
    counts[o.state] += 1;
    maxScore += o.result?.points ?? o.points ?? 0;
    score += pointsAwarded(o);
  }
  const decided = objectives.length > 0 && counts.pending === 0 && counts.unchecked === 0;
  return { score, maxScore, decided, passed: decided && counts.pass === objectives.length, counts };
}

/** The score of the whole list. */
export function totalScore(list: Checklist): Score {
  return scoreOf(list.stages.flatMap(s => s.objectives));
}

/** Points as the kernel writes them (`1`, `2.5`). */
export function formatPoints(value: number): string {
  return String(Math.round(value * 100) / 100);
}
