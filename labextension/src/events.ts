/**
 * The chat stream's events as the server sends them (`jupyter_gns3_copilot/events.py`):
 * one SSE message `data: <json>` each. A lab check's stream (`session_id` names the check
 * run) sends `check_result` per objective, then `check_summary`, then `done`.
 */
import type { CheckSummary, ObjectiveResult } from './lab/types';

export interface ToolCallFunction {
  name: string;
  arguments: string;
  complete?: boolean | null;
}

export type ChatEvent =
  | { type: 'content'; session_id: string; content: string; message_id?: string | null }
  | {
      type: 'tool_call';
      session_id: string;
      tool_call: { id: string; type: 'function'; function: ToolCallFunction };
      message_id?: string | null;
    }
  | { type: 'tool_start'; session_id: string; tool_name: string; tool_call_id: string }
  | {
      type: 'progress';
      session_id: string;
      tool_name: string;
      tool_call_id?: string | null;
      message: string;
      elapsed?: number | null;
      node?: string | null;
    }
  | {
      type: 'tool_end';
      session_id: string;
      tool_name: string;
      tool_call_id?: string | null;
      tool_output: string;
      summary?: string | null;
      outcome?: 'ok' | 'partial' | 'failed' | 'refused' | null;
      note?: string | null;
    }
  | {
      type: 'approval_required';
      session_id: string;
      approval_id: string;
      tool_call_id: string;
      tool_name: string;
      tool_input: Record<string, unknown>;
      summary: string;
    }
  | {
      type: 'approval_resolved';
      session_id: string;
      approval_id: string;
      tool_call_id: string;
      decision: 'approve' | 'reject' | 'timeout';
      comment?: string | null;
    }
  | { type: 'error'; session_id: string; error: string }
  | { type: 'abort'; session_id: string }
  | {
      type: 'done';
      session_id: string;
      statistics?: Record<string, number> | null;
      title?: string | null;
    }
  | { type: 'heartbeat'; session_id: string }
  | { type: 'check_result'; session_id: string; result: ObjectiveResult }
  | { type: 'check_summary'; session_id: string; summary: CheckSummary };

/** Parse one SSE `data:` payload; null for anything that is not a known event. */
export function parseEvent(data: string): ChatEvent | null {
  try {
    const value = JSON.parse(data) as { type?: unknown };
    return value && typeof value.type === 'string' ? (value as ChatEvent) : null;
  } catch {
    return null;
  }
}
