import { describe, expect, it, vi } from 'vitest';

import { fixtureTurn } from '../../test/fixtures';
import { describeArguments } from './describe';
import { resultView } from './results';
import type { ToolItem, TurnRecord } from './types';
import { settledLength } from './text-view';
import { displayOrder, TurnView } from './view';

function view(turn: TurnRecord, options = {}): TurnView {
  const v = new TurnView(options);
  v.update(turn);
  document.body.append(v.node);
  return v;
}

const heads = (v: TurnView) => [...v.node.querySelectorAll<HTMLButtonElement>('.gns3c-tool-head')];

describe('tool card headers', () => {
  it('reads arguments as words, never JSON', () => {
    expect(describeArguments('run_vpcs_commands', '{"devices": [{"device": "PC1", "commands": ["ping 10.0.0.2 -c 2"]}]}')).toEqual([
      'PC1: ping 10.0.0.2 -c 2'
    ]);
    expect(describeArguments('create_nodes', '{"nodes": [{"template": "VPCS", "name": "PC3"}]}')).toEqual(['create PC3 (vpcs)']);
    expect(describeArguments('create_links', '{"links": [{"a": "PC3", "a_port": "e0", "b": "Switch1", "b_port": "e2"}]}')).toEqual([
      'link PC3 e0 - Switch1 e2'
    ]);
    expect(describeArguments('start_nodes', '{"nodes": ["PC1", "PC2"]}')).toEqual(['start PC1, PC2']);
    expect(describeArguments('get_skill', '{"device_type": "vpcs", "topic": null, "tags": ["a", "b"]}')).toEqual([
      'device_type: vpcs',
      'tags: a, b'
    ]);
    expect(describeArguments('x', '{"dev')).toEqual([]);
    expect(describeArguments('run_vpcs_commands', '{"devices": [{"device": "PC1", "commands": ["ping 10.0')).toEqual([
      'PC1: ping 10.0'
    ]);
    expect(describeArguments('x', '{"a": [1, 2], "b": tr')).toEqual(['a: 1, 2']);
  });

  it('shows the tool and its arguments while streaming, the summary once ended', () => {
    const turn = fixtureTurn('failed_ping');
    const tool = turn.items[1] as ToolItem;
    const running: TurnRecord = { ...turn, status: 'running', items: [turn.items[0], { ...tool, state: 'running', output: null, summary: null, outcome: null }] };
    const v = view(running);
    const [head] = heads(v);
    expect(head.textContent).toContain('run vpcs commands');
    expect(head.textContent).toContain('PC1: ping 10.0.0.9 -c 2');
    expect(head.textContent).not.toContain('{');
    v.update(turn);
    expect(head.querySelector('.gns3c-tool-title')?.textContent).toBe('ran ping 10.0.0.9 -c 2 on PC1 · 1 failed check');
    expect(head.querySelector('code')?.textContent).toBe('ping 10.0.0.9 -c 2');
  });

  it('marks a ping with 100% loss failed, not green', () => {
    const v = view(fixtureTurn('failed_ping'));
    const badge = v.node.querySelector<HTMLElement>('.gns3c-badge')!;
    expect(badge.textContent).toBe('failed');
    expect(badge.dataset.tone).toBe('error');
    expect(v.node.querySelector('.gns3c-tool')?.getAttribute('data-outcome')).toBe('failed');
  });

  it('opens on click with the arguments, the device table and the progress', () => {
    const v = view(fixtureTurn('failed_ping'));
    const [head] = heads(v);
    const body = document.getElementById(head.getAttribute('aria-controls')!)!;
    expect(head.getAttribute('aria-expanded')).toBe('false');
    expect(body.hidden).toBe(true);
    head.click();
    expect(head.getAttribute('aria-expanded')).toBe('true');
    expect(body.hidden).toBe(false);
    expect(body.querySelector('.gns3c-args')?.textContent).toBe('PC1: ping 10.0.0.9 -c 2');
    expect(body.querySelector('.gns3c-device-name')?.textContent).toBe('PC1');
    expect(body.querySelector('pre')?.textContent).toContain('host (10.0.0.9) not reachable');
    expect(body.querySelector('.gns3c-status')?.textContent).toBe('ran');
    expect(body.querySelector('.gns3c-progress-message')?.textContent).toBe('PC1> ping 10.0.0.9 -c 2\nhost (10.0.0.9) not reachable');
    head.click();
    expect(body.hidden).toBe(true);
  });

  it('shows a refusal as the note for the student, never the text for the model', () => {
    const v = view(fixtureTurn('teaching_refusal'));
    heads(v)[0].click();
    const card = v.node.querySelector<HTMLElement>('.gns3c-tool')!;
    expect(card.querySelector('.gns3c-badge')?.textContent).toBe('refused');
    expect(card.querySelector('.gns3c-refusal')?.textContent).toBe("Teaching mode: I can't change PC2's address; here is how you would do it.");
    expect(v.node.textContent).not.toContain('Explain to the user');
    expect(card.querySelector('table')).toBeNull();
  });

  it('renders the Markdown of a refusal note and of a tool note: code, never backticks', () => {
    const turn = fixtureTurn('teaching_refusal');
    const note = 'Teaching mode: type `ip 10.0.0.2/24` on **PC2** yourself <img src=x onerror=alert(1)>';
    const refused = {
      ...turn,
      items: turn.items.map(item => (item.kind === 'tool' ? { ...item, note } : item))
    };
    const v = view(refused);
    heads(v)[0].click();
    const shown = v.node.querySelector<HTMLElement>('.gns3c-refusal')!;
    expect(shown.querySelector('code')?.textContent).toBe('ip 10.0.0.2/24');
    expect(shown.querySelector('strong')?.textContent).toBe('PC2');
    expect(shown.textContent).not.toContain('`');
    expect(shown.querySelector('img')).toBeNull();
    expect(shown.querySelector('p')).toBeNull();

    const ping = fixtureTurn('failed_ping');
    const noted = {
      ...ping,
      items: ping.items.map(item => (item.kind === 'tool' ? { ...item, note: 'Read with `show ip`.' } : item))
    };
    const w = view(noted);
    heads(w)[0].click();
    const toolNote = w.node.querySelector<HTMLElement>('.gns3c-tool-note')!;
    expect(toolNote.textContent).toBe('Read with show ip.');
    expect(toolNote.querySelector('code')?.textContent).toBe('show ip');
  });
});

describe('streaming Markdown', () => {
  it('settles the blocks before the last top-level one, never inside a fence or a list item', () => {
    expect(settledLength('one\n\ntwo')).toBe(5);
    expect(settledLength('one\n\n- a\n\n  more of a')).toBe(5);
    expect(settledLength('```\ncode\n\nstill code')).toBe(0);
    expect(settledLength('```\ncode\n\n```\n\nafter')).toBe(15);
  });

  it('renders settled blocks once and the whole text as one rendering would', () => {
    const answer = '## Diagnosis\n\n**PC3** is down:\n\n- a\n- b\n\n```\nping\n\nreply\n```\n\nDone.';
    const turn: TurnRecord = { user: '', status: 'running', items: [{ kind: 'text', text: '' }], stats: {} };
    const v = view(turn);
    let first: Element | null = null;
    for (let n = 1; n <= answer.length; n++) {
      turn.items[0] = { kind: 'text', text: answer.slice(0, n) };
      v.update(turn);
      if (n > answer.indexOf('**')) {
        first = first ?? v.node.querySelector('h2');
        expect(v.node.querySelector('h2')).toBe(first);
      }
    }
    const whole = view({ ...turn, items: [{ kind: 'text', text: answer }] });
    expect(v.node.querySelector('.gns3c-md')!.textContent).toBe(whole.node.querySelector('.gns3c-md')!.textContent);
    expect(v.node.querySelectorAll('h2, strong, li, pre')).toHaveLength(5);
  });
});

describe('TurnView', () => {
  it('puts the answer, the footer and the error in the DOM', () => {
    const v = view(fixtureTurn('answer_with_stats'));
    expect(v.node.querySelector('.gns3c-user-text')?.textContent).toBe('what is a VLAN?');
    expect(v.node.querySelector('.gns3c-md strong')?.textContent).toBe('VLAN');
    expect([...v.node.querySelectorAll('.gns3c-footer span')].map(s => s.textContent)).toEqual([
      'VLAN basics',
      '812 in / 57 out tokens',
      '1 model call',
      '1.2 s'
    ]);
    const failed = view(fixtureTurn('error_midway'));
    expect(failed.node.querySelector('[role=alert]')?.textContent).toContain('HTTP 401');
    expect(failed.node.querySelector('.gns3c-badge')?.textContent).toBe('stopped');
  });

  it('updates incrementally: unchanged items keep their nodes, an opened card stays open', () => {
    const turn: TurnRecord = { user: 'q', status: 'running', items: [], stats: {} };
    const v = view(turn);
    turn.items.push({ kind: 'text', text: 'Checking' });
    v.update(turn);
    const text = v.node.querySelector('.gns3c-md')!;
    const textChild = text.querySelector('p');
    const tool: ToolItem = {
      kind: 'tool', id: 'c', name: 'get_topology', arguments: '{}', complete: true, state: 'running',
      progress: [], output: null, summary: null, outcome: null, note: null
    };
    turn.items.push(tool);
    v.update(turn);
    const card = v.node.querySelector('.gns3c-tool')!;
    heads(v)[0].click();
    turn.items[1] = { ...tool, progress: [{ message: 'reading', elapsed: null, node: null }] };
    v.update(turn);
    expect(v.node.querySelector('.gns3c-md')).toBe(text);
    expect(text.querySelector('p')).toBe(textChild);
    expect(v.node.querySelector('.gns3c-tool')).toBe(card);
    expect(heads(v)[0].getAttribute('aria-expanded')).toBe('true');
    expect(card.querySelector('.gns3c-progress-message')?.textContent).toBe('reading');
    turn.items.push({ kind: 'text', text: 'Done' });
    turn.status = 'done';
    v.update(turn);
    expect(v.node.querySelector('.gns3c-tool')).toBe(card);
    expect(v.node.querySelectorAll('.gns3c-md')).toHaveLength(2);
  });

  it('shows approval buttons only with a callback, and passes the decision', () => {
    const turn = fixtureTurn('approval_then_create');
    const pending: TurnRecord = { ...turn, status: 'running', items: [{ ...turn.items[1], state: 'pending' } as TurnRecord['items'][number]] };
    const onDecision = vi.fn();
    const v = view(pending, { onDecision });
    const approve = v.node.querySelector<HTMLButtonElement>('.gns3c-approve')!;
    expect(approve.closest<HTMLElement>('.gns3c-approval-controls')!.hidden).toBe(false);
    expect(v.node.querySelector('.gns3c-approval-summary')?.textContent).toBe('create PC3 (VPCS)');
    v.node.querySelector<HTMLTextAreaElement>('.gns3c-approval-comment')!.value = 'not sent with Approve';
    approve.click();
    expect(onDecision).toHaveBeenCalledWith('ap_1', 'approve', null);
    expect(view(pending).node.querySelector<HTMLElement>('.gns3c-approval-controls')!.hidden).toBe(true);
    const done = view(turn);
    expect([...done.node.querySelectorAll('.gns3c-approval-state')].map(s => s.textContent)).toEqual([
      'Approved',
      'Rejected: one PC is enough'
    ]);
  });

  it('offers the decision only while the turn runs here, and says where to decide after', () => {
    const turn = fixtureTurn('approval_then_create');
    const pending: TurnRecord = { ...turn, status: 'running', items: [{ ...turn.items[1], state: 'pending' } as TurnRecord['items'][number]] };
    const v = view(pending, { onDecision: vi.fn() });
    const buttons = v.node.querySelector<HTMLElement>('.gns3c-approval-controls')!;
    expect(buttons.hidden).toBe(false);
    v.update({ ...pending, status: 'interrupted' });
    expect(buttons.hidden).toBe(true);
    expect(v.node.querySelector('.gns3c-approval-state')?.textContent).toContain('%copilot approve');
  });

  it('gives the buttons back and says why when the decision is refused', async () => {
    const turn = fixtureTurn('approval_then_create');
    const pending: TurnRecord = { ...turn, status: 'running', items: [{ ...turn.items[1], state: 'pending' } as TurnRecord['items'][number]] };
    const v = view(pending, { onDecision: () => Promise.reject(new Error('HTTP 409: already decided')) });
    const approve = v.node.querySelector<HTMLButtonElement>('.gns3c-approve')!;
    approve.click();
    expect(approve.disabled).toBe(true);
    await vi.waitFor(() => expect(approve.disabled).toBe(false));
    const state = v.node.querySelector<HTMLElement>('.gns3c-approval-state')!;
    expect(state.textContent).toBe('Could not send the decision (HTTP 409: already decided)');
    expect(state.dataset.tone).toBe('error');
  });

  it('sends the comment typed for the copilot with Reject', () => {
    const turn = fixtureTurn('approval_then_create');
    const pending: TurnRecord = { ...turn, status: 'running', items: [{ ...turn.items[1], state: 'pending' } as TurnRecord['items'][number]] };
    const onDecision = vi.fn();
    const v = view(pending, { onDecision });
    const comment = v.node.querySelector<HTMLTextAreaElement>('.gns3c-approval-comment')!;
    expect(comment.getAttribute('aria-label')).toContain('Why you reject');
    comment.value = '  one PC is enough ';
    v.node.querySelector<HTMLButtonElement>('.gns3c-reject')!.click();
    expect(onDecision).toHaveBeenCalledWith('ap_1', 'reject', 'one PC is enough');
    expect(comment.disabled).toBe(true);
  });

  it('shows each planned change before the card of the call it plans', () => {
    const v = view(fixtureTurn('approval_then_create'));
    const shown = [...v.node.querySelector('.gns3c-items')!.children].map(node =>
      node.classList.contains('gns3c-approval')
        ? `plan ${node.querySelector('.gns3c-approval-summary')!.textContent}`
        : node.classList.contains('gns3c-tool')
          ? `card ${node.querySelector('.gns3c-tool-head')!.textContent}`
          : node.className
    );
    expect(shown).toEqual([
      'plan create PC3 (VPCS)',
      expect.stringMatching(/^card .*created PC3/),
      'plan create PC4 (VPCS)',
      expect.stringMatching(/^card .*PC4/),
      'gns3c-md'
    ]);
    expect(displayOrder([{ kind: 'text', text: 'a' }])).toEqual([0]);
  });

  it('shows no Working spinner while a change waits for a person', () => {
    const turn = fixtureTurn('approval_then_create');
    const [tool, approval] = turn.items;
    const waiting: TurnRecord = { ...turn, status: 'running', stats: {}, items: [tool, { ...approval, state: 'pending' } as TurnRecord['items'][number]] };
    const v = view(waiting, { onDecision: vi.fn() });
    expect(v.node.querySelector('.gns3c-spinner')).toBeNull();
    expect(v.node.dataset.waiting).toBe('true');
    expect(v.node.getAttribute('aria-busy')).toBe('false');
    v.update({ ...waiting, items: [tool, approval] });
    expect(v.node.querySelector('.gns3c-spinner')).not.toBeNull();
    expect(v.node.querySelector('.gns3c-note')?.textContent).toBe('Working');
  });

  it('opens the tool cards from the start when asked (a direct run)', () => {
    const closed = view(fixtureTurn('failed_ping'));
    expect(heads(closed)[0].getAttribute('aria-expanded')).toBe('false');
    const opened = view(fixtureTurn('failed_ping'), { openTools: true });
    expect(heads(opened)[0].getAttribute('aria-expanded')).toBe('true');
    expect(opened.node.querySelector('.gns3c-devices pre')?.textContent).toContain('not reachable');
  });

  it('gives every code block of an answer a Copy button', async () => {
    const turn: TurnRecord = {
      user: '', status: 'done', stats: {},
      items: [{ kind: 'text', text: 'Type:\n\n```\nip 10.0.0.1/24 10.0.0.254\n```\n\nand `show ip`.' }]
    };
    const v = view(turn);
    const blocks = v.node.querySelectorAll('.gns3c-code');
    expect(blocks).toHaveLength(1);
    const copy = blocks[0].querySelector<HTMLButtonElement>('button.gns3c-copy')!;
    expect(copy.textContent).toBe('Copy');
    expect(blocks[0].querySelector('pre')?.textContent).toBe('ip 10.0.0.1/24 10.0.0.254\n');
    expect(v.node.querySelectorAll('button.gns3c-copy')).toHaveLength(1); // not on inline code
    v.update({ ...turn, items: [{ kind: 'text', text: (turn.items[0] as { text: string }).text + '\n\n```\nsave\n```' }] });
    expect(v.node.querySelectorAll('.gns3c-code > button.gns3c-copy + pre')).toHaveLength(2);
    // jsdom has no clipboard and copies nothing: the button says what to do instead.
    copy.click();
    await vi.waitFor(() => expect(copy.textContent).toBe('Select the text to copy it'));
  });
});

describe('tool results', () => {
  it('shows the topology\'s links and nodes as tables, not JSON', () => {
    const output = JSON.stringify({
      project: 'Lab',
      nodes: [{ name: 'PC1', type: 'vpcs', ports: ['e0'] }],
      links: [
        { a: 'PC1', a_port: 'e0', b: 'Switch1', b_port: 'e0' },
        { a: 'PC2', a_port: 'e0', b: 'Switch1', b_port: 'e1', suspended: true }
      ]
    });
    const box = resultView(output);
    expect(box.textContent).not.toContain('{');
    const tables = [...box.querySelectorAll<HTMLTableElement>('table.gns3c-records')];
    expect(tables).toHaveLength(2);
    const [nodes, links] = tables.map(table => [...table.rows].map(row => [...row.cells].map(cell => cell.textContent)));
    expect(nodes).toEqual([['name', 'type', 'ports'], ['PC1', 'vpcs', 'e0']]);
    expect(links).toEqual([
      ['a', 'a_port', 'b', 'b_port', 'suspended'],
      ['PC1', 'e0', 'Switch1', 'e0', ''],
      ['PC2', 'e0', 'Switch1', 'e1', 'true']
    ]);
    // Short fields in the key/value table; the tables under their names, at full width.
    expect([...box.querySelectorAll('.gns3c-kv th')].map(th => th.textContent)).toEqual(['project']);
    expect(box.querySelector('.gns3c-kv table')).toBeNull();
    expect([...box.querySelectorAll('.gns3c-fields > .gns3c-label')].map(label => label.textContent)).toEqual(['nodes', 'links']);
  });
});
