import { describe, expect, it } from 'vitest';

import { abortUrl, ownerUrl } from './server';

describe('the widget server routes', () => {
  it("stops a chat turn on its session's route and a direct run on its run's route", () => {
    expect(abortUrl('p 1', { sessionId: 's1' }, '/user/a/')).toBe('/user/a/copilot/projects/p%201/chat/sessions/s1/abort');
    expect(abortUrl('p1', { runId: 'r/1' }, '/user/a')).toBe('/user/a/copilot/projects/p1/runs/r%2F1/abort');
  });

  it("decides a direct run's change on its run's approval route", () => {
    expect(ownerUrl('p1', { runId: 'r1' }, ['approvals', 'a1'], '/')).toBe('/copilot/projects/p1/runs/r1/approvals/a1');
  });
});
