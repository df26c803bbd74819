"""Lab objectives through the extension's routes, against the real local GNS3 lab: the lab
as each student sees it, attaching a lab file, checks as SSE and as one report, catch-up.
Several users come from `TokenUsersIdentityProvider`, a TEST identity provider mapping
tokens to user names."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.server import (
    TokenUsersIdentityProvider,
    add_pcs,
    as_user,
    call,
    copilot_app,
    eventually,
    kinds,
    lab_traits,
    model_traits,
    open_stream,
    server_config,
    watch_stream,
)

from jupyter_gns3_copilot.gns3 import GNS3Client

pytestmark = pytest.mark.lab

ALICE, BOB = as_user("alice"), as_user("bob")
LAB_MODE = {"copilot_mode": "lab_automation_assistant"}
LAB = textwrap.dedent(
    """\
    title: Two PCs
    parameters:
      net: {subnet: {pool: 10.20.0.0/16, prefix: 24}}
    stages:
      - id: addressing
        title: Address PC1
        snapshot: fresh
        objectives:
          - id: pc1-address
            text: "PC1 has {{ net | host(1) }}/24"
            points: 2
            check: {kind: address, node: PC1, address: "{{ net | host(1) }}/24"}
          - id: pc1-runs
            text: PC1 runs
            check: {kind: node_running, node: PC1}
      - id: reach
        title: Reach PC2
        objectives:
          - id: pc2-runs
            text: PC2 runs
            check: {kind: node_running, node: PC2}
    """
)


@pytest.fixture
def jp_server_config(gns3_lab, scripted_llm, tmp_path: Path) -> dict[str, Any]:
    config = server_config(
        tmp_path / "data", **lab_traits(gns3_lab), **model_traits(scripted_llm), lab_salt="class"
    )
    config["ServerApp"]["identity_provider_class"] = TokenUsersIdentityProvider
    return config


def lab_path(project: Any, *rest: str) -> tuple[str, ...]:
    return ("copilot", "projects", project.project_id, "lab", *rest)


async def attach(jp_fetch: Any, project: Any, text: str = LAB, user: Any = ALICE) -> Any:
    await call(jp_fetch, "copilot", "llm-config", method="PUT", body=LAB_MODE, headers=user)
    return await call(jp_fetch, *lab_path(project), method="PUT", body={"text": text}, headers=user)


async def test_a_lab_file_is_attached_and_each_student_sees_their_values(
    jp_fetch: Any, gns3_project: Any
) -> None:
    await add_pcs(gns3_project, "PC1", "PC2")
    missing = await call(jp_fetch, *lab_path(gns3_project), headers=ALICE)
    assert (missing.code, missing.error["type"]) == (404, "NoLab")

    teaching = await call(
        jp_fetch, *lab_path(gns3_project), method="PUT", body={"text": LAB}, headers=BOB
    )
    assert teaching.code == 403 and "automation mode" in teaching.error["message"]

    attached = await attach(jp_fetch, gns3_project)
    assert attached.code == 200, attached.body
    alice = (await call(jp_fetch, *lab_path(gns3_project), headers=ALICE)).body
    bob = (await call(jp_fetch, *lab_path(gns3_project), headers=BOB)).body
    assert alice["title"] == "Two PCs" and alice["max_score"] == 4
    first = alice["stages"][0]
    assert (first["id"], first["catch_up"], first["hints"]) == ("addressing", True, "nudge")
    assert first["objectives"][0]["text"].startswith("PC1 has 10.20.")
    assert alice["stages"][0]["objectives"][0]["text"] != bob["stages"][0]["objectives"][0]["text"]
    assert "check" not in str(alice) and "kind" not in str(alice)  # never the answers

    # the file is the project's own, in GNS3
    async with GNS3Client(gns3_project.url, token=gns3_project.token) as gns3:
        stored = await gns3.read_project_file(gns3_project.project_id, "lab.yaml")
    assert stored.decode() == LAB


async def test_an_invalid_lab_file_names_its_line_and_field(
    jp_fetch: Any, gns3_project: Any
) -> None:
    await add_pcs(gns3_project, "PC1", "PC2")
    bad = LAB.replace("kind: node_running, node: PC1", "kind: node_runing, node: PC1")
    reply = await attach(jp_fetch, gns3_project, bad)
    assert reply.code == 422
    problem = reply.error["errors"][0]
    assert (problem["source"], problem["line"], problem["field"]) == (
        "lab.yaml",
        15,
        "stages[0].objectives[1].check",
    )
    assert "unknown check kind" in problem["message"]
    # a command that configures the node's own dialect is refused at attach time
    configuring = LAB.replace(
        "check: {kind: node_running, node: PC1}",
        "check: {kind: command, node: PC1, command: ip 10.0.0.1/24, contains: x}",
    )
    refused = await attach(jp_fetch, gns3_project, configuring)
    assert refused.code == 422
    assert "'ip 10.0.0.1/24' is refused on PC1 (vpcs)" in refused.error["message"]
    # nothing was written
    assert (await call(jp_fetch, *lab_path(gns3_project), headers=ALICE)).code == 404


async def test_a_lab_file_naming_a_node_the_project_lacks_is_refused(
    jp_fetch: Any, gns3_project: Any
) -> None:
    """Given the real project with PC1 and PC2, a lab file whose check names PC9 is
    refused with the line of PC9 and the nodes the project has, and nothing is written;
    a node named in other case is the project's node, as when the check runs."""
    await add_pcs(gns3_project, "PC1", "PC2")
    typo = LAB.replace(
        "check: {kind: node_running, node: PC2}", "check: {kind: node_running, node: PC9}"
    )
    refused = await attach(jp_fetch, gns3_project, typo)
    assert refused.code == 422, refused.body
    [problem] = refused.error["errors"]
    assert (problem["line"], problem["field"]) == (21, "stages[1].objectives[0].check.node")
    assert problem["message"] == ("the project has no node called PC9 (its nodes are PC1, PC2)")
    assert "line 21" in refused.error["message"]
    assert (await call(jp_fetch, *lab_path(gns3_project), headers=ALICE)).code == 404
    # a lab file sent with a check is judged the same way
    checked = await call(
        jp_fetch,
        *lab_path(gns3_project, "checks"),
        method="POST",
        body={"lab": typo, "stream": False},
        headers=ALICE,
    )
    assert checked.code == 422 and "no node called PC9" in checked.error["message"]
    lower = LAB.replace("node: PC2}", "node: pc2}")
    assert (await attach(jp_fetch, gns3_project, lower)).code == 200


async def test_checks_stream_each_result_then_the_summary(jp_fetch: Any, gns3_project: Any) -> None:
    await add_pcs(gns3_project, "PC1", "PC2")
    async with GNS3Client(gns3_project.url, token=gns3_project.token) as gns3:
        nodes = {n.name: n for n in await gns3.list_nodes(gns3_project.project_id)}
        await gns3.start_node(gns3_project.project_id, nodes["PC1"].node_id)
    assert (await attach(jp_fetch, gns3_project)).code == 200

    stream = open_stream(jp_fetch, *lab_path(gns3_project, "checks"), body={}, headers=ALICE)
    events = await stream.finish()
    assert kinds(events) == ["check_result"] * 3 + ["check_summary", "done"]
    results = {e["result"]["id"]: e["result"] for e in events if e["type"] == "check_result"}
    assert {k: r["status"] for k, r in results.items()} == {
        "pc1-address": "fail",
        "pc1-runs": "pass",
        "pc2-runs": "fail",
    }
    assert results["pc1-address"]["explanation"] == "PC1 has no IPv4 address."
    summary = events[-2]["summary"]
    assert (summary["score"], summary["max_score"], summary["passed"]) == (1, 4, False)

    report = await call(
        jp_fetch,
        *lab_path(gns3_project, "checks"),
        method="POST",
        body={"stage": "reach", "stream": False},
        headers=ALICE,
    )
    assert report.code == 200
    assert [r["id"] for r in report.body["results"]] == ["pc2-runs"]
    assert report.body["stages"] == [
        {
            "id": "reach",
            "title": "Reach PC2",
            "passed": False,
            "score": 0,
            "max_score": 1,
            "objectives": ["pc2-runs"],
        }
    ]
    unknown = await call(
        jp_fetch,
        *lab_path(gns3_project, "checks"),
        method="POST",
        body={"stage": "nope", "stream": False},
        headers=ALICE,
    )
    assert unknown.code == 404 and "stages: addressing, reach" in unknown.error["message"]
    assert "did you mean" not in unknown.error["message"]  # nothing close to "nope"


async def test_a_mistyped_stage_is_not_found_and_the_closest_one_named(
    jp_fetch: Any, gns3_project: Any
) -> None:
    """The same 404 from the stage, checks and catch-up routes (never a 500)."""
    await add_pcs(gns3_project, "PC1", "PC2")
    assert (await attach(jp_fetch, gns3_project)).code == 200
    message = (
        "the lab has no stage 'adressing' (stages: addressing, reach); did you mean addressing?"
    )
    lab = lab_path(gns3_project)
    answers = [
        await call(
            jp_fetch, *lab, "stage", method="PUT", body={"stage": "adressing"}, headers=ALICE
        ),
        await call(
            jp_fetch, *lab, "checks", method="POST", body={"stage": "adressing"}, headers=ALICE
        ),
        *[
            await call(
                jp_fetch,
                *lab,
                "stages",
                "adressing",
                "catch-up",
                method="POST",
                body=body,
                headers=ALICE,
            )
            for body in ({}, {"confirm": True})
        ],
    ]
    for answer in answers:
        assert (answer.code, answer.error["type"]) == (404, "UnknownStage"), answer.body
        assert answer.error["message"] == message


def statuses(view: dict[str, Any]) -> list[str | None]:
    return [o.get("status") for stage in view["stages"] for o in stage["objectives"]]


async def next_view(stream: Any, wanted: Any) -> dict[str, Any]:
    """The next `lab_view` of the stream whose view `wanted(view)` accepts (the stream may
    send the views in between too: a burst of changes can be told once)."""
    while True:
        [*_, event] = await stream.until("lab_view")
        if wanted(event["view"]):
            return dict(event["view"])


async def test_the_lab_events_follow_each_check_and_stage_of_their_student_only(
    jp_fetch: Any,
    jp_serverapp: Any,
    jp_http_port: int,
    jp_base_url: str,
    gns3_project: Any,
) -> None:
    """Given alice's and bob's lab event streams open; when alice checks through the REST
    route from another client (as a notebook does), then chooses a stage; then her stream
    tells the new statuses and stage as they come, without being opened again, bob's
    tells nothing of hers (only his own stage), and a client leaving ends its watch."""
    await add_pcs(gns3_project, "PC1", "PC2")
    async with GNS3Client(gns3_project.url, token=gns3_project.token) as gns3:
        nodes = {n.name: n for n in await gns3.list_nodes(gns3_project.project_id)}
        await gns3.start_node(gns3_project.project_id, nodes["PC1"].node_id)
    assert (await attach(jp_fetch, gns3_project)).code == 200
    alice = watch_stream(jp_fetch, *lab_path(gns3_project, "events"), headers=ALICE)
    bob = watch_stream(jp_fetch, *lab_path(gns3_project, "events"), headers=BOB)
    [opened] = await alice.until("lab_view")
    assert opened["project_id"] == gns3_project.project_id
    assert statuses(opened["view"]) == [None, None, None]
    assert opened["view"]["current_stage"] == "addressing"
    await bob.until("lab_view")

    checks = lab_path(gns3_project, "checks")
    body = {"stream": False}
    assert (await call(jp_fetch, *checks, method="POST", body=body, headers=ALICE)).code == 200
    checked = await next_view(alice, lambda v: None not in statuses(v))
    assert statuses(checked) == ["fail", "pass", "fail"]
    assert checked["current_stage"] == "addressing"
    stage = lab_path(gns3_project, "stage")
    assert (
        await call(jp_fetch, *stage, method="PUT", body={"stage": "reach"}, headers=ALICE)
    ).code == 200
    chosen = await next_view(alice, lambda v: v["current_stage"] == "reach")
    assert statuses(chosen) == ["fail", "pass", "fail"]

    assert (
        await call(jp_fetch, *stage, method="PUT", body={"stage": "reach"}, headers=BOB)
    ).code == 200
    bobs = await next_view(bob, lambda v: v["current_stage"] == "reach")
    assert statuses(bobs) == [None, None, None]
    assert all(statuses(e["view"]) == [None, None, None] for e in bob.events)

    # A client that leaves ends its watch; the others go on.
    watch = copilot_app(jp_serverapp).project_labs().watch
    key = (gns3_project.project_id, "alice")
    url = f"http://127.0.0.1:{jp_http_port}{jp_base_url}" + "/".join(
        lab_path(gns3_project, "events")
    )
    async with (
        httpx.AsyncClient(headers=ALICE, timeout=60, trust_env=False) as client,
        client.stream("GET", url) as response,
    ):
        assert response.status_code == 200
        async for line in response.aiter_lines():
            if line.startswith("data: "):
                break
        assert len(watch._watchers[key]) == 2

    async def one_left() -> bool:
        return len(watch._watchers.get(key, ())) == 1

    await eventually(one_left, "the watch of the client that left ending")


class TestKeepAlive:
    @pytest.fixture
    def jp_server_config(self, gns3_lab, scripted_llm, tmp_path: Path) -> dict[str, Any]:
        config = server_config(
            tmp_path / "data",
            **lab_traits(gns3_lab),
            **model_traits(scripted_llm),
            lab_salt="class",
            heartbeat_interval=0.2,
        )
        config["ServerApp"]["identity_provider_class"] = TokenUsersIdentityProvider
        return config

    async def test_a_silent_lab_events_stream_is_kept_alive(
        self, jp_fetch: Any, jp_http_port: int, jp_base_url: str, gns3_project: Any
    ) -> None:
        """Given `heartbeat_interval` 0.2 s; when nothing changes, then the stream sends
        SSE comments (which clients ignore), so proxies keep it open."""
        await add_pcs(gns3_project, "PC1", "PC2")
        assert (await attach(jp_fetch, gns3_project)).code == 200
        path = "/".join(lab_path(gns3_project, "events"))
        url = f"http://127.0.0.1:{jp_http_port}{jp_base_url}{path}"
        async with (
            httpx.AsyncClient(headers=ALICE, timeout=60, trust_env=False) as client,
            client.stream("GET", url) as response,
        ):
            lines = response.aiter_lines()
            assert (await anext(lines)).startswith("data: ")
            seen = [line async for line in _until(lines, ": keep-alive")]
        assert [line for line in seen if line.startswith("data: ")] == []


async def _until(lines: Any, wanted: str) -> Any:
    async for line in lines:
        yield line
        if line == wanted:
            return


async def test_the_lab_events_of_a_project_without_a_lab_file_are_a_404(
    jp_fetch: Any, gns3_project: Any
) -> None:
    missing = await call(jp_fetch, *lab_path(gns3_project, "events"), headers=ALICE)
    assert (missing.code, missing.error["type"]) == (404, "NoLab")


async def test_catch_up_restores_the_stage_snapshot_once_confirmed(
    jp_fetch: Any, gns3_project: Any
) -> None:
    await add_pcs(gns3_project, "PC1", "PC2")
    async with GNS3Client(gns3_project.url, token=gns3_project.token) as gns3:
        await gns3.create_snapshot(gns3_project.project_id, "fresh")
        await gns3.create_node_from_template(gns3_project.project_id, "VPCS", "Later")
    assert (await attach(jp_fetch, gns3_project)).code == 200
    path = (*lab_path(gns3_project), "stages", "addressing", "catch-up")
    checks = lab_path(gns3_project, "checks")
    body = {"stage": "addressing", "stream": False}
    assert (await call(jp_fetch, *checks, method="POST", body=body, headers=ALICE)).code == 200

    def statuses(lab: dict[str, Any]) -> list[str | None]:
        return [o["status"] for stage in lab["stages"] for o in stage["objectives"]]

    checked = (await call(jp_fetch, *lab_path(gns3_project), headers=ALICE)).body
    assert statuses(checked) == ["error", "fail", None]  # PC1 stopped

    asked = await call(jp_fetch, *path, method="POST", body={}, headers=ALICE)
    assert asked.code == 400 and asked.error["type"] == "ConfirmationNeeded"
    assert (asked.error["field"], asked.error["rule"]) == ("confirm", "true to restore")
    assert "restores the snapshot 'fresh'" in asked.error["message"]
    no_snapshot = await call(
        jp_fetch,
        *lab_path(gns3_project),
        "stages",
        "reach",
        "catch-up",
        method="POST",
        body={"confirm": True},
        headers=ALICE,
    )
    assert no_snapshot.code == 409

    done = await call(jp_fetch, *path, method="POST", body={"confirm": True}, headers=ALICE)
    assert done.code == 200, done.body
    async with GNS3Client(gns3_project.url, token=gns3_project.token) as gns3:
        nodes = await gns3.list_nodes(gns3_project.project_id)
    assert sorted(n.name for n in nodes) == ["PC1", "PC2"]
    assert all(n.status == "started" for n in nodes)
    # the results read before the restore no longer hold
    restored = (await call(jp_fetch, *lab_path(gns3_project), headers=ALICE)).body
    assert statuses(restored) == [None, None, None]


async def test_a_local_lab_file_is_checked_without_being_attached(
    jp_fetch: Any, gns3_project: Any
) -> None:
    """`gns3-copilot-check --lab PATH`: the request carries the file; nothing is written."""
    await add_pcs(gns3_project, "PC1", "PC2")
    report = await call(
        jp_fetch,
        *lab_path(gns3_project, "checks"),
        method="POST",
        body={"lab": LAB, "source": "mine.yaml", "stream": False},
        headers=ALICE,
    )
    assert report.code == 200, report.body
    assert {r["id"]: r["status"] for r in report.body["results"]} == {
        "pc1-address": "error",
        "pc1-runs": "fail",
        "pc2-runs": "fail",
    }
    bad = await call(
        jp_fetch,
        *lab_path(gns3_project, "checks"),
        method="POST",
        body={"lab": LAB.replace("points: 2", "points: two"), "source": "mine.yaml"},
        headers=ALICE,
    )
    assert bad.code == 422 and bad.error["errors"][0]["source"] == "mine.yaml"
    assert (await call(jp_fetch, *lab_path(gns3_project), headers=ALICE)).code == 404
