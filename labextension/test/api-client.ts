/** A `CopilotApi` whose requests go to a handler (no server: the unit tests check the
 * client's and the panels' own reading of answers; the browser tests run them against
 * the real server). */
import { ServerConnection } from '@jupyterlab/services';

import { CopilotApi } from '../src/api';

export interface Call {
  url: string;
  method: string;
  body: unknown;
}

export type Handler = (url: string, init: RequestInit & { body?: unknown }) => Response | Promise<Response>;

/** The client, and the calls it made (URL, verb, parsed JSON body). */
export function client(handler: Handler): { api: CopilotApi; calls: Call[] } {
  const calls: Call[] = [];
  const fetch = async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = input instanceof Request ? input : new Request(input, init);
    const text = await request.text();
    const body = text ? JSON.parse(text) : undefined;
    calls.push({ url: request.url, method: request.method, body });
    return handler(request.url, { method: request.method, body, signal: init?.signal ?? request.signal });
  };
  const settings = ServerConnection.makeSettings({
    baseUrl: 'http://127.0.0.1:8888/base/',
    wsUrl: 'ws://127.0.0.1:8888/base/',
    token: 'secret',
    fetch: fetch as typeof globalThis.fetch
  });
  return { api: new CopilotApi(settings), calls };
}

export const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });

/** An SSE answer of `events`, one message each. */
export const sse = (events: unknown[]) =>
  new Response(events.map(e => `data: ${JSON.stringify(e)}\n\n`).join(''), {
    status: 200,
    headers: { 'Content-Type': 'text/event-stream' }
  });
