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

/** The server's abort route of a chat session, under the page's base URL. */
export function abortUrl(projectId: string, sessionId: string, baseUrl?: string): string {
  let base = baseUrl || pageConfig().baseUrl || '/';
  if (!base.endsWith('/')) {
    base += '/';
  }
  return `${base}copilot/projects/${encodeURIComponent(projectId)}/chat/sessions/${encodeURIComponent(sessionId)}/abort`;
}

/** POST the abort; throws an Error saying the HTTP status and the server's message. */
export async function requestAbort(projectId: string, sessionId: string): Promise<void> {
  const response = await fetch(abortUrl(projectId, sessionId), {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'Content-Type': 'application/json', 'X-XSRFToken': xsrfToken() },
    body: '{}'
  });
  if (!response.ok) {
    let detail = '';
    try {
      // The copilot's errors are {"error": {"message"}}; Jupyter's own {"message"}.
      const body = (await response.json()) as { error?: { message?: string }; message?: string };
      detail = body.error?.message || body.message || '';
    } catch {
      // not JSON: the status is all there is to report
    }
    throw new Error(`HTTP ${response.status}${detail ? `: ${detail}` : ''}`);
  }
}
