/**
 * A finished tool call's result, opened: per-device tables (output in <pre>, long output
 * folded), key/value tables for other structured results (a result's wide fields, such
 * as tables and long text, under their name at full width), a list of flat records (the
 * topology's nodes and links) as a table with a column per field, plain text otherwise.
 */
import { h } from '../dom';
import { type Json, type JsonObject, parseJson } from './describe';

const LONG_OUTPUT_LINES = 14;
const LONG_OUTPUT_CHARS = 1500;

// The console's delivery status, not the check's: a ping that ran is "ran" even when the
// host was unreachable (the card's badge says whether the check passed).
const DELIVERY_LABELS: Record<string, string> = {
  success: 'ran',
  partial_success: 'partly ran',
  failed: 'not run'
};

type Device = JsonObject;

function isDeviceList(value: Json): value is Device[] {
  return (
    Array.isArray(value) &&
    value.length > 0 &&
    value.every(e => e !== null && typeof e === 'object' && !Array.isArray(e) && 'device_name' in e && 'status' in e)
  );
}

/** Text in a <pre>, folded behind a summary line when long. */
export function outputBlock(text: string, label = 'Output'): HTMLElement {
  const lines = text.replace(/\n+$/, '').split('\n');
  const pre = h('pre', { class: 'gns3c-output', text: lines.join('\n') });
  if (lines.length <= LONG_OUTPUT_LINES && text.length <= LONG_OUTPUT_CHARS) {
    return pre;
  }
  return h('details', { class: 'gns3c-long' }, h('summary', { text: `${label} · ${lines.length} lines` }), pre);
}

function blockedText(device: Device): string | null {
  if (device.blocked_info) {
    return String(device.blocked_info);
  }
  const blocked = Array.isArray(device.blocked_commands) ? device.blocked_commands : [];
  if (!blocked.length) {
    return null;
  }
  const parts = blocked.map(b => {
    if (b !== null && typeof b === 'object' && !Array.isArray(b)) {
      return `${String(b.command)}${b.reason ? `: ${String(b.reason)}` : ''}`;
    }
    return String(b);
  });
  return `Not sent: ${parts.join('; ')}`;
}

function deviceTable(devices: Device[]): HTMLElement {
  const body = h('tbody');
  for (const device of devices) {
    const name = String(device.device_name);
    const cell = h('td', { class: 'gns3c-device-output' });
    if (device.error) {
      cell.append(h('div', { class: 'gns3c-device-error', text: String(device.error) }));
    }
    const blocked = blockedText(device);
    if (blocked) {
      cell.append(h('div', { class: 'gns3c-device-blocked', text: blocked }));
    }
    if (device.output) {
      cell.append(outputBlock(String(device.output), `Output of ${name}`));
    } else if (!device.error) {
      cell.append(h('span', { class: 'gns3c-muted', text: '(no output)' }));
    }
    const status = String(device.status);
    body.append(
      h(
        'tr',
        { 'data-status': status },
        h('th', { scope: 'row', class: 'gns3c-device-name', text: name }),
        h('td', {}, h('span', { class: 'gns3c-status', 'data-status': status, text: DELIVERY_LABELS[status] ?? status })),
        cell
      )
    );
  }
  const head = h(
    'thead',
    {},
    h('tr', {}, h('th', { scope: 'col', text: 'Device' }), h('th', { scope: 'col', text: 'Console' }), h('th', { scope: 'col', text: 'Output' }))
  );
  return h('div', { class: 'gns3c-table-wrap' }, h('table', { class: 'gns3c-devices' }, head, body));
}

type Scalar = string | number | boolean | null;

function isScalar(value: Json): value is Scalar {
  return value === null || typeof value !== 'object';
}

/** A record whose fields are scalars or lists of scalars (a link, a node). */
function isFlatRecord(value: Json): value is JsonObject {
  return (
    value !== null &&
    typeof value === 'object' &&
    !Array.isArray(value) &&
    Object.values(value).every(v => isScalar(v) || (Array.isArray(v) && v.every(isScalar)))
  );
}

function cellText(value: Json | undefined): string {
  if (value === undefined || value === null) {
    return '';
  }
  return Array.isArray(value) ? value.map(String).join(', ') : String(value);
}

/** One row per record, one column per field (in the order fields first appear). */
function recordTable(records: JsonObject[]): HTMLElement {
  const columns = [...new Set(records.flatMap(record => Object.keys(record)))];
  const head = h('thead', {}, h('tr', {}, ...columns.map(column => h('th', { scope: 'col', text: column }))));
  const body = h(
    'tbody',
    {},
    ...records.map(record => h('tr', {}, ...columns.map(column => h('td', { text: cellText(record[column]) }))))
  );
  return h('div', { class: 'gns3c-table-wrap' }, h('table', { class: 'gns3c-records' }, head, body));
}

function valueView(value: Json, depth: number): HTMLElement {
  if (isDeviceList(value)) {
    return deviceTable(value);
  }
  if (Array.isArray(value) && value.length > 0 && value.every(isFlatRecord)) {
    return recordTable(value as JsonObject[]);
  }
  if (value === null || value === undefined || typeof value !== 'object') {
    const text = value === null || value === undefined ? '—' : String(value);
    return text.includes('\n') ? outputBlock(text) : h('span', { class: 'gns3c-value', text });
  }
  if (Array.isArray(value) && value.every(v => v === null || typeof v !== 'object')) {
    return h('span', { class: 'gns3c-value', text: value.map(String).join(', ') || '(none)' });
  }
  if (Array.isArray(value) || depth >= 2) {
    return outputBlock(JSON.stringify(value, null, 2));
  }
  // A result's own fields: short ones in a key/value table, wide ones (tables, long
  // text) each under its name at full width, which a narrow sidebar has room for.
  const entries = Object.entries(value);
  const wide = depth === 0 ? entries.filter(([, v]) => isWide(v)) : [];
  const body = h('tbody');
  for (const [key, v] of entries.filter(entry => !wide.includes(entry))) {
    body.append(
      h('tr', { class: key === 'error' ? 'gns3c-kv-error' : null }, h('th', { scope: 'row', text: key }), h('td', {}, valueView(v, depth + 1)))
    );
  }
  const table = h('table', { class: 'gns3c-kv' }, body);
  if (!wide.length) {
    return table;
  }
  return h(
    'div',
    { class: 'gns3c-fields' },
    body.childElementCount ? table : null,
    ...wide.flatMap(([key, v]) => [h('div', { class: 'gns3c-label', text: key }), valueView(v, depth + 1)])
  );
}

/** Whether a field's value takes the width of a table or of several lines. */
function isWide(value: Json): boolean {
  if (typeof value === 'string') {
    return value.includes('\n');
  }
  return value !== null && typeof value === 'object' && !(Array.isArray(value) && value.every(isScalar));
}

/** The result of a tool call as the server sent it. */
export function resultView(output: string): HTMLElement {
  const value = parseJson(output);
  const box = h('div', { class: 'gns3c-result' });
  if (value === undefined) {
    box.append(output ? outputBlock(output, 'Result') : h('span', { class: 'gns3c-muted', text: '(empty result)' }));
  } else {
    box.append(valueView(value, 0));
  }
  return box;
}
