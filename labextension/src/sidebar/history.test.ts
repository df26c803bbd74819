import { describe, expect, it } from 'vitest';

import type { OpenAIMessage } from '../api';
import { TurnView } from '../turn/view';
import { turnsFromHistory } from './history';

describe('turnsFromHistory', () => {
  it('keeps the error a turn ended with: shown as the error, never "(no answer)"', () => {
    const messages: OpenAIMessage[] = [
      { id: 'm1', role: 'user', content: 'Why can PC1 not ping PC2?' },
      { id: 'm2', role: 'user', content: 'And now?' },
      { id: 'm3', role: 'assistant', content: 'PC2 answers now.' }
    ];
    const [failed, answered] = turnsFromHistory(messages, [
      { message_id: 'm1', error: 'The model endpoint answered HTTP 500.', created_at: null },
      { message_id: 'gone', error: 'a turn cut from this page of the history' }
    ]);
    expect(failed.status).toBe('error');
    expect(failed.items).toEqual([{ kind: 'error', text: 'The model endpoint answered HTTP 500.' }]);
    expect(answered.status).toBe('done');

    const view = new TurnView();
    view.update(failed);
    expect(view.node.querySelector('[role=alert]')?.textContent).toBe('The model endpoint answered HTTP 500.');
    expect(view.node.textContent).not.toContain('(no answer)');
  });

  it('puts the error after the text and tool calls the turn had', () => {
    const messages: OpenAIMessage[] = [
      { id: 'u1', role: 'user', content: 'Check PC1' },
      { id: 'a1', role: 'assistant', content: 'Checking.', tool_calls: [{ id: 'c1', function: { name: 'get_topology', arguments: '{}' } }] },
      { id: 't1', role: 'tool', content: '{}', tool_call_id: 'c1' }
    ];
    const [turn] = turnsFromHistory(messages, [{ message_id: 'u1', error: 'Stopped: the model did not answer in time.' }]);
    expect(turn.items.map(item => item.kind)).toEqual(['text', 'tool', 'error']);
    expect(turn.status).toBe('error');
    expect(turnsFromHistory(messages)[0].status).toBe('done'); // an older server: no errors
  });
});
