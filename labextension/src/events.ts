/**
 * The chat stream's events as the server sends them: one SSE message `data: <json>` each.
 * A lab check's stream (`session_id` names the check run) sends `check_result` per
 * objective, then `check_summary`, then `done`. The types are generated from the Python
 * models (`src/generated/events.ts`); this module adds the parsing.
 */
import type { ChatEvent } from './generated/events';

export type { ChatEvent } from './generated/events';

/** Parse one SSE `data:` payload; null for anything that is not a known event. */
export function parseEvent(data: string): ChatEvent | null {
  try {
    const value = JSON.parse(data) as { type?: unknown };
    return value && typeof value.type === 'string' ? (value as ChatEvent) : null;
  } catch {
    return null;
  }
}
