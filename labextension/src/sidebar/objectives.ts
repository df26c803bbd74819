/**
 * The sidebar's Objectives panel for the chosen project: the lab's stages and objectives
 * (`GET copilot/projects/{p}/lab`), passed / not passed from the student's latest check
 * (the route's status, wherever it ran; with its explanation and evidence when it ran
 * here), the stage they work on,
 * Check (a stage, or all) streaming the checks route into the same checklist view as a
 * `%copilot check` output, Stop, and Catch up for a stage with a snapshot: the server's
 * description of what would be restored first, restored only once the person confirms.
 * A project without a lab file shows no panel; an invalid lab file shows its problems.
 * A lab whose file has faults gets a troubleshooting exercise section (`ExerciseSection`):
 * the panel's checks grade it. No kernel involved.
 *
 * While shown, the panel follows the project's lab events (`GET .../lab/events`): a check
 * of the student's that ran elsewhere (a notebook, another tab, the chat), a stage chosen
 * or a catch-up updates the list, the score and "you are here" at once. The stream is
 * opened again after `RECONNECT_MS` when it ends (the server restarted); `pause` (the
 * sidebar hidden) closes it, `show` opens it again.
 */
import { ApiError, type ApiProblem, type CopilotApi } from '../api';
import { h } from '../dom';
import {
  applyCheckEvent,
  type Checklist,
  type ChecklistStage,
  endChecking,
  followLab,
  fromLab,
  resultsOf,
  startChecking,
  withCurrentStage
} from '../objectives/checklist';
import type { LabView, ObjectiveResult } from '../objectives/types';
import { ChecklistView } from '../objectives/view';
import { ExerciseSection } from './exercise';
import { message } from './notice';

export interface ObjectivesOptions {
  api: CopilotApi;
  /** Ask the person to confirm the catch-up `description` says (true: go ahead). */
  confirmCatchUp: (stageTitle: string, description: string) => Promise<boolean>;
  /** Ask the person to confirm giving up the exercise (true: go ahead). */
  confirmGiveUp: () => Promise<boolean>;
  /** True when `error` closed the whole sidebar (it said why): the panel hides. */
  closedBy?: (error: unknown) => boolean;
}

type Tone = 'info' | 'error';

const NO_SCORE = 'The check ended before its score was sent: check again.';
/** How long to wait before opening the lab events again once they ended. */
export const RECONNECT_MS = 5000;

/** One lab file problem as its author reads it: `lab.yaml, line 16, field: what`. */
export function problemText(problem: ApiProblem): string {
  const where = [problem.source && problem.line ? `${problem.source}, line ${problem.line}` : problem.source, problem.field]
    .filter(Boolean)
    .join(', ');
  const what = problem.message ?? problem.rule ?? '';
  return where ? `${where}: ${what}` : what;
}

/** The catch-up route's description of what it would restore, without the note for API
 * clients on how to confirm. */
export function catchUpDescription(message: string): string {
  return message.split(' Send {"confirm"')[0].trim();
}

export class ObjectivesPanel {
  readonly node: HTMLDetailsElement;
  private readonly notice: HTMLElement;
  private readonly view: ChecklistView;
  private readonly exercise: ExerciseSection;
  private projectId: string | null = null;
  private list: Checklist | null = null;
  /** The full results of the checks made here, per project. */
  private readonly lastResults = new Map<string, ObjectiveResult[]>();
  private running: AbortController | null = null;
  private busy = false;
  private loads = 0;
  /** The lab events followed (one project at a time). */
  private following: { projectId: string; controller: AbortController } | null = null;
  /** The latest lab the events told while a check of this panel ran. */
  private toldWhileChecking: LabView | null = null;

  constructor(private readonly options: ObjectivesOptions) {
    this.view = new ChecklistView({
      listActions: () => this.listActions(),
      stageActions: stage => this.stageActions(stage)
    });
    this.notice = h('div', { class: 'jp-gns3-copilot-sidebar-objectives-notice', role: 'status' });
    this.exercise = new ExerciseSection({
      api: options.api,
      confirmGiveUp: options.confirmGiveUp,
      closedBy: options.closedBy,
      textOf: id => this.objectiveText(id),
      busy: busy => this.setBusy(busy),
      changed: () => this.labChanged()
    });
    this.node = h(
      'details',
      { class: 'jp-gns3-copilot-sidebar-objectives', open: true, hidden: true },
      h('summary', { text: 'Objectives' }),
      this.notice,
      this.exercise.node,
      this.view.node
    );
  }

  /** Show `projectId`'s lab (read again: the file may have changed); null hides the
   * panel. A check running for that project goes on. */
  async show(projectId: string | null): Promise<void> {
    this.follow(projectId);
    if (projectId !== this.projectId) {
      this.running?.abort(); // its results are for the project left
      this.running = null;
      this.projectId = projectId;
      this.list = null;
      this.view.node.replaceChildren();
      this.setBusy(false);
      this.say('');
    } else if (this.running) {
      return;
    }
    if (!projectId) {
      this.node.hidden = true;
      void this.exercise.show(null, false);
      return;
    }
    const load = ++this.loads;
    try {
      const lab = await this.options.api.lab(projectId);
      if (load !== this.loads || projectId !== this.projectId || this.running) {
        return;
      }
      this.draw(fromLab(lab, this.lastResults.get(projectId)));
      this.node.hidden = false;
      void this.exercise.show(projectId, lab.exercises === true);
      if (this.notice.dataset.tone === 'error') {
        this.say(''); // what went wrong before is over
      }
    } catch (error) {
      if (load === this.loads && projectId === this.projectId) {
        this.failToLoad(error);
      }
    }
  }

  /** Check the objectives of `stage` (null: all), filling the list in as they are
   * decided. */
  async check(stage: string | null = null): Promise<void> {
    const projectId = this.projectId;
    if (!projectId || !this.list || this.busy) {
      return;
    }
    const controller = new AbortController();
    this.running = controller;
    this.setBusy(true);
    this.say('');
    let list = startChecking(this.list, stage);
    this.draw(list);
    let scored = false;
    const current = () => this.running === controller; // not stopped by a change of project
    try {
      for await (const event of this.options.api.checkLab(projectId, stage, controller.signal)) {
        if (!current()) {
          break;
        }
        if (event.type === 'error') {
          this.say(event.error, 'error');
        }
        scored ||= event.type === 'check_summary';
        if (event.type === 'check_summary' && event.summary.exercise) {
          this.exercise.graded(event.summary.exercise);
        }
        list = applyCheckEvent(list, event);
        this.draw(list);
      }
      if (!scored && current()) {
        this.say(NO_SCORE, 'error');
      }
    } catch (error) {
      if (!current()) {
        return;
      }
      if (controller.signal.aborted) {
        this.say('Stopped: the objectives not yet decided are not checked.');
      } else if (!this.options.closedBy?.(error)) {
        this.say(message(error), 'error');
      }
    } finally {
      if (current()) {
        this.running = null;
        list = endChecking(list);
        this.lastResults.set(projectId, resultsOf(list));
        if (this.toldWhileChecking) {
          list = withCurrentStage(list, this.toldWhileChecking.current_stage); // "you are here" moves
          this.toldWhileChecking = null;
        }
        this.draw(list);
        this.setBusy(false);
      }
    }
  }

  /** Stop the running check (the server stops checking once the reader has gone). */
  stop(): void {
    this.running?.abort();
  }

  /** Stop following the lab events (the panel is not seen); `show` follows them again. */
  pause(): void {
    this.follow(null);
  }

  /** Follow `projectId`'s lab events (null: none). */
  private follow(projectId: string | null): void {
    if (this.following?.projectId === projectId) {
      return;
    }
    this.following?.controller.abort();
    this.following = null;
    if (projectId) {
      const controller = new AbortController();
      this.following = { projectId, controller };
      void this.readLabEvents(projectId, controller.signal);
    }
  }

  private async readLabEvents(projectId: string, signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        for await (const event of this.options.api.labEvents(projectId, signal)) {
          if (event.type === 'lab_view' && !signal.aborted) {
            this.told(projectId, event.view);
          }
        }
      } catch (error) {
        if (signal.aborted || (error instanceof ApiError && error.status >= 400 && error.status < 500)) {
          break; // no lab file (any more), or refused: `show` says why and follows again
        }
      }
      await new Promise(resolve => setTimeout(resolve, RECONNECT_MS));
    }
    if (this.following?.controller.signal === signal) {
      this.following = null;
    }
  }

  /** The lab as the server has it now: drawn, unless a check of this panel is drawing. */
  private told(projectId: string, view: LabView): void {
    if (projectId !== this.projectId) {
      return;
    }
    if (this.running) {
      this.toldWhileChecking = view;
      return;
    }
    this.draw(followLab(this.list, view, this.lastResults.get(projectId)));
    this.node.hidden = false;
  }

  /** Catch up to `stage`: say what would be restored, restore it once confirmed. */
  async catchUp(stage: ChecklistStage): Promise<void> {
    const projectId = this.projectId;
    if (!projectId || this.busy) {
      return;
    }
    this.setBusy(true);
    this.say('');
    try {
      let description: string;
      try {
        await this.options.api.catchUp(projectId, stage.id, false);
        throw new ApiError('The server restored the stage without asking: tell your instructor.', 0);
      } catch (error) {
        if (!(error instanceof ApiError && error.type === 'ConfirmationNeeded')) {
          throw error;
        }
        description = catchUpDescription(error.message);
      }
      if (!(await this.options.confirmCatchUp(stage.title, description)) || this.projectId !== projectId) {
        return;
      }
      this.say(`Restoring the start of ${stage.title}…`);
      const done = await this.options.api.catchUp(projectId, stage.id, true);
      // The devices went back in time: the earlier results no longer hold (the server
      // forgot them too).
      this.lastResults.delete(projectId);
      if (this.projectId !== projectId) {
        return;
      }
      await this.show(projectId);
      this.say(
        `Caught up to ${stage.title}: the snapshot '${done.snapshot}' is restored and the nodes are starting. ` +
          'Check again once they are up.'
      );
    } catch (error) {
      if (this.projectId === projectId && !this.options.closedBy?.(error)) {
        this.say(message(error), 'error');
      }
    } finally {
      if (this.projectId === projectId) {
        this.setBusy(false);
      }
    }
  }

  /** No lab file: no panel. An invalid one: its problems. Anything else (GNS3 not
   * answering, which the sidebar's status says too) is said under the list already shown,
   * or leaves the panel hidden when none was. */
  private failToLoad(error: unknown): void {
    const status = error instanceof ApiError ? error.status : 0;
    if (status === 404 || status === 422) {
      void this.exercise.show(null, false); // no usable lab: no exercise to start or give up
    }
    if (status === 404 || this.options.closedBy?.(error) || (status !== 422 && !this.list)) {
      this.list = null;
      this.node.hidden = true;
      return;
    }
    if (status !== 422) {
      this.say(`The lab's objectives could not be read again: ${message(error)}`, 'error');
      return;
    }
    this.list = null;
    this.view.node.replaceChildren();
    this.node.hidden = false;
    const problems = (error as ApiError).problems.map(problemText).filter(Boolean);
    this.notice.dataset.tone = 'error';
    this.notice.replaceChildren(
      h('p', { text: "This project's lab file has problems, so its objectives cannot be checked. Your instructor can fix them:" }),
      problems.length ? h('ul', {}, ...problems.map(text => h('li', { text }))) : h('p', { text: message(error) })
    );
  }

  private listActions(): Node[] {
    if (this.running) {
      const stop = h('button', { class: 'jp-gns3-copilot-sidebar-objectives-stop', 'data-key': 'stop', text: 'Stop' });
      stop.title = 'Stop checking';
      stop.addEventListener('click', () => this.stop());
      return [stop];
    }
    const all = h('button', {
      class: 'jp-gns3-copilot-sidebar-objectives-check-all jp-mod-accept',
      'data-key': 'check-all',
      text: 'Check all',
      disabled: this.busy
    });
    all.title = 'Check every objective on the devices';
    all.addEventListener('click', () => void this.check(null));
    return [all];
  }

  private stageActions(stage: ChecklistStage): Node[] {
    const check = h('button', {
      class: 'jp-gns3-copilot-sidebar-objectives-check',
      'data-key': `check:${stage.id}`,
      text: 'Check',
      disabled: this.busy
    });
    check.title = `Check the objectives of ${stage.title}`;
    check.addEventListener('click', () => void this.check(stage.id));
    if (!stage.catchUp) {
      return [check];
    }
    const catchUp = h('button', {
      class: 'jp-gns3-copilot-sidebar-objectives-catch-up',
      'data-key': `catch-up:${stage.id}`,
      text: 'Catch up…',
      disabled: this.busy
    });
    catchUp.title = `Restore the lab as it was at the start of ${stage.title} (asks first)`;
    catchUp.addEventListener('click', () => void this.catchUp(stage));
    return [check, catchUp];
  }

  /** The devices changed under the results shown (an exercise's fault put in or taken
   * out): they no longer hold; the lab is read again. */
  private async labChanged(): Promise<void> {
    if (this.projectId) {
      this.lastResults.delete(this.projectId);
      await this.show(this.projectId);
    }
  }

  /** An objective's text as the list has it (its id when the list lacks it). */
  private objectiveText(id: string): string {
    const found = this.list?.stages.flatMap(stage => stage.objectives).find(o => o.id === id);
    return found?.text ?? id;
  }

  private draw(list: Checklist): void {
    this.list = list;
    this.view.update(list);
  }

  private setBusy(busy: boolean): void {
    this.busy = busy;
    this.node.dataset.busy = String(busy);
    this.exercise.setDisabled(busy);
    if (this.list) {
      this.view.update(this.list);
    }
  }

  private say(text: string, tone: Tone = 'info'): void {
    this.notice.dataset.tone = tone;
    this.notice.replaceChildren(...(text ? [h('p', { text })] : []));
  }
}
