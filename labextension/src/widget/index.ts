/**
 * The anywidget front end of `ChatWidget` (bundled by build-widget.mjs into the package's
 * static/widget.js, its CSS into static/widget.css): the same `TurnView` as the saved-turn
 * renderer and the sidebar.
 *
 * Renders the synced `turns` state and the live turn (live.ts). When a turn ends the
 * state holds it in full and its view is updated from it (only what differs changes).
 * The input box sends `{type: "send", text}` to the kernel; Stop POSTs the server's abort
 * route (the session's, or a direct run's: its run's), Approve / Reject on a planned
 * change its approval route (the kernel's cell waits
 * on the stream, which then goes on). A model whose kernel is gone (comm closed, or a send refused) says so and
 * disables its controls.
 */
import type { AnyModel, Initialize, Render } from '@anywidget/types';

import { h, icon } from '../dom';
import { modeName } from '../modes';
import type { TurnRecord } from '../turn/types';
import type { Decision } from '../turn/approval-view';
import { TurnView } from '../turn/view';
import { followLiveTurns, type LiveListener, type LiveTurn, liveStore } from './live';
import { requestAbort, requestDecision, type Owner } from './server';

export { renderMarkdown } from '../markdown';
export { abortUrl } from './server';

interface ChatState {
  project_id: string;
  project_name: string;
  session_id: string;
  title: string;
  turns: TurnRecord[];
  can_send: boolean;
  instance_id: string;
  /** A `%copilot run`: its tool cards show opened (absent from older widget states). */
  direct_run?: boolean;
  /** The copilot mode id of the turns, when the cell named one (absent from older states). */
  mode?: string | null;
}

const KERNEL_GONE = 'kernel restarted: run the cell again';
const STALE_NOTE = 'Working (part of the stream was missed: the full turn shows when it ends)';
const NO_ANSWER_AFTER_MS = 15000;

const initialize: Initialize<ChatState> = ({ model }) => followLiveTurns(model as unknown as AnyModel);

const render: Render<ChatState> = ({ model, el }) => {
  const projectName = h('span', { class: 'gns3c-project' });
  const sessionTitle = h('span', { class: 'gns3c-session' });
  const modeTag = h('span', { class: 'gns3c-mode' });
  const log = h('div', { class: 'gns3c-log', role: 'log', 'aria-label': 'Conversation' });
  const input = h('textarea', {
    class: 'gns3c-input',
    rows: 1,
    'aria-label': 'Message to the copilot',
    placeholder: 'Ask a follow-up question (Enter to send, Shift+Enter for a new line)'
  });
  const send = h('button', { type: 'button', class: 'gns3c-send', 'aria-label': 'Send message' }, icon('send'), h('span', { text: 'Send' }));
  const stop = h('button', { type: 'button', class: 'gns3c-stop', 'aria-label': 'Stop the running turn' }, icon('stop'), h('span', { text: 'Stop' }));
  const status = h('div', { class: 'gns3c-composer-status', role: 'status', 'aria-live': 'polite' });
  const composer = h('div', { class: 'gns3c-composer' }, input, send, stop);
  const root = h(
    'div',
    { class: 'gns3c', 'data-lm-suppress-shortcuts': 'true' },
    h('header', { class: 'gns3c-header' }, h('span', { class: 'gns3c-brand' }, icon('spark'), 'GNS3 Copilot'), projectName, sessionTitle, modeTag),
    log,
    composer,
    status
  );
  el.append(root);

  const views: TurnView[] = [];
  const shown: TurnRecord[] = [];
  const store = liveStore(model as unknown as AnyModel);
  let awaiting = false;
  let stopping = false;
  let kernelGone = false;
  let sendTimer = 0;

  const running = () => shown.length > 0 && shown[shown.length - 1].status === 'running';

  function setStatus(text: string, tone = ''): void {
    status.textContent = text;
    status.dataset.tone = tone;
  }

  function refreshControls(): void {
    const busy = running() && !kernelGone;
    const canSend = model.get('can_send');
    composer.hidden = !canSend && !busy;
    input.hidden = send.hidden = !canSend;
    input.disabled = send.disabled = busy || awaiting || kernelGone;
    stop.hidden = !busy;
    stop.disabled = stopping || !model.get('session_id') || !model.get('project_id');
    stop.title = model.get('session_id') ? '' : 'Available once the server has named the session';
    if (!busy && root.dataset.running === 'true' && status.dataset.tone !== 'error') {
      setStatus('');
    }
    root.dataset.running = String(busy);
    if (!busy) {
      stopping = false;
    }
  }

  function markKernelGone(): void {
    kernelGone = true;
    awaiting = false;
    root.dataset.kernel = 'gone';
    composer.hidden = false;
    setStatus(KERNEL_GONE, 'error');
    refreshControls();
  }

  function refreshHeader(): void {
    projectName.textContent = model.get('project_name') || model.get('project_id') || '';
    projectName.hidden = !projectName.textContent;
    sessionTitle.textContent = model.get('title') || '';
    sessionTitle.hidden = !sessionTitle.textContent;
    const mode = model.get('mode');
    modeTag.textContent = mode ? modeName(mode) : '';
    modeTag.hidden = !modeTag.textContent;
  }

  function liveTurnOf(live: LiveTurn): TurnRecord {
    return { user: live.user, status: 'running', items: live.items, stats: {} };
  }

  function show(index: number, turn: TurnRecord, stale = false): void {
    let view = views[index];
    if (!view) {
      view = views[index] = new TurnView({ onDecision: decide, openTools: model.get('direct_run') === true });
      log.append(view.node);
    }
    view.runningNote = stale ? STALE_NOTE : 'Working';
    shown[index] = turn;
    view.update(turn);
  }

  function syncTurns(): void {
    const state = model.get('turns') || [];
    const live = store.live;
    state.forEach((turn, index) => {
      // A running turn's state has no items: the live turn is what it shows.
      const fromLive = turn.status === 'running' && live && live.turn === index;
      show(index, fromLive ? liveTurnOf(live) : turn, fromLive ? live.stale : false);
    });
    // Views beyond the state: a live turn whose state has not arrived yet is kept; the
    // rest are leftovers of a replaced conversation.
    let keep = state.length;
    if (shown.length === keep + 1 && shown[keep].status === 'running') {
      keep++;
    }
    views.splice(keep).forEach(view => view.dispose());
    shown.splice(keep);
    awaiting = false;
    refreshControls();
  }

  function sendMessage(): void {
    const text = input.value.trim();
    if (!text || input.disabled) {
      return;
    }
    try {
      model.send({ type: 'send', text });
    } catch {
      // "Cannot send": the comm is closed, its kernel is gone.
      markKernelGone();
      return;
    }
    input.value = '';
    autosize();
    awaiting = true;
    setStatus('Sending...');
    refreshControls();
    window.clearTimeout(sendTimer);
    // The kernel reads the message once its running cell ends.
    sendTimer = window.setTimeout(() => {
      if (!awaiting) {
        return;
      }
      setStatus('No answer from the kernel yet: it replies once its running cell ends. If the kernel was restarted, run the chat cell again.', 'error');
      awaiting = false;
      refreshControls();
    }, NO_ANSWER_AFTER_MS);
  }

  async function decide(approvalId: string, decision: Decision, comment: string | null): Promise<void> {
    const projectId = model.get('project_id');
    const sessionId = model.get('session_id');
    if (!projectId || !sessionId) {
      throw new Error('the server has not named the session yet');
    }
    const taken = await requestDecision(projectId, ownerOf(sessionId), approvalId, decision, comment);
    if (taken === 'here') {
      // The cell had stopped waiting: this widget's turn will not show the rest.
      setStatus('Decided: the rest of the turn ran on the server; %copilot history shows it.');
    }
  }

  /** A direct run's id (the `session_id` its events carry) names a run, not a session. */
  function ownerOf(id: string): Owner {
    return model.get('direct_run') === true ? { runId: id } : { sessionId: id };
  }

  function autosize(): void {
    input.style.height = 'auto';
    input.style.height = `${Math.min(input.scrollHeight + 2, 200)}px`;
  }

  input.addEventListener('keydown', event => {
    event.stopPropagation(); // keep notebook shortcuts (a, b, dd, ...) out of the box
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      sendMessage();
    }
  });
  input.addEventListener('input', autosize);
  send.addEventListener('click', sendMessage);
  stop.addEventListener('click', async () => {
    const projectId = model.get('project_id');
    const sessionId = model.get('session_id');
    if (!projectId || !sessionId || stopping) {
      return;
    }
    stopping = true;
    refreshControls();
    setStatus('Stopping...');
    try {
      await requestAbort(projectId, ownerOf(sessionId));
      setStatus('Stop requested: the copilot ends the turn at the next safe point.');
    } catch (error) {
      stopping = false;
      setStatus(`Could not stop the turn (${(error as Error).message}).`, 'error');
      refreshControls();
    }
  });

  // A view taken out of the page (the output replaced at a turn's end leaves its old view
  // behind; notebook windowing detaches cells) drops its DOM and skips all work, and
  // rebuilds from the state and the live turn when it is shown again.
  let detached = false;
  function attached(): boolean {
    if (root.isConnected) {
      if (!detached) {
        return true;
      }
      detached = false;
      store.listeners.add(listener);
      syncTurns();
      refreshHeader();
      return false; // rebuilt from the current state: the event is already in it
    }
    if (!detached) {
      detached = true;
      store.listeners.delete(listener);
      views.splice(0).forEach(view => view.dispose());
      shown.splice(0);
      // A view put back within the same frame never looks hidden to the observer: look
      // once more after the frame (and after a timer, for pages that paint no frames).
      requestAnimationFrame(() => attached());
      window.setTimeout(() => attached(), 100);
    }
    return false;
  }
  const guarded =
    <A extends unknown[]>(fn: (...args: A) => void) =>
    (...args: A) => {
      if (attached()) {
        fn(...args);
      }
    };
  const visibility = new IntersectionObserver(() => attached());
  visibility.observe(root);

  const listener: LiveListener = {
    begin: guarded((live: LiveTurn) => {
      show(live.turn, liveTurnOf(live));
      awaiting = false;
      if (!kernelGone) {
        setStatus('');
      }
      refreshControls();
    }),
    changed: guarded((live: LiveTurn) => {
      if (shown[live.turn]?.status === 'running') {
        show(live.turn, liveTurnOf(live), live.stale);
      }
    })
  };
  store.listeners.add(listener);
  const onTurns = guarded(syncTurns);
  const onControls = guarded(refreshControls);
  const onHeader = guarded(refreshHeader);
  const onClosed = () => markKernelGone();
  const events: [string, () => void][] = [
    ['change:turns', onTurns],
    ['change:can_send', onControls],
    ['change:session_id', onControls],
    ['change:project_id', onControls],
    ['change:project_name', onHeader],
    ['change:title', onHeader],
    ['change:mode', onHeader],
    // ipywidgets' model events when its comm closes, the manager drops the model, or it
    // marks it disconnected as the kernel restarts (comm_live only ever goes from true to
    // false once a view exists: a restarted kernel's widgets are new models).
    ['comm:close', onClosed],
    ['destroy', onClosed],
    ['comm_live_update', onClosed]
  ];
  for (const [name, handler] of events) {
    model.on(name, handler);
  }

  refreshHeader();
  syncTurns();

  return () => {
    store.listeners.delete(listener);
    visibility.disconnect();
    for (const [name, handler] of events) {
      model.off(name as 'change:turns', handler);
    }
    window.clearTimeout(sendTimer);
    views.forEach(view => view.dispose());
  };
};

export default { initialize, render };
