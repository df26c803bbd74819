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
