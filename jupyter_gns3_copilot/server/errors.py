"""Every failure of a request as an HTTP status and a JSON body (never an HTML traceback).

The body is `{"error": {"message": str, "type": str, ...}}` with, where they apply,
`field` and `rule` (bad input: which field, which rule it broke; `errors` lists them all),
`setting` (the configuration to fix) and `url` (the GNS3 URL that failed). What only the
administrator needs (e.g. which setting refused a student's mode) is the error's
`log_detail`: written to the server log, never into the body.

| cause | status |
| --- | --- |
| bad input (body, query, path) | 400 |
| a session, project, tool or lab stage that does not exist (or is another user's) | 404 |
| `user_id` of another user; deleting a project without the mode and the admin setting | 403 |
| GNS3 answering 403 (in hub mode: a project outside the student's pool) | 403 |
| project not opened, session still streaming, model not configured, GNS3 refused | 409 |
| a lab file that is not valid (every problem with its file, line and field) | 422 |
| closing or deleting a project other users are using | 409 |
| a request body over `MAX_BODY_BYTES` | 413 |
| GNS3 unreachable, timing out, refusing our credentials, failing | 502 |
| the extension's configuration is invalid (`server.configuration`) | 503 |
| in hub mode, no session from the hub service | 503 |
| in hub mode, the hub service refusing a lab request (its status), or not answering it | 4xx, 502 |
| anything else | 500 (the traceback goes to the server log only) |

Core errors are recognised by class, imported here only when an error is mapped, so the
extension loads without them.
"""

from __future__ import annotations

import json
import re
from http import HTTPStatus
from itertools import accumulate
from typing import Any

MAX_BODY_BYTES = 1_000_000
"""The largest request body any route accepts (1 MB): 413 above it."""
MAX_JSON_DEPTH = 32
"""The deepest nesting of arrays and objects a body may have (the API's bodies need a few)."""

_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_BRACKETS = bytes(range(256)).translate(None, b"[]{}")


class ErrorAnswer(Exception):
    """An error answer the handlers raise on purpose: its status and JSON body.

    The clients' view of the same answer is `ApiError` (the kernel's and the browser's).
    """

    def __init__(
        self,
        status: int,
        message: str,
        *,
        type: str,
        field: str | None = None,
        rule: str | None = None,
        setting: str | None = None,
        url: str | None = None,
        errors: list[dict[str, Any]] | None = None,
        log_detail: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type
        self.log_detail = log_detail
        self.details = {
            "field": field,
            "rule": rule,
            "setting": setting,
            "url": url,
            "errors": errors,
        }

    @property
    def expected(self) -> bool:
        """Whether this is an answer, not a bug (4xx, 502, 503: no traceback in the log)."""
        return self.status < 500 or self.status in (
            HTTPStatus.BAD_GATEWAY,
            HTTPStatus.SERVICE_UNAVAILABLE,
        )

    def body(self) -> dict[str, Any]:
        """The JSON body: an `ErrorBody`, its fields that are None left out."""
        from .responses import ErrorBody, ErrorDetail

        detail = ErrorDetail(message=self.message, type=self.type, **self.details)
        return ErrorBody(error=detail).model_dump(mode="json", exclude_none=True)


def bad_input(field: str, rule: str, *, type: str = "ValidationError") -> ErrorAnswer:
    """400 for one field breaking one rule."""
    return ErrorAnswer(400, f"{field}: {rule}", type=type, field=field, rule=rule)


def not_found(message: str, *, type: str = "NotFound") -> ErrorAnswer:
    """404."""
    return ErrorAnswer(404, message, type=type)


def already_decided(approval_id: str) -> ErrorAnswer:
    """409 for a decision on an approval decided already (or timed out)."""
    return ErrorAnswer(409, f"Approval {approval_id!r} was already decided.", type="AlreadyDecided")


def auto_approval_forbidden() -> ErrorAnswer:
    """403 for `"approval": "auto"` where the administrator does not allow it."""
    return ErrorAnswer(
        403,
        'The administrator does not allow "approval": "auto" here: changes to the '
        "lab wait for your approval (c.GNS3Copilot.allow_auto_approval).",
        type="Forbidden",
        field="approval",
        setting="allow_auto_approval",
    )


def validation_error(exc: Any, *, prefix: tuple[str, ...] = ()) -> ErrorAnswer:
    """400 for a pydantic ValidationError: the first problem in `field`/`rule`, all in
    `errors`. `prefix` is prepended to locations (e.g. ("arguments",))."""
    problems = []
    for error in exc.errors(include_url=False, include_input=False):
        location = ".".join(str(part) for part in (*prefix, *error["loc"])) or "body"
        problems.append({"field": location, "rule": error["msg"]})
    if not problems:
        return bad_input("body", "invalid")
    first = problems[0]
    message = "; ".join(f"{p['field']}: {p['rule']}" for p in problems)
    return ErrorAnswer(
        400,
        f"Invalid request: {message}",
        type="ValidationError",
        field=first["field"],
        rule=first["rule"],
        errors=problems,
    )


def body_too_large(size: int | None = None) -> ErrorAnswer:
    """413 for a body over `MAX_BODY_BYTES` (`size` when known)."""
    told = f" ({size:,} bytes)" if size is not None else ""
    return ErrorAnswer(
        413,
        f"The request body{told} is larger than the {MAX_BODY_BYTES:,} bytes the copilot accepts.",
        type="BodyTooLarge",
        field="body",
        rule=f"at most {MAX_BODY_BYTES:,} bytes",
    )


def nests_deeper_than(raw: bytes, limit: int) -> bool:
    """Whether arrays and objects nest deeper than `limit` in the JSON text `raw` (strings
    skipped), found without parsing it: `json.loads` recurses once per level and fails on
    deep input."""
    brackets = _JSON_STRING.sub(b"", raw).translate(None, _BRACKETS)
    steps = (1 if byte in b"[{" else -1 for byte in brackets)
    return any(depth > limit for depth in accumulate(steps))


def parse_body(raw: bytes, model: type[Any]) -> Any:
    """The request body validated as `model` (an empty body is `{}`); 400 for anything
    else, naming the problem: not JSON, not an object, nested deeper than
    `MAX_JSON_DEPTH`, or a field breaking its rule. 413 above `MAX_BODY_BYTES`."""
    from pydantic import ValidationError

    if len(raw) > MAX_BODY_BYTES:
        raise body_too_large(len(raw))
    if nests_deeper_than(raw, MAX_JSON_DEPTH):
        raise bad_input("body", f"must not nest arrays and objects deeper than {MAX_JSON_DEPTH}")
    text = raw.decode("utf-8", errors="replace").strip() if raw else ""
    try:
        data = json.loads(text) if text else {}
    except json.JSONDecodeError as exc:
        raise bad_input(
            "body", f"must be a JSON object ({exc.msg} at character {exc.pos})"
        ) from None
    except ValueError as exc:  # a number of more digits than Python converts
        raise bad_input("body", f"must be a JSON object the server can read ({exc})") from None
    if not isinstance(data, dict):
        raise bad_input("body", f"must be a JSON object, not {type(data).__name__}")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise validation_error(exc) from exc


def _gns3_error(exc: Exception) -> ErrorAnswer | None:
    from ..gns3 import (
        GNS3AuthError,
        GNS3Conflict,
        GNS3Error,
        GNS3NotFound,
        GNS3Timeout,
        GNS3Unreachable,
    )

    if not isinstance(exc, GNS3Error):
        return None
    name = type(exc).__name__
    if isinstance(exc, GNS3Unreachable):
        return ErrorAnswer(502, str(exc), type=name, setting="gns3_url", url=exc.url)
    if isinstance(exc, GNS3Timeout):
        return ErrorAnswer(
            502,
            f"{exc} Check that GNS3 is healthy, or raise c.GNS3Copilot.gns3_timeout.",
            type=name,
            setting="gns3_timeout",
            url=exc.url,
        )
    if isinstance(exc, GNS3AuthError) and exc.status == 403:
        # GNS3 knows who this is and refuses: in hub mode, a project outside the student's pool.
        return ErrorAnswer(403, str(exc), type=name, url=exc.url)
    if isinstance(exc, GNS3AuthError):
        setting = "gns3_token" if "token" in str(exc) else "gns3_password"
        return ErrorAnswer(502, str(exc), type=name, setting=setting, url=exc.url)
    if isinstance(exc, GNS3NotFound):
        return ErrorAnswer(404, str(exc), type=name)
    if isinstance(exc, GNS3Conflict):
        return ErrorAnswer(409, str(exc), type=name)
    return ErrorAnswer(502, str(exc), type=name, url=exc.url)


def _hub_error(exc: Exception) -> ErrorAnswer | None:
    """The hub service's refusal as it gave it (in hub mode the lab routes forward to it),
    503 when it is slow, 502 when it cannot be asked."""
    from ..classroom.client import HubServiceError, HubServiceRefused, HubServiceSlow

    if isinstance(exc, HubServiceRefused) and exc.status < 500:
        return ErrorAnswer(
            exc.status,
            exc.detail,
            type=exc.error_type,
            field=exc.field,
            rule=exc.rule,
            errors=exc.errors,
        )
    if isinstance(exc, HubServiceSlow):
        return ErrorAnswer(503, str(exc), type="HubServiceSlow")
    if isinstance(exc, HubServiceError):
        return ErrorAnswer(502, str(exc), type=type(exc).__name__, setting="hub_service_url")
    return None


def to_error_answer(exc: BaseException) -> ErrorAnswer:
    """The answer for `exc` (see the module docstring)."""
    import tornado.web

    if isinstance(exc, ErrorAnswer):
        return exc
    if isinstance(exc, tornado.web.HTTPError):
        message = exc.log_message % exc.args if exc.log_message and exc.args else exc.log_message
        status = exc.status_code
        return ErrorAnswer(
            status, message or exc.reason or HTTPStatus(status).phrase, type="HTTPError"
        )
    if not isinstance(exc, Exception):
        return ErrorAnswer(500, "The request was interrupted.", type=type(exc).__name__)
    gns3 = _gns3_error(exc)
    if gns3 is not None:
        return gns3
    hub = _hub_error(exc)
    if hub is not None:
        return hub

    from pydantic import ValidationError

    from ..agent.abort import SessionBusy
    from ..objectives.errors import (
        ConfirmationNeeded,
        ExerciseRefused,
        LabFileError,
        NoExercise,
        NoLab,
        StageWithoutSnapshot,
        UnknownFault,
        UnknownSelection,
        UnknownStage,
    )
    from ..store import InvalidProjectId, InvalidTitle
    from .llm_config import LLMConfigError, ModelNotConfigured

    name = type(exc).__name__
    if isinstance(exc, ValidationError):
        return validation_error(exc)
    if isinstance(exc, LabFileError):
        problems = [
            {"source": p.source, "line": p.line, "field": p.field, "message": p.message}
            for p in exc.problems
        ]
        first = exc.first
        return ErrorAnswer(422, str(exc), type=name, field=first.field or None, errors=problems)
    if isinstance(exc, NoLab | UnknownStage | UnknownFault | NoExercise):
        return ErrorAnswer(404, str(exc), type=name)
    if isinstance(exc, ExerciseRefused):
        return ErrorAnswer(409, str(exc), type=name)
    if isinstance(exc, UnknownSelection):
        return ErrorAnswer(400, str(exc), type=name)
    if isinstance(exc, StageWithoutSnapshot):
        return ErrorAnswer(409, str(exc), type=name)
    if isinstance(exc, ConfirmationNeeded):
        return ErrorAnswer(400, str(exc), type=name, field="confirm", rule="true to restore")
    if isinstance(exc, LLMConfigError):
        return ErrorAnswer(
            400,
            exc.message or f"{exc.field}: {exc.rule}",
            type="ValidationError",
            field=exc.field,
            rule=exc.rule,
            log_detail=exc.admin_note,
        )
    if isinstance(exc, InvalidProjectId):
        return ErrorAnswer(400, str(exc), type=name, field="project_id", rule="a GNS3 project UUID")
    if isinstance(exc, InvalidTitle):
        return ErrorAnswer(400, str(exc), type=name, field="title", rule="1-255 characters")
    if isinstance(exc, ModelNotConfigured):
        return ErrorAnswer(409, str(exc), type=name, setting=exc.setting)
    if isinstance(exc, SessionBusy):
        return ErrorAnswer(409, str(exc), type=name)
    return ErrorAnswer(
        500,
        f"Internal error ({name}) in the copilot extension; the server log has the details.",
        type=name,
    )
