import { describe, expect, it } from 'vitest';

import type { PendingApproval } from '../api';
import { client, json, sse } from '../../test/api-client';
import { ConversationView } from './conversation';
import { Notice } from './notice';
import { TurnRunner } from './turn-runner';

const PENDING: PendingApproval = {
  approval_id: 'a1',
  tool_call_id: 'c1',
  tool_name: 'configure_vpcs',
  tool_input: {},
  summary: 'Set PC1 to 10.0.0.1/24',
  asked_at: '2026-01-01T00:00:00Z',
  expires_at: '2026-01-01T00:10:00Z'
};
const WAITING = { user: 'address PC1', status: 'running' as const, items: [], stats: {} };

/** A runner on `handler`'s server, chat `s1` of project `p1` chosen. */
function runner(handler: Parameters<typeof client>[0], sessionId: string | null = 's1') {
  const { api, calls } = client(handler);
  const running: boolean[] = [];
  let runnerRef: TurnRunner;
  const conversation = new ConversationView((id, decision, comment) => runnerRef.decide(id, decision, comment));
  const notice = new Notice(() => false, () => false);
  runnerRef = new TurnRunner({
    api, conversation, notice,
    project: () => 'p1',
    projectId: () => 'p1',
    sessionId: () => sessionId,
    onRunning: value => running.push(value),
    onStopping: () => running.push(false)
  });
  return { runner: runnerRef, conversation, notice, calls, running };
}

const approve = (conversation: ConversationView) =>
  conversation.node.querySelector<HTMLButtonElement>('.gns3c-approve')!;

describe("the sidebar's running turn", () => {
  it('shows a turn waiting for a decision, and continues it with the decision route\'s answer', async () => {
    const { runner: r, conversation, calls, running } = runner(() =>
      sse([
        { type: 'approval_resolved', session_id: 's1', approval_id: 'a1', tool_call_id: 'c1', decision: 'approve', comment: null },
        { type: 'content', session_id: 's1', content: 'PC1 is addressed.' },
        { type: 'done', session_id: 's1' }
      ])
    );
    const shown = r.showWaiting('s1', WAITING, [PENDING]);
    await new Promise(resolve => setTimeout(resolve, 0));
    expect([r.running, r.waiting]).toEqual([true, true]);
    expect(conversation.node.textContent).toContain('Set PC1 to 10.0.0.1/24');
    approve(conversation).click();
    expect(await shown).toBe(true);
    expect(calls.map(call => `${call.method} ${new URL(call.url).pathname}`)).toEqual([
      'POST /base/copilot/projects/p1/chat/sessions/s1/approvals/a1'
    ]);
    expect(conversation.node.textContent).toContain('PC1 is addressed.');
    expect([r.running, r.waiting, running]).toEqual([false, false, [true, false]]);
  });

  it('says where the turn goes on when a stream elsewhere waited for the decision', async () => {
    const { runner: r, conversation, notice } = runner(() => json(200, { status: 'decided' }));
    const shown = r.showWaiting('s1', WAITING, [PENDING]);
    await new Promise(resolve => setTimeout(resolve, 0));
    approve(conversation).click();
    expect(await shown).toBe(true);
    expect(notice.node.textContent).toContain('the turn goes on where it was asked');
  });

  it('Stop without a chosen chat only leaves the waiting turn (it waits on the server)', async () => {
    const { runner: r, calls } = runner(() => json(200, {}), null);
    const shown = r.showWaiting('s1', WAITING, [PENDING]);
    await r.stop();
    expect(await shown).toBe(false);
    expect(calls).toEqual([]);
    expect(r.running).toBe(false);
  });

  it('Stop asks the server to abort and ends the waiting turn as stopped', async () => {
    const { runner: r, conversation, calls, running } = runner(() => json(200, { status: 'aborted' }));
    const shown = r.showWaiting('s1', WAITING, [PENDING]);
    await r.stop();
    expect(await shown).toBe(true);
    expect(calls.map(call => `${call.method} ${new URL(call.url).pathname}`)).toEqual([
      'POST /base/copilot/projects/p1/chat/sessions/s1/abort'
    ]);
    expect(conversation.node.querySelector<HTMLElement>('.jp-gns3-copilot-sidebar-turn')!.dataset.status).toBe('aborted');
    expect(running).toEqual([true, false, false]);
  });
});
