import { describe, expect, it } from 'vitest';

import { isEventType, parseEvent } from './events';

describe('parseEvent', () => {
  it('reads every chat event type', () => {
    const done = { type: 'done', session_id: 's' };
    expect(parseEvent(JSON.stringify(done))).toEqual(done);
    const check = { type: 'check_summary', session_id: 'r', score: 1, max_score: 2, stages: [] };
    expect(parseEvent(JSON.stringify(check))).toEqual(check);
  });

  it('rejects a type no chat event has, however it is spelled', () => {
    for (const type of ['lab_view', 'Content', 'toString', '__proto__', 'constructor', '']) {
      expect(parseEvent(JSON.stringify({ type, session_id: 's' }))).toBeNull();
    }
  });

  it('rejects what is not an event object', () => {
    for (const data of ['not json', 'null', '"content"', '[]', '{}', '{"type": 3}', '{"type": null}']) {
      expect(parseEvent(data)).toBeNull();
    }
  });

  it('knows the types by their own name only', () => {
    expect(isEventType('heartbeat')).toBe(true);
    expect(isEventType('hasOwnProperty')).toBe(false);
    expect(isEventType(undefined)).toBe(false);
  });
});
