/**
 * Renders a `TurnRecord` into DOM: used by the widget, the saved-turn renderer and the sidebar.
 *
 * Answer first: text items are Markdown (each code block with a Copy button); each tool
 * call is one line (the server's summary once it ended, else its name and readable
 * arguments, wrapped when long) with a badge saying what happened to the check, and opens
 * on click, Enter or Space (`openTools`: opened from the start). A planned change shows
 * before the card of the call it plans, with Approve, Reject and a comment for the
 * copilot; while a change waits for a person the turn shows no "Working" spinner.
 * `update(turn)` only touches the items that changed (an opened card stays open); a
 * card's body is built when first opened. Each kind of item has its view: `text-view.ts`,
 * `tool-view.ts`, `approval-view.ts`, `item-view.ts` (errors); `stats.ts` words the footer.
 */
import { h, icon } from '../dom';
import { renderMarkdown as defaultRenderMarkdown } from '../markdown';
import { ApprovalView, type DecisionCallback } from './approval-view';
import { ErrorView, type ItemView } from './item-view';
import { formatStats } from './stats';
import { TextView } from './text-view';
import { ToolView } from './tool-view';
import type { Item, TurnRecord } from './types';

export interface TurnViewOptions {
  /** Renders sanitised Markdown into `host` (markdown-it + DOMPurify by default). */
  renderMarkdown?: (host: HTMLElement, markdown: string) => void;
  /** Called when the student approves or rejects a planned change of a running turn (no
   * buttons without it, nor once the turn stopped running), with the comment typed for
   * the copilot (null when none; only a rejection sends one). A rejected promise gives
   * the buttons back and says why. */
  onDecision?: DecisionCallback;
  /** Tool cards open as they appear (a direct run: its device output is the answer). */
  openTools?: boolean;
}

/** The order items show in: a planned change just before the card of the call it plans
 * (the call's card comes first in the turn: its arguments stream before the plan). */
export function displayOrder(items: readonly Item[]): number[] {
  const order = items.map((_, index) => index);
  items.forEach((item, index) => {
    if (item.kind !== 'approval' || !item.tool_call_id) {
      return;
    }
    const tool = items.findIndex(other => other.kind === 'tool' && other.id === item.tool_call_id);
    if (tool < 0 || tool > index) {
      return;
    }
    order.splice(order.indexOf(index), 1);
    order.splice(order.indexOf(tool), 0, index);
  });
  return order;
}

const TURN_NOTES: Partial<Record<TurnRecord['status'], string>> = {
  aborted: 'Stopped: the turn was aborted.',
  interrupted: 'Interrupted before the copilot finished.'
};

export class TurnView {
  readonly node: HTMLElement;
  /** What a running turn's note says. */
  runningNote = 'Working';
  private readonly userRow: HTMLElement;
  private readonly userText = h('div', { class: 'gns3c-user-text' });
  private readonly items = h('div', { class: 'gns3c-items' });
  private readonly note = h('div', { class: 'gns3c-note' });
  private readonly footer = h('footer', { class: 'gns3c-footer' });
  private views: ItemView[] = [];
  private shown = '';
  private readonly render: (host: HTMLElement, markdown: string) => void;

  constructor(private readonly options: TurnViewOptions = {}) {
    this.render = options.renderMarkdown ?? defaultRenderMarkdown;
    this.userRow = h('div', { class: 'gns3c-user', hidden: true }, h('div', { class: 'gns3c-who', text: 'You' }), this.userText);
    this.node = h(
      'article',
      { class: 'jp-gns3-copilot-turn gns3c-turn' },
      this.userRow,
      h('div', { class: 'gns3c-assistant' }, h('div', { class: 'gns3c-who' }, icon('spark'), 'Copilot'), this.items, this.note),
      this.footer
    );
  }

  /** Bring the DOM up to date with `turn` (cheap to call for every streamed event). */
  update(turn: TurnRecord): void {
    if (this.userText.textContent !== turn.user) {
      this.userText.textContent = turn.user;
      this.userRow.hidden = !turn.user;
    }
    turn.items.forEach((item, index) => this.updateItem(index, item));
    const live = turn.status === 'running';
    for (const view of this.views) {
      if (view instanceof ApprovalView) {
        view.setLive(live);
      }
    }
    for (const view of this.views.splice(turn.items.length)) {
      view.node.remove();
    }
    this.arrange(turn.items);
    const waiting = turn.items.some(item => item.kind === 'approval' && item.state === 'pending');
    const shown = `${turn.status}|${turn.items.length > 0}|${waiting}|${this.runningNote}|${JSON.stringify(turn.stats)}`;
    if (shown !== this.shown) {
      this.shown = shown;
      this.renderEnd(turn, waiting);
    }
  }

  dispose(): void {
    this.node.remove();
  }

  private updateItem(index: number, item: Item): void {
    let view = this.views[index];
    if (!view || view.kind !== item.kind) {
      const fresh = this.createView(item);
      if (view) {
        view.node.replaceWith(fresh.node);
      } else {
        this.items.append(fresh.node);
      }
      this.views[index] = view = fresh;
    }
    (view as ItemView<typeof item>).update(item);
  }

  /** Put the item nodes in `displayOrder` (moved only when it changed: a move drops the
   * focus of what it moves). */
  private arrange(items: readonly Item[]): void {
    const nodes = displayOrder(items).map(index => this.views[index].node);
    const current = this.items.children;
    if (nodes.length === current.length && nodes.every((node, at) => current[at] === node)) {
      return;
    }
    this.items.append(...nodes);
  }

  private createView(item: Item): ItemView {
    switch (item.kind) {
      case 'text':
        return new TextView(this.render) as ItemView;
      case 'tool':
        return new ToolView(this.options.openTools) as ItemView;
      case 'approval':
        return new ApprovalView(this.options.onDecision) as ItemView;
      default:
        return new ErrorView() as ItemView;
    }
  }

  /** The turn's end: its note (no spinner while a change waits for a person: the plan
   * says so), the footer. */
  private renderEnd(turn: TurnRecord, waiting: boolean): void {
    this.node.dataset.status = turn.status;
    this.node.dataset.waiting = String(turn.status === 'running' && waiting);
    this.node.setAttribute('aria-busy', String(turn.status === 'running' && !waiting));
    this.note.replaceChildren();
    const note = TURN_NOTES[turn.status];
    if (turn.status === 'running') {
      if (!waiting) {
        this.note.append(h('span', { class: 'gns3c-spinner', 'aria-hidden': 'true' }), this.runningNote);
      }
    } else if (note) {
      this.note.append(icon(turn.status === 'aborted' ? 'stop' : 'alert'), note);
    } else if (!turn.items.length && turn.status === 'done') {
      this.note.append('(no answer)');
    }
    this.note.hidden = !this.note.childNodes.length;
    this.footer.replaceChildren();
    if (turn.stats.title) {
      this.footer.append(h('span', { class: 'gns3c-footer-title', text: turn.stats.title }));
    }
    for (const part of formatStats(turn.stats)) {
      this.footer.append(h('span', { text: part }));
    }
    this.footer.hidden = !this.footer.childNodes.length;
  }
}
