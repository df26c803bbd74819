/**
 * The Copilot sidebar: project picker with the lab status (the user's current settings),
 * the project's sessions, the selected session's conversation (history, then live
 * turns), the input box with Stop and the mode selector, the topology drawing (inline,
 * so it takes the theme's colours), the lab's objectives (`objectives.ts`), and Export. Talks to the server only (`CopilotApi`),
 * no kernel: a session continued here is the same session id the notebook's magics
 * continue. It follows the active notebook's project (`followProject`), and while the
 * server is closed by its configuration it says so once and disables what needs it.
 */
import { Dialog, InputDialog, showDialog } from '@jupyterlab/apputils';
import type { Message } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';

import { ApiError, CopilotApi, type LLMConfig, type PendingApproval, type ProjectInfo, type SessionInfo } from '../api';
import type { ChatEvent } from '../events';
import { sanitizeSvg } from '../markdown';
import type { TurnRecord } from '../turn/types';
import type { Decision } from '../turn/approval-view';
import { closedNotice, closedReason } from './closed';
import { ConversationView } from './conversation';
import { keyLabel, setApiKey } from './api-key';
import { askForKey } from './key-dialog';
import { cellsFromNotebook, type ExportCell } from './export';
import { turnEvents, turnsFromHistory } from './history';
import { SessionList } from './session-list';
import { ObjectivesPanel } from './objectives';
import { modeName } from '../modes';
import { statusParts } from './status';

export interface SidebarOptions {
  api?: CopilotApi;
  /** Inserts cells after the active cell of the active notebook; false when there is none. */
  insertCells: (cells: ExportCell[]) => boolean;
}

function element<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className: string,
  text?: string
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  node.className = className;
  if (text !== undefined) {
    node.textContent = text;
  }
  return node;
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Ask before a catch-up: the server's words for what it restores; Restore is the
 * person's approval. */
async function confirmCatchUp(stageTitle: string, description: string): Promise<boolean> {
  const result = await showDialog({
    title: `Catch up to ${stageTitle}?`,
    body: description,
    buttons: [Dialog.cancelButton(), Dialog.warnButton({ label: 'Restore' })],
    defaultButton: 0 // Enter keeps the lab: restoring loses work, so it takes a click
  });
  return result.button.accept;
}

/** Said when a chat chosen (or continued from a saved answer) is not on the server. */
export const MISSING_CHAT =
  'That conversation is not on the server: it was deleted, or the answer came from %copilot run, ' +
  'which starts none. Ask here to start a new chat.';

export class CopilotSidebar extends Widget {
  readonly api: CopilotApi;
  private readonly insertCellsInto: SidebarOptions['insertCells'];
  private projectId: string | null = null;
  private sessionId: string | null = null;
  private sessions: SessionInfo[] = [];
  private allowedModes: string[] = [];
  /** The Settings Editor's default mode, else the user's server setting. */
  private settingsMode: string | null = null;
  private serverMode: string | null = null;
  private running: AbortController | null = null;
  /** The active notebook's project, to choose once the running turn has ended. */
  private followLater: string | null = null;
  /** The server's message while the copilot is closed by its configuration. */
  private closed: string | null = null;
  /** Set while a turn shown from the history waits for a decision and no stream of this
   * sidebar is attached: gives that turn the events of its continuation. */
  private resumeWaiting: ((events: Iterable<ChatEvent> | AsyncIterable<ChatEvent>) => void) | null = null;

  private readonly projectSelect = element('select', 'jp-gns3-copilot-sidebar-project');
  private readonly statusLine = element('div', 'jp-gns3-copilot-sidebar-status');
  private readonly keyState = element('span', 'jp-gns3-copilot-sidebar-status-part jp-gns3-copilot-sidebar-key');
  private readonly keyButton = element('button', 'jp-gns3-copilot-sidebar-set-key', 'Set key…');
  private readonly keyRow = element('div', 'jp-gns3-copilot-sidebar-row jp-gns3-copilot-sidebar-key-row');
  private readonly notice = element('div', 'jp-gns3-copilot-sidebar-notice');
  private readonly closedBox = element('div', 'jp-gns3-copilot-sidebar-closed');
  private readonly newChatButton = element('button', 'jp-gns3-copilot-sidebar-new', 'New chat');
  private readonly toNotebookButton = element('button', 'jp-gns3-copilot-sidebar-export-notebook', 'To notebook');
  private readonly toMarkdownButton = element('button', 'jp-gns3-copilot-sidebar-export-markdown', 'Markdown');
  private readonly sessionList: SessionList;
  private readonly conversation = new ConversationView((approvalId, decision, comment) =>
    this.decide(approvalId, decision, comment)
  );
  private readonly objectives: ObjectivesPanel;
  private readonly topology = element('details', 'jp-gns3-copilot-sidebar-topology');
  private readonly topologyDrawing = element('div', 'jp-gns3-copilot-sidebar-topology-drawing');
  private readonly input = element('textarea', 'jp-gns3-copilot-sidebar-input');
  private readonly sendButton = element('button', 'jp-gns3-copilot-sidebar-send jp-mod-accept', 'Send');
  private readonly stopButton = element('button', 'jp-gns3-copilot-sidebar-stop', 'Stop');
  private readonly modeSelect = element('select', 'jp-gns3-copilot-sidebar-mode');
  private readonly modeBadge = element('span', 'jp-gns3-copilot-sidebar-mode-badge');

  constructor(options: SidebarOptions) {
    super();
    this.api = options.api ?? new CopilotApi();
    this.insertCellsInto = options.insertCells;
    this.id = 'jp-gns3-copilot-sidebar';
    this.addClass('jp-gns3-copilot-sidebar');
    this.title.caption = 'GNS3 Copilot';
    this.sessionList = new SessionList({
      select: session => void this.selectSession(session.thread_id),
      pin: session => void this.act(() => this.api.pin(this.project(), session.thread_id, !session.pinned)),
      rename: session => void this.rename(session),
      remove: session => void this.remove(session)
    });
    this.objectives = new ObjectivesPanel({
      api: this.api,
      confirmCatchUp: confirmCatchUp,
      closedBy: error => this.closedBy(error)
    });
    this.build();
  }

  /** Load the projects, the status, the allowed modes and the project's sessions (the
   * magics may have added some): done each time the sidebar is shown. While the copilot
   * is closed by its configuration only the status is asked, until the server opens. */
  async refresh(): Promise<void> {
    if (this.closed) {
      await this.loadStatus();
      if (this.closed) {
        return;
      }
    }
    await Promise.all([this.loadProjects(), this.loadStatus(), this.loadModes(), this.act(),
      this.objectives.show(this.projectId)]);
  }

  /** Show the current settings again (status and key): after the Settings Editor
   * changed them. */
  async showSettings(): Promise<void> {
    await Promise.all([this.loadStatus(), this.loadModes()]);
  }

  /**
   * Choose `projectId`, the active notebook's project (see `notebook-project.ts`). A turn
   * running here is not cut: the project is chosen once it has ended. Nothing changes
   * while the copilot is closed.
   */
  async followProject(projectId: string): Promise<void> {
    if (this.closed || projectId === this.projectId) {
      this.followLater = null;
      return;
    }
    if (this.running && !this.resumeWaiting) {
      this.followLater = projectId;
      return;
    }
    this.followLater = null;
    if (![...this.projectSelect.options].some(option => option.value === projectId)) {
      await this.loadProjects();
    }
    await this.selectProject(projectId);
  }

  /** The mode the sidebar asks in by default (the user's setting; null: the server's). */
  setDefaultMode(mode: string | null): void {
    this.settingsMode = mode || null;
    this.renderModes();
  }

  /** Start a new chat: the next message opens a new session. */
  newChat(): void {
    if (this.closed) {
      return;
    }
    if (this.resumeWaiting) {
      this.running?.abort(); // only shown here: the turn keeps waiting on the server
    }
    this.sessionId = null;
    this.conversation.clear();
    this.sessionList.set(this.sessions, null);
    this.input.focus();
  }

  /** Show `sessionId` of `projectId`, ready for the next message (a saved answer's
   * "Continue in the Copilot sidebar"); the project is chosen (opened if closed) first. */
  async openSession(projectId: string, sessionId: string): Promise<void> {
    if (this.closed) {
      return;
    }
    if (this.running && !this.resumeWaiting) {
      this.say('Wait for the answer to finish, or stop it, before switching chats.');
      return;
    }
    await this.loadProjects();
    if (this.projectId === projectId) {
      await this.act(); // the magics may have added the session since the list was read
    } else {
      await this.selectProject(projectId);
    }
    await this.selectSession(sessionId);
    this.input.focus();
  }

  /** Show the project's topology drawing (fetched again). */
  async showTopology(): Promise<void> {
    this.topology.open = true;
    await this.loadTopology();
  }

  /** Insert the selected session into the active notebook, after its active cell. */
  async exportToNotebook(): Promise<void> {
    if (this.closed) {
      return;
    }
    const cells = await this.exportCells();
    if (cells && !this.insertCellsInto(cells)) {
      this.say('Open a notebook first: the chat is inserted after its active cell.');
    }
  }

  /** Download the selected session as a Markdown file. */
  async exportMarkdown(): Promise<void> {
    const project = this.project();
    const session = this.selectedSession();
    if (!session) {
      return;
    }
    try {
      const text = await this.api.exportSession(project, session, 'md');
      const title = this.sessions.find(s => s.thread_id === session)?.title || 'copilot-chat';
      const link = document.createElement('a');
      link.href = URL.createObjectURL(new Blob([text], { type: 'text/markdown' }));
      link.download = `${title.replace(/[^\p{L}\p{N} ._-]+/gu, '_').trim() || 'copilot-chat'}.md`;
      link.click();
      setTimeout(() => URL.revokeObjectURL(link.href), 0);
    } catch (error) {
      this.fail(error);
    }
  }

  /** Ask for the model API key in a password dialog and PUT it to the server (never to a
   * settings file); then show the key state again. A refusal is said in the sidebar. */
  async setApiKey(): Promise<void> {
    try {
      if (await setApiKey(this.api, askForKey)) {
        this.say('');
        await this.loadModes();
      }
    } catch (error) {
      if (!this.closedBy(error)) {
        this.say(`Your API key was not saved: ${message(error)}`);
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
    this.running?.abort();
    this.objectives.stop();
    this.objectives.pause();
    super.dispose();
  }

  private build(): void {
    const header = element('div', 'jp-gns3-copilot-sidebar-header');
    header.append(element('h2', 'jp-gns3-copilot-sidebar-heading', 'GNS3 Copilot'), this.modeBadge);
    this.projectSelect.setAttribute('aria-label', 'GNS3 project');
    this.projectSelect.addEventListener('change', () => void this.selectProject(this.projectSelect.value));

    const chats = element('div', 'jp-gns3-copilot-sidebar-chats');
    const chatsHeader = element('div', 'jp-gns3-copilot-sidebar-row');
    this.newChatButton.addEventListener('click', () => this.newChat());
    this.toNotebookButton.title = 'Insert this chat into the active notebook as cells';
    this.toNotebookButton.addEventListener('click', () => void this.exportToNotebook());
    this.toMarkdownButton.title = 'Download this chat as a Markdown file';
    this.toMarkdownButton.addEventListener('click', () => void this.exportMarkdown());
    chatsHeader.append(this.newChatButton, this.toNotebookButton, this.toMarkdownButton);
    chats.append(chatsHeader, this.sessionList.node);

    const topologySummary = element('summary', '', 'Topology');
    const reload = element('button', 'jp-gns3-copilot-sidebar-topology-reload', 'Refresh');
    reload.addEventListener('click', () => void this.loadTopology());
    this.topology.append(topologySummary, reload, this.topologyDrawing);
    this.topology.addEventListener('toggle', () => {
      if (this.topology.open && !this.topologyDrawing.childElementCount) {
        void this.loadTopology();
      }
    });

    const composer = element('div', 'jp-gns3-copilot-sidebar-composer');
    this.input.placeholder = 'Ask the copilot (Enter sends, Shift+Enter: new line)';
    this.input.rows = 3;
    this.input.setAttribute('aria-label', 'Message to the copilot');
    this.input.addEventListener('keydown', event => {
      if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        void this.send();
      }
    });
    this.sendButton.addEventListener('click', () => void this.send());
    this.stopButton.addEventListener('click', () => void this.stop());
    this.stopButton.hidden = true;
    this.modeSelect.setAttribute('aria-label', 'Copilot mode');
    this.modeSelect.addEventListener('change', () => this.renderBadge());
    const controls = element('div', 'jp-gns3-copilot-sidebar-row');
    controls.append(this.modeSelect, this.stopButton, this.sendButton);
    composer.append(this.input, controls);

    this.keyButton.title = 'Set or remove your model API key (GNS3 Copilot: Set Model API Key)';
    this.keyButton.addEventListener('click', () => void this.setApiKey());
    this.keyRow.append(this.keyState, this.keyButton);

    this.notice.setAttribute('role', 'status');
    this.closedBox.setAttribute('role', 'alert');
    this.closedBox.hidden = true;
    this.node.append(header, this.closedBox, this.projectSelect, this.statusLine, this.keyRow, chats,
      this.objectives.node, this.topology, this.notice, this.conversation.node, composer);
  }

  private project(): string {
    if (!this.projectId) {
      throw new ApiError('Choose a GNS3 project first.', 0);
    }
    return this.projectId;
  }

  private selectedSession(): string | null {
    if (!this.sessionId) {
      this.say('Choose a chat first.');
    }
    return this.sessionId;
  }

  private say(text: string): void {
    this.notice.textContent = text;
    this.notice.hidden = !text;
  }

  /** Say what went wrong (once the copilot is closed, nothing more: the notice said it). */
  private fail(error: unknown): void {
    if (!this.closedBy(error) && !this.closed) {
      this.say(message(error));
    }
  }

  /**
   * When `error` says the copilot is closed by its configuration: show why once, disable
   * what needs the server, and answer true.
   */
  private closedBy(error: unknown): boolean {
    const reason = closedReason(error);
    if (!reason) {
      return false;
    }
    if (reason !== this.closed) {
      this.closed = reason;
      this.closedBox.replaceChildren(...closedNotice(reason));
    }
    this.say('');
    this.statusLine.replaceChildren();
    void this.objectives.show(null);
    this.renderClosed();
    return true;
  }

  /** The copilot answers again (the server was restarted with a fixed configuration). */
  private reopen(): void {
    if (this.closed) {
      this.closed = null;
      this.closedBox.replaceChildren();
      this.renderClosed();
    }
  }

  private renderClosed(): void {
    const closed = !!this.closed;
    this.node.dataset.closed = String(closed);
    this.closedBox.hidden = !closed;
    this.keyRow.hidden = closed; // no key state to show: the settings were not read
    for (const control of [this.newChatButton, this.toNotebookButton, this.toMarkdownButton, this.keyButton,
      this.projectSelect, this.input, this.modeSelect]) {
      control.disabled = closed;
    }
    this.sendButton.disabled = closed || !!this.running;
    if (!closed) {
      this.renderModes(); // the mode selector is enabled only with a choice
    }
  }

  /** Run a session action (if any), then show the sessions again; errors are said, not
   * thrown. */
  private async act(action?: () => Promise<unknown>): Promise<void> {
    try {
      await action?.();
      await this.loadSessions();
    } catch (error) {
      this.fail(error);
    }
  }

  private async loadProjects(): Promise<void> {
    try {
      const projects = await this.api.projects();
      this.renderProjects(projects);
      const opened = projects.filter(p => p.status === 'opened');
      if (!this.projectId && opened.length === 1) {
        await this.selectProject(opened[0].project_id);
      }
    } catch (error) {
      this.fail(error);
    }
  }

  private renderProjects(projects: ProjectInfo[]): void {
    const choose = element('option', '', projects.length ? 'Choose a GNS3 project' : 'No GNS3 project');
    choose.value = '';
    const options = projects.map(project => {
      const option = element('option', '', `${project.name}${project.status === 'opened' ? '' : ` (${project.status ?? 'closed'})`}`);
      option.value = project.project_id;
      return option;
    });
    this.projectSelect.replaceChildren(choose, ...options);
    this.projectSelect.value = this.projectId ?? '';
  }

  private async loadStatus(): Promise<void> {
    try {
      const report = await this.api.status();
      this.reopen();
      this.statusLine.replaceChildren(
        ...statusParts(report).map(part => {
          const node = element('span', 'jp-gns3-copilot-sidebar-status-part', part.text);
          node.dataset.ok = String(part.ok);
          return node;
        })
      );
    } catch (error) {
      if (!this.closedBy(error)) {
        this.statusLine.textContent = message(error);
      }
    }
  }

  private async loadModes(): Promise<void> {
    try {
      const config = await this.api.llmConfig();
      this.allowedModes = config.allowed_modes;
      this.serverMode = config.copilot_mode;
      this.renderModes();
      this.renderKey(config);
    } catch (error) {
      this.fail(error);
    }
  }

  private renderKey(config: LLMConfig): void {
    this.keyState.textContent = keyLabel(config);
    this.keyState.dataset.ok = String(config.api_key_set);
  }

  private renderModes(): void {
    const preferred = this.settingsMode ?? this.serverMode;
    const modes = this.allowedModes.length ? this.allowedModes : preferred ? [preferred] : [];
    this.modeSelect.replaceChildren(
      ...modes.map(mode => {
        const option = element('option', '', modeName(mode));
        option.value = mode;
        return option;
      })
    );
    if (preferred && modes.includes(preferred)) {
      this.modeSelect.value = preferred;
    }
    this.modeSelect.disabled = modes.length < 2 || !!this.closed;
    this.renderBadge();
  }

  private renderBadge(): void {
    const mode = this.modeSelect.value;
    this.modeBadge.textContent = mode ? modeName(mode) : '';
    this.modeBadge.dataset.mode = mode;
  }

  private async selectProject(projectId: string): Promise<void> {
    this.running?.abort();
    this.projectId = projectId || null;
    this.projectSelect.value = projectId;
    this.sessionId = null;
    this.sessions = [];
    this.conversation.clear();
    this.topologyDrawing.replaceChildren();
    this.say('');
    if (!projectId) {
      this.sessionList.set([], null);
      await this.objectives.show(null);
      return;
    }
    try {
      await this.api.openProject(projectId);
      await Promise.all([this.loadSessions(), this.objectives.show(projectId)]);
      if (this.topology.open) {
        await this.loadTopology();
      }
    } catch (error) {
      this.fail(error);
    }
  }

  private async loadSessions(): Promise<void> {
    if (!this.projectId) {
      return;
    }
    this.sessions = await this.api.sessions(this.projectId);
    this.sessionList.set(this.sessions, this.sessionId);
  }

  private async selectSession(sessionId: string): Promise<void> {
    if (this.resumeWaiting) {
      // Only shown here: the turn keeps waiting on the server.
      this.running?.abort();
    } else if (this.running) {
      this.say('Wait for the answer to finish, or stop it, before switching chats.');
      return;
    }
    this.sessionId = sessionId;
    this.sessionList.set(this.sessions, sessionId);
    this.say('');
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
        void this.continueWaiting(sessionId, waiting ?? { user: '', status: 'running', items: [], stats: {} }, pending);
      }
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) {
        this.newChat();
        this.say(MISSING_CHAT);
      } else {
        this.fail(error);
      }
    }
  }

  /**
   * Show the session's last turn, which waits for `pending` decisions (asked in a stream
   * that has gone: a closed page, an interrupted cell, a server restart), with Approve /
   * Reject; the decision route then answers with the rest of the turn, shown in the same
   * view. Stop, or choosing another chat, leaves it waiting on the server.
   */
  private async continueWaiting(sessionId: string, waiting: TurnRecord, pending: PendingApproval[]): Promise<void> {
    const controller = new AbortController();
    this.running = controller;
    this.setRunning(true);
    let resume!: (events: Iterable<ChatEvent> | AsyncIterable<ChatEvent>) => void;
    const decided = new Promise<Iterable<ChatEvent> | AsyncIterable<ChatEvent>>(resolve => (resume = resolve));
    controller.signal.addEventListener('abort', () => resume([]));
    const resumeThis = (continuation: Iterable<ChatEvent> | AsyncIterable<ChatEvent>) => {
      this.resumeWaiting = null;
      resume(continuation);
    };
    this.resumeWaiting = resumeThis;
    async function* events(): AsyncGenerator<ChatEvent> {
      yield* turnEvents(waiting, sessionId);
      for (const { approval_id, tool_call_id, tool_name, tool_input, summary } of pending) {
        yield { type: 'approval_required', session_id: sessionId, approval_id, tool_call_id, tool_name, tool_input, summary };
      }
      yield* await decided;
    }
    try {
      await this.conversation.stream(waiting.user, events(), undefined, text => this.say(text));
    } finally {
      if (this.resumeWaiting === resumeThis) {
        this.resumeWaiting = null;
      }
      if (this.running === controller) {
        this.running = null;
        this.setRunning(false);
      }
    }
    if (!controller.signal.aborted) {
      await this.act();
    }
  }

  private async rename(session: SessionInfo): Promise<void> {
    const result = await InputDialog.getText({
      title: 'Rename chat',
      text: session.title ?? '',
      okLabel: 'Rename'
    });
    const title = result.value?.trim();
    if (result.button.accept && title) {
      await this.act(() => this.api.rename(this.project(), session.thread_id, title));
    }
  }

  private async remove(session: SessionInfo): Promise<void> {
    const result = await showDialog({
      title: 'Delete chat',
      body: `Delete "${session.title || 'Untitled chat'}" and its history? This cannot be undone.`,
      buttons: [Dialog.cancelButton(), Dialog.warnButton({ label: 'Delete' })]
    });
    if (!result.button.accept) {
      return;
    }
    await this.act(async () => {
      await this.api.deleteSession(this.project(), session.thread_id);
      if (this.sessionId === session.thread_id) {
        this.newChat();
      }
    });
  }

  private async send(): Promise<void> {
    const text = this.input.value;
    if (!text.trim() || this.running || this.closed) {
      return;
    }
    let project: string;
    try {
      project = this.project();
    } catch (error) {
      this.fail(error);
      return;
    }
    const controller = new AbortController();
    this.running = controller;
    this.setRunning(true);
    this.input.value = '';
    this.say('');
    const onEvent = (event: ChatEvent) => {
      if (!this.sessionId && event.session_id) {
        this.sessionId = event.session_id;
        void this.loadSessions().catch(() => undefined);
      } else if (event.type === 'approval_required') {
        // The turn may wait long: list its chat now (the first read can precede its row).
        void this.loadSessions().catch(() => undefined);
      }
    };
    const events = this.api.chat(
      project,
      { message: text, session_id: this.sessionId, copilot_mode: this.modeSelect.value || null },
      controller.signal
    );
    try {
      await this.conversation.stream(text, events, onEvent, (said, error) => this.closedBy(error) || this.say(said));
    } finally {
      this.running = null;
      this.setRunning(false);
    }
    if (this.closed) {
      return;
    }
    if (this.followLater) {
      await this.followProject(this.followLater);
      return;
    }
    await this.act();
    if (this.topology.open) {
      await this.loadTopology();
    }
  }

  /** Send the student's decision on a planned change of the shown turn, with the comment
   * the copilot reads (a refusal rejects: the view says it and offers the buttons again). */
  private async decide(approvalId: string, decision: Decision, comment: string | null): Promise<void> {
    const sessionId = this.sessionId;
    if (!sessionId) {
      throw new Error('no chat is selected');
    }
    const events = await this.api.decide(this.project(), sessionId, approvalId, decision, comment,
      this.running?.signal);
    const resume = this.resumeWaiting;
    if (events) {
      // No stream waited: the rest of the turn is this answer.
      resume ? resume(events) : await this.conversation.stream('', events);
    } else if (resume) {
      // A stream elsewhere (a notebook cell waiting on it) goes on with the turn.
      resume([{ type: 'approval_resolved', session_id: sessionId, approval_id: approvalId, tool_call_id: '', decision, comment }]);
      this.say('Decided: the turn goes on where it was asked (the notebook cell); choose the chat again once it has ended.');
    }
  }

  /** Ask the server to stop the running turn; its stream then ends with an abort event. */
  private async stop(): Promise<void> {
    if (!this.running || !this.projectId || !this.sessionId) {
      this.running?.abort();
      return;
    }
    this.stopButton.disabled = true;
    try {
      await this.api.abort(this.projectId, this.sessionId);
      // A waiting turn with no stream here: the abort ended it on the server.
      this.resumeWaiting?.([{ type: 'abort', session_id: this.sessionId }]);
    } catch (error) {
      this.fail(error);
      this.running?.abort();
    }
  }

  private setRunning(running: boolean): void {
    this.node.dataset.running = String(running);
    this.stopButton.hidden = !running;
    this.stopButton.disabled = false;
    this.sendButton.disabled = running || !!this.closed;
  }

  /** The drawing inline (an <img> would not take the theme's colours: its CSS variables
   * do not reach into an image), sanitised like any server text put into the page. */
  private async loadTopology(): Promise<void> {
    if (!this.projectId) {
      return;
    }
    try {
      const drawing = sanitizeSvg(await this.api.topologySvg(this.projectId));
      this.topologyDrawing.replaceChildren(...(drawing ? [drawing] : []));
    } catch (error) {
      this.fail(error);
    }
  }

  private async exportCells(): Promise<ExportCell[] | null> {
    const session = this.selectedSession();
    if (!session) {
      return null;
    }
    try {
      const project = this.project();
      return cellsFromNotebook(await this.api.exportSession(project, session, 'ipynb'));
    } catch (error) {
      this.fail(error);
      return null;
    }
  }
}
