/**
 * GENERATED FILE: do not edit. The TypeScript of src/generated/requests.schema.json, the JSON
 * Schema of the Python models (jupyter_gns3_copilot/wire_schema.py). Change the models,
 * then run `make types` (it exports the schema and runs scripts/generate-types.mjs).
 */

export type Request =
  | ChatRequest
  | LLMConfigUpdate
  | RenameRequest
  | ApprovalDecisionRequest
  | LabCheckRequest
  | CatchUpRequest
  | ExerciseRequest;

/**
 * `POST copilot/projects/{project_id}/chat/stream`: a message and its turn's limits.
 *
 * - `message`: 1-32,000 characters, not only whitespace;
 * - `session_id`: continue this session (None: a new one; an id not used yet starts a
 *   session under that id);
 * - `stream`: true for SSE, false for one JSON body when the turn is over;
 * - `temperature` (0-2), `max_iterations` (1-100, default 20), `max_tool_calls` (1-50,
 *   default unlimited), `max_execution_time_seconds` (1-3600, default none: the turn
 *   is stopped like an abort at that many seconds, with an `error` naming the limit):
 *   this turn only;
 * - `mode`: the interaction mode, always "text";
 * - `copilot_mode`: teaching_assistant or lab_automation_assistant, within the modes
 *   the administrator allows (default: the user's setting, else the server's default);
 * - `approval`: "auto" runs changes without asking (only where `allow_auto_approval`).
 */
export interface ChatRequest {
  message: string;
  session_id?: string | null;
  stream?: boolean;
  temperature?: number | null;
  mode?: 'text';
  max_iterations?: number | null;
  max_tool_calls?: number | null;
  max_execution_time_seconds?: number | null;
  copilot_mode?: string | null;
  approval?: 'auto' | null;
}
/**
 * The body of `PUT copilot/llm-config` (every field optional, unknown fields refused).
 *
 * Left out: unchanged. null: back to the administrator's value. `api_key` "" or null:
 * the user's key is removed.
 */
export interface LLMConfigUpdate {
  provider?: string | null;
  base_url?: string | null;
  model?: string | null;
  temperature?: number | null;
  context_limit?: number | null;
  context_strategy?: ('conservative' | 'balanced' | 'aggressive') | null;
  copilot_mode?: string | null;
  api_key?: string | null;
}
/**
 * `PATCH copilot/projects/{project_id}/chat/sessions/{session_id}`: 1-255 characters.
 */
export interface RenameRequest {
  title: string;
}
/**
 * `POST .../chat/sessions/{session_id}/approvals/{approval_id}`: the decision, and an
 * optional comment (up to 2,000 characters) the model reads with a rejection.
 */
export interface ApprovalDecisionRequest {
  decision: 'approve' | 'reject';
  comment?: string | null;
}
/**
 * `POST copilot/projects/{project_id}/lab/checks`: which objectives (default: all; a
 * `stage`'s, or those named), how to answer (SSE, or one JSON report), and optionally
 * the lab file's text to check against instead of the project's (`lab`, named
 * `source` in its problems); `run_id` as in `RunNaming` (for the run's abort route).
 */
export interface LabCheckRequest {
  run_id?: string | null;
  /**
   * @deprecated
   */
  session_id?: string | null;
  lab?: string | null;
  source?: string;
  stage?: string | null;
  objectives?: [string, ...string[]] | null;
  stream?: boolean;
}
/**
 * `POST .../lab/stages/{stage}/catch-up`: `confirm` is the person's approval (without
 * it the answer says what would be restored).
 */
export interface CatchUpRequest {
  confirm?: boolean;
}
/**
 * `POST .../lab/exercises`: the fault to put in the lab (`fault`, the instructor's
 * id), or `random: true` for one drawn for the caller; exactly one of the two.
 */
export interface ExerciseRequest {
  fault?: string | null;
  random?: boolean;
}
