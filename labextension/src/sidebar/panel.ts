/**
 * The Copilot sidebar: project picker with the lab status (the user's current settings),
 * the project's sessions, the selected session's conversation (history, then live
 * turns), the input box with Stop and the mode selector, the topology drawing (inline,
 * so it takes the theme's colours), the lab's objectives (`objectives.ts`), and Export. Talks to the server only (`CopilotApi`),
 * no kernel: a session continued here is the same session id the notebook's magics
 * continue. It follows the active notebook's project (`followProject`), and while the
 * server is closed by its configuration it says so once and disables what needs it.
 *
 * Each part is its own module, composed here: `ProjectPicker`, `LabStatus`, `Chats`,
 * `ObjectivesPanel`, `TopologyView`, `Notice`, `ConversationView`, `Composer`, with
 * `TurnRunner` running the turn and `ClosedState` the closed copilot.
 */
import type { Message } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';

import { ApiError, CopilotApi } from '../api';
import type { ChatEvent } from '../events';
import { h } from '../dom';
import { setApiKey } from './api-key';
import { Chats } from './chats';
import { ClosedState } from './closed';
import { Composer } from './composer';
import { ConversationView } from './conversation';
import { askTitle, confirmCatchUp, confirmDelete, confirmGiveUp } from './dialogs';
import type { ExportCell } from './export';
import { turnsFromHistory } from './history';
import { askForKey } from './key-dialog';
import { LabStatus } from './lab-status';
import { message, Notice } from './notice';
import { ObjectivesPanel } from './objectives';
import { ProjectPicker } from './project-picker';
import { TopologyView } from './topology';
import { TurnRunner } from './turn-runner';

export interface SidebarOptions {
  api?: CopilotApi;
  /** Inserts cells after the active cell of the active notebook; false when there is none. */
  insertCells: (cells: ExportCell[]) => boolean;
}

/** Said when a chat chosen (or continued from a saved answer) is not on the server. */
export const MISSING_CHAT =
  'That conversation is not on the server: it was deleted, or the answer came from %copilot run, ' +
  'which starts none. Ask here to start a new chat.';

export class CopilotSidebar extends Widget {
  readonly api: CopilotApi;
  private projectId: string | null = null;
  /** The active notebook's project, to choose once the running turn has ended. */
  private followLater: string | null = null;

  private readonly closed = new ClosedState(closed => this.renderClosed(closed));
  private readonly notice = new Notice(
    error => this.closed.closedBy(error),
    () => this.closed.closed
  );
  private readonly picker = new ProjectPicker(projectId => void this.selectProject(projectId));
  private readonly status: LabStatus;
  private readonly chats: Chats;
  private readonly objectives: ObjectivesPanel;
  private readonly topology: TopologyView;
  private readonly conversation = new ConversationView((approvalId, decision, comment) =>
    this.runner.decide(approvalId, decision, comment)
  );
  private readonly composer = new Composer({ send: () => void this.send(), stop: () => void this.runner.stop() });
  private readonly runner: TurnRunner;

  constructor(options: SidebarOptions) {
    super();
    const api = (this.api = options.api ?? new CopilotApi());
    this.id = 'jp-gns3-copilot-sidebar';
    this.addClass('jp-gns3-copilot-sidebar');
    this.title.caption = 'GNS3 Copilot';
    const project = () => this.project();
    const projectId = () => this.projectId;
    this.status = new LabStatus(api, this.closed, () => void this.setApiKey());
    this.chats = new Chats({
      api, notice: this.notice, project, projectId, askTitle, confirmDelete,
      insertCells: options.insertCells,
      select: sessionId => void this.selectSession(sessionId),
      newChat: () => this.newChat()
    });
    this.objectives = new ObjectivesPanel({ api, confirmCatchUp, confirmGiveUp, closedBy: error => this.closed.closedBy(error) });
    this.topology = new TopologyView(api, projectId, this.notice);
    this.runner = new TurnRunner({
      api, conversation: this.conversation, notice: this.notice, project, projectId,
      sessionId: () => this.chats.selected,
      onRunning: running => {
        this.node.dataset.running = String(running);
        this.composer.setRunning(running);
      },
      onStopping: () => this.composer.stopping()
    });
    const header = h('div', { class: 'jp-gns3-copilot-sidebar-header' },
      h('h2', { class: 'jp-gns3-copilot-sidebar-heading', text: 'GNS3 Copilot' }), this.composer.badge);
    this.node.append(header, this.closed.node, this.picker.node, this.status.line, this.status.keyRow, this.chats.node,
      this.objectives.node, this.topology.node, this.notice.node, this.conversation.node, this.composer.node);
  }

  /** Load the projects, the status, the allowed modes and the project's sessions (the
   * magics may have added some): done each time the sidebar is shown. While the copilot
   * is closed by its configuration only the status is asked, until the server opens. */
  async refresh(): Promise<void> {
    if (this.closed.closed) {
      await this.status.load();
      if (this.closed.closed) {
        return;
      }
    }
    await Promise.all([this.loadProjects(), this.status.load(), this.loadModes(), this.chats.refresh(),
      this.objectives.show(this.projectId)]);
  }

  /** Show the current settings again (status and key): after the Settings Editor
   * changed them. */
  async showSettings(): Promise<void> {
    await Promise.all([this.status.load(), this.loadModes()]);
  }

  /**
   * Choose `projectId`, the active notebook's project (see `notebook-project.ts`). A turn
   * running here is not cut: the project is chosen once it has ended. Nothing changes
   * while the copilot is closed.
   */
  async followProject(projectId: string): Promise<void> {
    if (this.closed.closed || projectId === this.projectId) {
      this.followLater = null;
      return;
    }
    if (this.runner.running && !this.runner.waiting) {
      this.followLater = projectId;
      return;
    }
    this.followLater = null;
    if (!this.picker.has(projectId)) {
      await this.loadProjects();
    }
    await this.selectProject(projectId);
  }

  /** The mode the sidebar asks in by default (the user's setting; null: the server's). */
  setDefaultMode(mode: string | null): void {
    this.composer.setDefaultMode(mode);
  }

  /** Start a new chat: the next message opens a new session. */
  newChat(): void {
    if (this.closed.closed) {
      return;
    }
    if (this.runner.waiting) {
      this.runner.abort(); // only shown here: the turn keeps waiting on the server
    }
    this.conversation.clear();
    this.chats.show(null);
    this.composer.focus();
  }

  /** Show `sessionId` of `projectId`, ready for the next message (a saved answer's
   * "Continue in the Copilot sidebar"); the project is chosen (opened if closed) first. */
  async openSession(projectId: string, sessionId: string): Promise<void> {
    if (this.closed.closed) {
      return;
    }
    if (this.runner.running && !this.runner.waiting) {
      this.notice.say('Wait for the answer to finish, or stop it, before switching chats.');
      return;
    }
    await this.loadProjects();
    if (this.projectId === projectId) {
      await this.chats.refresh(); // the magics may have added the session since the list was read
    } else {
      await this.selectProject(projectId);
    }
    await this.selectSession(sessionId);
    this.composer.focus();
  }

  /** Show the project's topology drawing (fetched again). */
  async showTopology(): Promise<void> {
    await this.topology.show();
  }

  /** Insert the selected session into the active notebook, after its active cell. */
  async exportToNotebook(): Promise<void> {
    await this.chats.exportToNotebook();
  }

  /** Download the selected session as a Markdown file. */
  async exportMarkdown(): Promise<void> {
    await this.chats.exportMarkdown();
  }

  /** Ask for the model API key in a password dialog and PUT it to the server (never to a
   * settings file); then show the key state again. A refusal is said in the sidebar. */
  async setApiKey(): Promise<void> {
    try {
      if (await setApiKey(this.api, askForKey)) {
        this.notice.say('');
        await this.loadModes();
      }
    } catch (error) {
      if (!this.closed.closedBy(error)) {
        this.notice.say(`Your API key was not saved: ${message(error)}`);
      }
    }
  }

  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    void this.refresh();
  }

  protected onAfterHide(msg: Message): void {
    super.onAfterHide(msg);
    this.objectives.pause();
  }

  dispose(): void {
    this.runner.abort();
    this.objectives.stop();
    this.objectives.pause();
    super.dispose();
  }

  private project(): string {
    if (!this.projectId) {
      throw new ApiError('Choose a GNS3 project first.', 0);
    }
    return this.projectId;
  }

  /** The copilot closed by its configuration (`closed`), or open again: what needs the
   * server is disabled while closed. */
  private renderClosed(closed: boolean): void {
    if (closed) {
      this.notice.say('');
      void this.objectives.show(null);
    }
    this.node.dataset.closed = String(closed);
    this.status.setClosed(closed);
    this.chats.setClosed(closed);
    this.picker.node.disabled = closed;
    this.composer.setClosed(closed);
  }

  private async loadProjects(): Promise<void> {
    try {
      const projects = await this.api.projects();
      this.picker.show(projects, this.projectId);
      const opened = projects.filter(p => p.status === 'opened');
      if (!this.projectId && opened.length === 1) {
        await this.selectProject(opened[0].project_id);
      }
    } catch (error) {
      this.notice.fail(error);
    }
  }

  private async loadModes(): Promise<void> {
    try {
      const config = await this.api.llmConfig();
      this.composer.setModes(config);
      this.status.showKey(config);
    } catch (error) {
      this.notice.fail(error);
    }
  }

  private async selectProject(projectId: string): Promise<void> {
    this.runner.abort();
    this.projectId = projectId || null;
    this.picker.node.value = projectId;
    this.chats.clear(!projectId);
    this.conversation.clear();
    this.topology.clear();
    this.notice.say('');
    if (!projectId) {
      await this.objectives.show(null);
      return;
    }
    try {
      await this.api.openProject(projectId);
      await Promise.all([this.chats.load(), this.objectives.show(projectId)]);
      if (this.topology.open) {
        await this.topology.load();
      }
    } catch (error) {
      this.notice.fail(error);
    }
  }

  private async selectSession(sessionId: string): Promise<void> {
    if (this.runner.waiting) {
      // Only shown here: the turn keeps waiting on the server.
      this.runner.abort();
    } else if (this.runner.running) {
      this.notice.say('Wait for the answer to finish, or stop it, before switching chats.');
      return;
    }
    this.chats.show(sessionId);
    this.notice.say('');
    try {
      const project = this.project();
      const [history, pending] = await Promise.all([
        this.api.history(project, sessionId),
        this.api.approvals(project, sessionId)
      ]);
      const turns = turnsFromHistory(history.messages, history.turn_errors);
      const waiting = pending.length ? turns.pop() : undefined;
      this.conversation.show(turns);
      if (pending.length) {
        void this.runner
          .showWaiting(sessionId, waiting ?? { user: '', status: 'running', items: [], stats: {} }, pending)
          .then(ended => (ended ? this.chats.refresh() : undefined));
      }
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) {
        this.newChat();
        this.notice.say(MISSING_CHAT);
      } else {
        this.notice.fail(error);
      }
    }
  }

  private async send(): Promise<void> {
    const text = this.composer.text;
    if (!text.trim() || this.runner.running || this.closed.closed) {
      return;
    }
    let project: string;
    try {
      project = this.project();
    } catch (error) {
      this.notice.fail(error);
      return;
    }
    const request = { message: text, session_id: this.chats.selected, copilot_mode: this.composer.mode };
    const onEvent = (event: ChatEvent) => {
      if (!this.chats.selected && event.session_id) {
        this.chats.selected = event.session_id;
        void this.chats.load().catch(() => undefined);
      } else if (event.type === 'approval_required') {
        // The turn may wait long: list its chat now (the first read can precede its row).
        void this.chats.load().catch(() => undefined);
      }
    };
    this.composer.clearText();
    this.notice.say('');
    await this.runner.stream(text, signal => this.api.chat(project, request, signal), onEvent,
      (said, error) => this.closed.closedBy(error) || this.notice.say(said));
    if (this.closed.closed) {
      return;
    }
    if (this.followLater) {
      await this.followProject(this.followLater);
      return;
    }
    await this.chats.refresh();
    if (this.topology.open) {
      await this.topology.load();
    }
  }
}
