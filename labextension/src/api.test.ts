import { describe, expect, it } from 'vitest';

import { client, json, sse } from '../test/api-client';
import { ApiError } from './api';

async function rejection(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    return error as ApiError;
  }
  throw new Error('expected a rejection');
}

describe('CopilotApi errors', () => {
  it("reads the copilot's JSON error: message, setting, type and status", async () => {
    const { api } = client(() =>
      json(409, { error: { message: 'No model is configured.', type: 'ModelNotConfigured', setting: 'llm_model' } })
    );
    const error = await rejection(api.projects());
    expect(error.message).toBe('No model is configured. (setting: llm_model)');
    expect(error.status).toBe(409);
    expect(error.setting).toBe('llm_model');
    expect(error.type).toBe('ModelNotConfigured');
  });

  it('says the status line for an answer that is not JSON (a proxy page)', async () => {
    const { api } = client(() => new Response('<html>Bad gateway</html>', { status: 502, statusText: 'Bad Gateway' }));
    const error = await rejection(api.status());
    expect(error.message).toMatch(/^502 Bad Gateway from /);
    expect(error.type).toBeNull();
  });

  it('says which call got no answer when the connection fails', async () => {
    const { api } = client(() => {
      throw new TypeError('Failed to fetch');
    });
    const error = await rejection(api.sessions('p1'));
    expect(error.status).toBe(0);
    expect(error.message).toContain('did not answer GET http://127.0.0.1:8888/base/copilot/projects/p1/chat/sessions');
    expect(error.message).toContain('Failed to fetch');
  });

  it('refuses a success that is not JSON', async () => {
    const { api } = client(() => new Response('oops', { status: 200 }));
    expect((await rejection(api.llmConfig())).message).toContain('not JSON');
  });
});

describe('CopilotApi routes', () => {
  it('escapes ids in paths and uses the verbs of the API', async () => {
    const { api, calls } = client(() => json(200, {}));
    await api.rename('p/1', 's 1', 'New title');
    await api.pin('p/1', 's 1', true);
    await api.pin('p/1', 's 1', false);
    await api.abort('p/1', 's 1');
    // ServerConnection appends a cache-busting number to every URL.
    expect(calls.map(c => `${c.method} ${c.url.replace(/[?&]\d+$/, '')}`)).toEqual([
      'PATCH http://127.0.0.1:8888/base/copilot/projects/p%2F1/chat/sessions/s%201',
      'PUT http://127.0.0.1:8888/base/copilot/projects/p%2F1/chat/sessions/s%201/pin',
      'DELETE http://127.0.0.1:8888/base/copilot/projects/p%2F1/chat/sessions/s%201/pin',
      'POST http://127.0.0.1:8888/base/copilot/projects/p%2F1/chat/sessions/s%201/abort'
    ]);
    expect(calls[0].body).toEqual({ title: 'New title' });
  });

  it("reads the server's export, and says a missing session's error", async () => {
    const exported = client(() => new Response('# PC addresses\n', { status: 200, headers: { 'Content-Type': 'text/markdown' } }));
    expect(await exported.api.exportSession('p', 's 1', 'md')).toBe('# PC addresses\n');
    expect(exported.calls[0].url.replace(/[?&]\d+$/, '')).toBe(
      'http://127.0.0.1:8888/base/copilot/projects/p/chat/sessions/s%201/export?format=md'
    );
    const missingSession = client(() =>
      json(404, { error: { message: "Chat session 's' not found in this project.", type: 'SessionNotFound' } })
    );
    expect((await rejection(missingSession.api.exportSession('p', 's', 'md'))).message).toContain('not found');
  });

  it('a decision: null when a waiting stream goes on, else the rest of the turn as events', async () => {
    const live = client(() => json(200, { status: 'ok', approval_id: 'a1', decision: 'approve' }));
    expect(await live.api.decide('p', 's1', 'a1', 'approve', 'fine')).toBeNull();
    expect(live.calls[0].url.replace(/[?&]\d+$/, '')).toBe('http://127.0.0.1:8888/base/copilot/projects/p/chat/sessions/s1/approvals/a1');
    expect([live.calls[0].method, live.calls[0].body]).toEqual(['POST', { decision: 'approve', comment: 'fine' }]);

    const resumed = client(
      () =>
        new Response(
          'data: {"type":"approval_resolved","session_id":"s1","approval_id":"a1","tool_call_id":"c1","decision":"reject"}\n\n' +
            'data: {"type":"done","session_id":"s1"}\n\n',
          { status: 200, headers: { 'Content-Type': 'text/event-stream; charset=utf-8' } }
        )
    );
    const events = await resumed.api.decide('p', 's1', 'a1', 'reject');
    const types = [];
    for await (const event of events!) {
      types.push(event.type);
    }
    expect(types).toEqual(['approval_resolved', 'done']);

    const decided = client(() => json(409, { error: { message: "Approval 'a1' was already decided.", type: 'AlreadyDecided' } }));
    const error = await rejection(decided.api.decide('p', 's1', 'a1', 'approve'));
    expect([error.status, error.message]).toEqual([409, "Approval 'a1' was already decided."]);
  });

  it('streams the chat events and rejects a refusal before the stream', async () => {
    const chunks = ['data: {"type":"heartbeat","session_id":"s1"}\n', '\ndata: {"type":"content","session_id":"s1","con', 'tent":"Hello"}\n\ndata: {"type":"done","session_id":"s1"}\n\n'];
    const { api, calls } = client(
      () =>
        new Response(
          new ReadableStream({
            start(controller) {
              chunks.forEach(chunk => controller.enqueue(new TextEncoder().encode(chunk)));
              controller.close();
            }
          }),
          { status: 200, headers: { 'Content-Type': 'text/event-stream' } }
        )
    );
    const types = [];
    for await (const event of api.chat('p', { message: 'hi', session_id: 's1', copilot_mode: 'teaching_assistant' })) {
      types.push(event.type);
    }
    expect(types).toEqual(['heartbeat', 'content', 'done']);
    expect(calls[0].body).toEqual({ message: 'hi', session_id: 's1', copilot_mode: 'teaching_assistant', stream: true });

    const refused = client(() => json(409, { error: { message: 'Project is not opened.', type: 'ProjectNotOpened' } }));
    const stream = refused.api.chat('p', { message: 'hi' });
    const error = await rejection(stream.next());
    expect(error.status).toBe(409);
    expect(error.message).toBe('Project is not opened.');
  });
});

describe('CopilotApi lab routes', () => {
  it('reads the lab, streams its checks and asks for a catch-up with or without confirm', async () => {
    const { api, calls } = client((url, init) => {
      if (url.includes('/checks')) {
        return sse([{ type: 'check_summary', session_id: 'r', summary: { score: 0, max_score: 0, passed: false, stages: [] } }, { type: 'done', session_id: 'r' }]);
      }
      if (url.includes('/catch-up')) {
        return (init.body as { confirm: boolean }).confirm
          ? json(200, { stage: 's 1', snapshot: 'fresh', restored: true })
          : json(400, { error: { message: 'Catching up restores \'fresh\'. Send {"confirm": true} to do it.', type: 'ConfirmationNeeded' } });
      }
      return json(200, { title: 'Lab', max_score: 0, stages: [] });
    });
    expect((await api.lab('p/1')).title).toBe('Lab');
    const types = [];
    for await (const event of api.checkLab('p/1', 's 1')) {
      types.push(event.type);
    }
    expect(types).toEqual(['check_summary', 'done']);
    for await (const event of api.checkLab('p/1')) {
      types.push(event.type);
    }
    expect((await rejection(api.catchUp('p/1', 's 1', false))).type).toBe('ConfirmationNeeded');
    expect((await api.catchUp('p/1', 's 1', true)).snapshot).toBe('fresh');
    expect(calls.map(c => `${c.method} ${c.url.replace(/[?&]\d+$/, '')} ${JSON.stringify(c.body ?? null)}`)).toEqual([
      'GET http://127.0.0.1:8888/base/copilot/projects/p%2F1/lab null',
      'POST http://127.0.0.1:8888/base/copilot/projects/p%2F1/lab/checks {"stage":"s 1","stream":true}',
      'POST http://127.0.0.1:8888/base/copilot/projects/p%2F1/lab/checks {"stream":true}',
      'POST http://127.0.0.1:8888/base/copilot/projects/p%2F1/lab/stages/s%201/catch-up {"confirm":false}',
      'POST http://127.0.0.1:8888/base/copilot/projects/p%2F1/lab/stages/s%201/catch-up {"confirm":true}'
    ]);
  });

  it("keeps every problem of an invalid lab file (a 422's errors)", async () => {
    const problem = { source: 'lab.yaml', line: 15, field: 'stages[0].objectives[1].check', message: "unknown check kind 'node_runing'" };
    const { api } = client(() => json(422, { error: { message: 'lab.yaml, line 15, ...', type: 'LabFileError', field: problem.field, errors: [problem] } }));
    const error = await rejection(api.lab('p'));
    expect([error.status, error.type]).toEqual([422, 'LabFileError']);
    expect(error.problems).toEqual([problem]);
  });
});
