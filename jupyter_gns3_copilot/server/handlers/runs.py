"""The run routes, under `{base_url}copilot/projects/{id}/runs/{run_id}/`.

A run is a direct tool run (`POST .../tools/{tool_name}`) or a lab check (`POST
.../lab/checks`), named by its request's `run_id`; it is no chat session, and lives as
long as its request. These routes know the caller's runs in progress only: any other id
(a chat session's, a run that is over, another user's) is 404 with a JSON message.
"""

from __future__ import annotations

import tornado.web
from jupyter_server.auth.decorator import authorized

from ..errors import ErrorAnswer, already_decided, not_found
from .base import CopilotHandler


def _run_not_found(run_id: str) -> ErrorAnswer:
    return not_found(
        f"No run {run_id!r} of yours is going on (a chat session is not a run).",
        type="RunNotFound",
    )


class RunAbortHandler(CopilotHandler):
    """`POST .../runs/{run_id}/abort`: stop the caller's run: `{"status": "ok",
    "run_id"}`, and the run's stream ends with `abort` and `done`. 404 when no such run of
    the caller's is going on."""

    @tornado.web.authenticated
    @authorized
    async def post(self, project_id: str, run_id: str) -> None:
        from ..responses import RunAbortAnswer

        self.project_id_from(project_id)
        if not self.copilot.tool_runs().abort(run_id, self.user_id):
            raise _run_not_found(run_id)
        self.write_json(RunAbortAnswer(status="ok", run_id=run_id))


class RunApprovalsHandler(CopilotHandler):
    """`GET .../runs/{run_id}/approvals`: the approval requests the caller's run waits
    for, `[{approval_id, tool_call_id, tool_name, tool_input, summary, asked_at,
    expires_at}]`. 404 when no such run of the caller's is going on."""

    @tornado.web.authenticated
    @authorized
    async def get(self, project_id: str, run_id: str) -> None:
        from ..responses import PendingApproval

        self.project_id_from(project_id)
        pending = self.copilot.tool_runs().pending(run_id, self.user_id)
        if pending is None:
            raise _run_not_found(run_id)
        self.write_json(
            [PendingApproval.of(request).model_dump(mode="json") for request in pending]
        )


class RunApprovalHandler(CopilotHandler):
    """`POST .../runs/{run_id}/approvals/{approval_id}` with `{"decision": "approve" |
    "reject", "comment"?}`: the run's stream takes the decision and goes on; the answer is
    200 `{"status": "ok", "approval_id", "decision"}`. 400 bad body, 404 no such approval
    of a run of the caller's, 409 already decided (or timed out)."""

    @tornado.web.authenticated
    @authorized
    async def post(self, project_id: str, run_id: str, approval_id: str) -> None:
        from ...agent.approval import ApprovalDecision
        from ..responses import DecisionTaken
        from ..schemas import ApprovalDecisionRequest

        self.project_id_from(project_id)
        body = self.body_as(ApprovalDecisionRequest)
        decision = ApprovalDecision(decision=body.decision, comment=body.comment)
        taken = self.copilot.tool_runs().decide(run_id, approval_id, self.user_id, decision)
        if taken is None:
            raise not_found(
                f"Approval {approval_id!r} not found in run {run_id!r}.",
                type="ApprovalNotFound",
            )
        if not taken:
            raise already_decided(approval_id)
        self.write_json(DecisionTaken(status="ok", approval_id=approval_id, decision=body.decision))
