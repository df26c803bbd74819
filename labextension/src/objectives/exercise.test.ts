import { describe, expect, it } from 'vitest';

import { calls, clockTime, giveUpLines, gradeWords, minutes, stateText } from './exercise';

const grade = { fixed: false, still_failing: ['pc1-pc2'], regressions: [], seconds: 252, copilot_calls: 3, done: false };
const local = new Date(2026, 11, 6, 9, 5, 0).toISOString(); // 09:05 wherever the test runs

describe('an exercise as the student reads it', () => {
  it('says the time in the magics unit and the copilot calls in plain words', () => {
    expect(minutes(252)).toBe('4.2 min');
    expect(calls(1)).toBe('1 copilot model call');
    expect(calls(0)).toBe('0 copilot model calls');
    expect(clockTime(local)).toBe('09:05');
    expect(clockTime('not a time')).toBe('not a time');
  });

  it('says whether the exercise is going, and since when', () => {
    expect(stateText({ started_at: local, active: true, symptom: [] })).toMatch(/^Exercise going since 09:05: /);
    expect(stateText({ started_at: local, active: false, symptom: [] })).toMatch(/^Your last exercise \(started at 09:05\) is over/);
  });

  it('grades a solved exercise, one still failing and one fixed with regressions', () => {
    expect(gradeWords({ ...grade, fixed: true, still_failing: [], done: true })).toEqual({
      headline: 'Exercise solved: fixed with no regressions in 4.2 min, 3 copilot model calls.',
      tone: 'success',
      details: []
    });
    const texts: Record<string, string> = { 'pc1-pc2': 'PC1 reaches PC2', 'pc1-address': 'PC1 has 10.20.3.1/24' };
    expect(gradeWords(grade, id => texts[id])).toEqual({
      headline: 'Exercise not solved: not fixed yet (4.2 min, 3 copilot model calls so far).',
      tone: 'warn',
      details: ['Still failing: PC1 reaches PC2']
    });
    const regressed = gradeWords({ ...grade, fixed: true, still_failing: [], regressions: ['pc1-address'] }, id => texts[id]);
    expect(regressed.headline).toContain('passes again, but something that passed before fails now');
    expect(regressed.details).toEqual(['Broken since the exercise began: PC1 has 10.20.3.1/24']);
  });

  it('tells what a give-up answers: the fault, the diagnosis, what is left by hand', () => {
    const answer = { description: "PC1's gateway is wrong.", device: 'PC1', interface: null, cause: 'wrong default gateway', not_undone: [] };
    expect(giveUpLines(answer).slice(0, 2)).toEqual(["The fault: PC1's gateway is wrong.", 'A diagnosis names PC1: wrong default gateway.']);
    const router = { ...answer, device: 'R1', interface: 'eth1', cause: 'forwarding off', not_undone: ['sysctl -w net.ipv4.ip_forward=0'] };
    const lines = giveUpLines(router);
    expect(lines[1]).toBe('A diagnosis names R1 (eth1): forwarding off.');
    expect(lines[lines.length - 1]).toBe('Still to undo by hand: sysctl -w net.ipv4.ip_forward=0.');
  });
});
