/** A tool call's card: a one-line head (summary or name and arguments, and a badge) that
 * opens on click into its arguments, progress and result; the body is built when first
 * opened. */
import { h, icon } from '../dom';
import { inlineMarkdownToHtml, withInlineMarkdown } from '../markdown';
import { describeArguments, toolBadge, toolLabel, toolOutcome } from './describe';
import type { ItemView } from './item-view';
import { resultView } from './results';
import { formatSeconds } from './stats';
import type { ProgressLine, ToolItem } from './types';

let nextId = 0;

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

export class ToolView implements ItemView<ToolItem> {
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
