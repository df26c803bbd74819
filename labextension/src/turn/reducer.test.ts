import { describe, expect, it } from 'vitest';

import { loadFixtures } from '../../test/fixtures';
import { MAX_PROGRESS_LINES, reduceTurn, TurnReducer } from './reducer';

const fixtures = loadFixtures();

describe('reduceTurn on the shared fixtures', () => {
  it('finds the fixtures', () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(6);
  });

  it.each(fixtures.map(f => [f.name, f] as const))('%s', (_name, fixture) => {
    expect(reduceTurn(fixture.user, fixture.events)).toStrictEqual(fixture.turn);
  });
});

describe('TurnReducer', () => {
  const session_id = 's';

  it('keeps the last progress lines only', () => {
    const reducer = new TurnReducer('');
    for (let n = 0; n < MAX_PROGRESS_LINES + 5; n++) {
      reducer.apply({ type: 'progress', session_id, tool_name: 't', tool_call_id: 'c', message: String(n) });
    }
    const [tool] = reducer.turn.items;
    expect(tool.kind === 'tool' && tool.progress.map(line => line.message)[0]).toBe('5');
  });

  it('says whether the rendering changes', () => {
    const reducer = new TurnReducer('');
    expect(reducer.apply({ type: 'heartbeat', session_id })).toBe(false);
    expect(reducer.apply({ type: 'content', session_id, content: '' })).toBe(false);
    expect(reducer.apply({ type: 'content', session_id, content: 'a' })).toBe(true);
    expect(reducer.turn.status).toBe('running');
    expect(reducer.finish()).toBe('interrupted');
  });
});
