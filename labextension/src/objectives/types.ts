/**
 * Lab objectives as the server and the kernel send them: the lab as a student sees it
 * (`objectives/view.py` `LabView`), its events stream and a catch-up done (generated with
 * the REST answers, `src/generated/answers.ts`), each objective checked and the score
 * (`objectives/results.py`: generated with the events, `src/generated/events.ts`), and the
 * checklist a `%copilot check` cell keeps (`notebook/lab_report.py` `ChecksBundle`,
 * generated too: `src/generated/checks.ts`).
 */

import type { LabEvent, StageView } from '../generated/answers';
import type { ObjectiveResult } from '../generated/events';

/** The MIME type of a `%copilot check` output: `ChecksBundle` as JSON. */
export const CHECKS_MIME_TYPE = 'application/vnd.gns3-copilot.checks+json';

export type { CheckSummary, Evidence, ObjectiveResult, StageScore } from '../generated/events';

/** `error`: the check could not be decided (a node stopped, a console unreachable). */
export type CheckStatus = ObjectiveResult['status'];

export type {
  CatchUpDone,
  CheckReport,
  LabErrorEvent,
  LabEvent,
  LabView,
  LabViewEvent,
  ObjectiveView,
  StageView
} from '../generated/answers';

export type HintPolicy = StageView['hints'];

/** Parse one message of the lab events stream; null for anything else (a heartbeat, a
 * chat event, what is not JSON). */
export function parseLabEvent(data: string): LabEvent | null {
  try {
    const value = JSON.parse(data) as { type?: unknown } | null;
    return value && typeof value === 'object' && (value.type === 'lab_view' || value.type === 'lab_error')
      ? (value as LabEvent)
      : null;
  } catch {
    return null;
  }
}

export type { ChecklistOutlineStage, ChecksBundle, PendingObjective } from '../generated/checks';
