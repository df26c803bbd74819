/**
 * Renders a `Turn` into DOM: used by the widget, the saved-turn renderer and the sidebar.
 * (Interface fixed here; the implementation lands with the turn view.)
 */
import type { Turn } from './types';

export interface TurnViewOptions {
  /** Renders sanitised Markdown into `host` (markdown-it + DOMPurify by default). */
  renderMarkdown?: (host: HTMLElement, markdown: string) => void;
}

export class TurnView {
  readonly node: HTMLElement;

  constructor(private readonly options: TurnViewOptions = {}) {
    this.node = document.createElement('div');
    this.node.className = 'jp-gns3-copilot-turn';
  }

  /** Bring the DOM up to date with `turn` (cheap to call for every streamed event). */
  update(turn: Turn): void {
    this.node.textContent = turn.items.map(item => (item.kind === 'text' ? item.text : '')).join('');
    void this.options;
  }

  dispose(): void {
    this.node.remove();
  }
}
