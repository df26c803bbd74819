/**
 * GENERATED FILE: do not edit. The TypeScript of src/generated/answers.schema.json, the JSON
 * Schema of the Python models (jupyter_gns3_copilot/wire_schema.py). Change the models,
 * then run `make types` (it exports the schema and runs scripts/generate-types.mjs).
 */

export type Answer =
  | StatusReport
  | ProjectSummary
  | ChatSession
  | ConversationHistory
  | PendingApproval
  | AbortAnswer
  | NotebookProjectAnswer
  | LLMConfigView
  | LabView
  | LabEvent
  | CheckReport
  | CatchUpDone
  | ExerciseView
  | GiveUpAnswer
  | ErrorBody;
/**
 * One message of the lab events stream, sent as `data: <json>` and a blank line.
 */
export type LabEvent = LabViewEvent | LabErrorEvent;

/**
 * What `copilot/status` returns.
 */
export interface StatusReport {
  version: string;
  python: string;
  packages: {
    [k: string]: string | null;
  };
  mode: 'standalone' | 'hub';
  mode_summary: string;
  hub?: HubStatus | null;
  gns3: GNS3Status;
  model?: ModelStatus | null;
  user?: string | null;
  data_dir: string;
}
/**
 * Hub mode: the copilot hub service this server takes its settings from.
 */
export interface HubStatus {
  service: string;
  reachable: boolean;
  user?: string | null;
  gns3_username?: string | null;
  questions_logged: boolean;
  budget_left?: number | null;
  slow: boolean;
  error?: string | null;
}
/**
 * Whether the configured GNS3 server answers, and as whom.
 */
export interface GNS3Status {
  url: string;
  reachable: boolean;
  version?: string | null;
  authenticated?: boolean | null;
  error?: string | null;
}
/**
 * Whether a chat model is configured for the asking user, and which; never the key.
 *
 * `missing` names the settings a chat still needs (e.g. "llm_model"), with `problems`
 * saying how to set them. `context` says which context limit a chat counts on and
 * whether it is a guess (None while no model is set).
 */
export interface ModelStatus {
  configured: boolean;
  provider: string;
  base_url: string;
  model: string;
  copilot_mode: string;
  api_key_set: boolean;
  missing: string[];
  problems: string[];
  context?: ContextLimitStatus | null;
}
/**
 * The context window a chat counts on (thousands of tokens), and where it comes from.
 *
 * `source` is "setting" (an admin or user set `context_limit`), "model_family" (the
 * default of the model's known family, named in `family`) or "guess" (no known family,
 * e.g. a gateway's alias: `DEFAULT_CONTEXT_LIMIT` is assumed); `guessed` is true for the
 * last, and `note` then says which setting fixes it.
 */
export interface ContextLimitStatus {
  limit: number;
  source: 'setting' | 'model_family' | 'guess';
  family?: string | null;
  guessed: boolean;
  note?: string | null;
}
/**
 * A GNS3 project as the project routes answer it.
 */
export interface ProjectSummary {
  project_id: string;
  name: string;
  status?: string | null;
  filename?: string | null;
}
/**
 * One chat session's metadata and statistics.
 */
export interface ChatSession {
  id: number;
  thread_id: string;
  user_id: string;
  project_id: string;
  title?: string | null;
  message_count: number;
  llm_calls_count: number;
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  last_message_at?: string | null;
  created_at?: string | null;
  updated_at?: string | null;
  metadata: {
    [k: string]: unknown;
  };
  stats: {
    [k: string]: unknown;
  };
  pinned: boolean;
}
/**
 * A session's history, as the history route answers it.
 *
 * `llm_calls` is the session's total count of model calls (title model excluded).
 * `turn_errors` (a later addition to the answer) lists, in order, the errors of the turns
 * whose user message is among `messages`: a turn that failed shows as failed, not as
 * a question without an answer.
 */
export interface ConversationHistory {
  thread_id: string;
  title?: string | null;
  messages: OpenAIMessage[];
  created_at?: string | null;
  updated_at?: string | null;
  llm_calls: number;
  turn_errors: TurnError[];
}
/**
 * One message in the OpenAI-compatible history format.
 */
export interface OpenAIMessage {
  id: string;
  role: 'user' | 'assistant' | 'system' | 'tool';
  content: string;
  metadata: {
    [k: string]: unknown;
  };
  name?: string | null;
  tool_call_id?: string | null;
  tool_calls?: OpenAIToolCall[] | null;
}
/**
 * One tool call of an assistant message.
 */
export interface OpenAIToolCall {
  id: string;
  type: 'function';
  function: {
    [k: string]: string;
  };
}
/**
 * An error a turn ended with: `message_id` is the id of the user message that started
 * the turn, `error` what its `error` event said.
 */
export interface TurnError {
  message_id: string;
  error: string;
  created_at?: string | null;
}
/**
 * A change a session waits for a person to approve or reject.
 */
export interface PendingApproval {
  approval_id: string;
  tool_call_id: string;
  tool_name: string;
  tool_input: {
    [k: string]: unknown;
  };
  summary: string;
  asked_at: string;
  expires_at: string;
}
/**
 * `POST .../chat/sessions/{session_id}/abort`: "ok" when a turn (or, deprecated, a
 * run named by its id) was stopped, else "not_running".
 */
export interface AbortAnswer {
  status: 'ok' | 'not_running';
  session_id: string;
}
/**
 * What a notebook uses (`copilot/notebook-projects`): the project it used last (None:
 * none remembered) and its conversation there, and its conversation per project.
 */
export interface NotebookProjectAnswer {
  path: string;
  project_id?: string | null;
  session_id?: string | null;
  sessions: {
    [k: string]: string;
  };
  updated_at?: string | null;
}
/**
 * What `GET copilot/llm-config` returns: the effective values, never the key.
 *
 * `sources` says, per field, whether the user's or the administrator's value is in force;
 * `user_settings` lists the fields the user set; `ignored` the user's values the
 * administrator's limits no longer allow (the admin's values apply instead).
 */
export interface LLMConfigView {
  provider: string;
  base_url: string;
  model: string;
  title_model: string;
  temperature: number | null;
  context_limit: number;
  context_strategy: string;
  copilot_mode: string;
  api_key_set: boolean;
  api_key_source: ('user' | 'admin') | null;
  sources: {
    [k: string]: 'user' | 'admin';
  };
  user_settings: string[];
  ignored: string[];
  configured: boolean;
  missing: MissingSetting[];
  allowed_modes: string[];
  allowed_base_urls: string[];
}
/**
 * A setting a chat needs and nobody set.
 */
export interface MissingSetting {
  setting: string;
  message: string;
}
/**
 * `GET copilot/projects/{project_id}/lab`.
 */
export interface LabView {
  title: string;
  max_score: number;
  current_stage?: string | null;
  stages: StageView[];
  exercises: boolean;
}
export interface StageView {
  id: string;
  title: string;
  hints: 'nudge' | 'explain' | 'off';
  catch_up: boolean;
  objectives: ObjectiveView[];
}
export interface ObjectiveView {
  id: string;
  text: string;
  points: number;
  status?: ('pass' | 'fail' | 'error') | null;
}
/**
 * The lab as the caller sees it now (what `GET copilot/projects/{p}/lab` answers), on
 * the lab events stream.
 */
export interface LabViewEvent {
  type: 'lab_view';
  project_id: string;
  view: LabView;
}
/**
 * On the lab events stream: the lab could not be read after a change (the stream
 * goes on; the next change tries again).
 */
export interface LabErrorEvent {
  type: 'lab_error';
  project_id: string;
  error: string;
}
/**
 * The results and their summary (the answer of a non-streamed check).
 */
export interface CheckReport {
  score: number;
  max_score: number;
  passed: boolean;
  stages: StageScore[];
  exercise?: ExerciseGrade | null;
  results: ObjectiveResult[];
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
 * The answer of a confirmed catch-up.
 */
export interface CatchUpDone {
  stage: string;
  snapshot: string;
  restored: boolean;
}
/**
 * The caller's exercise (`POST .../lab/exercises`, `GET .../lab/exercises/current`):
 * when it started, the symptom (the objectives that fail because of it), whether it is
 * still `active`, and its latest `grade`; never which fault it is.
 */
export interface ExerciseView {
  started_at: string;
  active: boolean;
  symptom: SymptomView[];
  grade?: ExerciseGrade | null;
}
/**
 * An objective the exercise's fault broke: what the student sees failing.
 */
export interface SymptomView {
  id: string;
  text: string;
}
/**
 * `POST .../lab/exercises/current/give-up`: what the fault was (the instructor's
 * description, the device and cause a diagnosis had to name), and what of it could not
 * be undone (`not_undone`: changes on a device that keeps no saved configuration).
 */
export interface GiveUpAnswer {
  description: string;
  device: string;
  interface?: string | null;
  cause: string;
  not_undone: string[];
}
/**
 * The body of every error answer (what `server.errors.ErrorAnswer.body` writes).
 */
export interface ErrorBody {
  error: ErrorDetail;
}
/**
 * One error: what went wrong, and where it applies the field, rule, setting or URL.
 */
export interface ErrorDetail {
  message: string;
  type: string;
  field?: string | null;
  rule?: string | null;
  setting?: string | null;
  url?: string | null;
  errors?:
    | {
        [k: string]: unknown;
      }[]
    | null;
}
