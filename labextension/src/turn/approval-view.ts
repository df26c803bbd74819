/** A planned change waiting for a person: its summary, Approve / Reject with a comment for
 * the copilot while the turn runs here, else where to decide it. */
import { h } from '../dom';
import type { ItemView } from './item-view';
import type { ApprovalItem } from './types';

export type Decision = 'approve' | 'reject';

export type DecisionCallback = (
  approvalId: string,
  decision: Decision,
  comment: string | null
) => void | Promise<unknown>;

const DECISION_WORDS: Record<ApprovalItem['state'], string> = {
  pending: 'Waiting for your decision',
  approve: 'Approved',
  reject: 'Rejected',
  timeout: 'No decision in time: not done'
};
/** A pending change whose turn no longer runs here (its cell was interrupted, or a saved
 * notebook): it is decided elsewhere. */
const DECIDE_ELSEWHERE =
  'Waiting for a decision: run %copilot approve or %copilot reject in a cell, or decide in the Copilot sidebar';

export class ApprovalView implements ItemView<ApprovalItem> {
  readonly kind = 'approval';
  private readonly summary = h('div', { class: 'gns3c-approval-summary' });
  private readonly state = h('div', { class: 'gns3c-approval-state', role: 'status' });
  private readonly comment = h('textarea', {
    class: 'gns3c-approval-comment',
    rows: 1,
    'aria-label': 'Why you reject the change (optional: the copilot reads it)',
    placeholder: 'Why reject? (optional)'
  });
  private readonly approve = h('button', { type: 'button', class: 'gns3c-approve', text: 'Approve' });
  private readonly reject = h('button', { type: 'button', class: 'gns3c-reject', text: 'Reject' });
  private readonly buttons = h('div', { class: 'gns3c-approval-buttons' }, this.approve, this.reject);
  private readonly controls = h('div', { class: 'gns3c-approval-controls' }, this.comment, this.buttons);
  readonly node = h(
    'section',
    { class: 'gns3c-approval', 'aria-label': 'Change waiting for approval' },
    h('div', { class: 'gns3c-label', text: 'Planned change' }),
    this.summary,
    this.controls,
    this.state
  );
  private item: ApprovalItem | null = null;
  private live = true;
  private failure = '';

  constructor(private readonly onDecision?: DecisionCallback) {
    const decide = async (decision: Decision) => {
      if (!this.item || !this.onDecision) {
        return;
      }
      this.approve.disabled = this.reject.disabled = this.comment.disabled = true;
      this.failure = '';
      const comment = decision === 'reject' ? this.comment.value.trim() || null : null;
      try {
        await this.onDecision(this.item.approval_id, decision, comment);
      } catch (error) {
        this.approve.disabled = this.reject.disabled = this.comment.disabled = false;
        this.failure = `Could not send the decision (${error instanceof Error ? error.message : String(error)})`;
        this.render();
      }
    };
    this.approve.addEventListener('click', () => void decide('approve'));
    this.reject.addEventListener('click', () => void decide('reject'));
    // Keys typed here are the comment's (not a notebook's shortcuts); Enter adds no line.
    this.comment.addEventListener('keydown', event => {
      event.stopPropagation();
      if (event.key === 'Enter' && !event.shiftKey) {
        event.preventDefault();
      }
    });
  }

  update(item: ApprovalItem): void {
    const prev = this.item;
    this.item = { ...item };
    if (prev && prev.summary === item.summary && prev.state === item.state && prev.comment === item.comment) {
      return;
    }
    this.failure = '';
    this.render();
  }

  /** Whether the turn still runs where this view is (only then can it be decided here). */
  setLive(live: boolean): void {
    if (live !== this.live) {
      this.live = live;
      this.render();
    }
  }

  private render(): void {
    const item = this.item;
    if (!item) {
      return;
    }
    const pending = item.state === 'pending';
    const here = pending && this.live && !!this.onDecision;
    this.node.dataset.state = item.state;
    this.summary.textContent = item.summary;
    this.controls.hidden = !here;
    this.state.dataset.tone = this.failure ? 'error' : '';
    this.state.textContent =
      this.failure ||
      (pending && !here && !this.live ? DECIDE_ELSEWHERE : DECISION_WORDS[item.state]) +
        (item.comment ? `: ${item.comment}` : '');
  }
}
