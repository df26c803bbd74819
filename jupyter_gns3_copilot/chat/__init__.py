"""The chat service: the copilot's conversations in one GNS3 project, turn by turn.

Imports nothing when the package is imported (the server's start and the kernel import
`chat.options` and `chat.stream_events` without the agent). The modules, by job:

- `service.py`: `AgentService`, one per project (open, close, `stream_chat`), composed of
  the three parts below (each a separate object; none inherits another);
- `settings.py`: `ChatSettings`, the settings every service and part shares;
- `engine.py`: `TurnEngine`, the turn engine (the graph streamed into the chat events,
  heartbeats, the time limit, the end of a turn saved), holding what the other parts
  work on;
- `sessions.py`: `ChatSessions`, session reads and changes (history, list, rename, pin,
  delete, abort);
- `approvals.py`: `ChatApprovals`, approvals asked in a turn, their state, and resuming a
  paused turn;
- `decisions.py`: the decisions awaited by streams of this process;
- `repair.py`: the history repair (unanswered tool calls, the errors a turn ended with);
- `turn_context.py`: a turn's runtime context (model, tools, prompt, objectives);
- `running_turn.py`: the bookkeeping of one running turn (statistics, title);
- `session_read.py`: what a turn reads of its session before the graph runs;
- `stream_events.py`: the graph's stream items and refusals as chat events (`ChatEvent`);
- `options.py`: `TurnOptions`, one turn's options from the edge to the engine;
- `manager.py`: `ProjectAgentManager`, the service of every open project.
"""
