/**
 * The turn model shared by every front end (widget, saved-turn MIME renderer, sidebar).
 *
 * It mirrors the Python reducer's output (`jupyter_gns3_copilot/turns.py`) field for field:
 * a saved notebook holds these objects as JSON under `TURN_MIME_TYPE`, and the shared
 * fixtures in `tests/fixtures/turns/` are checked against both reducers.
 */

/** The MIME type of a finished cell output: `TurnBundle` as JSON. */
export const TURN_MIME_TYPE = 'application/vnd.gns3-copilot.turns+json';

export type TurnStatus = 'running' | 'done' | 'aborted' | 'error' | 'interrupted';
export type ToolState = 'arguments' | 'ready' | 'running' | 'done' | 'stopped';
/** What happened to the check, not only to the delivery (a ping with 100% loss is `failed`). */
export type ToolOutcome = 'ok' | 'partial' | 'failed' | 'refused';

export interface TextItem {
  kind: 'text';
  text: string;
}

export interface ProgressLine {
  message: string;
  elapsed: number | null;
  node: string | null;
}

export interface ToolItem {
  kind: 'tool';
  id: string;
  name: string;
  /** The JSON text of the arguments accumulated so far. */
  arguments: string;
  complete: boolean;
  state: ToolState;
  progress: ProgressLine[];
  /** The tool's result as the server sent it (a JSON string for structured results). */
  output: string | null;
  /** One human line from the server's `tool_end` ("ran `show ip` on PC1, PC2 · 2 ok"). */
  summary: string | null;
  outcome: ToolOutcome | null;
  /** A note for the student (a policy refusal); the text written for the model stays out. */
  note: string | null;
}

export interface ErrorItem {
  kind: 'error';
  text: string;
}

/** A change waiting for the student's decision (human approval before changes). */
export interface ApprovalItem {
  kind: 'approval';
  approval_id: string;
  tool_call_id: string;
  tool_name: string;
  summary: string;
  state: 'pending' | 'approve' | 'reject' | 'timeout';
  comment: string | null;
}

export type Item = TextItem | ToolItem | ErrorItem | ApprovalItem;

export interface TurnStats {
  title?: string;
  input_tokens?: number;
  output_tokens?: number;
  llm_calls?: number;
  elapsed?: number;
}

export interface Turn {
  user: string;
  status: TurnStatus;
  items: Item[];
  stats: TurnStats;
}

/** What one cell output holds: the project and session, and its turns in order. */
export interface TurnBundle {
  version: 1;
  project_id: string;
  project_name: string | null;
  /** The conversation the turns belong to; null for a direct run, which has none. */
  session_id: string | null;
  mode: string | null;
  turns: Turn[];
  /** A `%copilot run` (commands run without the model): no conversation to continue,
   * and its device output is the answer (shown opened). Absent in older bundles. */
  direct_run?: boolean;
}
