"""Reliability: property-based fuzz of every copilot route's body, path and
query parameters, with every verb, against a real Jupyter server subprocess with the
extension, the local GNS3 lab and the scripted model (a TEST DOUBLE of the OpenAI API).

Property: no answer is >= 500 and no traceback reaches the server log. Hypothesis runs
derandomized (the same examples on every run, no example database) with a bounded
`max_examples`; the test prints how many requests it sent and how many were >= 500.
The very deep JSON bodies and the oversized body are explicit cases below the fuzz
(too deep -> 400 naming the depth, over 1 MB -> 413).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jupyter_gns3_copilot.testing.local_stack import JupyterServer, ModelEndpoint
from jupyter_gns3_copilot.testing.scripted_llm import ScriptedLLM

pytestmark = [pytest.mark.reliability, pytest.mark.lab, pytest.mark.slow]

FUZZ_EXAMPLES = 600
"""Requests per fuzz test (derandomized: the same ones on every run)."""
REQUEST_TIMEOUT = 60.0
VERBS = ("GET", "POST", "PUT", "PATCH", "DELETE")

# Route templates ({p} a project id, {s} a session id, {t} a tool name) and their verbs.
ROUTES = {
    "copilot/status": ("GET",),
    "copilot/openapi.json": ("GET",),
    "copilot/llm-config": ("GET", "PUT"),
    "copilot/reload/skills": ("POST",),
    "copilot/tools": ("GET",),
    "copilot/projects": ("GET",),
    "copilot/projects/{p}": ("DELETE",),
    "copilot/projects/{p}/open": ("POST",),
    "copilot/projects/{p}/close": ("POST",),
    "copilot/projects/{p}/topology": ("GET",),
    "copilot/projects/{p}/tools/{t}": ("POST",),
    "copilot/projects/{p}/chat/stream": ("POST",),
    "copilot/projects/{p}/chat/sessions": ("GET",),
    "copilot/projects/{p}/chat/sessions/{s}": ("PATCH", "DELETE"),
    "copilot/projects/{p}/chat/sessions/{s}/history": ("GET",),
    "copilot/projects/{p}/chat/sessions/{s}/abort": ("POST",),
    "copilot/projects/{p}/chat/sessions/{s}/pin": ("PUT", "DELETE"),
    "copilot/projects/{p}/chat/sessions/{s}/export": ("GET",),
}
DESTRUCTIVE = {("DELETE", "copilot/projects/{p}"), ("POST", "copilot/projects/{p}/close")}
"""Never sent with the real project's id (the fuzz keeps its project)."""
BODY_KEYS = (
    "message",
    "session_id",
    "stream",
    "temperature",
    "mode",
    "max_iterations",
    "max_tool_calls",
    "max_execution_time_seconds",
    "copilot_mode",
    "title",
    "arguments",
    "devices",
    "commands",
    "api_key",
    "base_url",
    "model",
    "user_id",
)
TOOL_NAMES = ("get_topology", "run_show_commands", "run_vpcs_commands", "start_nodes")


@dataclass
class Tally:
    """What the fuzz sent and what came back."""

    requests: int = 0
    statuses: dict[int, int] = field(default_factory=dict)
    server_errors: list[str] = field(default_factory=list)


@dataclass
class FuzzTarget:
    server: JupyterServer
    client: httpx.Client
    project_id: str
    session_id: str
    tally: Tally = field(default_factory=Tally)
    _log_offset: int = 0

    def new_tracebacks(self) -> str:
        """Log text since the last call, if it holds a traceback ("" otherwise)."""
        with open(self.server.log_path, "rb") as log:
            log.seek(self._log_offset)
            text = log.read().decode("utf-8", errors="replace")
            self._log_offset = log.tell()
        return text if "Traceback" in text else ""

    def send(self, method: str, path: str, body: bytes | None, params: dict[str, str]) -> int:
        """One request; its status (asserting < 500 and no traceback logged)."""
        self.tally.requests += 1
        response = self.client.request(method, path, content=body, params=params)
        response.read()
        self.tally.statuses[response.status_code] = (
            self.tally.statuses.get(response.status_code, 0) + 1
        )
        what = f"{method} {path} {params} body={(body or b'')[:200]!r}"
        traceback = self.new_tracebacks()
        if response.status_code >= 500:
            self.tally.server_errors.append(f"{response.status_code} {what}")
        assert response.status_code < 500, f"{what} -> {response.status_code} {response.text}"
        assert not traceback, f"{what} logged a traceback:\n{traceback[-3000:]}"
        return response.status_code


@pytest.fixture(scope="module")
def fuzz_target(
    gns3_lab: Any, gns3_http: httpx.Client, tmp_path_factory: Any
) -> Iterator[FuzzTarget]:
    """A Jupyter server on the lab with one opened project holding one chat session."""
    from jupyter_gns3_copilot.testing.scripted_llm import text

    created = gns3_http.post("/v3/projects", json={"name": f"fuzz-{uuid.uuid4().hex[:8]}"})
    project_id = created.json()["project_id"]
    work_dir: Path = tmp_path_factory.mktemp("fuzz-server")
    with ScriptedLLM([text("Hello.", when={"tools": True})]) as llm:
        server = JupyterServer(gns3_lab, ModelEndpoint.scripted_model(llm), work_dir)
        try:
            server.start()
            with httpx.Client(
                base_url=server.url,
                headers={"Authorization": f"token {server.token}"},
                timeout=REQUEST_TIMEOUT,
                trust_env=False,
            ) as client:
                turn = client.post(
                    f"copilot/projects/{project_id}/chat/stream",
                    json={"message": "hi", "stream": False},
                )
                assert turn.status_code == 200, turn.text
                target = FuzzTarget(server, client, project_id, turn.json()["session_id"])
                target.new_tracebacks()
                yield target
            print(
                f"\nfuzz module (with the deep and oversized bodies): "
                f"{target.tally.requests} requests, "
                f"{len(target.tally.server_errors)} responses >= 500; by status: "
                f"{dict(sorted(target.tally.statuses.items()))}"
            )
        finally:
            server.stop()
            gns3_http.post(f"/v3/projects/{project_id}/close")
            gns3_http.delete(f"/v3/projects/{project_id}")


# -- strategies ---------------------------------------------------------------------------------

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=40)
)
json_values = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.sampled_from(BODY_KEYS) | st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=12,
)


def nested(depth: int, kind: str) -> bytes:
    """`depth` nested arrays or objects as JSON text."""
    if kind == "array":
        return ("[" * depth + "]" * depth).encode()
    return ('{"a":' * depth + "1" + "}" * depth).encode()


@st.composite
def bodies(draw: st.DrawFn) -> bytes | None:
    """A request body: none, JSON (a route-shaped object with wrong or odd values, or any
    value), nesting up to a few hundred deep, a huge string, or bytes that are not UTF-8
    or not JSON."""
    kind = draw(
        st.sampled_from(["none", "object", "any", "nested", "huge", "bytes", "text", "nonutf8"])
    )
    if kind == "none":
        return None
    if kind == "object":
        keys = draw(st.lists(st.sampled_from(BODY_KEYS), max_size=4, unique=True))
        obj = {key: draw(json_values) for key in keys}
        return json.dumps(obj).encode()
    if kind == "any":
        return json.dumps(draw(json_values), ensure_ascii=draw(st.booleans())).encode()
    if kind == "nested":
        depth = draw(st.integers(min_value=1, max_value=400))
        value = nested(depth, draw(st.sampled_from(["array", "object"])))
        return b'{"arguments": ' + value + b"}" if draw(st.booleans()) else value
    if kind == "huge":
        size = draw(st.integers(min_value=10_000, max_value=200_000))
        key = draw(st.sampled_from(BODY_KEYS))
        return json.dumps({key: draw(st.characters(codec="utf-8")) * size}).encode()
    if kind == "text":
        return draw(st.text(max_size=200)).encode("utf-8", errors="surrogatepass")
    if kind == "nonutf8":
        return b'{"message": "' + draw(st.binary(min_size=1, max_size=50)) + b'\xff\xfe"}'
    return draw(st.binary(max_size=300))


def segments(real: str) -> st.SearchStrategy[str]:
    """A path segment: the real id, a random UUID, any text or bytes (percent-encoded)."""
    return (
        st.just(real)
        | st.uuids().map(str)
        | st.text(min_size=1, max_size=300).map(
            lambda s: quote(s.encode("utf-8", "surrogatepass"), safe="")
        )
        | st.binary(min_size=1, max_size=40).map(lambda b: quote(b, safe=""))
        | st.sampled_from(["..", "%2e%2e", "%00", "%2F", "null", "-1", "a" * 5000])
    )


@st.composite
def requests(draw: st.DrawFn, target: FuzzTarget) -> tuple[str, str, bytes | None, dict[str, str]]:
    route = draw(st.sampled_from(sorted(ROUTES)))
    # Mostly the route's own verbs (their handlers are what is fuzzed), sometimes any.
    method = draw(st.sampled_from(ROUTES[route]) | st.sampled_from(VERBS))
    project = draw(segments(target.project_id))
    if (method, route) in DESTRUCTIVE and project == target.project_id:
        project = str(uuid.uuid4())
    path = route.format(
        p=project,
        s=draw(segments(target.session_id)),
        t=draw(st.sampled_from(TOOL_NAMES) | segments("get_topology")),
    )
    params = draw(
        st.dictionaries(
            st.sampled_from(["limit", "format", "stream", "mode", "x"]),
            st.text(max_size=30) | st.integers().map(str),
            max_size=2,
        )
    )
    return method, path, draw(bodies()), params


def test_fuzzed_requests_never_get_a_server_error(fuzz_target: FuzzTarget) -> None:
    """Given any verb on any route with fuzzed path segments, query and body; then the
    answer is below 500 and the server logs no traceback."""

    @settings(
        max_examples=FUZZ_EXAMPLES,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(request=requests(fuzz_target))
    def check(request: tuple[str, str, bytes | None, dict[str, str]]) -> None:
        fuzz_target.send(*request)

    tally = fuzz_target.tally
    before = tally.requests
    check()
    print(
        f"\nfuzz: {tally.requests - before} requests tried, "
        f"{len(tally.server_errors)} responses >= 500"
    )
    assert tally.server_errors == []


@pytest.mark.parametrize(
    ("route", "body"),
    [
        pytest.param("chat/stream", nested(1000, "array"), id="array-1000-deep"),
        pytest.param("chat/stream", nested(100_000, "array"), id="array-100000-deep"),
        pytest.param("chat/stream", nested(5_000, "object"), id="object-5000-deep"),
        pytest.param(
            "tools/run_show_commands",
            b'{"arguments": ' + nested(5_000, "array") + b"}",
            id="tool-arguments-5000-deep",
        ),
        pytest.param(
            "chat/stream",
            json.dumps({"message": "x" * (2 * 1024 * 1024)}).encode(),
            id="body-of-2MB",
        ),
    ],
)
def test_bounded_json_bodies_are_refused_with_a_4xx(
    fuzz_target: FuzzTarget, route: str, body: bytes
) -> None:
    """Given a body nested deeper than the parser's recursion limit, or larger than 1 MB;
    then the answer is 400 (depth) or 413 (size), and no traceback is logged."""
    status = fuzz_target.send(
        "POST", f"copilot/projects/{fuzz_target.project_id}/{route}", body, {}
    )
    assert status == (413 if len(body) > 1024 * 1024 else 400)
