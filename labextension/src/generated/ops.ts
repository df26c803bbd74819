/**
 * GENERATED FILE: do not edit. The TypeScript of src/generated/ops.schema.json, the JSON
 * Schema of the Python models (jupyter_gns3_copilot/wire_schema.py). Change the models,
 * then run `make types` (it exports the schema and runs scripts/generate-types.mjs).
 */

export type Op = AppendOp | ItemOp;

/**
 * A browser operation: grow text item `index` by `text` (creating it).
 */
export interface AppendOp {
  op: 'append';
  index: number;
  text: string;
}
/**
 * A browser operation: create or replace item `index`.
 */
export interface ItemOp {
  op: 'item';
  index: number;
  item: TextItem | ToolItem | ErrorItem | ApprovalItem;
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
