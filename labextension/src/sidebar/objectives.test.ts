import { describe, expect, it } from 'vitest';

import { client, json, sse } from '../../test/api-client';
import { loadChecksFixture } from '../../test/fixtures';
import { catchUpDescription, ObjectivesPanel, problemText } from './objectives';
import type { LabView } from '../objectives/types';

const fixture = loadChecksFixture('two_stages');
const CONFIRM =
  "Catching up to stage addressing (Address the PCs) restores the snapshot 'fresh': the whole lab goes back to the start of that stage, every change made since is lost, and the nodes are started again.";

function marks(panel: ObjectivesPanel): string[] {
  return [...panel.node.querySelectorAll<HTMLElement>('.gns3c-check')].map(row => `${row.dataset.objective}:${row.dataset.state}`);
}

function button(panel: ObjectivesPanel, key: string): HTMLButtonElement {
  const found = panel.node.querySelector<HTMLButtonElement>(`button[data-key="${key}"]`);
  if (!found) {
    throw new Error(`no button ${key}`);
  }
  return found;
}

/** A lab server: the fixture's lab, its check's events, the catch-up's two answers. */
function labServer(lab: unknown = fixture.lab) {
  return client((url, init) => {
    if (url.includes('/lab/checks')) {
      return sse(fixture.events);
    }
    if (url.includes('/catch-up')) {
      return (init.body as { confirm: boolean }).confirm
        ? json(200, { stage: 'addressing', snapshot: 'fresh', restored: true })
        : json(400, { error: { message: `${CONFIRM} Send {"confirm": true} to do it.`, type: 'ConfirmationNeeded', field: 'confirm' } });
    }
    return typeof lab === 'function' ? lab() : json(200, lab);
  });
}

describe('the Objectives panel', () => {
  it('shows no panel for a project without a lab file', async () => {
    const { api } = client(() => json(404, { error: { message: 'this project has no lab file (lab.yaml)', type: 'NoLab' } }));
    const panel = new ObjectivesPanel({ api, confirmCatchUp: async () => true, confirmGiveUp: async () => true });
    await panel.show('p1');
    expect(panel.node.hidden).toBe(true);
  });

  it("lists an invalid lab file's problems, each with its line and field", async () => {
    const problem = { source: 'lab.yaml', line: 15, field: 'stages[0].objectives[1].check', message: "unknown check kind 'node_runing'" };
    const { api } = client(() => json(422, { error: { message: 'lab.yaml, line 15', type: 'LabFileError', errors: [problem] } }));
    const panel = new ObjectivesPanel({ api, confirmCatchUp: async () => true, confirmGiveUp: async () => true });
    await panel.show('p1');
    expect(panel.node.hidden).toBe(false);
    expect(panel.node.textContent).toContain('lab file has problems');
    expect([...panel.node.querySelectorAll('li')].map(li => li.textContent)).toEqual([
      "lab.yaml, line 15, stages[0].objectives[1].check: unknown check kind 'node_runing'"
    ]);
    expect(panel.node.querySelector('button')).toBeNull();
  });

  it('checks every objective, filling the list in, and keeps the results for the project', async () => {
    const { api, calls } = labServer();
    const panel = new ObjectivesPanel({ api, confirmCatchUp: async () => true, confirmGiveUp: async () => true });
    await panel.show('p1');
    expect(marks(panel).every(m => m.endsWith(':unchecked'))).toBe(true);
    expect(panel.node.querySelector('.gns3c-checks-score')?.textContent).toBe('6 pts · not checked yet');
    const running = panel.check();
    expect(button(panel, 'stop').textContent).toBe('Stop'); // instead of Check all
    expect(button(panel, 'check:reach').disabled).toBe(true);
    await panel.check(); // a second check while one runs does nothing
    await running;
    expect(calls.filter(c => c.url.includes('/lab/checks'))).toHaveLength(1);
    expect(calls.find(c => c.url.includes('/lab/checks'))?.body).toEqual({ stream: true });
    expect(marks(panel)).toEqual(['pc1-address:pass', 'pc2-address:fail', 'pc3-runs:error', 'pc1-pc2:fail']);
    expect(panel.node.querySelector('.gns3c-checks-score')?.textContent).toBe('not yet · 2/6');
    expect(button(panel, 'check-all').disabled).toBe(false);

    await panel.show('p1'); // shown again (the sidebar's refresh): the last results stay
    expect(marks(panel)[0]).toBe('pc1-address:pass');
  });

  it('follows the lab events while shown: a check elsewhere updates the list and the stage', async () => {
    const lab = fixture.lab as LabView;
    const passed: LabView = {
      ...lab,
      current_stage: 'reach',
      stages: lab.stages.map(s => ({ ...s, objectives: s.objectives.map(o => ({ ...o, status: s.id === 'addressing' ? 'pass' : 'fail' })) }))
    };
    let tell: (view: LabView) => void = () => undefined;
    const { api, calls } = client((url, init) => {
      if (!url.includes('/lab/events')) {
        return json(200, lab);
      }
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          const send = (view: LabView) =>
            controller.enqueue(new TextEncoder().encode(`data: ${JSON.stringify({ type: 'lab_view', project_id: 'p1', view })}\n\n`));
          send(lab);
          tell = send;
          init.signal?.addEventListener('abort', () => controller.error(new DOMException('closed', 'AbortError')));
        }
      });
      return new Response(body, { status: 200, headers: { 'Content-Type': 'text/event-stream' } });
    });
    const panel = new ObjectivesPanel({ api, confirmCatchUp: async () => true, confirmGiveUp: async () => true });
    await panel.show('p1');
    expect(marks(panel).every(m => m.endsWith(':unchecked'))).toBe(true);
    const here = () => panel.node.querySelector('.gns3c-checks-stage-current')?.closest('[data-stage]')?.getAttribute('data-stage') ?? null;
    await new Promise<void>(resolve => {
      const seen = new MutationObserver(() => {
        if (marks(panel)[0] === 'pc1-address:pass') {
          seen.disconnect();
          resolve();
        }
      });
      seen.observe(panel.node, { subtree: true, childList: true, attributes: true });
      tell(passed); // a notebook's check, told by the server
    });
    expect(marks(panel)).toEqual(['pc1-address:pass', 'pc2-address:pass', 'pc3-runs:pass', 'pc1-pc2:fail']);
    expect(here()).toBe('reach');
    expect(calls.filter(c => !c.url.includes('/lab/events'))).toHaveLength(1); // not read again
    panel.pause();
    expect(calls.filter(c => c.url.includes('/lab/events'))).toHaveLength(1);
  });

  it('stops a check: what was not decided is not checked', async () => {
    const [first] = fixture.events;
    const { api } = client((url, init) => {
      if (!url.includes('/lab/checks')) {
        return json(200, fixture.lab);
      }
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(`data: ${JSON.stringify(first)}\n\n`));
          init.signal?.addEventListener('abort', () => controller.error(new DOMException('stopped', 'AbortError')));
        }
      });
      return new Response(body, { status: 200, headers: { 'Content-Type': 'text/event-stream' } });
    });
    const panel = new ObjectivesPanel({ api, confirmCatchUp: async () => true, confirmGiveUp: async () => true });
    await panel.show('p1');
    const running = panel.check();
    await new Promise<void>(resolve => {
      const seen = new MutationObserver(() => {
        if (marks(panel).includes('pc3-runs:error')) {
          seen.disconnect();
          resolve();
        }
      });
      seen.observe(panel.node, { subtree: true, childList: true });
    });
    button(panel, 'stop').click();
    await running;
    expect(marks(panel)).toEqual(['pc1-address:unchecked', 'pc2-address:unchecked', 'pc3-runs:error', 'pc1-pc2:unchecked']);
    expect(panel.node.querySelector('[role=status]')?.textContent).toContain('Stopped');
  });

  it('keeps the list shown when the lab cannot be read again, and shows none when it never could', async () => {
    let answer = () => json(200, fixture.lab);
    const { api } = client(() => answer());
    const panel = new ObjectivesPanel({ api, confirmCatchUp: async () => true, confirmGiveUp: async () => true });
    answer = () => json(502, { error: { message: 'GNS3 did not answer', type: 'GNS3Unreachable' } });
    await panel.show('p1');
    expect(panel.node.hidden).toBe(true);
    answer = () => json(200, fixture.lab);
    await panel.show('p1');
    answer = () => json(502, { error: { message: 'GNS3 did not answer', type: 'GNS3Unreachable' } });
    await panel.show('p1');
    expect(panel.node.hidden).toBe(false);
    expect(marks(panel)).toHaveLength(4);
    expect(panel.node.querySelector('[role=status]')?.textContent).toContain('could not be read again: GNS3 did not answer');
    answer = () => json(200, fixture.lab);
    await panel.show('p1');
    expect(panel.node.querySelector('[role=status]')?.textContent).toBe('');
  });

  it('checks one stage', async () => {
    const { api, calls } = labServer();
    const panel = new ObjectivesPanel({ api, confirmCatchUp: async () => true, confirmGiveUp: async () => true });
    await panel.show('p1');
    await panel.check('reach');
    expect(calls.find(c => c.url.includes('/lab/checks'))?.body).toEqual({ stage: 'reach', stream: true });
  });

  it('says what a catch-up restores and restores only once confirmed', async () => {
    const { api, calls } = labServer();
    const asked: string[] = [];
    let answer = false;
    const panel = new ObjectivesPanel({
      api,
      confirmGiveUp: async () => true,
      confirmCatchUp: async (title, description) => {
        asked.push(`${title}: ${description}`);
        return answer;
      }
    });
    await panel.show('p1');
    expect(() => button(panel, 'catch-up:reach')).toThrow(); // no snapshot: no button
    await panel.check();
    const stage = { id: 'addressing', title: 'Address the PCs', catchUp: true, objectives: [] };
    await panel.catchUp(stage);
    expect(asked).toEqual([`Address the PCs: ${CONFIRM}`]);
    expect(calls.filter(c => c.url.includes('/catch-up')).map(c => c.body)).toEqual([{ confirm: false }]);
    expect(marks(panel)[0]).toBe('pc1-address:pass'); // declined: nothing changed

    answer = true;
    await panel.catchUp(stage);
    expect(calls.filter(c => c.url.includes('/catch-up')).map(c => c.body)).toEqual([{ confirm: false }, { confirm: false }, { confirm: true }]);
    expect(panel.node.textContent).toContain("the snapshot 'fresh' is restored");
    expect(marks(panel).every(m => m.endsWith(':unchecked'))).toBe(true); // the old results no longer hold
  });

  it("says a refusal in the panel (a stage without its snapshot)", async () => {
    const { api } = client(url =>
      url.includes('/catch-up')
        ? json(409, { error: { message: "the snapshot 'fresh' of stage addressing is not in this project (ask your instructor)", type: 'StageWithoutSnapshot' } })
        : json(200, fixture.lab)
    );
    const panel = new ObjectivesPanel({ api, confirmCatchUp: async () => true, confirmGiveUp: async () => true });
    await panel.show('p1');
    await panel.catchUp({ id: 'addressing', title: 'Address the PCs', catchUp: true, objectives: [] });
    expect(panel.node.querySelector('[role=status]')?.textContent).toContain('ask your instructor');
    expect(button(panel, 'catch-up:addressing').disabled).toBe(false);
  });
});

describe('a stage the lab no longer has', () => {
  it("says the server's 404 as it is (the stages there are, the closest one)", async () => {
    const gone = "the lab has no stage 'addressing' (stages: adressing, reach); did you mean adressing?";
    const { api } = client(url =>
      url.includes('/catch-up') || url.includes('/lab/checks')
        ? json(404, { error: { message: gone, type: 'UnknownStage' } })
        : json(200, fixture.lab)
    );
    const panel = new ObjectivesPanel({ api, confirmCatchUp: async () => true, confirmGiveUp: async () => true });
    await panel.show('p1');
    await panel.catchUp({ id: 'addressing', title: 'Address the PCs', catchUp: true, objectives: [] });
    expect(panel.node.hidden).toBe(false);
    expect(panel.node.querySelector('[role=status]')?.textContent).toBe(gone);
    await panel.check('addressing');
    expect(panel.node.hidden).toBe(false);
    expect(panel.node.querySelector('[role=status]')?.textContent).toBe(gone);
  });
});

describe('the words of the panel', () => {
  it('drops the API note from the catch-up description and words a problem', () => {
    expect(catchUpDescription(`${CONFIRM} Send {"confirm": true} to do it.`)).toBe(CONFIRM);
    expect(problemText({ field: 'stage', rule: 'at most 64 characters' })).toBe('stage: at most 64 characters');
  });
});

describe("the Objectives panel's troubleshooting exercise", () => {
  const started = { started_at: '2026-12-06T19:05:00Z', active: true, symptom: [{ id: 'pc1-pc2', text: 'PC1 reaches **PC2**' }], grade: null };
  const exerciseGrade = { fixed: false, still_failing: ['pc1-pc2'], regressions: ['pc1-address'], seconds: 90, copilot_calls: 2, done: false };
  const gaveUp = { description: "PC1's gateway is a wrong address.", device: 'PC1', interface: null, cause: 'wrong default gateway', not_undone: [] };

  /** The fixture's lab with faults; `start` answers the exercise's start. */
  function exerciseServer(start: () => Response, current: () => Response = () => json(404, { error: { message: 'none', type: 'NoExercise' } })) {
    const events = fixture.events.map(e =>
      e.type === 'check_summary' ? { ...e, summary: { ...(e as { summary: object }).summary, exercise: exerciseGrade } } : e
    );
    return client((href, init) => {
      const url = new URL(href).pathname;
      if (url.endsWith('/lab/exercises') && init.method === 'POST') {
        return start();
      }
      if (url.endsWith('/give-up')) {
        return json(200, gaveUp);
      }
      if (url.endsWith('/exercises/current')) {
        return current();
      }
      if (url.includes('/lab/checks')) {
        return sse(events);
      }
      return json(200, { ...(fixture.lab as object), exercises: true });
    });
  }

  const section = (panel: ObjectivesPanel) => panel.node.querySelector<HTMLElement>('.jp-gns3-copilot-sidebar-exercise')!;

  it('is not offered for a lab without faults', async () => {
    const { api, calls } = labServer();
    const panel = new ObjectivesPanel({ api, confirmCatchUp: async () => true, confirmGiveUp: async () => true });
    await panel.show('p1');
    expect(section(panel).hidden).toBe(true);
    expect(calls.some(c => c.url.includes('/exercises'))).toBe(false);
  });

  it('starts a random exercise, shows the symptom, grades each check and gives up once confirmed', async () => {
    let current = () => json(404, { error: { message: 'none', type: 'NoExercise' } });
    const { api, calls } = exerciseServer(() => json(200, started), () => current());
    let confirm = false;
    const panel = new ObjectivesPanel({ api, confirmCatchUp: async () => true, confirmGiveUp: async () => confirm });
    await panel.show('p1');
    await new Promise(resolve => setTimeout(resolve, 0)); // the current exercise read
    expect(section(panel).hidden).toBe(false);
    expect(section(panel).dataset.state).toBe('none');

    current = () => json(200, started);
    button(panel, 'exercise-start').click();
    await new Promise(resolve => setTimeout(resolve, 10));
    expect(calls.find(c => new URL(c.url).pathname.endsWith('/lab/exercises'))?.body).toEqual({ random: true });
    expect(section(panel).dataset.state).toBe('active');
    expect(section(panel).textContent).toContain('Exercise going since');
    expect(section(panel).querySelector('[data-objective="pc1-pc2"]')?.innerHTML).toBe('PC1 reaches <strong>PC2</strong>');
    expect(() => button(panel, 'exercise-start')).toThrow(); // one at a time: Give up instead

    await panel.check();
    const grade = section(panel).querySelector<HTMLElement>('.jp-gns3-copilot-sidebar-exercise-grade')!;
    expect(grade.dataset.tone).toBe('warn');
    expect(grade.textContent).toContain('not fixed yet (1.5 min, 2 copilot model calls so far)');
    expect([...grade.querySelectorAll('li')].map(li => li.textContent)).toEqual([
      'Still failing: PC1 reaches PC2',
      'Broken since the exercise began: PC1 has 10.20.3.1/24'
    ]);

    button(panel, 'exercise-give-up').click(); // not confirmed: nothing sent
    await new Promise(resolve => setTimeout(resolve, 10));
    expect(calls.some(c => c.url.includes('/give-up'))).toBe(false);
    confirm = true;
    current = () => json(200, { ...started, active: false });
    button(panel, 'exercise-give-up').click();
    await new Promise(resolve => setTimeout(resolve, 10));
    expect(calls.filter(c => c.url.includes('/give-up'))).toHaveLength(1);
    expect(section(panel).textContent).toContain("The fault: PC1's gateway is a wrong address.");
    expect(section(panel).textContent).toContain('A diagnosis names PC1: wrong default gateway.');
    expect(section(panel).dataset.state).toBe('ended');
    expect(button(panel, 'exercise-start').disabled).toBe(false);
  });

  it('is not offered where the server runs no exercises (it answers 409)', async () => {
    const offered = 'Troubleshooting exercises are not available on this server.';
    const { api } = exerciseServer(
      () => json(409, { error: { message: offered, type: 'ExerciseRefused' } }),
      () => json(409, { error: { message: offered, type: 'ExerciseRefused' } })
    );
    const panel = new ObjectivesPanel({ api, confirmCatchUp: async () => true, confirmGiveUp: async () => true });
    await panel.show('p1');
    await new Promise(resolve => setTimeout(resolve, 10));
    expect(section(panel).hidden).toBe(true);
  });

  it('says a refusal as the server words it', async () => {
    const refusal = 'Finish the lab first: PC1 reaches PC2 does not pass yet.';
    const { api } = exerciseServer(() => json(409, { error: { message: refusal, type: 'ExerciseRefused' } }));
    const panel = new ObjectivesPanel({ api, confirmCatchUp: async () => true, confirmGiveUp: async () => true });
    await panel.show('p1');
    button(panel, 'exercise-start').click();
    await new Promise(resolve => setTimeout(resolve, 10));
    const error = section(panel).querySelector('[role="alert"]');
    expect(error?.textContent).toBe(refusal);
    expect(section(panel).dataset.state).toBe('none');
    expect(button(panel, 'exercise-start').disabled).toBe(false);
    expect(button(panel, 'check-all').disabled).toBe(false);
  });
});
