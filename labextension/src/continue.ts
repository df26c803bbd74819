/**
 * "Continue in the Copilot sidebar" from a saved answer. The MIME renderer has no app, so
 * its button dispatches a DOM event (`CONTINUE_EVENT`, bubbling from the button to the
 * document) that the sidebar plugin listens for; the listener calls `preventDefault()` to
 * say it took the request, so a page without the sidebar says so instead of doing nothing.
 */
import { h } from './dom';

export const CONTINUE_EVENT = 'gns3-copilot:continue';

/** Which conversation to continue. */
export interface ContinueRequest {
  project_id: string;
  session_id: string;
}

/** Dispatch the request from `source`; true when a listener took it. */
export function requestContinue(source: EventTarget, request: ContinueRequest): boolean {
  const event = new CustomEvent<ContinueRequest>(CONTINUE_EVENT, {
    detail: { ...request },
    bubbles: true,
    cancelable: true
  });
  return !source.dispatchEvent(event);
}

/** Call `handler` for every request reaching `target` (the document); returns the remover. */
export function onContinue(target: EventTarget, handler: (request: ContinueRequest) => void): () => void {
  const listener = (event: Event): void => {
    const detail = (event as CustomEvent<unknown>).detail as Partial<ContinueRequest> | null;
    if (!detail || typeof detail.project_id !== 'string' || typeof detail.session_id !== 'string') {
      return;
    }
    if (!detail.project_id || !detail.session_id) {
      return;
    }
    event.preventDefault();
    handler({ project_id: detail.project_id, session_id: detail.session_id });
  };
  target.addEventListener(CONTINUE_EVENT, listener);
  return () => target.removeEventListener(CONTINUE_EVENT, listener);
}

/** The button of a saved answer; a click without a listener says where to continue. */
export function continueButton(request: ContinueRequest): HTMLElement {
  const note = h('span', { class: 'gns3c-continue-note', role: 'status' });
  const button = h('button', {
    type: 'button',
    class: 'gns3c-continue',
    text: 'Continue in the Copilot sidebar',
    title: 'Open this conversation in the GNS3 Copilot sidebar'
  });
  button.addEventListener('click', () => {
    note.textContent = requestContinue(button, request)
      ? ''
      : 'The Copilot sidebar is not available here: continue with a new %copilot cell.';
  });
  return h('span', { class: 'gns3c-continue-row' }, button, note);
}
