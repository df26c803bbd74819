import { describe, expect, it } from 'vitest';

import type { HistoryMessage } from '../api';
import { TurnView } from '../turn/view';
import { turnsFromHistory } from './history';

describe('turnsFromHistory', () => {
  it('keeps the error a turn ended with: shown as the error, never "(no answer)"', () => {
    const messages: HistoryMessage[] = [
      { role: 'user', content: 'Why can PC1 not ping PC2?', metadata: { error: 'The model endpoint answered HTTP 500.' } },
      { role: 'user', content: 'And now?' },
      { role: 'assistant', content: 'PC2 answers now.' }
    ];
    const [failed, answered] = turnsFromHistory(messages);
    expect(failed.status).toBe('error');
    expect(failed.items).toEqual([{ kind: 'error', text: 'The model endpoint answered HTTP 500.' }]);
    expect(answered.status).toBe('done');

    const view = new TurnView();
    view.update(failed);
    expect(view.node.querySelector('[role=alert]')?.textContent).toBe('The model endpoint answered HTTP 500.');
    expect(view.node.textContent).not.toContain('(no answer)');
  });

  it('puts an error after the text and tool calls the turn had', () => {
    const messages: HistoryMessage[] = [
      { role: 'user', content: 'Check PC1' },
      { role: 'assistant', content: 'Checking.', tool_calls: [{ id: 'c1', function: { name: 'get_topology', arguments: '{}' } }] },
      { role: 'tool', content: '{}', tool_call_id: 'c1' },
      { role: 'assistant', content: '', metadata: { error: 'Stopped: the model did not answer in time.' } }
    ];
    const [turn] = turnsFromHistory(messages);
    expect(turn.items.map(item => item.kind)).toEqual(['text', 'tool', 'error']);
    expect(turn.status).toBe('error');
  });
});
