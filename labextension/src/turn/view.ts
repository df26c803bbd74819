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
 * card's body is built when first opened.
 */
import { addCopyButtons } from '../copy';
import { h, icon } from '../dom';
import { inlineMarkdownToHtml, renderMarkdown as defaultRenderMarkdown, withInlineMarkdown } from '../markdown';
import { describeArguments, toolBadge, toolLabel, toolOutcome } from './describe';
import { resultView } from './results';
import type { ApprovalItem, ErrorItem, Item, ProgressLine, TextItem, ToolItem, TurnRecord, TurnStats } from './types';

export type Decision = 'approve' | 'reject';

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

export type DecisionCallback = (
  approvalId: string,
  decision: Decision,
  comment: string | null
) => void | Promise<unknown>;

interface ItemView<T extends Item = Item> {
  readonly kind: T['kind'];
  readonly node: HTMLElement;
  update(item: T): void;
}

let nextId = 0;

function formatSeconds(seconds: number): string {
  if (seconds < 60) {
    return `${seconds.toFixed(1)} s`;
  }
  const total = Math.round(seconds);
  return `${Math.floor(total / 60)} min ${String(total % 60).padStart(2, '0')} s`;
}

/** The footer's parts, worded as `render_text.format_stats` words them. */
export function formatStats(stats: TurnStats): string[] {
  const parts: string[] = [];
  const int = (n: number) => n.toLocaleString('en-US');
  if (stats.input_tokens !== undefined || stats.output_tokens !== undefined) {
    const tokensIn = stats.input_tokens ?? 0;
    const tokensOut = stats.output_tokens ?? 0;
    parts.push(tokensIn || tokensOut || !stats.llm_calls ? `${int(tokensIn)} in / ${int(tokensOut)} out tokens` : 'tokens not reported');
  }
  if (stats.llm_calls !== undefined) {
    parts.push(`${stats.llm_calls} model call${stats.llm_calls === 1 ? '' : 's'}`);
  }
  if (stats.elapsed !== undefined) {
    parts.push(formatSeconds(stats.elapsed));
  }
  return parts;
}

const FENCE = /^ {0,3}(`{3,}|~{3,})/;

/**
 * Where the settled part of streaming Markdown ends: the start of the last line that opens
 * a new top-level block (not indented, after a blank line, outside code fences). What is
 * before it renders the same whatever comes later, so it is rendered once.
 */
export function settledLength(text: string): number {
  let fence: string | null = null;
  let settled = 0;
  let blank = false;
  let at = 0;
  for (const line of text.split('\n')) {
    const marker = FENCE.exec(line)?.[1];
    if (fence === null && blank && line && !/^\s/.test(line)) {
      settled = at;
    }
    if (marker && (fence === null || (marker[0] === fence[0] && marker.length >= fence.length))) {
      fence = fence === null ? marker : null;
    }
    blank = !line.trim();
    at += line.length + 1;
  }
  return settled;
}

/** Markdown text: settled blocks are rendered once, only the growing tail re-renders. */
class TextView implements ItemView<TextItem> {
  readonly kind = 'text';
  private readonly tail = h('div', { class: 'gns3c-md-part' });
  readonly node = h('div', { class: 'gns3c-md' }, this.tail);
  private settled = '';
  private tailText: string | null = null;

  private readonly render: (host: HTMLElement, markdown: string) => void;

  constructor(render: (host: HTMLElement, markdown: string) => void) {
    this.render = (host, markdown) => {
      render(host, markdown);
      addCopyButtons(host);
    };
  }

  update(item: TextItem): void {
    const text = item.text;
    if (!text.startsWith(this.settled)) {
      this.node.replaceChildren(this.tail);
      this.settled = '';
      this.tailText = null;
    }
    const settled = Math.max(settledLength(text), this.settled.length);
    if (settled > this.settled.length) {
      const part = h('div', { class: 'gns3c-md-part' });
      this.render(part, text.slice(this.settled.length, settled));
      this.tail.before(part);
      this.settled = text.slice(0, settled);
    }
    const tail = text.slice(settled);
    if (tail !== this.tailText) {
      this.tailText = tail;
      this.render(this.tail, tail);
    }
  }
}

class ErrorView implements ItemView<ErrorItem> {
  readonly kind = 'error';
  private readonly text = h('span');
  readonly node = h('div', { class: 'gns3c-error', role: 'alert' }, icon('alert'), this.text);

  update(item: ErrorItem): void {
    if (this.text.textContent !== item.text) {
      this.text.textContent = item.text;
    }
  }
}

function progressLine(line: ProgressLine): HTMLElement {
  return h(
    'li',
    {},
    line.node ? h('span', { class: 'gns3c-progress-node', text: `${line.node}:` }) : null,
    line.node ? ' ' : null,
    h('span', { class: 'gns3c-progress-message', text: line.message }),
    line.elapsed !== null ? h('span', { class: 'gns3c-muted', text: ` · ${formatSeconds(line.elapsed)}` }) : null
  );
}

const REFUSED_WITHOUT_NOTE = 'Not run: this step is not allowed in the current mode.';

class ToolView implements ItemView<ToolItem> {
  readonly kind = 'tool';
  readonly node: HTMLElement;
  private readonly head: HTMLButtonElement;
  private readonly name = h('span', { class: 'gns3c-tool-name' });
  private readonly title = h('span', { class: 'gns3c-tool-title' });
  private readonly badge = h('span', { class: 'gns3c-badge' });
  private readonly body: HTMLElement;
  private item: ToolItem | null = null;
  private bodyStale = true;

  constructor(openFirst = false) {
    const bodyId = `gns3c-tool-body-${++nextId}`;
    this.head = h(
      'button',
      { type: 'button', class: 'gns3c-tool-head', 'aria-expanded': 'false', 'aria-controls': bodyId },
      icon('chevron', 'gns3c-chevron'),
      // One flow of text: the tool's name and its title wrap together, between words.
      h('span', { class: 'gns3c-tool-text' }, this.name, this.title),
      this.badge
    );
    this.body = h('div', { class: 'gns3c-tool-body', id: bodyId, hidden: true });
    this.node = h('section', { class: 'gns3c-tool' }, this.head, this.body);
    this.head.addEventListener('click', () => this.toggle());
    if (openFirst) {
      this.toggle(true);
    }
  }

  get open(): boolean {
    return this.head.getAttribute('aria-expanded') === 'true';
  }

  toggle(open = !this.open): void {
    this.head.setAttribute('aria-expanded', String(open));
    this.body.hidden = !open;
    if (open && this.bodyStale) {
      this.renderBody();
    }
  }

  update(item: ToolItem): void {
    const prev = this.item;
    this.item = { ...item };
    if (
      prev &&
      prev.name === item.name &&
      prev.arguments === item.arguments &&
      prev.complete === item.complete &&
      prev.state === item.state &&
      prev.progress === item.progress &&
      prev.output === item.output &&
      prev.summary === item.summary &&
      prev.outcome === item.outcome &&
      prev.note === item.note
    ) {
      return;
    }
    this.node.dataset.state = item.state;
    const outcome = toolOutcome(item);
    this.node.dataset.outcome = outcome ?? '';
    this.renderHead(item);
    this.bodyStale = true;
    if (this.open) {
      this.renderBody();
    }
  }

  private renderHead(item: ToolItem): void {
    const label = toolLabel(item.name);
    if (item.state === 'done' && item.summary) {
      this.name.hidden = true;
      this.title.innerHTML = inlineMarkdownToHtml(item.summary);
    } else {
      this.name.hidden = false;
      this.name.textContent = label;
      const lines = describeArguments(item.name, item.arguments);
      this.title.textContent = lines.join('; ');
    }
    this.head.title = `${label}${this.title.textContent ? `: ${this.title.textContent}` : ''}`;
    const badge = toolBadge(item);
    this.badge.textContent = badge.label;
    this.badge.dataset.tone = badge.tone;
  }

  private renderBody(): void {
    const item = this.item;
    if (!item) {
      return;
    }
    this.bodyStale = false;
    const parts: HTMLElement[] = [];
    const lines = describeArguments(item.name, item.arguments);
    if (lines.length) {
      parts.push(
        h('div', { class: 'gns3c-label', text: toolLabel(item.name) }),
        h('ul', { class: 'gns3c-args' }, ...lines.map(line => h('li', {}, h('code', { text: line }))))
      );
    } else if (item.state === 'arguments') {
      parts.push(h('div', { class: 'gns3c-muted', text: 'Writing the arguments...' }));
    }
    if (item.progress.length) {
      const list = h('ol', { class: 'gns3c-progress', 'aria-label': 'Progress' }, ...item.progress.map(progressLine));
      const n = item.progress.length;
      parts.push(
        item.output !== null
          ? h('details', { class: 'gns3c-progress-done' }, h('summary', { text: `${n} progress update${n === 1 ? '' : 's'}` }), list)
          : list
      );
    }
    if (item.state === 'done') {
      if (toolOutcome(item) === 'refused') {
        // The tool's output is written for the model; the student gets the note.
        parts.push(withInlineMarkdown(h('div', { class: 'gns3c-refusal', role: 'note' }), item.note || REFUSED_WITHOUT_NOTE));
      } else {
        if (item.note) {
          parts.push(withInlineMarkdown(h('div', { class: 'gns3c-tool-note' }), item.note));
        }
        parts.push(resultView(item.output ?? ''));
      }
    }
    this.body.replaceChildren(...parts);
  }
}

const DECISION_WORDS: Record<ApprovalItem['state'], string> = {
  pending: 'Waiting for your decision',
  approve: 'Approved',
  reject: 'Rejected',
  timeout: 'No decision in time: not done'
};
/** A pending change whose turn no longer runs here (its cell was interrupted, or a saved
 * notebook): it is decided elsewhere. */
const DECIDE_ELSEWHERE =
  'Waiting for a decision: run %copilot approve or %copilot reject in a cell, or decide in the Copilot sidebar';

class ApprovalView implements ItemView<ApprovalItem> {
  readonly kind = 'approval';
  private readonly summary = h('div', { class: 'gns3c-approval-summary' });
  private readonly state = h('div', { class: 'gns3c-approval-state', role: 'status' });
  private readonly comment = h('textarea', {
    class: 'gns3c-approval-comment',
    rows: 1,
    'aria-label': 'Why you reject the change (optional: the copilot reads it)',
    placeholder: 'Why reject? (optional)'
  });
  private readonly approve = h('button', { type: 'button', class: 'gns3c-approve', text: 'Approve' });
  private readonly reject = h('button', { type: 'button', class: 'gns3c-reject', text: 'Reject' });
  private readonly buttons = h('div', { class: 'gns3c-approval-buttons' }, this.approve, this.reject);
  private readonly controls = h('div', { class: 'gns3c-approval-controls' }, this.comment, this.buttons);
  readonly node = h(
    'section',
    { class: 'gns3c-approval', 'aria-label': 'Change waiting for approval' },
    h('div', { class: 'gns3c-label', text: 'Planned change' }),
    this.summary,
    this.controls,
    this.state
  );
  private item: ApprovalItem | null = null;
  private live = true;
  private failure = '';

  constructor(private readonly onDecision?: DecisionCallback) {
    const decide = async (decision: Decision) => {
      if (!this.item || !this.onDecision) {
        return;
      }
      this.approve.disabled = this.reject.disabled = this.comment.disabled = true;
      this.failure = '';
      const comment = decision === 'reject' ? this.comment.value.trim() || null : null;
      try {
        await this.onDecision(this.item.approval_id, decision, comment);
      } catch (error) {
        this.approve.disabled = this.reject.disabled = this.comment.disabled = false;
        this.failure = `Could not send the decision (${error instanceof Error ? error.message : String(error)})`;
        this.render();
      }
    };
    this.approve.addEventListener('click', () => void decide('approve'));
    this.reject.addEventListener('click', () => void decide('reject'));
    // Keys typed here are the comment's (not a notebook's shortcuts); Enter adds no line.
    this.comment.addEventListener('keydown', event => {
      event.stopPropagation();
      if (event.key === 'Enter' && !event.shiftKey) {
        event.preventDefault();
      }
    });
  }

  update(item: ApprovalItem): void {
    const prev = this.item;
    this.item = { ...item };
    if (prev && prev.summary === item.summary && prev.state === item.state && prev.comment === item.comment) {
      return;
    }
    this.failure = '';
    this.render();
  }

  /** Whether the turn still runs where this view is (only then can it be decided here). */
  setLive(live: boolean): void {
    if (live !== this.live) {
      this.live = live;
      this.render();
    }
  }

  private render(): void {
    const item = this.item;
    if (!item) {
      return;
    }
    const pending = item.state === 'pending';
    const here = pending && this.live && !!this.onDecision;
    this.node.dataset.state = item.state;
    this.summary.textContent = item.summary;
    this.controls.hidden = !here;
    this.state.dataset.tone = this.failure ? 'error' : '';
    this.state.textContent =
      this.failure ||
      (pending && !here && !this.live ? DECIDE_ELSEWHERE : DECISION_WORDS[item.state]) +
        (item.comment ? `: ${item.comment}` : '');
  }
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
