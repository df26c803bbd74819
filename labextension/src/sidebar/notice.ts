/** The sidebar's one line for what it has to say (a refusal, a hint); errors are said
 * there unless they closed the copilot (the closed notice says that, once). */
import { h } from '../dom';

/** An error's message, whatever was thrown. */
export function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export class Notice {
  readonly node = h('div', { class: 'jp-gns3-copilot-sidebar-notice', role: 'status' });

  /** `closedBy`: true when `error` closed the copilot (and said so); `closed`: whether it is. */
  constructor(
    private readonly closedBy: (error: unknown) => boolean,
    private readonly closed: () => boolean
  ) {}

  say(text: string): void {
    this.node.textContent = text;
    this.node.hidden = !text;
  }

  /** Say what went wrong (once the copilot is closed, nothing more: the notice said it). */
  fail(error: unknown): void {
    if (!this.closedBy(error) && !this.closed()) {
      this.say(message(error));
    }
  }
}
