/**
 * A session as notebook cells or Markdown, built in the browser from its history: the
 * fallback while the server's `.../export` route is missing (same shape as its output:
 * Markdown cells for the text, `%copilot run DEVICE: command` cells for device commands).
 */
import type { History, HistoryMessage } from '../api';

export interface ExportCell {
  cell_type: 'markdown' | 'code';
  source: string;
}

/** The `%copilot run` options that call each device-command tool again (changes need
 * lab mode; the server's export writes the same). */
const COMMAND_TOOLS: Record<string, string> = {
  run_show_commands: '',
  run_config_commands: '--tool config --mode lab ',
  run_vpcs_commands: '--tool vpcs --mode lab '
};

interface DeviceCommands {
  device: string;
  commands: string[];
}

function deviceCommands(argumentsJson: string): DeviceCommands[] {
  try {
    const parsed = JSON.parse(argumentsJson) as { devices?: unknown };
    if (!Array.isArray(parsed.devices)) {
      return [];
    }
    return parsed.devices.filter(
      (entry): entry is DeviceCommands =>
        !!entry &&
        typeof entry.device === 'string' &&
        Array.isArray(entry.commands) &&
        entry.commands.every((command: unknown) => typeof command === 'string')
    );
  } catch {
    return [];
  }
}

/** `%copilot run` lines replaying one assistant message's device commands. */
function runLines(message: HistoryMessage): string[] {
  const lines: string[] = [];
  for (const call of message.tool_calls ?? []) {
    const name = call.function.name;
    if (!(name in COMMAND_TOOLS)) {
      continue;
    }
    for (const entry of deviceCommands(call.function.arguments)) {
      const commands = entry.commands.flatMap(command => command.split('\n')).filter(Boolean);
      if (commands.length) {
        lines.push(`%copilot run ${COMMAND_TOOLS[name]}${entry.device}: ${commands.join('; ')}`);
      }
    }
  }
  return lines;
}

function quote(text: string): string {
  return text
    .split('\n')
    .map(line => `> ${line}`)
    .join('\n');
}

/** The session's cells: the question quoted, each answer as Markdown, each device-command
 * call as one code cell of `%copilot run` lines. */
export function sessionCells(history: History): ExportCell[] {
  const cells: ExportCell[] = [];
  const title = history.title?.trim();
  if (title) {
    cells.push({ cell_type: 'markdown', source: `## ${title}` });
  }
  for (const message of history.messages) {
    if (message.role === 'user') {
      cells.push({ cell_type: 'markdown', source: `**Question**\n\n${quote(message.content)}` });
    } else if (message.role === 'assistant') {
      if (message.content.trim()) {
        cells.push({ cell_type: 'markdown', source: message.content });
      }
      const lines = runLines(message);
      if (lines.length) {
        cells.push({ cell_type: 'code', source: lines.join('\n') });
      }
    }
  }
  return cells;
}

/** The cells of an nbformat 4 notebook (the server's `format=ipynb` export). */
export function cellsFromNotebook(notebookJson: string): ExportCell[] {
  const notebook = JSON.parse(notebookJson) as { cells?: { cell_type: string; source: string | string[] }[] };
  return (notebook.cells ?? [])
    .filter(cell => cell.cell_type === 'markdown' || cell.cell_type === 'code')
    .map(cell => ({
      cell_type: cell.cell_type as ExportCell['cell_type'],
      source: Array.isArray(cell.source) ? cell.source.join('') : cell.source
    }));
}

/** The session as one Markdown document (code cells fenced). */
export function sessionMarkdown(history: History): string {
  return (
    sessionCells(history)
      .map(cell => (cell.cell_type === 'code' ? '```\n' + cell.source + '\n```' : cell.source))
      .join('\n\n') + '\n'
  );
}
