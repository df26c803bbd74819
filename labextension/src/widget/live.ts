/**
 * The live turn of each widget model, reduced from the kernel's custom messages
 * (protocol in `jupyter_gns3_copilot/notebook/widget.py`):
 *   {type: "begin", turn, user}            a turn starts
 *   {type: "ops", turn, batch, ops: [...]} {op: "append", index, text} | {op: "item", index, item}
 * Messages are reduced per model (in anywidget's `initialize`, which runs before any
 * message arrives), so a view rendered after the first batches still shows the whole
 * running turn. A missing batch marks the turn stale: the state at its end repairs it.
 */
import type { AnyModel } from '@anywidget/types';

import type { Op } from '../generated/ops';
import type { Item } from '../turn/types';

export interface LiveTurn {
  turn: number;
  user: string;
  items: Item[];
  nextBatch: number;
  stale: boolean;
}

/** What a rendered view is told about its model's live turn. */
export interface LiveListener {
  begin(live: LiveTurn): void;
  changed(live: LiveTurn): void;
}

export interface LiveStore {
  live: LiveTurn | null;
  listeners: Set<LiveListener>;
}

// Keyed by the synced `instance_id`: anywidget gives `initialize` and each `render`
// different proxy objects for the same model.
const STORES = new Map<string, LiveStore>();

export function liveStore(model: AnyModel): LiveStore {
  const key = String(model.get('instance_id'));
  let store = STORES.get(key);
  if (!store) {
    store = { live: null, listeners: new Set() };
    STORES.set(key, store);
  }
  return store;
}

function applyOps(items: Item[], ops: Op[]): void {
  for (const op of ops) {
    if (op.op === 'append') {
      const current = items[op.index];
      items[op.index] = { kind: 'text', text: current && current.kind === 'text' ? current.text + op.text : op.text };
    } else if (op.op === 'item') {
      items[op.index] = op.item;
    }
  }
}

/** Follow `model`'s custom messages; returns the function that stops following. */
export function followLiveTurns(model: AnyModel): () => void {
  const store = liveStore(model);
  const onMessage = (msg: unknown) => {
    const message = msg as { type?: string; turn?: number; user?: string; batch?: number; ops?: Op[] };
    if (!message || typeof message !== 'object' || typeof message.turn !== 'number') {
      return;
    }
    if (message.type === 'begin') {
      store.live = { turn: message.turn, user: message.user ?? '', items: [], nextBatch: 0, stale: false };
      store.listeners.forEach(listener => listener.begin(store.live!));
    } else if (message.type === 'ops' && Array.isArray(message.ops)) {
      const live = store.live;
      if (!live || live.turn !== message.turn || live.stale) {
        return;
      }
      if (message.batch === live.nextBatch) {
        live.nextBatch++;
        applyOps(live.items, message.ops);
      } else {
        live.stale = true;
      }
      store.listeners.forEach(listener => listener.changed(live));
    }
  };
  model.on('msg:custom', onMessage);
  return () => {
    model.off('msg:custom', onMessage);
    STORES.delete(String(model.get('instance_id')));
  };
}
