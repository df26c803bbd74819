"""HTTP handlers of the copilot API: the only code that knows tornado.

`default_handlers` is the route table; jupyter_server prefixes every route with the
server's base_url (`url_path_join`). Every verb is `@tornado.web.authenticated` and
`@authorized` on the auth resource "copilot" (read for GET, write for the others; a
node's console websocket needs write).
"""

from __future__ import annotations

import tornado.web

from .chat import (
    AbortHandler,
    ApprovalHandler,
    ApprovalsHandler,
    ChatStreamHandler,
    ExportHandler,
    HistoryHandler,
    PinHandler,
    SessionHandler,
    SessionsHandler,
)
from .console import NodeConsoleHandler
from .lab import (
    LabCatchUpHandler,
    LabChecksHandler,
    LabEventsHandler,
    LabExerciseHandler,
    LabExercisesHandler,
    LabGiveUpHandler,
    LabHandler,
    LabStageHandler,
)
from .notebooks import NotebookProjectsHandler
from .openapi import OpenAPIHandler
from .projects import (
    ProjectCloseHandler,
    ProjectHandler,
    ProjectOpenHandler,
    ProjectsHandler,
    TopologyHandler,
)
from .runs import RunAbortHandler, RunApprovalHandler, RunApprovalsHandler
from .settings import LLMConfigHandler, ReloadSkillsHandler
from .status import StatusHandler
from .tools import ToolRunHandler, ToolsHandler

_PROJECT = r"/copilot/projects/(?P<project_id>[^/]+)"
_SESSION = _PROJECT + r"/chat/sessions/(?P<session_id>[^/]+)"
_RUN = _PROJECT + r"/runs/(?P<run_id>[^/]+)"

default_handlers: list[tuple[str, type[tornado.web.RequestHandler]]] = [
    ("/copilot/status", StatusHandler),
    ("/copilot/openapi.json", OpenAPIHandler),
    ("/copilot/llm-config", LLMConfigHandler),
    ("/copilot/reload/skills", ReloadSkillsHandler),
    ("/copilot/tools", ToolsHandler),
    ("/copilot/notebook-projects", NotebookProjectsHandler),
    ("/copilot/projects", ProjectsHandler),
    (_PROJECT, ProjectHandler),
    (_PROJECT + "/open", ProjectOpenHandler),
    (_PROJECT + "/close", ProjectCloseHandler),
    (_PROJECT + "/topology", TopologyHandler),
    (_PROJECT + r"/nodes/(?P<node>[^/]+)/console", NodeConsoleHandler),
    (_PROJECT + r"/tools/(?P<tool_name>[^/]+)", ToolRunHandler),
    (_PROJECT + "/lab", LabHandler),
    (_PROJECT + "/lab/stage", LabStageHandler),
    (_PROJECT + "/lab/checks", LabChecksHandler),
    (_PROJECT + "/lab/events", LabEventsHandler),
    (_PROJECT + r"/lab/stages/(?P<stage>[^/]+)/catch-up", LabCatchUpHandler),
    (_PROJECT + "/lab/exercises", LabExercisesHandler),
    (_PROJECT + "/lab/exercises/current", LabExerciseHandler),
    (_PROJECT + "/lab/exercises/current/give-up", LabGiveUpHandler),
    (_RUN + "/abort", RunAbortHandler),
    (_RUN + "/approvals", RunApprovalsHandler),
    (_RUN + r"/approvals/(?P<approval_id>[^/]+)", RunApprovalHandler),
    (_PROJECT + "/chat/stream", ChatStreamHandler),
    (_PROJECT + "/chat/sessions", SessionsHandler),
    (_SESSION, SessionHandler),
    (_SESSION + "/history", HistoryHandler),
    (_SESSION + "/abort", AbortHandler),
    (_SESSION + "/pin", PinHandler),
    (_SESSION + "/export", ExportHandler),
    (_SESSION + "/approvals", ApprovalsHandler),
    (_SESSION + r"/approvals/(?P<approval_id>[^/]+)", ApprovalHandler),
]

__all__ = ["default_handlers"]
