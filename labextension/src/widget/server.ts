/** Server calls from the widget's page (the kernel is busy while a turn runs). */

function pageConfig(): { baseUrl?: string } {
  const el = document.getElementById('jupyter-config-data');
  try {
    return el ? (JSON.parse(el.textContent || '{}') as { baseUrl?: string }) : {};
  } catch {
    return {};
  }
}

function xsrfToken(): string {
  const match = document.cookie.match(/(?:^|;\s*)_xsrf=([^;]*)/);
  return match ? match[1] : '';
}

/** What a widget's turn belongs to: its chat session, or its run (a direct tool run,
 * `%copilot run`: named by its `run_id`, no chat session). */
export type Owner = { sessionId: string } | { runId: string };

/** The URL of a route of `owner` (`tail`: its path parts after the session or run id),
 * under the page's base URL. */
export function ownerUrl(projectId: string, owner: Owner, tail: string[], baseUrl?: string): string {
  let base = baseUrl || pageConfig().baseUrl || '/';
  if (!base.endsWith('/')) {
    base += '/';
  }
  const route = 'runId' in owner ? ['runs', owner.runId] : ['chat', 'sessions', owner.sessionId];
  const parts = [projectId, ...route, ...tail].map(encodeURIComponent).join('/');
  return `${base}copilot/projects/${parts}`;
}

/** The server's abort route of `owner`, under the page's base URL. */
export function abortUrl(projectId: string, owner: Owner, baseUrl?: string): string {
  return ownerUrl(projectId, owner, ['abort'], baseUrl);
}

/** POST `body` to a session or run route; throws an Error saying the HTTP status and the
 * server's message. */
async function post(url: string, body: unknown): Promise<Response> {
  const response = await fetch(url, {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'Content-Type': 'application/json', 'X-XSRFToken': xsrfToken() },
    body: JSON.stringify(body)
  });
  if (!response.ok) {
    let detail = '';
    try {
      // The copilot's errors are {"error": {"message"}}; Jupyter's own {"message"}.
      const error = (await response.json()) as { error?: { message?: string }; message?: string };
      detail = error.error?.message || error.message || '';
    } catch {
      // not JSON: the status is all there is to report
    }
    throw new Error(`HTTP ${response.status}${detail ? `: ${detail}` : ''}`);
  }
  return response;
}

/** POST the abort. */
export async function requestAbort(projectId: string, owner: Owner): Promise<void> {
  await post(abortUrl(projectId, owner), {});
}

/** How a decision was taken: `'stream'` when the kernel's waiting stream goes on with the
 * turn; `'here'` when no stream waited (its cell was interrupted) and the rest of the turn
 * ran as this request's answer (then only the session's history shows it). */
export type DecisionTaken = 'stream' | 'here';

/** POST the student's decision on a planned change (the approval route), with the
 * comment the model reads (null: none). */
export async function requestDecision(
  projectId: string,
  owner: Owner,
  approvalId: string,
  decision: 'approve' | 'reject',
  comment: string | null = null
): Promise<DecisionTaken> {
  const response = await post(ownerUrl(projectId, owner, ['approvals', approvalId]), {
    decision,
    comment
  });
  if ((response.headers.get('Content-Type') || '').startsWith('text/event-stream')) {
    // Read to the end: a reader that leaves would stop the turn it just approved.
    await response.text();
    return 'here';
  }
  return 'stream';
}
