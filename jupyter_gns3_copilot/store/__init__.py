"""Per-project persistence: LangGraph checkpoints and the `chat_sessions` table.

`await ProjectStore.open(data_dir, project_id)` gives `.checkpointer` (a `ProjectSaver`:
LangGraph's AsyncSqliteSaver that can read a thread's latest checkpoint ahead of a run) for
the graph and `.sessions` (a `ChatSessionsRepository`); `TurnCounters` applies the
statistics rules during a turn. LangGraph is imported only when a store is opened.
"""

from .database import DATABASE_NAME, ProjectStore, database_path, validate_project_id
from .errors import InvalidProjectId, InvalidTitle, SecretInMetadata, SessionExists, StoreError
from .sessions import ChatSession, ChatSessionsRepository, StatsDelta, validate_title
from .stats import TITLE_NODE, TurnCounters, usage_tokens

__all__ = [
    "DATABASE_NAME",
    "TITLE_NODE",
    "ChatSession",
    "ChatSessionsRepository",
    "InvalidProjectId",
    "InvalidTitle",
    "ProjectStore",
    "SecretInMetadata",
    "SessionExists",
    "StatsDelta",
    "StoreError",
    "TurnCounters",
    "database_path",
    "usage_tokens",
    "validate_project_id",
    "validate_title",
]
