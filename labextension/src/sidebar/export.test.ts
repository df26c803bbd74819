import { describe, expect, it } from 'vitest';

import type { ConversationHistory } from '../api';
import { cellsFromNotebook } from './export';
import { reduceTurn } from '../turn/reducer';
import { turnEvents, turnsFromHistory } from './history';

const call = (id: string, name: string, args: unknown) => ({
  id,
  type: 'function',
  function: { name, arguments: JSON.stringify(args) }
});

const history: ConversationHistory = {
  thread_id: 's1',
  title: 'PC addresses',
  messages: [
    { role: 'system', content: 'You are...' },
    { role: 'user', content: 'Which address does PC1 have?\nAnd PC2?' },
    {
      role: 'assistant',
      content: '',
      tool_calls: [
        call('c1', 'run_show_commands', { devices: [{ device: 'PC1', commands: ['show ip'] }, { device: 'PC2', commands: ['show ip', 'ping 10.0.0.1 -c 2'] }] }),
        call('c2', 'get_topology', {})
      ]
    },
    {
      role: 'tool',
      tool_call_id: 'c1',
      name: 'run_show_commands',
      content: '[{"device_name":"PC1"}]',
      metadata: { at: 1, reading: { summary: 'ran `show ip` on PC1, PC2 · 1 ok, 1 failed', outcome: 'partial', note: null } }
    },
    { role: 'tool', tool_call_id: 'c2', name: 'get_topology', content: 'PC1 e0 <-> Switch1 e0' },
    {
      role: 'assistant',
      content: 'PC1 has **10.0.0.1/24**.',
      tool_calls: [call('c3', 'run_vpcs_commands', { devices: [{ device: 'PC3', commands: ['ip 10.0.0.3/24\nsave'] }] })]
    },
    { role: 'user', content: 'Thanks' },
    { role: 'assistant', content: 'You are welcome.' }
  ]
};

describe('cellsFromNotebook', () => {
  it("reads the server's notebook export", () => {
    const notebook = JSON.stringify({
      nbformat: 4,
      nbformat_minor: 5,
      metadata: {},
      cells: [
        { cell_type: 'markdown', source: ['# A\n', 'b'], metadata: {} },
        { cell_type: 'code', source: '%copilot run PC1: show ip', metadata: {}, outputs: [], execution_count: null },
        { cell_type: 'raw', source: 'x', metadata: {} }
      ]
    });
    expect(cellsFromNotebook(notebook)).toEqual([
      { cell_type: 'markdown', source: '# A\nb' },
      { cell_type: 'code', source: '%copilot run PC1: show ip' }
    ]);
  });
});

describe('turnsFromHistory', () => {
  it('one turn per question, tool calls with their results, unanswered calls stopped', () => {
    const turns = turnsFromHistory(history.messages);
    expect(turns.map(turn => turn.user)).toEqual(['Which address does PC1 have?\nAnd PC2?', 'Thanks']);
    const [first] = turns;
    expect(first.items.map(item => item.kind)).toEqual(['tool', 'tool', 'text', 'tool']);
    const tools = first.items.filter(item => item.kind === 'tool');
    expect(tools.map(tool => [tool.name, tool.state, tool.output])).toEqual([
      ['run_show_commands', 'done', '[{"device_name":"PC1"}]'],
      ['get_topology', 'done', 'PC1 e0 <-> Switch1 e0'],
      ['run_vpcs_commands', 'stopped', null]
    ]);
    expect(tools.map(tool => [tool.summary, tool.outcome])).toEqual([
      ['ran `show ip` on PC1, PC2 · 1 ok, 1 failed', 'partial'],
      [null, null],
      [null, null]
    ]);
    expect(turns[1].items).toEqual([{ kind: 'text', text: 'You are welcome.' }]);
  });

  it('a history cut before its first question starts with an anonymous turn', () => {
    const turns = turnsFromHistory([{ role: 'assistant', content: 'Done.' }]);
    expect(turns).toEqual([{ user: '', status: 'done', items: [{ kind: 'text', text: 'Done.' }], stats: {} }]);
  });

  it('a stored turn replayed as events gives the same items (a waiting turn goes on in one view)', () => {
    const [first] = turnsFromHistory(history.messages);
    const replayed = reduceTurn(first.user, turnEvents(first, 's1'));
    expect(replayed.items).toEqual(first.items);
  });
});
