/**
 * Reduces one turn's chat events into a `TurnRecord`, exactly as the Python reducer
 * (`jupyter_gns3_copilot/turns.py`) does; both are checked against tests/fixtures/turns/.
 *
 * Rules (the contract both languages keep):
 * - `content` grows the last text item (or starts one); empty content is ignored.
 * - a tool call's item is found by its id; without an id, the latest unfinished call of the
 *   same tool; otherwise a new item (a tool run directly, without a model). Its state goes
 *   arguments -> ready (arguments complete) -> running -> done, and `finish()` marks what is
 *   unfinished `stopped`. Progress keeps the last `MAX_PROGRESS_LINES` lines.
 * - `tool_end` copies output, summary, outcome and note (null when absent).
 * - `approval_required` adds a pending `ApprovalItem`; `approval_resolved` sets its state
 *   to the decision and its comment.
 * - `done` puts its statistics (input_tokens, output_tokens, llm_calls, elapsed) and title
 *   into `turn.stats`, each only when present.
 * - the status: aborted > error > done; `interrupted` when no terminal event came.
 */
import type { ChatEvent } from '../events';
import type { ApprovalItem, ToolItem, TurnRecord, TurnStats, TurnStatus } from './types';

/** Progress lines kept per tool call (the oldest are dropped). */
export const MAX_PROGRESS_LINES = 50;

const STAT_KEYS = ['input_tokens', 'output_tokens', 'llm_calls', 'elapsed'] as const;

export class TurnReducer {
  readonly turn: TurnRecord;
  private aborted = false;
  private failed = false;
  private finished = false;

  constructor(user: string) {
    this.turn = { user, status: 'running', items: [], stats: {} };
  }

  /** Apply one event; returns true when the rendering needs an update. */
  apply(event: ChatEvent): boolean {
    switch (event.type) {
      case 'content':
        return this.content(event.content);
      case 'tool_call': {
        const fn = event.tool_call.function;
        const tool = this.tool(event.tool_call.id, fn.name);
        tool.name = fn.name || tool.name;
        tool.arguments = fn.arguments;
        tool.complete = Boolean(fn.complete);
        if (tool.state === 'arguments' && tool.complete) {
          tool.state = 'ready';
        }
        return true;
      }
      case 'tool_start': {
        const tool = this.tool(event.tool_call_id, event.tool_name);
        tool.complete = true;
        tool.state = 'running';
        return true;
      }
      case 'progress': {
        const tool = this.tool(event.tool_call_id ?? null, event.tool_name);
        const line = { message: event.message, elapsed: event.elapsed ?? null, node: event.node ?? null };
        tool.progress = [...tool.progress, line].slice(-MAX_PROGRESS_LINES);
        if (tool.state !== 'done') {
          tool.state = 'running';
        }
        return true;
      }
      case 'tool_end': {
        const tool = this.tool(event.tool_call_id ?? null, event.tool_name);
        tool.complete = true;
        tool.state = 'done';
        tool.output = event.tool_output;
        tool.summary = event.summary ?? null;
        tool.outcome = event.outcome ?? null;
        tool.note = event.note ?? null;
        return true;
      }
      case 'approval_required':
        this.turn.items.push({
          kind: 'approval',
          approval_id: event.approval_id,
          tool_call_id: event.tool_call_id,
          tool_name: event.tool_name,
          summary: event.summary,
          state: 'pending',
          comment: null
        });
        return true;
      case 'approval_resolved': {
        const approval = this.turn.items.find(
          (item): item is ApprovalItem => item.kind === 'approval' && item.approval_id === event.approval_id
        );
        if (!approval) {
          return false;
        }
        approval.state = event.decision;
        approval.comment = event.comment ?? null;
        return true;
      }
      case 'error':
        this.error(event.error);
        return true;
      case 'abort':
        this.aborted = true;
        return false;
      case 'done':
        this.finished = true;
        this.turn.stats = { ...this.turn.stats, ...statsOf(event.statistics, event.title) };
        return true;
      default:
        return false;
    }
  }

  /** Add an error that did not come from the stream (e.g. the server is unreachable). */
  error(text: string): void {
    this.failed = true;
    this.turn.items.push({ kind: 'error', text });
  }

  /** The turn's outcome so far: aborted > error > done; `interrupted` without an end. */
  status(): TurnStatus {
    if (this.aborted) {
      return 'aborted';
    }
    if (this.failed) {
      return 'error';
    }
    return this.finished ? 'done' : 'interrupted';
  }

  /** End the turn (unfinished tool calls become `stopped`); returns its status. */
  finish(): TurnStatus {
    for (const item of this.turn.items) {
      if (item.kind === 'tool' && item.state !== 'done') {
        item.state = 'stopped';
      }
    }
    this.turn.status = this.status();
    return this.turn.status;
  }

  private content(text: string): boolean {
    if (!text) {
      return false;
    }
    const last = this.turn.items[this.turn.items.length - 1];
    if (last && last.kind === 'text') {
      last.text += text;
    } else {
      this.turn.items.push({ kind: 'text', text });
    }
    return true;
  }

  private tool(callId: string | null, name: string): ToolItem {
    const items = this.turn.items;
    for (let index = items.length - 1; index >= 0; index--) {
      const item = items[index];
      if (item.kind !== 'tool') {
        continue;
      }
      if (callId && item.id === callId) {
        return item;
      }
      if (!callId && item.name === name && item.state !== 'done') {
        return item;
      }
    }
    const tool: ToolItem = {
      kind: 'tool',
      id: callId || '',
      name,
      arguments: '',
      complete: false,
      state: 'arguments',
      progress: [],
      output: null,
      summary: null,
      outcome: null,
      note: null
    };
    items.push(tool);
    return tool;
  }
}

function statsOf(statistics: Record<string, number> | null | undefined, title: string | null | undefined): TurnStats {
  const stats: TurnStats = {};
  if (title) {
    stats.title = title;
  }
  for (const key of STAT_KEYS) {
    const value = statistics?.[key];
    if (value !== undefined && value !== null) {
      stats[key] = value;
    }
  }
  return stats;
}

/** The finished turn of `user`'s message and its events, in order. */
export function reduceTurn(user: string, events: ChatEvent[]): TurnRecord {
  const reducer = new TurnReducer(user);
  for (const event of events) {
    reducer.apply(event);
  }
  reducer.finish();
  return reducer.turn;
}

