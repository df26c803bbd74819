/**
 * The project's chats: New chat, the export buttons (To notebook, Markdown) and the
 * session list with its pin, rename and delete; which chat is chosen. The conversation of
 * the chosen chat is the sidebar's.
 */
import type { CopilotApi, ChatSession } from '../api';
import { h } from '../dom';
import { cellsFromNotebook, type ExportCell } from './export';
import type { Notice } from './notice';
import { SessionList } from './session-list';

export interface ChatsOptions {
  api: CopilotApi;
  notice: Notice;
  /** The chosen project; throws when there is none. */
  project(): string;
  projectId(): string | null;
  /** Inserts cells after the active cell of the active notebook; false when there is none. */
  insertCells(cells: ExportCell[]): boolean;
  /** Asks the new title of `session` (null: cancelled). */
  askTitle(session: ChatSession): Promise<string | null>;
  /** Asks whether to delete `session` for good. */
  confirmDelete(session: ChatSession): Promise<boolean>;
  /** The person chose a chat, or a new one. */
  select(sessionId: string): void;
  newChat(): void;
}

export class Chats {
  readonly node: HTMLElement;
  /** The chat shown (null: the next message starts a new one). */
  selected: string | null = null;
  private sessions: ChatSession[] = [];
  private closed = false;
  private readonly list: SessionList;
  private readonly buttons: HTMLButtonElement[];

  constructor(private readonly options: ChatsOptions) {
    this.list = new SessionList({
      select: session => options.select(session.thread_id),
      pin: session => void this.refresh(() => options.api.pin(options.project(), session.thread_id, !session.pinned)),
      rename: session => void this.rename(session),
      remove: session => void this.remove(session)
    });
    const newChat = h('button', { class: 'jp-gns3-copilot-sidebar-new', text: 'New chat' });
    newChat.addEventListener('click', () => options.newChat());
    const toNotebook = h('button', { class: 'jp-gns3-copilot-sidebar-export-notebook', text: 'To notebook' });
    toNotebook.title = 'Insert this chat into the active notebook as cells';
    toNotebook.addEventListener('click', () => void this.exportToNotebook());
    const toMarkdown = h('button', { class: 'jp-gns3-copilot-sidebar-export-markdown', text: 'Markdown' });
    toMarkdown.title = 'Download this chat as a Markdown file';
    toMarkdown.addEventListener('click', () => void this.exportMarkdown());
    this.buttons = [newChat, toNotebook, toMarkdown];
    this.node = h(
      'div',
      { class: 'jp-gns3-copilot-sidebar-chats' },
      h('div', { class: 'jp-gns3-copilot-sidebar-row' }, ...this.buttons),
      this.list.node
    );
  }

  /** Run a session action (if any), then show the sessions again; errors are said, not
   * thrown. */
  async refresh(action?: () => Promise<unknown>): Promise<void> {
    try {
      await action?.();
      await this.load();
    } catch (error) {
      this.options.notice.fail(error);
    }
  }

  /** Read the project's sessions again and list them. */
  async load(): Promise<void> {
    const projectId = this.options.projectId();
    if (!projectId) {
      return;
    }
    this.sessions = await this.options.api.sessions(projectId);
    this.list.set(this.sessions, this.selected);
  }

  /** Choose `sessionId` (null: none) in the list. */
  show(sessionId: string | null): void {
    this.selected = sessionId;
    this.list.set(this.sessions, sessionId);
  }

  /** Forget the project's chats (another project is chosen): `listed` shows an empty list. */
  clear(listed: boolean): void {
    this.selected = null;
    this.sessions = [];
    if (listed) {
      this.list.set([], null);
    }
  }

  setClosed(closed: boolean): void {
    this.closed = closed;
    for (const button of this.buttons) {
      button.disabled = closed;
    }
  }

  /** Insert the chosen chat into the active notebook, after its active cell. */
  async exportToNotebook(): Promise<void> {
    if (this.closed) {
      return;
    }
    const cells = await this.exportCells();
    if (cells && !this.options.insertCells(cells)) {
      this.options.notice.say('Open a notebook first: the chat is inserted after its active cell.');
    }
  }

  /** Download the chosen chat as a Markdown file. */
  async exportMarkdown(): Promise<void> {
    const project = this.options.project();
    const session = this.chosen();
    if (!session) {
      return;
    }
    try {
      const text = await this.options.api.exportSession(project, session, 'md');
      const title = this.sessions.find(s => s.thread_id === session)?.title || 'copilot-chat';
      const link = document.createElement('a');
      link.href = URL.createObjectURL(new Blob([text], { type: 'text/markdown' }));
      link.download = `${title.replace(/[^\p{L}\p{N} ._-]+/gu, '_').trim() || 'copilot-chat'}.md`;
      link.click();
      setTimeout(() => URL.revokeObjectURL(link.href), 0);
    } catch (error) {
      this.options.notice.fail(error);
    }
  }

  private chosen(): string | null {
    if (!this.selected) {
      this.options.notice.say('Choose a chat first.');
    }
    return this.selected;
  }

  private async exportCells(): Promise<ExportCell[] | null> {
    const session = this.chosen();
    if (!session) {
      return null;
    }
    try {
      const project = this.options.project();
      return cellsFromNotebook(await this.options.api.exportSession(project, session, 'ipynb'));
    } catch (error) {
      this.options.notice.fail(error);
      return null;
    }
  }

  private async rename(session: ChatSession): Promise<void> {
    const title = await this.options.askTitle(session);
    if (title) {
      await this.refresh(() => this.options.api.rename(this.options.project(), session.thread_id, title));
    }
  }

  private async remove(session: ChatSession): Promise<void> {
    if (!(await this.options.confirmDelete(session))) {
      return;
    }
    await this.refresh(async () => {
      await this.options.api.deleteSession(this.options.project(), session.thread_id);
      if (this.selected === session.thread_id) {
        this.options.newChat();
      }
    });
  }
}
