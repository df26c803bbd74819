import { describe, expect, it } from 'vitest';

import type { ChatSession } from '../api';
import { orderSessions, searchSessions, sessionTitle } from './sessions';

function session(id: string, title: string | null, updated: string | null, pinned = false): ChatSession {
  return {
    thread_id: id,
    title,
    pinned,
    message_count: 2,
    total_tokens: 10,
    created_at: '2026-01-01T00:00:00Z',
    updated_at: updated,
    last_message_at: updated
  };
}

const sessions = [
  session('a1', 'OSPF on R1', '2026-03-01T10:00:00Z'),
  session('b2', 'Ping from PC1', '2026-03-03T10:00:00Z'),
  session('c3', 'Adressage réseau', '2026-02-01T10:00:00Z', true),
  session('d4', null, null),
  session('e5', 'VLAN trunk', '2026-03-02T10:00:00Z', true)
];

describe('orderSessions', () => {
  it('puts pinned sessions first, each group most recent first, unknown times last', () => {
    expect(orderSessions(sessions).map(s => s.thread_id)).toEqual(['e5', 'c3', 'b2', 'a1', 'd4']);
  });

  it('does not change its input', () => {
    const before = sessions.map(s => s.thread_id);
    orderSessions(sessions);
    expect(sessions.map(s => s.thread_id)).toEqual(before);
  });
});

describe('searchSessions', () => {
  it('matches every word of the query in the title, ignoring case and accents', () => {
    expect(searchSessions(sessions, 'pc1 PING').map(s => s.thread_id)).toEqual(['b2']);
    expect(searchSessions(sessions, 'reseau').map(s => s.thread_id)).toEqual(['c3']);
    expect(searchSessions(sessions, 'ospf vlan')).toEqual([]);
  });

  it('matches an id prefix and keeps everything for an empty query', () => {
    expect(searchSessions(sessions, ' e5').map(s => s.thread_id)).toEqual(['e5']);
    expect(searchSessions(sessions, '  ')).toHaveLength(5);
  });

  it('finds untitled sessions by their shown title', () => {
    expect(sessionTitle(sessions[3])).toBe('Untitled chat');
    expect(searchSessions(sessions, 'untitled').map(s => s.thread_id)).toEqual(['d4']);
  });
});
