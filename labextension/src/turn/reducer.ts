/**
 * Reduces one turn's chat events into a `Turn`, exactly as the Python reducer
 * (`jupyter_gns3_copilot/turns.py`) does; both are checked against tests/fixtures/turns/.
 * (Interface fixed here; the implementation lands with the turn view.)
 */
import type { ChatEvent } from '../events';
import type { Turn, TurnStatus } from './types';

export class TurnReducer {
  readonly turn: Turn;

  constructor(user: string) {
    this.turn = { user, status: 'running', items: [], stats: {} };
  }

  /** Apply one event; returns true when the rendering needs an update. */
  apply(event: ChatEvent): boolean {
    if (event.type === 'content') {
      const last = this.turn.items[this.turn.items.length - 1];
      if (last && last.kind === 'text') {
        last.text += event.content;
      } else {
        this.turn.items.push({ kind: 'text', text: event.content });
      }
      return true;
    }
    return false;
  }

  /** End the turn (unfinished tool calls become `stopped`); returns its status. */
  finish(): TurnStatus {
    this.turn.status = 'done';
    return this.turn.status;
  }
}
