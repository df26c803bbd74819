"""The tool catalogue and direct tool runs (no model): what powers `%copilot run`."""

from __future__ import annotations

import uuid

import tornado.web
from jupyter_server.auth.decorator import authorized

from ..errors import ErrorAnswer, auto_approval_forbidden, not_found, validation_error
from .base import CopilotHandler, EventStreamHandler


class ToolsHandler(CopilotHandler):
    """`GET copilot/tools`: `[{name, description, parameters, modes, changes_lab}]`, the
    tools in catalogue order with their argument JSON schema and the modes allowing them."""

    @tornado.web.authenticated
    @authorized
    async def get(self) -> None:
        from ...tools import MODE_TOOLS, TOOLS, openai_tool_schema

        catalogue = []
        for name, spec in TOOLS.items():
            function = openai_tool_schema(spec, bounds=True)["function"]
            catalogue.append(
                {
                    **function,
                    "modes": [mode for mode, tools in MODE_TOOLS.items() if name in tools],
                    "changes_lab": spec.changes_lab,
                }
            )
        self.write_json(catalogue)


class ToolRunHandler(EventStreamHandler):
    """`POST copilot/projects/{project_id}/tools/{tool_name}`: run one tool now.

    Body: `ToolRunRequest` (`arguments`, `copilot_mode`, `run_id` (its deprecated old
    name `session_id` is still accepted), `stream`, `approval`). Same mode, command
    policy and approvals as the model's calls. SSE events
    `tool_call`, `approval_required` / `approval_resolved` (a change waiting for the
    caller's decision on the approval route), `tool_start`, `progress`, `tool_end`,
    `abort`, `heartbeat`, `done` (or one JSON summary with `"stream": false`).
    A tool the mode does not allow runs nothing and is answered like any refusal: its
    `tool_end` has the outcome `refused` and a note for the student, as the model's call
    would. Refused before running: 404 unknown tool, 400 invalid arguments (field and
    rule) or a mode the administrator does not allow, 403 `"approval": "auto"` where
    `allow_auto_approval` is off, 409 the project is not opened, the run id is in use, or
    a change that waits for approval was asked with `"stream": false` (the decision needs
    the stream), 502 GNS3 unreachable. The run's routes (`.../runs/{run_id}/abort`,
    `.../runs/{run_id}/approvals`) stop it and decide its approval.
    """

    @tornado.web.authenticated
    @authorized
    async def post(self, project_id: str, tool_name: str) -> None:
        from pydantic import ValidationError

        from ...tools import TOOLS
        from ..llm_config import effective_config
        from ..schemas import ToolRunRequest
        from ..tool_runs import approval_request, run_tool

        app = self.copilot
        user_id = self.user_id
        project_id = self.project_id_from(project_id)
        spec = TOOLS.get(tool_name)
        if spec is None:
            raise not_found(
                f"No tool named {tool_name!r}. Tools: {', '.join(TOOLS)}.", type="ToolNotFound"
            )
        request = self.body_as(ToolRunRequest)
        if request.approval == "auto" and not app.allow_auto_approval:
            raise auto_approval_forbidden()
        mode = effective_config(app.llm_admin(), app.llm_store().get(user_id)).copilot_mode
        if request.copilot_mode is not None:
            mode = app.llm_admin().check_mode(request.copilot_mode)
        try:
            spec.args_model.model_validate(request.arguments)
        except ValidationError as exc:
            raise validation_error(exc, prefix=("arguments",)) from exc
        await self.opened_project(project_id)
        run_id = request.run_id or str(uuid.uuid4())
        runs = app.tool_runs()
        abort = runs.begin(run_id, user_id)
        if abort is None:
            raise ErrorAnswer(409, f"Run {run_id} is already running.", type="SessionBusy")
        try:
            context = app.lab().tool_context(project_id, mode, abort)
            approval = None
            if request.approval != "auto":
                approval = await approval_request(
                    runs, context, tool_name, request.arguments, run_id
                )
            if approval is not None and not request.stream:
                raise ErrorAnswer(
                    409,
                    f"This run changes the lab or a device and waits for your approval "
                    f'({approval.summary}): send it with "stream": true, where the '
                    "approval arrives as approval_required and is decided on the "
                    "run's approval route.",
                    type="ApprovalNeeded",
                )
            events = run_tool(
                context,
                tool_name,
                request.arguments,
                run_id=run_id,
                abort=abort,
                heartbeat_interval=app.heartbeat_interval or None,
                approval=approval,
                runs=runs,
                user_id=user_id,
            )
            with app.project_users.using(project_id, user_id):
                await self.relay(events, session_id=run_id, stream=request.stream, abort=abort.set)
        finally:
            runs.end(run_id, abort)
