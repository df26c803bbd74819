import { describe, expect, it } from 'vitest';

import { loadChecksFixture } from '../../test/fixtures';
import {
  applyCheckEvent,
  type Checklist,
  endChecking,
  followLab,
  fromBundle,
  fromLab,
  resultsOf,
  startChecking,
  totalScore
} from './checklist';

const fixture = loadChecksFixture('two_stages');

/** What a student reads of each objective: stage, id and state, in order. */
function states(list: Checklist): string[] {
  return list.stages.flatMap(s => s.objectives.map(o => `${s.id}/${o.id}:${o.state}`));
}

describe('the checklist of a saved %copilot check', () => {
  it('groups the objectives by stage in the lab order, whatever order they were decided in', () => {
    const list = fromBundle(fixture.bundles[fixture.bundles.length - 1]);
    expect(list?.stages.map(s => s.title)).toEqual(['Address the PCs', 'Reach PC2']);
    expect(states(list!)).toEqual([
      'addressing/pc1-address:pass',
      'addressing/pc2-address:fail',
      'addressing/pc3-runs:error',
      'reach/pc1-pc2:fail'
    ]);
    expect(list?.summary?.score).toBe(2);
    const total = totalScore(list!);
    expect([total.score, total.maxScore, total.decided, total.passed]).toEqual([2, 6, true, false]);
  });

  it('shows pending objectives, with their points, in place while the check runs', () => {
    const list = fromBundle(fixture.bundles[2])!;
    expect(states(list)).toEqual([
      'addressing/pc1-address:pending',
      'addressing/pc2-address:fail',
      'addressing/pc3-runs:error',
      'reach/pc1-pc2:pending'
    ]);
    expect(list.stages[0].objectives[0].points).toBe(2);
    expect(totalScore(list).counts.pending).toBe(2);
  });

  it('reads an older bundle without an outline: stages in order of appearance, titled by the summary', () => {
    const { stages: _outline, ...old } = fixture.bundles[fixture.bundles.length - 1];
    const list = fromBundle(old)!;
    expect(list.stages.map(s => [s.id, s.title])).toEqual([
      ['addressing', 'Address the PCs'],
      ['reach', 'Reach PC2']
    ]);
    const pending = fromBundle({ title: 'Lab', results: [], pending: [{ id: 'a', stage: 's', text: 'A' }], summary: null })!;
    expect(pending.stages[0]).toMatchObject({ id: 's', title: 's' });
    expect(pending.stages[0].objectives[0]).toMatchObject({ state: 'pending', points: null });
  });

  it('is null for data that is not a checklist', () => {
    for (const bad of [null, 'x', {}, { results: [], pending: 'a' }, { results: [{}], pending: [] }]) {
      expect(fromBundle(bad)).toBeNull();
    }
  });
});

describe('a check streamed into the lab (the sidebar)', () => {
  it('ends as the saved checklist of the same check', () => {
    let list = startChecking(fromLab(fixture.lab));
    expect(states(list).every(s => s.endsWith(':pending'))).toBe(true);
    const seen: string[][] = [];
    for (const event of fixture.events) {
      list = applyCheckEvent(list, event);
      seen.push(states(list));
    }
    // each bundle the kernel displayed after the construction is one step of the stream
    const saved = fixture.bundles.slice(1).map(b => states(fromBundle(b)!));
    expect(seen.slice(0, saved.length)).toEqual(saved);
    expect(list.summary).toEqual(fixture.events.find(e => e.type === 'check_summary')?.summary);
    expect(list.stages[0].catchUp).toBe(true);
    expect(resultsOf(list).map(r => r.id)).toEqual(['pc1-address', 'pc2-address', 'pc3-runs', 'pc1-pc2']);
  });

  it('checks one stage and keeps the results of the others', () => {
    const results = fixture.events.flatMap(e => (e.type === 'check_result' ? [e.result] : []));
    const before = fromLab(fixture.lab, results);
    const list = startChecking(before, 'reach');
    expect(states(list)).toEqual([
      'addressing/pc1-address:pass',
      'addressing/pc2-address:fail',
      'addressing/pc3-runs:error',
      'reach/pc1-pc2:pending'
    ]);
    expect(list.summary).toBeNull();
    // stopped before its result: not checked, the others kept
    const stopped = endChecking(list);
    expect(states(stopped)[3]).toBe('reach/pc1-pc2:unchecked');
    expect(resultsOf(stopped).map(r => r.id)).toEqual(['pc1-address', 'pc2-address', 'pc3-runs']);
    const score = totalScore(stopped);
    expect([score.score, score.maxScore, score.decided]).toEqual([2, 6, false]);
  });

  it("shows the student's latest status from the lab route, with details only from a check seen here", () => {
    const results = fixture.events.flatMap(e => (e.type === 'check_result' ? [e.result] : []));
    const statuses: Record<string, 'pass' | 'fail'> = { 'pc1-address': 'pass', 'pc2-address': 'pass', 'pc1-pc2': 'fail' };
    const lab = {
      ...fixture.lab,
      current_stage: 'reach',
      stages: fixture.lab.stages.map(s => ({ ...s, objectives: s.objectives.map(o => ({ ...o, status: statuses[o.id] ?? null })) }))
    };
    const list = fromLab(lab, results);
    // pc2 passed in a later check elsewhere (a notebook): its status, without the older details
    expect(states(list)).toEqual(['addressing/pc1-address:pass', 'addressing/pc2-address:pass', 'addressing/pc3-runs:error', 'reach/pc1-pc2:fail']);
    expect(list.stages[0].objectives[0].result?.explanation).toBe('PC1 has 10.20.3.1/24.');
    expect(list.stages[0].objectives[1].result).toBeNull();
    expect(list.stages.map(s => s.current)).toEqual([false, true]);
    const score = totalScore(fromLab(lab));
    expect([score.score, score.maxScore, score.counts.unchecked]).toEqual([3, 6, 1]);
  });

  it('adds a result the lab did not list to its stage (the file changed meanwhile)', () => {
    const [first] = fixture.events.flatMap(e => (e.type === 'check_result' ? [e.result] : []));
    const lab = { ...fixture.lab, stages: [{ ...fixture.lab.stages[0], objectives: [] }] };
    const list = applyCheckEvent(fromLab(lab), { type: 'check_result', session_id: 'r', result: first });
    expect(states(list)).toEqual(['addressing/pc3-runs:error']);
    const elsewhere = applyCheckEvent(list, { type: 'check_result', session_id: 'r', result: { ...first, id: 'x', stage: 'other' } });
    expect(elsewhere.stages.map(s => s.id)).toEqual(['addressing', 'other']);
  });

  it('leaves the list as it is for other events', () => {
    const list = fromLab(fixture.lab);
    expect(applyCheckEvent(list, { type: 'heartbeat', session_id: 'r' })).toBe(list);
  });
});

describe('the lab as the server has it now (a check elsewhere, a stage chosen)', () => {
  const checked = () => {
    let list = startChecking(fromLab(fixture.lab));
    for (const event of fixture.events) {
      list = applyCheckEvent(list, event);
    }
    return endChecking(list);
  };
  const withStatuses = (statuses: Record<string, string | null>, current: string) => ({
    ...fixture.lab,
    current_stage: current,
    stages: fixture.lab.stages.map(s => ({
      ...s,
      objectives: s.objectives.map(o => ({ ...o, status: statuses[o.id] ?? null }))
    }))
  });

  it('takes the new statuses and stage, keeping the results that still hold', () => {
    const list = checked();
    const view = withStatuses({ 'pc1-address': 'pass', 'pc2-address': 'pass', 'pc3-runs': 'error', 'pc1-pc2': 'fail' }, 'reach');
    const followed = followLab(list, view as typeof fixture.lab);
    expect(states(followed)).toEqual([
      'addressing/pc1-address:pass',
      'addressing/pc2-address:pass',
      'addressing/pc3-runs:error',
      'reach/pc1-pc2:fail'
    ]);
    expect(followed.stages.map(s => s.current)).toEqual([false, true]);
    const kept = followed.stages[0].objectives[0].result;
    expect(kept?.explanation).toBe(list.stages[0].objectives[0].result?.explanation);
    expect(followed.stages[0].objectives[1].result).toBeNull(); // passed elsewhere: no explanation here
    expect(followed.summary).toBeNull(); // the score is counted again
  });

  it('keeps the score of the last check while nothing changed', () => {
    const list = checked();
    const same = withStatuses(Object.fromEntries(resultsOf(list).map(r => [r.id, r.status])), 'addressing');
    expect(followLab(list, same as typeof fixture.lab).summary).toEqual(list.summary);
  });
});
