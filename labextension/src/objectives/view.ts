/**
 * A `Checklist` as DOM, the same for a saved `%copilot check` output and the sidebar's
 * Objectives panel: the title and score, then each stage (its title, passed / not yet and
 * its points) with its objectives, each one line: a mark (passed, failed, undecided,
 * being checked, not checked: a shape and a word for screen readers, never colour alone),
 * its text and points; once decided, the one-line explanation and, on click, the evidence
 * (node, command, output lines). Texts and explanations are inline Markdown (an objective
 * naming `show ip` shows it as code). `update(list)` draws it again, keeping opened evidence
 * open and the focus where it was (on the element with the same `data-key`). No
 * JupyterLab imports: the tests render it as the renderer and the sidebar do.
 */
import { h, icon } from '../dom';
import { withInlineMarkdown } from '../markdown';
import {
  type Checklist,
  type ChecklistObjective,
  type ChecklistStage,
  formatPoints,
  fromBundle,
  pointsAwarded,
  type ObjectiveState,
  type Score,
  scoreOf,
  totalScore
} from './checklist';
import type { Evidence } from './types';

export interface ChecklistViewOptions {
  /** Buttons after the list's title (the sidebar's Check all). */
  listActions?: (list: Checklist) => Node[];
  /** Buttons after a stage's title (the sidebar's Check and Catch up). */
  stageActions?: (stage: ChecklistStage) => Node[];
}

/** Each state's word (what a screen reader says for its mark). */
export const STATE_WORDS: Record<ObjectiveState, string> = {
  pass: 'passed',
  fail: 'not passed',
  error: 'could not be checked',
  pending: 'checking',
  unchecked: 'not checked yet'
};

const MARKS: Record<ObjectiveState, Parameters<typeof icon>[0] | null> = {
  pass: 'check',
  fail: 'cross',
  error: 'alert',
  pending: null,
  unchecked: 'circle'
};

type Tone = 'success' | 'warn' | 'error' | 'active' | 'info';

function points(value: number): string {
  return `${formatPoints(value)} ${value === 1 ? 'pt' : 'pts'}`;
}

function badge(text: string, tone: Tone, extraClass = ''): HTMLElement {
  return h('span', { class: `gns3c-badge ${extraClass}`.trim(), 'data-tone': tone, text });
}

function mark(state: ObjectiveState): HTMLElement {
  const name = MARKS[state];
  return h(
    'span',
    { class: 'gns3c-check-mark', role: 'img', 'aria-label': STATE_WORDS[state], title: STATE_WORDS[state] },
    name ? icon(name) : h('span', { class: 'gns3c-spinner', 'aria-hidden': 'true' })
  );
}

/** The score's words: while checking, how many are decided; once all are, the score and
 * whether it passed; with objectives never checked, the score so far. */
export function scoreBadge(score: Score, stage: boolean): { text: string; tone: Tone } | null {
  const { counts } = score;
  const total = Object.values(counts).reduce((a, b) => a + b, 0);
  if (counts.pending) {
    return { text: `checking… ${total - counts.pending - counts.unchecked} of ${total}`, tone: 'active' };
  }
  const tally = `${formatPoints(score.score)}/${formatPoints(score.maxScore)}`;
  if (score.decided) {
    return score.passed ? { text: `passed · ${tally}`, tone: 'success' } : { text: `not yet · ${tally}`, tone: 'warn' };
  }
  if (counts.unchecked === total) {
    return stage ? null : { text: `${points(score.maxScore)} · not checked yet`, tone: 'info' };
  }
  return { text: `${tally} · ${counts.unchecked} not checked`, tone: 'info' };
}

/** `Evidence: PC1 · show ip`, `Evidence: PC1, PC2`, `Evidence: R1 · show ip route, R2, 1 more`. */
export function evidenceLabel(evidence: Evidence[]): string {
  const where = [...new Set(evidence.map(e => [e.node, e.command].filter(Boolean).join(' · ')))];
  const more = where.length > 2 ? `, ${where.length - 2} more` : '';
  return `Evidence: ${where.slice(0, 2).join(', ')}${more}`;
}

function evidenceBody(evidence: Evidence[]): HTMLElement {
  return h(
    'div',
    { class: 'gns3c-check-evidence-body' },
    ...evidence.map(e =>
      h(
        'div',
        { class: 'gns3c-check-evidence-item' },
        h(
          'div',
          { class: 'gns3c-check-evidence-where' },
          h('span', { class: 'gns3c-check-evidence-node', text: e.node }),
          e.command ? h('code', { text: e.command }) : h('span', { class: 'gns3c-muted', text: 'read from GNS3' })
        ),
        e.lines && e.lines.length ? h('pre', { class: 'gns3c-check-evidence-lines', text: e.lines.join('\n') }) : null
      )
    )
  );
}

function objectiveRow(objective: ChecklistObjective, opened: boolean): HTMLElement {
  const result = objective.state === 'pending' ? null : objective.result;
  const decided = objective.state !== 'pending' && objective.state !== 'unchecked';
  const pointsText =
    objective.points === null
      ? ''
      : decided
        ? `${formatPoints(pointsAwarded(objective))}/${points(objective.points)}`
        : points(objective.points);
  const body = h(
    'div',
    { class: 'gns3c-check-body' },
    h(
      'div',
      { class: 'gns3c-check-line' },
      withInlineMarkdown(h('span', { class: 'gns3c-check-text' }), objective.text),
      pointsText ? h('span', { class: 'gns3c-check-points', text: pointsText }) : null
    )
  );
  if (result?.explanation) {
    body.append(withInlineMarkdown(h('div', { class: 'gns3c-check-why' }), result.explanation));
  }
  const evidence = result?.evidence ?? [];
  if (evidence.length) {
    const details = h(
      'details',
      { class: 'gns3c-check-evidence', open: opened },
      h('summary', { text: evidenceLabel(evidence), 'data-key': `evidence:${objective.id}` }),
      evidenceBody(evidence)
    );
    body.append(details);
  }
  return h(
    'li',
    { class: 'gns3c-check', 'data-state': objective.state, 'data-objective': objective.id },
    mark(objective.state),
    body
  );
}

function stageSection(stage: ChecklistStage, options: ChecklistViewOptions, opened: Set<string>): HTMLElement {
  const shown = scoreBadge(scoreOf(stage.objectives), true);
  const head = h(
    'div',
    { class: 'gns3c-checks-stage-head' },
    h(
      'span',
      { class: 'gns3c-checks-stage-title' },
      stage.title,
      stage.current ? h('span', { class: 'gns3c-checks-stage-current', text: 'you are here' }) : null
    ),
    shown ? badge(shown.text, shown.tone, 'gns3c-checks-stage-score') : null,
    ...(options.stageActions?.(stage) ?? [])
  );
  return h(
    'section',
    { class: 'gns3c-checks-stage', 'data-stage': stage.id },
    head,
    h('ul', { class: 'gns3c-checks-list' }, ...stage.objectives.map(o => objectiveRow(o, opened.has(o.id))))
  );
}

export class ChecklistView {
  readonly node: HTMLElement;

  constructor(private readonly options: ChecklistViewOptions = {}) {
    this.node = h('div', { class: 'gns3c-checks' });
  }

  /** Draw `list` (opened evidence stays open, the focus stays where it was). */
  update(list: Checklist): void {
    const focused = (this.node.contains(document.activeElement) && (document.activeElement as HTMLElement).dataset.key) || null;
    const opened = new Set(
      [...this.node.querySelectorAll<HTMLDetailsElement>('.gns3c-check-evidence[open]')].map(
        details => details.closest<HTMLElement>('.gns3c-check')?.dataset.objective ?? ''
      )
    );
    const total = totalScore(list);
    const shown = scoreBadge(total, false);
    this.node.dataset.state = total.counts.pending ? 'checking' : total.decided ? 'decided' : 'open';
    this.node.setAttribute('aria-busy', String(total.counts.pending > 0));
    const head = h(
      'div',
      { class: 'gns3c-checks-head' },
      h('span', { class: 'gns3c-checks-title', text: list.title || 'Lab objectives' }),
      shown ? badge(shown.text, shown.tone, 'gns3c-checks-score') : null,
      ...(this.options.listActions?.(list) ?? [])
    );
    this.node.replaceChildren(head, ...list.stages.map(stage => stageSection(stage, this.options, opened)));
    if (focused) {
      [...this.node.querySelectorAll<HTMLElement>('[data-key]')].find(el => el.dataset.key === focused)?.focus();
    }
  }
}

/** A `%copilot check` output, drawn again in place each time the kernel updates it
 * (opened evidence stays open); data that is not a checklist gets a readable message. */
export class ChecksOutput {
  readonly node = h('div', { class: 'jp-gns3-copilot-saved jp-gns3-copilot-checks' });
  private view: ChecklistView | null = null;

  render(bundle: unknown): void {
    const list = fromBundle(bundle);
    if (!list) {
      this.view = null;
      this.node.replaceChildren(
        h('div', { class: 'gns3c-error', role: 'alert', text: 'This lab checklist could not be read: it holds no results.' })
      );
      return;
    }
    if (!this.view) {
      this.view = new ChecklistView();
      this.node.replaceChildren(this.view.node);
    }
    this.view.update(list);
  }
}

/** The DOM of a `%copilot check` output (`ChecksBundle`). */
export function renderChecksBundle(bundle: unknown): HTMLElement {
  const output = new ChecksOutput();
  output.render(bundle);
  return output.node;
}
