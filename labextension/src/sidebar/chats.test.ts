import { describe, expect, it } from 'vitest';

import type { ChatSession } from '../api';
import { client, json } from '../../test/api-client';
import { Chats } from './chats';
import { Notice } from './notice';

const session = (thread_id: string, title: string): ChatSession => ({
  thread_id, title, pinned: false, message_count: 2, total_tokens: 10,
  created_at: null, updated_at: null, last_message_at: null
});

function chats(sessions: ChatSession[], confirm = true) {
  const { api, calls } = client((url, init) =>
    init.method === 'DELETE' ? json(200, {}) : json(200, sessions)
  );
  const notice = new Notice(() => false, () => false);
  const heard: string[] = [];
  const view = new Chats({
    api, notice,
    project: () => 'p1',
    projectId: () => 'p1',
    insertCells: () => true,
    askTitle: async () => null,
    confirmDelete: async () => confirm,
    select: id => heard.push(`select ${id}`),
    newChat: () => heard.push('new chat')
  });
  return { view, calls, notice, heard };
}

const titles = (view: Chats) =>
  [...view.node.querySelectorAll('.jp-gns3-copilot-sidebar-session-title')].map(node => node.textContent);

describe("the sidebar's chats", () => {
  it("lists the project's chats, the chosen one marked", async () => {
    const { view, heard } = chats([session('s1', 'Addressing'), session('s2', 'Routing')]);
    view.show('s2');
    await view.refresh();
    expect(titles(view)).toEqual(['Addressing', 'Routing']);
    expect(view.node.querySelector('.jp-mod-selected')?.getAttribute('data-session-id')).toBe('s2');
    view.node.querySelector<HTMLButtonElement>('.jp-gns3-copilot-sidebar-session-title')!.click();
    expect(heard).toEqual(['select s1']);
  });

  it('deleting the chosen chat starts a new one; a cancelled delete sends nothing', async () => {
    const { view, calls, heard } = chats([session('s1', 'Addressing')]);
    view.show('s1');
    await view.refresh();
    view.node.querySelector<HTMLButtonElement>('.jp-gns3-copilot-sidebar-delete')!.click();
    await new Promise(resolve => setTimeout(resolve, 0));
    await new Promise(resolve => setTimeout(resolve, 0));
    expect(calls.map(call => call.method)).toEqual(['GET', 'DELETE', 'GET']);
    expect(heard).toEqual(['new chat']);

    const cancelled = chats([session('s1', 'Addressing')], false);
    await cancelled.view.refresh();
    cancelled.view.node.querySelector<HTMLButtonElement>('.jp-gns3-copilot-sidebar-delete')!.click();
    await new Promise(resolve => setTimeout(resolve, 0));
    expect(cancelled.calls.map(call => call.method)).toEqual(['GET']);
  });

  it('asks for a chat to be chosen before exporting, and disables its buttons while closed', async () => {
    const { view, notice, calls } = chats([]);
    await view.exportToNotebook();
    expect(notice.node.textContent).toBe('Choose a chat first.');
    expect(calls).toEqual([]);
    view.setClosed(true);
    expect([...view.node.querySelectorAll('button')].every(button => button.disabled)).toBe(true);
  });
});
