import { describe, expect, it } from 'vitest';

import { ApiError } from '../api';
import type { ChatEvent } from '../events';
import { ConversationView } from './conversation';

async function* failingStream(): AsyncGenerator<ChatEvent> {
  yield { type: 'heartbeat', session_id: 's1' };
  yield { type: 'content', session_id: 's1', content: 'Hel' };
  yield { type: 'content', session_id: 's1', content: 'lo' };
  throw new ApiError('The Jupyter server did not answer POST .../chat/stream: network error', 0);
}

describe('ConversationView', () => {
  it('streams a turn, and a failed stream ends it with the error said', async () => {
    const view = new ConversationView();
    const seen: string[] = [];
    const errors: string[] = [];
    const status = await view.stream('Hi?', failingStream(), event => seen.push(event.type), error => errors.push(error));
    expect(seen).toEqual(['heartbeat', 'content', 'content']);
    expect(errors).toEqual(['The Jupyter server did not answer POST .../chat/stream: network error']);
    const turns = view.node.querySelectorAll<HTMLElement>('.jp-gns3-copilot-sidebar-turn');
    expect(turns).toHaveLength(1);
    expect(turns[0].dataset.status).toBe(status);
    expect(turns[0].textContent).toContain('Hello');
  });

  it('shows a history as one block per turn, and clear() brings the hint back', () => {
    const view = new ConversationView();
    const hint = view.node.querySelector<HTMLElement>('.jp-gns3-copilot-sidebar-hint')!;
    view.show([
      { user: 'One', status: 'done', items: [{ kind: 'text', text: 'First answer' }], stats: {} },
      { user: 'Two', status: 'done', items: [{ kind: 'text', text: 'Second answer' }], stats: {} }
    ]);
    expect(hint.hidden).toBe(true);
    const turns = view.node.querySelectorAll('.jp-gns3-copilot-sidebar-turn');
    expect(turns).toHaveLength(2);
    expect(turns[0].textContent).toContain('First answer');
    expect(turns[1].textContent).toContain('Second answer');
    view.clear();
    expect(view.node.querySelectorAll('.jp-gns3-copilot-sidebar-turn')).toHaveLength(0);
    expect(hint.hidden).toBe(false);
  });
});
