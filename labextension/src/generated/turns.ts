/**
 * GENERATED FILE: do not edit. The TypeScript of src/generated/turns.schema.json, the JSON
 * Schema of the Python models (jupyter_gns3_copilot/wire_schema.py). Change the models,
 * then run `make types` (it exports the schema and runs scripts/generate-types.mjs).
 */

/**
 * What one finished cell output holds: the project, the session and its turns.
 *
 * `direct_run` (present only when true): the turns ran commands without the model
 * (`%copilot run`); they belong to no conversation (`session_id` is None, so no front
 * end offers to continue one) and their device output is the answer.
 */
export interface TurnBundle {
  version: 1;
  project_id: string;
  project_name: string | null;
  session_id: string | null;
  mode: string | null;
  turns: TurnRecord[];
  direct_run?: boolean;
}
/**
 * One exchange: the user's message, what the copilot streamed back, how it ended.
 *
 * A record, as the reducer builds it and a saved bundle holds it; not the kernel's
 * `Turn` (what `Copilot.ask` returns, which keeps one as `Turn.record`) nor the chat
 * engine's `RunningTurn` (a turn's bookkeeping on the server while it runs).
 *
 * `user` is empty for turns that did not start from a message (e.g. an error shown
 * before any turn). `status` is `running` until the turn ends.
 */
export interface TurnRecord {
  user: string;
  status: 'running' | 'done' | 'aborted' | 'error' | 'interrupted';
  items: (TextItem | ToolItem | ErrorItem | ApprovalItem)[];
  stats: TurnStats;
}
/**
 * Assistant text (Markdown), grown by content events.
 */
export interface TextItem {
  kind: 'text';
  text: string;
}
/**
 * One tool call: `arguments` is the JSON text accumulated so far; `output` the tool's
 * result as the server sent it (None until it ends); `summary`, `outcome` and `note` the
 * server's reading of that result (`tools/outcomes.py`).
 */
export interface ToolItem {
  kind: 'tool';
  id: string;
  name: string;
  arguments: string;
  complete: boolean;
  state: 'arguments' | 'ready' | 'running' | 'done' | 'stopped';
  progress: ProgressLine[];
  output: string | null;
  summary: string | null;
  outcome: ('ok' | 'partial' | 'failed' | 'refused') | null;
  note: string | null;
}
export interface ProgressLine {
  message: string;
  elapsed: number | null;
  node: string | null;
}
export interface ErrorItem {
  kind: 'error';
  text: string;
}
/**
 * A change waiting for the student's decision, then the decision.
 */
export interface ApprovalItem {
  kind: 'approval';
  approval_id: string;
  tool_call_id: string;
  tool_name: string;
  summary: string;
  state: 'pending' | 'approve' | 'reject' | 'timeout';
  comment: string | null;
}
/**
 * A turn's footer: the session title, tokens, model calls and elapsed seconds.
 */
export interface TurnStats {
  title?: string;
  input_tokens?: number;
  output_tokens?: number;
  llm_calls?: number;
  elapsed?: number;
}
