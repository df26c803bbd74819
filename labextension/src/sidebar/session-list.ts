/**
 * The project's sessions: a search box and one row per session (pinned first), each with
 * pin/unpin, rename and delete. It only renders and reports clicks; the panel acts.
 */
import type { ChatSession } from '../api';
import { orderSessions, searchSessions, sessionTitle } from './sessions';

export interface SessionListActions {
  select(session: ChatSession): void;
  pin(session: ChatSession): void;
  rename(session: ChatSession): void;
  remove(session: ChatSession): void;
}

function button(label: string, title: string, className: string, onClick: () => void): HTMLButtonElement {
  const node = document.createElement('button');
  node.type = 'button';
  node.className = `jp-gns3-copilot-sidebar-icon-button ${className}`;
  node.textContent = label;
  node.title = title;
  node.setAttribute('aria-label', title);
  node.addEventListener('click', event => {
    event.stopPropagation();
    onClick();
  });
  return node;
}

export class SessionList {
  readonly node: HTMLElement;
  private readonly search: HTMLInputElement;
  private readonly list: HTMLUListElement;
  private sessions: ChatSession[] = [];
  private selected: string | null = null;

  constructor(private readonly actions: SessionListActions) {
    this.node = document.createElement('div');
    this.node.className = 'jp-gns3-copilot-sidebar-sessions';
    this.search = document.createElement('input');
    this.search.type = 'search';
    this.search.placeholder = 'Search chats';
    this.search.setAttribute('aria-label', 'Search chats');
    this.search.className = 'jp-gns3-copilot-sidebar-search';
    this.search.addEventListener('input', () => this.render());
    this.list = document.createElement('ul');
    this.list.className = 'jp-gns3-copilot-sidebar-session-list';
    this.node.append(this.search, this.list);
  }

  set(sessions: ChatSession[], selected: string | null): void {
    this.sessions = sessions;
    this.selected = selected;
    this.render();
  }

  private render(): void {
    const shown = orderSessions(searchSessions(this.sessions, this.search.value));
    this.list.replaceChildren(...shown.map(session => this.row(session)));
    if (!shown.length) {
      const none = document.createElement('li');
      none.className = 'jp-gns3-copilot-sidebar-hint';
      none.textContent = this.sessions.length ? 'No chat matches.' : 'No chats in this project yet.';
      this.list.appendChild(none);
    }
  }

  private row(session: ChatSession): HTMLLIElement {
    const item = document.createElement('li');
    item.className = 'jp-gns3-copilot-sidebar-session';
    item.dataset.sessionId = session.thread_id;
    item.dataset.pinned = String(session.pinned);
    if (session.thread_id === this.selected) {
      item.classList.add('jp-mod-selected');
      item.setAttribute('aria-current', 'true');
    }
    const title = document.createElement('button');
    title.type = 'button';
    title.className = 'jp-gns3-copilot-sidebar-session-title';
    title.textContent = sessionTitle(session);
    title.title = `${sessionTitle(session)}${session.pinned ? ' (pinned)' : ''}: ${session.thread_id}`;
    title.addEventListener('click', () => this.actions.select(session));
    item.append(
      title,
      button(session.pinned ? 'Unpin' : 'Pin', session.pinned ? 'Unpin this chat' : 'Pin this chat to the top',
        'jp-gns3-copilot-sidebar-pin', () => this.actions.pin(session)),
      button('Rename', 'Rename this chat', 'jp-gns3-copilot-sidebar-rename', () => this.actions.rename(session)),
      button('Delete', 'Delete this chat', 'jp-gns3-copilot-sidebar-delete', () => this.actions.remove(session))
    );
    return item;
  }
}
