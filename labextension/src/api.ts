/**
 * A typed client of the copilot's REST + SSE API (`{base_url}copilot/...`) over
 * JupyterLab's `ServerConnection`: the same authentication, base URL and XSRF handling as
 * the rest of JupyterLab, no kernel involved.
 *
 * Every call resolves with the parsed body or rejects with an `ApiError` whose message is
 * readable as is (the server's `{"error": {"message", "setting", ...}}`, or what went wrong
 * on the way).
 */
import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

import type { ChatEvent } from './events';
import type {
  AbortAnswer,
  ChatSession,
  ConversationHistory,
  LLMConfigView,
  NotebookProjectAnswer,
  PendingApproval,
  ProjectSummary,
  StatusReport
} from './generated/answers';
import type {
  ApprovalDecisionRequest,
  CatchUpRequest,
  ChatRequest,
  ExerciseRequest,
  LabCheckRequest,
  LLMConfigUpdate,
  RenameRequest
} from './generated/requests';
import type { ExerciseView, GiveUpAnswer } from './objectives/exercise';
import { type CatchUpDone, type LabEvent, type LabView, parseLabEvent } from './objectives/types';
import { readEvents } from './sse';

// The answers and request bodies are generated from the server's models
// (src/generated/answers.ts, requests.ts).
export type {
  AbortAnswer,
  ChatSession,
  ConversationHistory,
  LLMConfigView,
  NotebookProjectAnswer,
  OpenAIMessage,
  OpenAIToolCall,
  PendingApproval,
  ProjectSummary,
  StatusReport,
  TurnError
} from './generated/answers';
export type { ChatRequest, LLMConfigUpdate } from './generated/requests';

export type ExportFormat = 'ipynb' | 'md';

/** One problem of a refused request, as the front end reads an `ErrorBody`'s `errors`
 * (the server sends them as plain objects): a bad field (`field`, `rule`) or a lab file's
 * problem (`source`, `line`, `field`, `message`). */
export interface ApiProblem {
  field?: string | null;
  rule?: string;
  source?: string;
  line?: number;
  message?: string;
}

/** A failed call: `status` 0 when no answer came (network, server down). */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly setting: string | null = null,
    /** The copilot's error type (`SessionNotFound`, ...); null when the answer was not
     * the copilot's (an unknown route, a proxy). */
    readonly type: string | null = null,
    /** Every problem, when the server listed them (`errors`: a 422 lab file's). */
    readonly problems: ApiProblem[] = []
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** The readable message of a failed response (JSON error body, else the status line). */
export async function errorFromResponse(response: Response): Promise<ApiError> {
  const fallback = `${response.status} ${response.statusText || 'error'} from ${response.url || 'the server'}`;
  let text = '';
  try {
    text = await response.text();
  } catch {
    return new ApiError(fallback, response.status);
  }
  try {
    const body = JSON.parse(text) as { error?: unknown; message?: unknown };
    const error = body.error;
    if (typeof error === 'string') {
      return new ApiError(error, response.status);
    }
    if (error && typeof error === 'object') {
      const { message, setting, type, errors } = error as { message?: unknown; setting?: unknown; type?: unknown; errors?: unknown };
      if (typeof message === 'string') {
        const name = typeof setting === 'string' ? setting : null;
        const text = name ? `${message} (setting: ${name})` : message;
        const problems = Array.isArray(errors) ? errors.filter(e => e && typeof e === 'object') : [];
        return new ApiError(text, response.status, name, typeof type === 'string' ? type : 'Error', problems);
      }
    }
    if (typeof body.message === 'string') {
      return new ApiError(body.message, response.status);
    }
  } catch {
    // Not JSON (a proxy's page): the status line says more than its HTML.
  }
  return new ApiError(fallback, response.status);
}

const seg = encodeURIComponent;

export class CopilotApi {
  constructor(readonly settings: ServerConnection.ISettings = ServerConnection.makeSettings()) {}

  /** The absolute URL of `copilot/<path...>` (each part escaped). */
  url(...parts: string[]): string {
    return URLExt.join(this.settings.baseUrl, 'copilot', ...parts.map(seg));
  }

  status(): Promise<StatusReport> {
    return this.json('GET', this.url('status'));
  }

  projects(): Promise<ProjectSummary[]> {
    return this.json('GET', this.url('projects'));
  }

  openProject(projectId: string): Promise<ProjectSummary> {
    return this.json('POST', this.url('projects', projectId, 'open'));
  }

  /** The project's lab as this user sees it (404 `NoLab` without a lab file, 422
   * `LabFileError` with its `problems` for an invalid one). */
  lab(projectId: string): Promise<LabView> {
    return this.json('GET', this.url('projects', projectId, 'lab'));
  }

  /**
   * Check the lab's objectives on the devices (all, or `stage`'s): a `check_result` event
   * per objective as it is decided, then `check_summary`, then `done`. Refusals before
   * the checks start (no lab, invalid file, unknown stage, project closed) reject with an
   * `ApiError`; `signal` stops the checks.
   */
  async *checkLab(projectId: string, stage: string | null = null, signal?: AbortSignal): AsyncGenerator<ChatEvent> {
    const body: LabCheckRequest = stage === null ? { stream: true } : { stage, stream: true };
    const response = await this.send('POST', this.url('projects', projectId, 'lab', 'checks'), body, signal);
    if (!response.ok) {
      throw await errorFromResponse(response);
    }
    yield* this.events(response);
  }

  /**
   * Catch up to `stage`: restore the snapshot it starts from and start the nodes again.
   * Without `confirm` nothing is restored: the server refuses with a 400
   * `ConfirmationNeeded` whose message says what would be restored.
   */
  catchUp(projectId: string, stage: string, confirm: boolean): Promise<CatchUpDone> {
    const body: CatchUpRequest = { confirm };
    return this.json('POST', this.url('projects', projectId, 'lab', 'stages', stage, 'catch-up'), body);
  }

  /**
   * Start a troubleshooting exercise for this user: one of the lab's faults (drawn for
   * them with `{random: true}`) put into their working lab; the answer says what fails
   * now, never which fault it is. 409 when the lab does not pass what the fault breaks
   * yet ("Finish the lab first: ..."), or an exercise is going already.
   */
  startExercise(projectId: string, request: ExerciseRequest): Promise<ExerciseView> {
    return this.json('POST', this.url('projects', projectId, 'lab', 'exercises'), request);
  }

  /** This user's latest exercise in the project (going or ended); 404 before the first. */
  exercise(projectId: string): Promise<ExerciseView> {
    return this.json('GET', this.url('projects', projectId, 'lab', 'exercises', 'current'));
  }

  /** End this user's exercise: what the fault was, and the fault taken out. 404 when
   * none is going. */
  giveUp(projectId: string): Promise<GiveUpAnswer> {
    return this.json('POST', this.url('projects', projectId, 'lab', 'exercises', 'current', 'give-up'));
  }

  /**
   * The project's lab as this user sees it, as it changes: a `lab_view` at once, then
   * again after each check, stage chosen or catch-up of theirs on this server, wherever it
   * was asked (this sidebar, a notebook, another tab); runs until `signal` aborts it or
   * the server goes. Refusals before it starts (no lab file, invalid file) reject with an
   * `ApiError`.
   */
  async *labEvents(projectId: string, signal?: AbortSignal): AsyncGenerator<LabEvent> {
    const response = await this.send('GET', this.url('projects', projectId, 'lab', 'events'), undefined, signal);
    if (!response.ok) {
      throw await errorFromResponse(response);
    }
    yield* this.events(response, parseLabEvent);
  }

  /** The drawing of the project's topology (an SVG document as text). */
  topologySvg(projectId: string): Promise<string> {
    return this.text('GET', this.url('projects', projectId, 'topology') + '?format=svg');
  }

  sessions(projectId: string, limit = 100): Promise<ChatSession[]> {
    return this.json('GET', this.sessionUrl(projectId) + `?limit=${limit}`);
  }

  history(projectId: string, sessionId: string, limit = 1000): Promise<ConversationHistory> {
    return this.json('GET', this.sessionUrl(projectId, sessionId, 'history') + `?limit=${limit}`);
  }

  rename(projectId: string, sessionId: string, title: string): Promise<ChatSession> {
    const body: RenameRequest = { title };
    return this.json('PATCH', this.sessionUrl(projectId, sessionId), body);
  }

  pin(projectId: string, sessionId: string, pinned: boolean): Promise<ChatSession> {
    return this.json(pinned ? 'PUT' : 'DELETE', this.sessionUrl(projectId, sessionId, 'pin'));
  }

  deleteSession(projectId: string, sessionId: string): Promise<void> {
    return this.json('DELETE', this.sessionUrl(projectId, sessionId));
  }

  abort(projectId: string, sessionId: string): Promise<AbortAnswer> {
    return this.json('POST', this.sessionUrl(projectId, sessionId, 'abort'));
  }

  /** The session's planned changes waiting for a decision (whether or not a stream of
   * the server waits on them). */
  approvals(projectId: string, sessionId: string): Promise<PendingApproval[]> {
    return this.json('GET', this.sessionUrl(projectId, sessionId, 'approvals'));
  }

  /**
   * Decide a planned change. Resolves with null when a stream of the server waits for the
   * decision (that stream goes on with the turn: the sidebar's own, or a notebook cell's);
   * otherwise (its client left, or the server restarted) with the rest of the turn as
   * events, which must be read to the end (a reader that leaves stops the turn).
   */
  async decide(
    projectId: string,
    sessionId: string,
    approvalId: string,
    decision: ApprovalDecisionRequest['decision'],
    comment: string | null = null,
    signal?: AbortSignal
  ): Promise<AsyncGenerator<ChatEvent> | null> {
    const url = this.sessionUrl(projectId, sessionId, 'approvals', approvalId);
    const body: ApprovalDecisionRequest = { decision, comment };
    const response = await this.send('POST', url, body, signal);
    if (!response.ok) {
      throw await errorFromResponse(response);
    }
    if (!(response.headers.get('Content-Type') || '').startsWith('text/event-stream')) {
      await response.text();
      return null;
    }
    return this.events(response);
  }

  /** The session exported by the server: `ipynb` an nbformat 4 notebook (JSON text),
   * `md` Markdown. */
  exportSession(projectId: string, sessionId: string, format: ExportFormat): Promise<string> {
    return this.text('GET', this.sessionUrl(projectId, sessionId, 'export') + `?format=${format}`);
  }

  /** What the server keeps for the notebook at contents path `notebook`. */
  notebookProject(notebook: string): Promise<NotebookProjectAnswer> {
    return this.json('GET', this.url('notebook-projects') + `?notebook=${seg(notebook)}`);
  }

  llmConfig(): Promise<LLMConfigView> {
    return this.json('GET', this.url('llm-config'));
  }

  saveLLMConfig(update: LLMConfigUpdate): Promise<LLMConfigView> {
    return this.json('PUT', this.url('llm-config'), update);
  }

  /**
   * One chat turn: the server's events as they arrive. Refusals before the stream starts
   * (bad input, project not opened, no model) reject with an `ApiError`; `signal` cancels
   * the read (the server treats a reader that leaves like an abort).
   */
  async *chat(projectId: string, request: ChatRequest, signal?: AbortSignal): AsyncGenerator<ChatEvent> {
    const body: ChatRequest = { ...request, stream: true };
    const response = await this.send('POST', this.url('projects', projectId, 'chat', 'stream'), body, signal);
    if (!response.ok) {
      throw await errorFromResponse(response);
    }
    yield* this.events(response);
  }

  private events(response: Response): AsyncGenerator<ChatEvent>;
  private events<T>(response: Response, parse: (data: string) => T | null): AsyncGenerator<T>;
  private events<T>(response: Response, parse?: (data: string) => T | null): AsyncGenerator<T | ChatEvent> {
    if (!response.body) {
      throw new ApiError('The answer has no body to read (is a proxy buffering it?)', response.status);
    }
    return parse ? readEvents(response.body, parse) : readEvents(response.body);
  }

  private sessionUrl(projectId: string, ...rest: string[]): string {
    const [sessionId, ...tail] = rest;
    const base = ['projects', projectId, 'chat', 'sessions'];
    return this.url(...(sessionId === undefined ? base : [...base, sessionId, ...tail]));
  }

  private async send(method: string, url: string, body?: unknown, signal?: AbortSignal): Promise<Response> {
    const init: RequestInit = { method, signal };
    if (body !== undefined) {
      init.body = JSON.stringify(body);
      init.headers = { 'Content-Type': 'application/json' };
    }
    try {
      return await ServerConnection.makeRequest(url, init, this.settings);
    } catch (error) {
      if (signal?.aborted) {
        throw error;
      }
      const reason = error instanceof Error ? error.message : String(error);
      throw new ApiError(`The Jupyter server did not answer ${method} ${url}: ${reason}`, 0);
    }
  }

  private async text(method: string, url: string): Promise<string> {
    const response = await this.send(method, url);
    if (!response.ok) {
      throw await errorFromResponse(response);
    }
    return response.text();
  }

  private async json<T>(method: string, url: string, body?: unknown): Promise<T> {
    const response = await this.send(method, url, body);
    if (!response.ok) {
      throw await errorFromResponse(response);
    }
    if (response.status === 204) {
      return undefined as T;
    }
    const text = await response.text();
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new ApiError(`${method} ${url} answered something that is not JSON: ${text.slice(0, 200)}`, response.status);
    }
  }
}
