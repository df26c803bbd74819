/**
 * The conversation of one session: its stored turns, then live turns reduced from the chat
 * stream as they arrive (the same `TurnReducer` + `TurnView` as the widget and the saved
 * notebooks).
 */
import type { ChatEvent } from '../events';
import { TurnReducer } from '../turn/reducer';
import type { TurnRecord, TurnStatus } from '../turn/types';
import type { DecisionCallback } from '../turn/approval-view';
import { TurnView, type TurnViewOptions } from '../turn/view';

/** One turn on screen: the view (the question and the answer) in a block that carries
 * the turn's status. */
class TurnBlock {
  readonly node: HTMLElement;
  private readonly view: TurnView;

  constructor(options: TurnViewOptions) {
    this.view = new TurnView(options);
    this.node = document.createElement('section');
    this.node.className = 'jp-gns3-copilot-sidebar-turn';
    this.node.appendChild(this.view.node);
  }

  update(turn: TurnRecord): void {
    this.node.dataset.status = turn.status;
    this.view.update(turn);
  }

  dispose(): void {
    this.view.dispose();
    this.node.remove();
  }
}

export class ConversationView {
  readonly node: HTMLElement;
  private blocks: TurnBlock[] = [];
  private readonly empty: HTMLElement;
  private readonly viewOptions: TurnViewOptions;

  /** `onDecision`: the student's answer to a change waiting for approval. */
  constructor(onDecision?: DecisionCallback) {
    this.viewOptions = { onDecision };
    this.node = document.createElement('div');
    this.node.className = 'jp-gns3-copilot-sidebar-conversation';
    this.empty = document.createElement('p');
    this.empty.className = 'jp-gns3-copilot-sidebar-hint';
    this.empty.textContent = 'Ask the copilot about your lab: type below and press Enter.';
    this.node.appendChild(this.empty);
  }

  /** Replace what is shown by `turns` (a session's history). */
  show(turns: readonly TurnRecord[]): void {
    this.clear();
    for (const turn of turns) {
      this.add().update(turn);
    }
    this.scrollToEnd();
  }

  clear(): void {
    this.blocks.forEach(block => block.dispose());
    this.blocks = [];
    this.empty.hidden = false;
  }

  /**
   * Show a live turn for `user`'s message fed by `events`; resolves with its final status
   * once the stream ends. A stream that fails (refused, connection lost) ends the turn
   * with its error, as an `error` event would, and is passed to `onError` (its message,
   * and what was thrown).
   */
  async stream(
    user: string,
    events: AsyncIterable<ChatEvent>,
    onEvent?: (event: ChatEvent) => void,
    onError?: (message: string, error: unknown) => void
  ): Promise<TurnStatus> {
    const reducer = new TurnReducer(user);
    const block = this.add();
    block.update(reducer.turn);
    this.scrollToEnd();
    try {
      for await (const event of events) {
        onEvent?.(event);
        if (reducer.apply(event)) {
          block.update(reducer.turn);
          this.scrollToEnd();
        }
      }
    } catch (error) {
      const text = error instanceof Error ? error.message : String(error);
      reducer.apply({ type: 'error', session_id: '', error: text });
      onError?.(text, error);
    }
    const status = reducer.finish();
    block.update(reducer.turn);
    this.scrollToEnd();
    return status;
  }

  private add(): TurnBlock {
    const block = new TurnBlock(this.viewOptions);
    this.blocks.push(block);
    this.node.appendChild(block.node);
    this.empty.hidden = true;
    return block;
  }

  private scrollToEnd(): void {
    this.node.scrollTop = this.node.scrollHeight;
  }
}
