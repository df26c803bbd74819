/**
 * The DOM of a saved cell output (`TurnBundle`): its turns through `TurnView`, then a
 * footer naming the project and session (with the "Continue in the Copilot sidebar"
 * button when asked for and the bundle names both). A direct run's output (`direct_run`)
 * has no conversation, hence no button, and shows its tool cards opened. No JupyterLab
 * imports: the benchmark and the tests render it as the MIME renderer does.
 */
import { continueButton } from './continue';
import { h } from './dom';
import { modeName } from './modes';
import type { TurnBundle, TurnRecord } from './turn/types';
import { TurnView } from './turn/view';

function isTurn(value: unknown): value is TurnRecord {
  const turn = value as TurnRecord;
  return !!turn && typeof turn === 'object' && typeof turn.user === 'string' && Array.isArray(turn.items);
}

export interface RenderOptions {
  /** Offer to continue the bundle's session in the sidebar (JupyterLab / Notebook 7). */
  continuable?: boolean;
}

/** The DOM of a saved bundle; a bundle that does not hold turns gets a readable message. */
export function renderBundle(bundle: unknown, options: RenderOptions = {}): HTMLElement {
  const root = h('div', { class: 'jp-gns3-copilot-saved gns3c-saved' });
  const data = bundle as TurnBundle | null;
  if (!data || typeof data !== 'object' || !Array.isArray(data.turns) || !data.turns.every(isTurn)) {
    root.append(h('div', { class: 'gns3c-error', role: 'alert', text: 'This copilot output could not be read: it holds no turns.' }));
    return root;
  }
  const direct = data.direct_run === true;
  for (const turn of data.turns) {
    const view = new TurnView({ openTools: direct });
    view.update({ ...turn, stats: turn.stats ?? {} });
    root.append(view.node);
  }
  const session = direct ? 'commands run without the model' : data.session_id ? `session ${data.session_id.slice(0, 8)}` : '';
  const where = [data.project_name || data.project_id, session, data.mode ? modeName(data.mode) : '']
    .filter(Boolean)
    .join(' · ');
  const footer = h('footer', { class: 'gns3c-saved-footer' }, h('span', { text: `GNS3 Copilot${where ? ` · ${where}` : ''} · saved ${direct ? 'output' : 'answer'}` }));
  if (options.continuable && !direct && data.project_id && data.session_id) {
    footer.append(continueButton({ project_id: data.project_id, session_id: data.session_id }));
  }
  root.append(footer);
  return root;
}
