/**
 * GENERATED FILE: do not edit. The TypeScript of src/generated/checks.schema.json, the JSON
 * Schema of the Python models (jupyter_gns3_copilot/wire_schema.py). Change the models,
 * then run `make types` (it exports the schema and runs scripts/generate-types.mjs).
 */

/**
 * The data of a `%copilot check` output (`CHECKS_MIME`): the report so far, updated
 * in place while the check runs, then saved with the notebook.
 */
export interface ChecksBundle {
  title: string;
  stages?: ChecklistOutlineStage[] | null;
  results: ObjectiveResult[];
  pending: PendingObjective[];
  summary: CheckSummary | null;
}
/**
 * A stage of a checklist's outline: its objective ids in the lab's order.
 */
export interface ChecklistOutlineStage {
  id: string;
  title: string;
  objectives: string[];
}
/**
 * One objective checked.
 */
export interface ObjectiveResult {
  id: string;
  stage: string;
  text: string;
  status: 'pass' | 'fail' | 'error';
  points: number;
  points_awarded: number;
  explanation: string;
  evidence: Evidence[];
  duration_ms: number;
}
/**
 * What decided a check: the node, the command, and the lines of its output that
 * counted (or the fact read from GNS3, e.g. the node's status, with no command).
 */
export interface Evidence {
  node: string;
  command?: string | null;
  lines: string[];
}
/**
 * An objective a checklist still waits for.
 */
export interface PendingObjective {
  id: string;
  stage: string;
  text: string;
  points?: number | null;
}
/**
 * The score of the objectives checked; `passed` when every one of them passed.
 */
export interface CheckSummary {
  score: number;
  max_score: number;
  passed: boolean;
  stages: StageScore[];
  exercise?: ExerciseGrade | null;
}
export interface StageScore {
  id: string;
  title: string;
  passed: boolean;
  score: number;
  max_score: number;
  objectives: string[];
}
/**
 * How the student's exercise stands after a check: `fixed` when every objective the
 * fault broke passes, `still_failing` those that do not, `regressions` the objectives
 * that passed before the fault and fail now, `seconds` since it started,
 * `copilot_calls` the model calls the copilot made for the student meanwhile (a chat
 * turn makes one or more), `done` when it ended with this check (fixed, no
 * regressions).
 */
export interface ExerciseGrade {
  fixed: boolean;
  still_failing: string[];
  regressions: string[];
  seconds: number;
  copilot_calls: number;
  done: boolean;
}
