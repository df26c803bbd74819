/**
 * The session list's order and search, kept apart from the DOM so they are testable.
 */
import type { ChatSession } from '../api';

/** The time a session was last active (ms since the epoch; 0 when unknown). */
function lastActive(session: ChatSession): number {
  const stamp = session.last_message_at ?? session.updated_at ?? session.created_at;
  const time = stamp ? Date.parse(stamp) : NaN;
  return Number.isNaN(time) ? 0 : time;
}

/** The title shown for a session ("Untitled chat" until the copilot names it). */
export function sessionTitle(session: ChatSession): string {
  return session.title?.trim() || 'Untitled chat';
}

/** Pinned first, then the most recently active; ties by title, so the order is stable. */
export function orderSessions(sessions: readonly ChatSession[]): ChatSession[] {
  return [...sessions].sort(
    (a, b) =>
      Number(b.pinned) - Number(a.pinned) ||
      lastActive(b) - lastActive(a) ||
      sessionTitle(a).localeCompare(sessionTitle(b))
  );
}

/**
 * The sessions whose title contains every word of `query` (case- and accent-insensitive),
 * or whose id starts with it (ids are what the magics print). An empty query keeps all.
 */
export function searchSessions(sessions: readonly ChatSession[], query: string): ChatSession[] {
  const fold = (text: string) =>
    text.normalize('NFD').replace(/\p{Diacritic}/gu, '').toLowerCase();
  const words = fold(query).split(/\s+/).filter(Boolean);
  if (!words.length) {
    return [...sessions];
  }
  return sessions.filter(session => {
    const title = fold(sessionTitle(session));
    return words.every(word => title.includes(word)) || session.thread_id.startsWith(query.trim());
  });
}
