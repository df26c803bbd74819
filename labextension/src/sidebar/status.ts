/**
 * The lab status line of the sidebar: GNS3 reachable, model configured, and in hub mode
 * the hub service (with the budget left when it reports one).
 */
import type { StatusReport } from '../api';

export interface StatusPart {
  text: string;
  ok: boolean;
}

export function statusParts(report: StatusReport): StatusPart[] {
  const parts: StatusPart[] = [];
  const gns3 = report.gns3;
  parts.push(
    gns3.reachable
      ? { text: `GNS3 ${gns3.version ?? ''} reachable`.replace('  ', ' '), ok: true }
      : { text: `GNS3 not reachable: ${gns3.error ?? gns3.url}`, ok: false }
  );
  const model = report.model;
  if (model) {
    parts.push(
      model.configured
        ? { text: `model ${model.model}`, ok: true }
        : { text: `model not configured${model.missing?.length ? ` (set ${model.missing.join(', ')})` : ''}`, ok: false }
    );
  }
  const hub = report.hub;
  if (hub) {
    parts.push(
      hub.slow
        ? { text: `hub service slow: ${hub.error ?? hub.service}`, ok: false }
        : hub.reachable
          ? { text: 'hub service reachable', ok: true }
          : { text: `hub service not reachable: ${hub.error ?? hub.service}`, ok: false }
    );
    if (typeof hub.budget_left === 'number') {
      parts.push({
        text: `budget left today: ${hub.budget_left.toLocaleString()} tokens`,
        ok: hub.budget_left > 0
      });
    }
  }
  return parts;
}
