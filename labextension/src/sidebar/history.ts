/**
 * A session's stored history (OpenAI-format messages) as turns for `TurnView`: one turn
 * per user message, the assistant's text and tool calls with their results and the
 * server's reading of each (summary, outcome, note), and the errors a turn ended with
 * (the history's `turn_errors`, by the id of the turn's user message) after them: that
 * turn shows its error, never "(no answer)".
 */
import type { OpenAIMessage, TurnError } from '../api';
import type { ChatEvent } from '../events';
import type { ToolEndEvent } from '../generated/events';
import type { ToolItem, TurnRecord } from '../turn/types';

/** A tool result's `reading` in its message's metadata (a metadata value the server's
 * model leaves untyped): the fields its `tool_end` event carried. */
type Reading = Partial<Pick<ToolEndEvent, 'summary' | 'outcome' | 'note'>>;

export function turnsFromHistory(messages: readonly OpenAIMessage[], turnErrors: readonly TurnError[] = []): TurnRecord[] {
  const turns: TurnRecord[] = [];
  const byMessage = new Map<string, TurnRecord>();
  const tools = new Map<string, ToolItem>();
  const current = (): TurnRecord => {
    if (!turns.length) {
      // The history was cut (limit): its first turn's question is not in it.
      turns.push({ user: '', status: 'done', items: [], stats: {} });
    }
    return turns[turns.length - 1];
  };
  for (const message of messages) {
    if (message.role === 'user') {
      turns.push({ user: message.content, status: 'done', items: [], stats: {} });
      if (message.id) {
        byMessage.set(message.id, turns[turns.length - 1]);
      }
    } else if (message.role === 'assistant') {
      const turn = current();
      if (message.content) {
        turn.items.push({ kind: 'text', text: message.content });
      }
      for (const call of message.tool_calls ?? []) {
        const item: ToolItem = {
          kind: 'tool',
          id: call.id,
          name: call.function.name,
          arguments: call.function.arguments,
          complete: true,
          state: 'stopped',
          progress: [],
          output: null,
          summary: null,
          outcome: null,
          note: null
        };
        tools.set(call.id, item);
        turn.items.push(item);
      }
    } else if (message.role === 'tool' && message.tool_call_id) {
      const item = tools.get(message.tool_call_id);
      if (item) {
        const reading = message.metadata?.reading as Reading | undefined;
        item.output = message.content;
        item.state = 'done';
        item.summary = reading?.summary ?? null;
        item.outcome = reading?.outcome ?? null;
        item.note = reading?.note ?? null;
      }
    }
  }
  for (const { message_id, error } of turnErrors) {
    const turn = byMessage.get(message_id);
    if (turn && error) {
      turn.items.push({ kind: 'error', text: error });
      turn.status = 'error';
    }
  }
  return turns;
}

/** The events that rebuild a stored turn's text and tool calls (with their results), so a
 * turn waiting for an approval goes on in one view with the rest of its stream. */
export function turnEvents(turn: TurnRecord, sessionId: string): ChatEvent[] {
  const events: ChatEvent[] = [];
  for (const item of turn.items) {
    if (item.kind === 'text') {
      events.push({ type: 'content', session_id: sessionId, content: item.text });
    } else if (item.kind === 'tool') {
      const fn = { name: item.name, arguments: item.arguments, complete: true };
      events.push({ type: 'tool_call', session_id: sessionId, tool_call: { id: item.id, type: 'function', function: fn } });
      if (item.output !== null) {
        const { summary, outcome, note } = item;
        events.push({ type: 'tool_end', session_id: sessionId, tool_name: item.name, tool_call_id: item.id, tool_output: item.output, summary, outcome, note });
      }
    }
  }
  return events;
}
