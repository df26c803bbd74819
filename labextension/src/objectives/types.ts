/**
 * Lab objectives as the server and the kernel send them, field for field: the lab as a
 * student sees it (`objectives/view.py` `LabView`), each objective checked and the score
 * (`objectives/results.py`: generated with the events, `src/generated/events.ts`), a
 * catch-up done (`server/responses.py` `CatchUpDone`), and the checklist a
 * `%copilot check` cell keeps (`notebook/lab_report.py` `Checklist`).
 */

import type { CheckSummary, ObjectiveResult } from '../generated/events';

/** The MIME type of a `%copilot check` output: `ChecksBundle` as JSON. */
export const CHECKS_MIME_TYPE = 'application/vnd.gns3-copilot.checks+json';

export type { CheckSummary, Evidence, ObjectiveResult, StageScore } from '../generated/events';

/** `error`: the check could not be decided (a node stopped, a console unreachable). */
export type CheckStatus = ObjectiveResult['status'];

/** The answer of a check that is not streamed (`"stream": false`). */
export interface CheckReport extends CheckSummary {
  results: ObjectiveResult[];
}

export type HintPolicy = 'nudge' | 'explain' | 'off';

export interface ObjectiveView {
  id: string;
  text: string;
  points: number;
  /** The student's latest check of it, wherever it ran (null: not checked, or not
   * since a catch-up). */
  status?: CheckStatus | null;
}

export interface StageView {
  id: string;
  title: string;
  hints: HintPolicy;
  /** Whether the stage names a snapshot to catch up to. */
  catch_up: boolean;
  objectives: ObjectiveView[];
}

/** `GET copilot/projects/{p}/lab`: texts with the student's values, never the checks. */
export interface LabView {
  title: string;
  max_score: number;
  /** The stage the student works on (the copilot's hints follow it). */
  current_stage?: string | null;
  stages: StageView[];
}

/** A message of `GET copilot/projects/{p}/lab/events` (`events.py` `LabEvent`): the lab
 * as the student sees it now, or why it could not be read after a change. */
export type LabEvent =
  | { type: 'lab_view'; project_id: string; view: LabView }
  | { type: 'lab_error'; project_id: string; error: string };

export interface CatchUpDone {
  stage: string;
  /** The snapshot restored. */
  snapshot: string;
  restored: boolean;
}

export interface PendingObjective {
  id: string;
  stage: string;
  text: string;
  /** Absent from checklists saved before points were sent. */
  points?: number | null;
}

/** A stage of a checklist's outline: its objective ids in the lab's order. */
export interface ChecklistOutlineStage {
  id: string;
  title: string;
  objectives: string[];
}

/** The data of a `%copilot check` output (updated in place while it runs, then saved). */
export interface ChecksBundle {
  title: string;
  /** Absent from checklists saved before the outline was sent. */
  stages?: ChecklistOutlineStage[];
  results: ObjectiveResult[];
  pending: PendingObjective[];
  summary: CheckSummary | null;
}
