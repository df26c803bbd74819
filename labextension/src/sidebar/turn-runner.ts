/**
 * The sidebar's running turn: one at a time, streamed into the conversation; Stop; the
 * student's decisions on a planned change. A turn shown from the history that waits for a
 * decision (asked in a stream that has gone: a closed page, an interrupted cell, a server
 * restart) is shown with Approve / Reject; the decision route then answers with the rest
 * of the turn, shown in the same view. Stop, or leaving it, leaves it waiting on the
 * server.
 */
import type { CopilotApi, PendingApproval } from '../api';
import type { ChatEvent } from '../events';
import type { Decision } from '../turn/approval-view';
import type { TurnRecord } from '../turn/types';
import type { ConversationView } from './conversation';
import { turnEvents } from './history';
import type { Notice } from './notice';

type Events = Iterable<ChatEvent> | AsyncIterable<ChatEvent>;

export interface TurnRunnerHost {
  readonly api: CopilotApi;
  readonly conversation: ConversationView;
  readonly notice: Notice;
  /** The chosen project; throws when there is none. */
  project(): string;
  /** The chosen project and chat (null: none). */
  projectId(): string | null;
  sessionId(): string | null;
  /** A turn started (true) or ended (false). */
  onRunning(running: boolean): void;
  /** Stop was asked of the server. */
  onStopping(): void;
}

export class TurnRunner {
  private controller: AbortController | null = null;
  /** Set while a turn shown from the history waits for a decision and no stream of this
   * sidebar is attached: gives that turn the events of its continuation. */
  private resumeWaiting: ((events: Events) => void) | null = null;

  constructor(private readonly host: TurnRunnerHost) {}

  /** A turn is shown running (streamed here, or waiting for a decision). */
  get running(): boolean {
    return this.controller !== null;
  }

  /** The turn shown is one from the history waiting for a decision, with no stream here. */
  get waiting(): boolean {
    return this.resumeWaiting !== null;
  }

  /** Stop showing the turn (one waiting goes on waiting on the server). */
  abort(): void {
    this.controller?.abort();
  }

  /** Stream `user`'s turn: `open` asks the server for its events (aborted by `signal`). */
  async stream(
    user: string,
    open: (signal: AbortSignal) => AsyncIterable<ChatEvent>,
    onEvent: (event: ChatEvent) => void,
    onError: (message: string, error: unknown) => void
  ): Promise<void> {
    const controller = this.start();
    try {
      await this.host.conversation.stream(user, open(controller.signal), onEvent, onError);
    } finally {
      this.end(controller);
    }
  }

  /** Show the session's last turn, `waiting` for `pending` decisions; true when it ended
   * here (not left, nor stopped here). */
  async showWaiting(sessionId: string, waiting: TurnRecord, pending: PendingApproval[]): Promise<boolean> {
    const controller = this.start();
    let resume!: (events: Events) => void;
    const decided = new Promise<Events>(resolve => (resume = resolve));
    controller.signal.addEventListener('abort', () => resume([]));
    const resumeThis = (continuation: Events) => {
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
      await this.host.conversation.stream(waiting.user, events(), undefined, text => this.host.notice.say(text));
    } finally {
      if (this.resumeWaiting === resumeThis) {
        this.resumeWaiting = null;
      }
      this.end(controller);
    }
    return !controller.signal.aborted;
  }

  /** Send the student's decision on a planned change of the shown turn, with the comment
   * the copilot reads (a refusal rejects: the view says it and offers the buttons again). */
  async decide(approvalId: string, decision: Decision, comment: string | null): Promise<void> {
    const sessionId = this.host.sessionId();
    if (!sessionId) {
      throw new Error('no chat is selected');
    }
    const events = await this.host.api.decide(this.host.project(), sessionId, approvalId, decision, comment,
      this.controller?.signal);
    const resume = this.resumeWaiting;
    if (events) {
      // No stream waited: the rest of the turn is this answer.
      resume ? resume(events) : await this.host.conversation.stream('', events);
    } else if (resume) {
      // A stream elsewhere (a notebook cell waiting on it) goes on with the turn.
      resume([{ type: 'approval_resolved', session_id: sessionId, approval_id: approvalId, tool_call_id: '', decision, comment }]);
      this.host.notice.say('Decided: the turn goes on where it was asked (the notebook cell); choose the chat again once it has ended.');
    }
  }

  /** Ask the server to stop the running turn; its stream then ends with an abort event. */
  async stop(): Promise<void> {
    const projectId = this.host.projectId();
    const sessionId = this.host.sessionId();
    if (!this.controller || !projectId || !sessionId) {
      this.abort();
      return;
    }
    this.host.onStopping();
    try {
      await this.host.api.abort(projectId, sessionId);
      // A waiting turn with no stream here: the abort ended it on the server.
      this.resumeWaiting?.([{ type: 'abort', session_id: sessionId }]);
    } catch (error) {
      this.host.notice.fail(error);
      this.abort();
    }
  }

  private start(): AbortController {
    const controller = new AbortController();
    this.controller = controller;
    this.host.onRunning(true);
    return controller;
  }

  private end(controller: AbortController): void {
    if (this.controller === controller) {
      this.controller = null;
      this.host.onRunning(false);
    }
  }
}
