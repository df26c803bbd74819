/**
 * Human words for tool calls: readable arguments (`PC1: ping 10.0.0.2 -c 2`,
 * `create PC3 (vpcs)`, generic `key: value`), never JSON; and the badge of a card.
 */
import type { ToolItem, ToolOutcome } from './types';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/** `text` parsed as JSON, or undefined when it is empty or not (yet) valid JSON. */
export function parseJson(text: string | null | undefined): Json | undefined {
  if (!text || !text.trim()) {
    return undefined;
  }
  try {
    return JSON.parse(text) as Json;
  } catch {
    return undefined;
  }
}

/**
 * The value of JSON text that is still streaming: the longest prefix ending at a complete
 * value, with its open strings, arrays and objects closed (`{"a": [1, 2` -> `{a: [1, 2]}`).
 */
export function parsePartialJson(text: string): Json | undefined {
  const whole = parseJson(text);
  if (whole !== undefined || !text.trim()) {
    return whole;
  }
  const closers: string[] = [];
  const cuts: { at: number; closers: string }[] = [];
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') {
        i++;
      } else if (c === '"') {
        inString = false;
      }
    } else if (c === '"') {
      inString = true;
    } else if (c === '{' || c === '[') {
      closers.push(c === '{' ? '}' : ']');
    } else if (c === '}' || c === ']') {
      closers.pop();
      cuts.push({ at: i + 1, closers: closers.slice().reverse().join('') });
    } else if (c === ',') {
      cuts.push({ at: i, closers: closers.slice().reverse().join('') });
    }
  }
  const attempts = [{ at: text.length, closers: (inString ? '"' : '') + closers.slice().reverse().join('') }, ...cuts.reverse()];
  for (const { at, closers: close } of attempts.slice(0, 4)) {
    const value = parseJson(text.slice(0, at) + close);
    if (value !== undefined) {
      return value;
    }
  }
  return undefined;
}

function isObject(value: Json | undefined): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function str(value: Json | undefined): string {
  if (value === null || value === undefined) {
    return '';
  }
  if (Array.isArray(value)) {
    return value.map(str).join(', ');
  }
  if (typeof value === 'object') {
    return Object.entries(value)
      .map(([key, v]) => `${key} ${str(v)}`)
      .join(', ');
  }
  return String(value);
}

function each(value: Json | undefined): JsonObject[] {
  return Array.isArray(value) ? value.filter(isObject) : [];
}

/** One line per device, node or link of the well-known tools; null for the others. */
function knownLines(name: string, args: JsonObject): string[] | null {
  if (Array.isArray(args.devices)) {
    // run_show_commands, run_config_commands, run_vpcs_commands
    return each(args.devices).map(d => {
      const commands = Array.isArray(d.commands) ? d.commands.map(str).join('; ') : str(d.commands);
      return `${str(d.device)}: ${commands}`;
    });
  }
  if (name === 'create_nodes') {
    return each(args.nodes).map(n => `create ${n.name ? str(n.name) : 'a node'} (${str(n.template).toLowerCase()})`);
  }
  if (name === 'create_links') {
    return each(args.links).map(l => `link ${str(l.a)} ${str(l.a_port)} - ${str(l.b)} ${str(l.b_port)}`);
  }
  if (name === 'rename_nodes') {
    return each(args.nodes).map(n => `rename ${str(n.name)} to ${str(n.new_name)}`);
  }
  const verb = /^(start|stop|suspend|reload)_nodes$/.exec(name);
  if (verb && Array.isArray(args.nodes)) {
    return [`${verb[1]} ${str(args.nodes)}`];
  }
  return null;
}

/** The readable lines of a call's arguments, also while they stream (empty without any). */
export function describeArguments(name: string, argumentsText: string): string[] {
  const args = parsePartialJson(argumentsText);
  if (args === undefined) {
    return [];
  }
  if (!isObject(args)) {
    return [str(args)];
  }
  return (
    knownLines(name, args) ??
    Object.entries(args)
      .filter(([, value]) => value !== null && value !== '')
      .map(([key, value]) => `${key}: ${str(value)}`)
  );
}

/** A tool's name as words: `run_vpcs_commands` -> `run vpcs commands`. */
export function toolLabel(name: string): string {
  return name.replace(/_/g, ' ');
}

export type Tone = 'success' | 'warn' | 'error' | 'info' | 'active';

export interface Badge {
  label: string;
  tone: Tone;
}

const OUTCOME_BADGES: Record<ToolOutcome, Badge> = {
  ok: { label: 'ok', tone: 'success' },
  partial: { label: 'partial', tone: 'warn' },
  failed: { label: 'failed', tone: 'error' },
  refused: { label: 'refused', tone: 'info' }
};

const STATE_BADGES: Record<Exclude<ToolItem['state'], 'done'>, Badge> = {
  arguments: { label: 'writing arguments', tone: 'active' },
  ready: { label: 'ready', tone: 'active' },
  running: { label: 'running', tone: 'active' },
  stopped: { label: 'stopped', tone: 'warn' }
};

/**
 * What happened to the call: the server's `outcome` once it ended (turns saved before
 * outcomes existed get one read from the output's statuses).
 */
export function toolOutcome(item: ToolItem): ToolOutcome | null {
  if (item.state !== 'done') {
    return null;
  }
  if (item.outcome) {
    return item.outcome;
  }
  const value = parseJson(item.output);
  if (Array.isArray(value)) {
    const statuses = value.filter(isObject).map(d => d.status);
    if (statuses.length && statuses.every(s => s === 'failed')) {
      return 'failed';
    }
    return statuses.some(s => s !== 'success') ? 'partial' : 'ok';
  }
  if (isObject(value)) {
    if (value.status === 'refused') {
      return 'refused';
    }
    if (value.error) {
      return 'failed';
    }
  }
  return 'ok';
}

/** The card's badge: its outcome once done, else where the call is. */
export function toolBadge(item: ToolItem): Badge {
  if (item.state === 'done') {
    return OUTCOME_BADGES[toolOutcome(item) ?? 'ok'];
  }
  return STATE_BADGES[item.state];
}
