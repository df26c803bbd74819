/** A text item: streaming Markdown rendered a settled block at a time. */
import { addCopyButtons } from '../copy';
import { h } from '../dom';
import type { ItemView } from './item-view';
import type { TextItem } from './types';

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
export class TextView implements ItemView<TextItem> {
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
