/**
 * GENERATED FILE: do not edit. The TypeScript of src/generated/events.schema.json, the JSON
 * Schema of the Python models (jupyter_gns3_copilot/wire_schema.py). Change the models,
 * then run `make types` (it exports the schema and runs scripts/generate-types.mjs).
 */

export type ChatEvent =
  | ContentEvent
  | ToolCallEvent
  | ToolStartEvent
  | ProgressEvent
  | ToolEndEvent
  | ApprovalRequiredEvent
  | ApprovalResolvedEvent
  | ErrorEvent
  | AbortEvent
  | DoneEvent
  | HeartbeatEvent
  | CheckResultEvent
  | CheckSummaryEvent;

export interface ContentEvent {
  session_id: string;
  type: 'content';
  content: string;
  message_id?: string | null;
}
export interface ToolCallEvent {
  session_id: string;
  type: 'tool_call';
  tool_call: ToolCallPayload;
  message_id?: string | null;
}
export interface ToolCallPayload {
  id: string;
  type: 'function';
  function: ToolCallFunction;
}
export interface ToolCallFunction {
  name: string;
  arguments: string;
  complete?: boolean | null;
}
export interface ToolStartEvent {
  session_id: string;
  type: 'tool_start';
  tool_name: string;
  tool_call_id: string;
}
export interface ProgressEvent {
  session_id: string;
  type: 'progress';
  tool_name: string;
  tool_call_id?: string | null;
  message: string;
  elapsed?: number | null;
  node?: string | null;
}
export interface ToolEndEvent {
  session_id: string;
  type: 'tool_end';
  tool_name: string;
  tool_call_id?: string | null;
  /**
   * What the model reads (unchanged by `summary`, `outcome` and `note`).
   */
  tool_output: string;
  /**
   * One human line: "ran `show ip` on PC1, PC2 · 2 ok".
   */
  summary?: string | null;
  outcome?: ('ok' | 'partial' | 'failed' | 'refused') | null;
  /**
   * For the student (a policy refusal), never the text written for the model.
   */
  note?: string | null;
}
export interface ApprovalRequiredEvent {
  session_id: string;
  type: 'approval_required';
  approval_id: string;
  tool_call_id: string;
  tool_name: string;
  tool_input: {
    [k: string]: unknown;
  };
  summary: string;
}
export interface ApprovalResolvedEvent {
  session_id: string;
  type: 'approval_resolved';
  approval_id: string;
  tool_call_id: string;
  decision: 'approve' | 'reject' | 'timeout';
  comment?: string | null;
}
export interface ErrorEvent {
  session_id: string;
  type: 'error';
  error: string;
}
export interface AbortEvent {
  session_id: string;
  type: 'abort';
}
export interface DoneEvent {
  session_id: string;
  type: 'done';
  /**
   * This turn's own counts (not the session's totals) as the statistics rules count
   * them: `input_tokens`, `output_tokens`, `llm_calls`, `message_count`, and `elapsed`
   * seconds on the server. Absent when no model turn ran (a refused request, a tool run).
   */
  statistics?: {
    [k: string]: number;
  } | null;
  /**
   * The session's title after the turn.
   */
  title?: string | null;
}
export interface HeartbeatEvent {
  session_id: string;
  type: 'heartbeat';
}
/**
 * A lab objective decided, in a lab check's stream (`session_id` names the check run).
 */
export interface CheckResultEvent {
  session_id: string;
  type: 'check_result';
  result: ObjectiveResult;
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
 * The score of a lab check run, after its last `check_result`.
 */
export interface CheckSummaryEvent {
  session_id: string;
  type: 'check_summary';
  summary: CheckSummary;
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
