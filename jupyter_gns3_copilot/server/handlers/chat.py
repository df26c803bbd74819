"""The chat routes, under `{base_url}copilot/projects/{id}/chat/`.

Every route acts on the caller's sessions only: a session of another user is 404, as one
that does not exist. The stream needs the project opened in GNS3 (409 otherwise); the
session routes read the copilot's own data and work while the project is closed or GNS3
is down (so a history stays readable).
"""

from __future__ import annotations

import asyncio
import uuid
from typing import TYPE_CHECKING
from urllib.parse import quote

import tornado.web
from jupyter_server.auth.decorator import authorized

from ..errors import ErrorAnswer, already_decided, auto_approval_forbidden, not_found
from .base import CopilotHandler, EventStreamHandler

if TYPE_CHECKING:
    from ...chat.service import AgentService
    from ...chat.session_read import SessionRead

DEFAULT_LIST_LIMIT = 100


def _session_not_found(session_id: str) -> ErrorAnswer:
    return not_found(
        f"Chat session {session_id!r} not found in this project.", type="SessionNotFound"
    )


class ChatStreamHandler(EventStreamHandler):
    """`POST .../chat/stream`: one turn of the copilot.

    Body: `ChatRequest` (`server.schemas`). Answers SSE events (`events.py`: content,
    tool_call, tool_start, progress, tool_end, error, abort, heartbeat, done; each with
    `session_id`; the stream opens with a heartbeat at once), or with `"stream": false`
    one JSON summary (`server.turn_result`).
    A change the approval policy names pauses the turn with `approval_required` (see
    `ApprovalHandler`); a client leaving then detaches, the request stays pending.
    Refused before streaming: 400 bad input (field and rule named), 403 `"approval":
    "auto"` where `allow_auto_approval` is off, 404 a session of another user, 409 the
    project is not opened / the session is still answering / no model is configured
    (`error.setting` names what to set), 502 GNS3 unreachable.
    """

    @tornado.web.authenticated
    @authorized
    async def post(self, project_id: str) -> None:
        from ..llm_config import effective_config
        from ..schemas import ChatRequest

        app = self.copilot
        user_id = self.user_id
        project_id = self.project_id_from(project_id)
        request = self.body_as(ChatRequest)
        if request.approval == "auto" and not app.allow_auto_approval:
            raise auto_approval_forbidden()
        config = effective_config(app.llm_admin(), app.llm_store().get(user_id))
        mode = config.copilot_mode
        if request.copilot_mode is not None:
            mode = app.llm_admin().check_mode(request.copilot_mode)
        llm = config.model_settings()
        session_id = request.session_id or str(uuid.uuid4())
        new = request.session_id is None
        opened = app.agents().opened(project_id)
        # The turn's reads run alongside the project check: the topology (sharing its
        # project lookup, so one GNS3 round trip before the model call rather than two),
        # the session's row and its latest checkpoint.
        topology = opened.engine.read_topology() if opened is not None else None
        reads = opened.engine.read_session(session_id, new=new) if opened is not None else None
        objectives = asyncio.ensure_future(self.turn_objectives(project_id))
        try:
            await self.opened_project(project_id)
            agent = await self.project_agent(project_id, create=True)
            assert agent is not None
            if agent is not opened:
                for started in (topology, reads):
                    if started is not None:
                        started.close()
                topology, reads = None, agent.engine.read_session(session_id, new=new)
            assert reads is not None
            if not new:
                await self.check_session(agent, reads)
        except BaseException:
            objectives.cancel()
            for started in (topology, reads):
                if started is not None:
                    started.close()
            raise
        events = agent.stream_chat(
            request.message,
            session_id=session_id,
            user_id=user_id,
            llm=llm,
            title_llm=config.title_model_settings(),
            options=request.turn_options(mode),
            heartbeat_interval=app.heartbeat_interval or None,
            topology=topology,
            session=reads,
            objectives=await objectives,
        )
        with app.project_users.using(project_id, user_id):
            await self.relay(
                events,
                session_id=session_id,
                stream=request.stream,
                abort=lambda: agent.engine.turns.request_abort(session_id),
                detach=lambda: agent.approvals.awaits_decision(session_id),
            )

    async def check_session(self, agent: AgentService, reads: SessionRead) -> None:
        """404 for another user's session, 409 while the session is still answering."""
        session_id = reads.session_id
        owner = await reads.row()
        if owner is not None and owner.user_id != self.user_id:
            raise _session_not_found(session_id)
        if agent.engine.turns.is_running(session_id):
            raise ErrorAnswer(
                409,
                f"Session {session_id} is still answering a message: wait for it to "
                "finish, or abort it, before sending another.",
                type="SessionBusy",
            )


class SessionsHandler(CopilotHandler):
    """`GET .../chat/sessions?limit=100[&user_id=<self>]`: the caller's sessions
    (`ChatSession` list), pinned first, then most recently updated. `user_id` of anyone else:
    403."""

    @tornado.web.authenticated
    @authorized
    async def get(self, project_id: str) -> None:
        project_id = self.project_id_from(project_id)
        user_id = self.user_id
        asked = self.get_query_argument("user_id", None)
        if asked is not None and asked != user_id:
            raise ErrorAnswer(
                403,
                "You can only list your own chat sessions (user_id must be yours or left out).",
                type="Forbidden",
                field="user_id",
            )
        limit = self.query_int("limit", DEFAULT_LIST_LIMIT)
        agent = await self.project_agent(project_id, create=False)
        sessions = (
            []
            if agent is None
            else await agent.sessions.list_sessions(user_id=user_id, limit=limit)
        )
        self.write_json([session.model_dump(mode="json") for session in sessions])


class _SessionHandler(CopilotHandler):
    async def agent_for(self, project_id: str, session_id: str) -> AgentService:
        """The project's service; 404 if the project has no chat data."""
        agent = await self.project_agent(self.project_id_from(project_id), create=False)
        if agent is None:
            raise _session_not_found(session_id)
        return agent


class SessionHandler(_SessionHandler):
    """`PATCH .../chat/sessions/{session_id}` `{"title"}` (1-255 characters): the renamed
    session. `DELETE`: the session and its checkpoints, 204 (409 while it is streaming)."""

    @tornado.web.authenticated
    @authorized
    async def patch(self, project_id: str, session_id: str) -> None:
        from ..schemas import RenameRequest

        request = self.body_as(RenameRequest)
        agent = await self.agent_for(project_id, session_id)
        session = await agent.sessions.rename_session(
            session_id, request.title, user_id=self.user_id
        )
        if session is None:
            raise _session_not_found(session_id)
        self.write_json(session.model_dump(mode="json"))

    @tornado.web.authenticated
    @authorized
    async def delete(self, project_id: str, session_id: str) -> None:
        agent = await self.agent_for(project_id, session_id)
        if not await agent.sessions.delete_session(session_id, user_id=self.user_id):
            raise _session_not_found(session_id)
        self.set_status(204)
        self.finish()


class HistoryHandler(_SessionHandler):
    """`GET .../chat/sessions/{session_id}/history?limit=100`: the session's
    `ConversationHistory` (the last `limit` messages in the OpenAI format); each tool
    result's metadata has its `reading` (summary, outcome, note) as `tool_end` gave it."""

    @tornado.web.authenticated
    @authorized
    async def get(self, project_id: str, session_id: str) -> None:
        from ...agent.history import with_readings

        limit = self.query_int("limit", DEFAULT_LIST_LIMIT)
        agent = await self.agent_for(project_id, session_id)
        history = await agent.sessions.get_history(session_id, user_id=self.user_id, limit=limit)
        if history is None:
            raise _session_not_found(session_id)
        history.messages = with_readings(history.messages)
        self.write_json(history)


EXPORT_MESSAGE_LIMIT = 1_000_000
"""Messages read for an export: the whole session."""


class ExportHandler(_SessionHandler):
    """`GET .../chat/sessions/{session_id}/export?format=ipynb|md` (default ipynb): the
    session as a notebook or Markdown file (`session_export`), as an attachment named
    after its title. 400 for another format, 404 for an unknown or another user's
    session. The project's name comes from GNS3 when it answers, else its id is used."""

    @tornado.web.authenticated
    @authorized
    async def get(self, project_id: str, session_id: str) -> None:
        from ...gns3 import GNS3Error
        from ..errors import bad_input
        from ..session_export import EXPORT_FORMATS, MEDIA_TYPES, export_session

        export_format = self.get_query_argument("format", "ipynb")
        if export_format not in EXPORT_FORMATS:
            raise bad_input(
                "format", f"must be one of {', '.join(EXPORT_FORMATS)}, got {export_format!r}"
            )
        agent = await self.agent_for(project_id, session_id)
        history = await agent.sessions.get_history(
            session_id, user_id=self.user_id, limit=EXPORT_MESSAGE_LIMIT
        )
        if history is None:
            raise _session_not_found(session_id)
        project_id = self.project_id_from(project_id)
        try:
            project_name = (await self.copilot.project_lookup()(project_id)).name
        except GNS3Error:
            project_name = project_id
        filename, body = export_session(history, project_name, project_id, export_format)
        self.set_header("Content-Disposition", content_disposition(filename))
        self.finish(body, set_content_type=MEDIA_TYPES[export_format])


def content_disposition(filename: str) -> str:
    """An attachment header: an ASCII fallback name and the UTF-8 name (RFC 6266)."""
    fallback = filename.encode("ascii", "replace").decode().replace("?", "_")
    return f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{quote(filename, safe='')}"


class AbortHandler(CopilotHandler):
    """`POST .../chat/sessions/{session_id}/abort`: stop the session's running turn.
    `{"status": "ok", "session_id"}`; `{"status": "not_running", ...}` when it is the
    caller's session but nothing runs; 404 otherwise. Deprecated for runs: the id of a
    caller's run (a direct tool run, a lab check) stops it here too, for older clients;
    `POST .../runs/{run_id}/abort` is its route."""

    @tornado.web.authenticated
    @authorized
    async def post(self, project_id: str, session_id: str) -> None:
        from ..responses import AbortAnswer

        project_id = self.project_id_from(project_id)
        user_id = self.user_id
        if self.copilot.tool_runs().abort(session_id, user_id):
            self.write_json(AbortAnswer(status="ok", session_id=session_id))
            return
        agent = await self.project_agent(project_id, create=False)
        if agent is None:
            raise _session_not_found(session_id)
        if await agent.sessions.abort_session(session_id, user_id=user_id):
            self.write_json(AbortAnswer(status="ok", session_id=session_id))
            return
        if await agent.sessions.get_session(session_id, user_id=user_id) is None:
            raise _session_not_found(session_id)
        self.write_json(AbortAnswer(status="not_running", session_id=session_id))


class PinHandler(_SessionHandler):
    """`PUT .../chat/sessions/{session_id}/pin` pins, `DELETE` unpins: the session."""

    async def _pin(self, project_id: str, session_id: str, pinned: bool) -> None:
        agent = await self.agent_for(project_id, session_id)
        session = await agent.sessions.pin_session(session_id, pinned, user_id=self.user_id)
        if session is None:
            raise _session_not_found(session_id)
        self.write_json(session.model_dump(mode="json"))

    @tornado.web.authenticated
    @authorized
    async def put(self, project_id: str, session_id: str) -> None:
        await self._pin(project_id, session_id, True)

    @tornado.web.authenticated
    @authorized
    async def delete(self, project_id: str, session_id: str) -> None:
        await self._pin(project_id, session_id, False)


class ApprovalsHandler(_SessionHandler):
    """`GET .../chat/sessions/{session_id}/approvals`: the session's approval requests
    waiting for a decision, `[{approval_id, tool_call_id, tool_name, tool_input, summary,
    asked_at, expires_at}]` (404 for no such session of the caller's). Deprecated for
    runs: a caller's run id answers its approvals here too, for older clients;
    `GET .../runs/{run_id}/approvals` is its route."""

    @tornado.web.authenticated
    @authorized
    async def get(self, project_id: str, session_id: str) -> None:
        from ..responses import PendingApproval

        pending = self.copilot.tool_runs().pending(session_id, self.user_id)
        if pending is None:
            agent = await self.agent_for(project_id, session_id)
            if await agent.sessions.get_session(session_id, user_id=self.user_id) is None:
                raise _session_not_found(session_id)
            pending = await agent.approvals.pending_approvals(session_id, user_id=self.user_id)
        self.write_json(
            [PendingApproval.of(request).model_dump(mode="json") for request in pending]
        )


class ApprovalHandler(EventStreamHandler):
    """`POST .../chat/sessions/{session_id}/approvals/{approval_id}` with
    `{"decision": "approve" | "reject", "comment"?}`.

    A stream of this server waits for it (a chat turn's; deprecated: a direct tool run's,
    named by its run id, whose route is `POST .../runs/{run_id}/approvals/{approval_id}`):
    200 `{"status": "ok", "approval_id", "decision"}` and that stream goes on. None does
    (its client left, or the server restarted): the answer is the rest of the turn as SSE
    (`approval_resolved` first; a request past `approval_timeout` resolves as
    "timeout"). 400 bad body, 404 unknown id or another
    user's session, 409 already decided.
    """

    @tornado.web.authenticated
    @authorized
    async def post(self, project_id: str, session_id: str, approval_id: str) -> None:
        from ...agent.approval import ApprovalDecision
        from ..llm_config import effective_config
        from ..schemas import ApprovalDecisionRequest

        app = self.copilot
        user_id = self.user_id
        project_id = self.project_id_from(project_id)
        body = self.body_as(ApprovalDecisionRequest)
        decision = ApprovalDecision(decision=body.decision, comment=body.comment)
        taken = app.tool_runs().decide(session_id, approval_id, user_id, decision)
        if taken is not None:
            if not taken:
                raise already_decided(approval_id)
            self.write_json(
                {"status": "ok", "approval_id": approval_id, "decision": decision.decision}
            )
            return
        agent = await self.project_agent(project_id, create=False)
        state = None
        if agent is not None:
            state = await agent.approvals.approval_state(session_id, approval_id, user_id=user_id)
        if agent is None or state is None:
            raise not_found(
                f"Approval {approval_id!r} not found in chat session {session_id!r}.",
                type="ApprovalNotFound",
            )
        if state == "live" and agent.approvals.decide(approval_id, decision):
            self.write_json(
                {"status": "ok", "approval_id": approval_id, "decision": decision.decision}
            )
            return
        if state != "pending" or agent.engine.turns.is_running(session_id):
            raise already_decided(approval_id)
        config = effective_config(app.llm_admin(), app.llm_store().get(user_id))
        events = agent.approvals.resume_chat(
            session_id,
            approval_id,
            decision,
            user_id=user_id,
            llm=config.model_settings(),
            title_llm=config.title_model_settings(),
            heartbeat_interval=app.heartbeat_interval or None,
            objectives=await self.turn_objectives(project_id),
        )
        with app.project_users.using(project_id, user_id):
            await self.relay(
                events,
                session_id=session_id,
                stream=True,
                abort=lambda: agent.engine.turns.request_abort(session_id),
                detach=lambda: agent.approvals.awaits_decision(session_id),
            )
