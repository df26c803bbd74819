import { describe, expect, it } from 'vitest';

import { ApiError, errorFromResponse } from '../api';
import { CLOSED_TEXT, ClosedState, closedNotice, closedReason } from './closed';

describe('the copilot closed by its configuration', () => {
  it("is recognised from the server's 503 ConfigurationError answer", async () => {
    const message =
      'The GNS3 Copilot is closed because its configuration is invalid: c.GNS3Copilot.allowed_modes: ' +
      "unknown mode 'tutor'. The administrator must fix it and restart the Jupyter server.";
    const body = { error: { message, type: 'ConfigurationError', setting: 'allowed_modes', rule: "unknown mode 'tutor'" } };
    const error = await errorFromResponse(new Response(JSON.stringify(body), { status: 503 }));
    expect(closedReason(error)).toBe(`${message} (setting: allowed_modes)`);
    // Other refusals, the hub service's 503 among them, are no closure.
    expect(closedReason(new ApiError('hub down', 503, 'hub_service_url', 'HubServiceError'))).toBeNull();
    expect(closedReason(new ApiError('not found', 404, null, 'NotFound'))).toBeNull();
    expect(closedReason(new Error('network'))).toBeNull();
  });

  it('says it in words for the student, the setting folded away for the administrator', () => {
    const [text, details] = closedNotice('c.GNS3Copilot.allowed_modes: unknown mode');
    expect(text.textContent).toBe(CLOSED_TEXT);
    expect(CLOSED_TEXT).not.toMatch(/GNS3Copilot|allowed_modes|503/);
    expect(details.tagName).toBe('DETAILS');
    expect((details as HTMLDetailsElement).open).toBe(false);
    expect(details.textContent).toContain('c.GNS3Copilot.allowed_modes: unknown mode');
  });

  it('closes on that answer only, shows its notice, and opens again', () => {
    const heard: boolean[] = [];
    const state = new ClosedState(closed => heard.push(closed));
    expect([state.closed, state.node.hidden]).toEqual([false, true]);
    expect(state.closedBy(new ApiError('not found', 404, null, 'NotFound'))).toBe(false);
    state.reopen(); // open already: nothing to hear
    expect(heard).toEqual([]);
    expect(state.closedBy(new ApiError('bad setting', 503, null, 'ConfigurationError'))).toBe(true);
    expect([state.closed, state.node.hidden]).toEqual([true, false]);
    expect(state.node.textContent).toContain(CLOSED_TEXT);
    expect(state.node.textContent).toContain('bad setting');
    state.reopen();
    expect([state.closed, state.node.hidden, state.node.textContent]).toEqual([false, true, '']);
    expect(heard).toEqual([true, false]);
  });
});
