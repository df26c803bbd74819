import { describe, expect, it } from 'vitest';

import { loadChecksFixture } from '../../test/fixtures';
import { fromBundle, fromLab, scoreOf, startChecking } from './checklist';
import { ChecklistView, ChecksOutput, evidenceLabel, renderChecksBundle, scoreBadge } from './view';

const fixture = loadChecksFixture('two_stages');
const saved = fixture.bundles[fixture.bundles.length - 1];

function rows(root: HTMLElement): string[] {
  return [...root.querySelectorAll<HTMLElement>('.gns3c-check')].map(
    row => `${row.querySelector('.gns3c-check-mark')?.getAttribute('aria-label')}|${row.querySelector('.gns3c-check-text')?.textContent}|${row.querySelector('.gns3c-check-points')?.textContent}`
  );
}

describe('the checklist view of a saved check', () => {
  it('draws each stage with its result and each objective with mark, text, points and why', () => {
    const root = renderChecksBundle(saved);
    expect(root.querySelector('.gns3c-checks-title')?.textContent).toBe('Two PCs');
    expect(root.querySelector('.gns3c-checks-score')?.textContent).toBe('not yet · 2/6');
    expect([...root.querySelectorAll('.gns3c-checks-stage-head')].map(h => h.textContent)).toEqual([
      'Address the PCsnot yet · 2/4',
      'Reach PC2not yet · 0/2'
    ]);
    expect(rows(root)).toEqual([
      'passed|PC1 has 10.20.3.1/24|2/2 pts',
      'not passed|PC2 has 10.20.3.2/24|0/1 pt',
      'could not be checked|PC3 runs|0/1 pt',
      'not passed|PC1 reaches PC2|0/2 pts'
    ]);
    const failed = root.querySelector<HTMLElement>('[data-objective="pc2-address"]')!;
    expect(failed.dataset.state).toBe('fail');
    expect(failed.querySelector('.gns3c-check-why')?.textContent).toBe('PC2 has 10.0.0.2/24, not 10.20.3.2/24.');
  });

  it('keeps the evidence folded until clicked: node, command and the lines that decided', () => {
    const root = renderChecksBundle(saved);
    const evidence = root.querySelector<HTMLDetailsElement>('[data-objective="pc1-pc2"] .gns3c-check-evidence')!;
    expect(evidence.open).toBe(false);
    expect(evidence.querySelector('summary')?.textContent).toBe('Evidence: PC1 · ping 10.0.0.2 -c 3');
    expect(evidence.querySelector('.gns3c-check-evidence-node')?.textContent).toBe('PC1');
    expect(evidence.querySelector('code')?.textContent).toBe('ping 10.0.0.2 -c 3');
    expect(evidence.querySelector('pre')?.textContent).toBe('host (10.0.0.2) not reachable');
    // an undecided objective without evidence has no fold
    expect(root.querySelector('[data-objective="pc3-runs"] .gns3c-check-evidence')).toBeNull();
  });

  it('names where the evidence comes from in its fold', () => {
    const at = (node: string, command?: string) => ({ node, command, lines: [] });
    expect(evidenceLabel([at('PC1'), at('PC2')])).toBe('Evidence: PC1, PC2');
    expect(evidenceLabel([at('R1', 'show ip route'), at('R1', 'show ip route'), at('R2')])).toBe('Evidence: R1 · show ip route, R2');
    expect(evidenceLabel([at('A'), at('B'), at('C'), at('D')])).toBe('Evidence: A, B, 2 more');
  });

  it('says passed when every objective passed', () => {
    const results = saved.results.map(r => ({ ...r, status: 'pass' as const, points_awarded: r.points }));
    const root = renderChecksBundle({ ...saved, results });
    expect(root.querySelector('.gns3c-checks-score')?.textContent).toBe('passed · 6/6');
    expect(root.querySelector('.gns3c-checks-score')?.getAttribute('data-tone')).toBe('success');
  });

  it('shows objectives being checked with a spinner and how many are decided', () => {
    const root = renderChecksBundle(fixture.bundles[1]);
    expect(root.querySelector('.gns3c-checks-score')?.textContent).toBe('checking… 1 of 4');
    expect(root.querySelectorAll('[data-state="pending"] .gns3c-spinner')).toHaveLength(3);
    expect(root.querySelector('.gns3c-checks')?.getAttribute('aria-busy')).toBe('true');
    expect(rows(root)[0]).toBe('checking|PC1 has 10.20.3.1/24|2 pts');
  });

  it('is drawn again in place as the kernel updates it: opened evidence stays open', () => {
    const output = new ChecksOutput();
    output.render(fixture.bundles[3]);
    const opened = output.node.querySelector<HTMLDetailsElement>('[data-objective="pc2-address"] .gns3c-check-evidence')!;
    opened.open = true;
    output.render(saved);
    expect(output.node.querySelector<HTMLDetailsElement>('[data-objective="pc2-address"] .gns3c-check-evidence')?.open).toBe(true);
    expect(output.node.querySelector('.gns3c-checks-score')?.textContent).toBe('not yet · 2/6');
  });

  it('says so for data that is not a checklist, and keeps untrusted text as text', () => {
    expect(renderChecksBundle({}).querySelector('[role=alert]')?.textContent).toContain('could not be read');
    const evil = { ...saved, title: '<img src=x onerror=alert(1)>' };
    const root = renderChecksBundle(evil);
    expect(root.querySelector('img')).toBeNull();
    expect(root.querySelector('.gns3c-checks-title')?.textContent).toBe(evil.title);
  });
});

describe('the words of texts and explanations', () => {
  it('renders their Markdown: a command or an output line shows as code, never in backticks', () => {
    const [first, ...rest] = saved.results;
    const worded = {
      ...first,
      text: 'PC1 answers `show ip` with its gateway',
      status: 'fail' as const,
      explanation: '`show ip` on PC1 shows `GATEWAY : 0.0.0.0`, not what the objective asks.'
    };
    const root = renderChecksBundle({ ...saved, results: [worded, ...rest] });
    const row = root.querySelector<HTMLElement>(`[data-objective="${first.id}"]`)!;
    const text = row.querySelector('.gns3c-check-text')!;
    expect(text.textContent).toBe('PC1 answers show ip with its gateway');
    expect(text.querySelector('code')?.textContent).toBe('show ip');
    const why = row.querySelector('.gns3c-check-why')!;
    expect(why.textContent).toBe('show ip on PC1 shows GATEWAY : 0.0.0.0, not what the objective asks.');
    expect([...why.querySelectorAll('code')].map(c => c.textContent)).toEqual(['show ip', 'GATEWAY : 0.0.0.0']);
    expect(why.querySelector('p')).toBeNull(); // one line, no paragraph
  });

  it('keeps HTML in a lab file or an explanation out of the page', () => {
    const [first, ...rest] = saved.results;
    const evil = { ...first, text: 'PC1 <img src=x onerror=alert(1)>', explanation: '<script>alert(1)</script>**bold**' };
    const root = renderChecksBundle({ ...saved, results: [evil, ...rest] });
    const row = root.querySelector<HTMLElement>(`[data-objective="${first.id}"]`)!;
    expect(row.querySelector('img, script')).toBeNull();
    expect(row.querySelector('.gns3c-check-text')?.textContent).toBe('PC1 <img src=x onerror=alert(1)>');
    expect(row.querySelector('.gns3c-check-why strong')?.textContent).toBe('bold');
  });
});

describe('the checklist view updated in place (the sidebar)', () => {
  it('keeps opened evidence open and the focus on its element', () => {
    const view = new ChecklistView({
      stageActions: stage => [Object.assign(document.createElement('button'), { textContent: `Check ${stage.id}` })]
    });
    document.body.append(view.node);
    const list = fromBundle(saved)!;
    view.update(list);
    const summary = view.node.querySelector<HTMLElement>('[data-objective="pc2-address"] summary')!;
    (summary.parentElement as HTMLDetailsElement).open = true;
    summary.focus();
    view.update({ ...list });
    const again = view.node.querySelector<HTMLElement>('[data-objective="pc2-address"] summary')!;
    expect(again).not.toBe(summary);
    expect((again.parentElement as HTMLDetailsElement).open).toBe(true);
    expect(document.activeElement).toBe(again);
    expect([...view.node.querySelectorAll('.gns3c-checks-stage-head button')].map(b => b.textContent)).toEqual([
      'Check addressing',
      'Check reach'
    ]);
    view.node.remove();
  });

  it('shows an unchecked lab with its points and no stage verdict', () => {
    const view = new ChecklistView();
    view.update(fromLab(fixture.lab));
    expect(view.node.querySelector('.gns3c-checks-score')?.textContent).toBe('6 pts · not checked yet');
    expect(view.node.querySelectorAll('.gns3c-checks-stage-score')).toHaveLength(0);
    expect(rows(view.node)[1]).toBe('not checked yet|PC2 has 10.20.3.2/24|1 pt');
  });

  it('marks the stage the student works on, and gives a status known without details its points', () => {
    const lab = {
      ...fixture.lab,
      current_stage: 'reach',
      stages: fixture.lab.stages.map(s => ({ ...s, objectives: s.objectives.map(o => ({ ...o, status: o.id === 'pc1-address' ? ('pass' as const) : null })) }))
    };
    const view = new ChecklistView();
    view.update(fromLab(lab));
    expect([...view.node.querySelectorAll('.gns3c-checks-stage-current')].map(e => e.closest('section')?.dataset.stage)).toEqual(['reach']);
    expect(rows(view.node)[0]).toBe('passed|PC1 has 10.20.3.1/24|2/2 pts');
    expect(view.node.querySelector('[data-objective="pc1-address"] .gns3c-check-evidence')).toBeNull();
  });

  it('words a partly checked lab by its score so far', () => {
    const results = saved.results.filter(r => r.stage === 'addressing');
    const list = fromLab(fixture.lab, results);
    expect(scoreBadge(scoreOf(list.stages.flatMap(s => s.objectives)), false)).toEqual({ text: '2/6 · 1 not checked', tone: 'info' });
    const checking = startChecking(list, 'reach');
    expect(scoreBadge(scoreOf(checking.stages[1].objectives), true)).toEqual({ text: 'checking… 0 of 1', tone: 'active' });
  });
});
