/**
 * The chat stream's events as the server sends them: one SSE message `data: <json>` each.
 * A lab check's stream (`session_id` names the check run) sends `check_result` per
 * objective, then `check_summary`, then `done`. The types are generated from the Python
 * models (`src/generated/events.ts`); this module adds the parsing.
 */
import type { ChatEvent } from './generated/events';

export type { ChatEvent } from './generated/events';

/** Every event type, once: the compiler fails when the generated `ChatEvent` gains or
 * loses one that is not listed here. */
const EVENT_TYPES: Record<ChatEvent['type'], true> = {
  abort: true,
  approval_required: true,
  approval_resolved: true,
  check_result: true,
  check_summary: true,
  content: true,
  done: true,
  error: true,
  heartbeat: true,
  progress: true,
  tool_call: true,
  tool_end: true,
  tool_start: true
};

/** Whether `type` names a chat event (`EVENT_TYPES`' own keys only). */
export function isEventType(type: unknown): type is ChatEvent['type'] {
  return typeof type === 'string' && Object.prototype.hasOwnProperty.call(EVENT_TYPES, type);
}

/** Parse one SSE `data:` payload; null for anything that is not a known event (not JSON,
 * not an object, no `type`, or a `type` no chat event has). */
export function parseEvent(data: string): ChatEvent | null {
  try {
    const value = JSON.parse(data) as { type?: unknown } | null;
    return value && typeof value === 'object' && isEventType(value.type) ? (value as ChatEvent) : null;
  } catch {
    return null;
  }
}
