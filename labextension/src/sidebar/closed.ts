/**
 * The copilot closed by its configuration: while the server's settings are invalid every
 * copilot route answers 503 `ConfigurationError` (the server log names the setting). The
 * sidebar then says so once, in words for the student, with the server's message folded
 * away for the administrator, and disables what would only meet the same refusal.
 */
import { ApiError } from '../api';
import { h } from '../dom';

/** The server's message when `error` says the copilot is closed by configuration. */
export function closedReason(error: unknown): string | null {
  return error instanceof ApiError && error.status === 503 && error.type === 'ConfigurationError'
    ? error.message
    : null;
}

export const CLOSED_TEXT =
  'The copilot is closed: its configuration has a problem that the administrator must fix. ' +
  'It opens again once they have fixed it and restarted the Jupyter server.';

/** The notice's content: the sentence for the student, the server's message folded. */
export function closedNotice(reason: string): HTMLElement[] {
  return [
    h('p', { class: 'jp-gns3-copilot-sidebar-closed-text', text: CLOSED_TEXT }),
    h(
      'details',
      { class: 'jp-gns3-copilot-sidebar-closed-details' },
      h('summary', { text: 'Details for the administrator' }),
      h('p', { text: reason })
    )
  ];
}

/**
 * Whether the copilot is closed, and its notice (hidden while open). `closedBy(error)`
 * closes it when `error` says so; `reopen()` once the server answers again; `onChange`
 * hears both.
 */
export class ClosedState {
  readonly node = h('div', { class: 'jp-gns3-copilot-sidebar-closed', role: 'alert', hidden: true });
  private reason: string | null = null;

  constructor(private readonly onChange: (closed: boolean) => void) {}

  get closed(): boolean {
    return this.reason !== null;
  }

  /** When `error` says the copilot is closed by its configuration: show why (once) and
   * answer true. */
  closedBy(error: unknown): boolean {
    const reason = closedReason(error);
    if (!reason) {
      return false;
    }
    if (reason !== this.reason) {
      this.reason = reason;
      this.node.replaceChildren(...closedNotice(reason));
    }
    this.node.hidden = false;
    this.onChange(true);
    return true;
  }

  /** The copilot answers again (the server was restarted with a fixed configuration). */
  reopen(): void {
    if (this.reason !== null) {
      this.reason = null;
      this.node.replaceChildren();
      this.node.hidden = true;
      this.onChange(false);
    }
  }
}
