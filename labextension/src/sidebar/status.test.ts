import { describe, expect, it } from 'vitest';

import type { StatusReport } from '../api';
import { statusParts } from './status';

function report(hub: StatusReport['hub']): StatusReport {
  return {
    gns3: { url: 'http://gns3:3080', reachable: true, version: '3.0.6' },
    mode_summary: 'hub mode',
    hub
  } as StatusReport;
}

describe('statusParts in hub mode', () => {
  it('says the hub service is slow, not unreachable, when it answered too late', () => {
    const parts = statusParts(
      report({ service: 'http://hub/', reachable: true, slow: true, error: 'The copilot hub service is slow to answer' })
    );
    expect(parts).toContainEqual({ text: 'hub service slow: The copilot hub service is slow to answer', ok: false });
    expect(parts.map(p => p.text).join(' ')).not.toContain('not reachable');
  });

  it('still says when the service cannot be reached', () => {
    const parts = statusParts(report({ service: 'http://hub/', reachable: false, error: 'refused' }));
    expect(parts).toContainEqual({ text: 'hub service not reachable: refused', ok: false });
  });
});
