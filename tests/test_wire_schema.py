"""The JSON Schemas from which the front end's TypeScript types are generated: the chat
events, the turn model, the widget's operations, a check's saved checklist, the REST
answers and the request bodies.

The checked-in schemas (`labextension/src/generated/*.schema.json`) must be what the
Python models export now (the labextension's own test checks the TypeScript compiled from
them), and they must describe the data as it travels: the shared fixtures' events (turns,
several recorded from real turns, and a lab check) validate, in the form they have and in
their SSE form, and so do the turns they reduce to, a widget's saved bundle, the
operations a widget sends and the shared checklist fixtures' bundles. The
answers are every JSON answer of the API the front end reads (the others are named), the
requests every body it sends, and answers as the handlers write them validate.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, get_args

import jsonschema
import pytest

from jupyter_gns3_copilot.events import ChatEvent, parse_event, sse_message
from jupyter_gns3_copilot.objectives.model import LabFile
from jupyter_gns3_copilot.objectives.view import lab_view
from jupyter_gns3_copilot.server.errors import ErrorAnswer
from jupyter_gns3_copilot.server.openapi import Many, operations
from jupyter_gns3_copilot.server.responses import AbortAnswer, ProjectSummary
from jupyter_gns3_copilot.turns import TurnBuilder, reduce_turn, turn_bundle
from jupyter_gns3_copilot.wire_schema import (
    ANSWERS,
    REQUESTS,
    SCHEMAS,
    wire_schema,
    wire_schema_text,
)

GENERATED = Path(__file__).parent.parent / "labextension" / "src" / "generated"
FIXTURES = Path(__file__).parent / "fixtures"
EVENT_MODELS = get_args(get_args(ChatEvent)[0])


def validator(name: str = "events") -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(wire_schema(name))


@pytest.mark.parametrize("name", SCHEMAS)
def test_the_checked_in_schema_is_what_the_models_export(name: str) -> None:
    checked_in = GENERATED / f"{name}.schema.json"
    assert checked_in.read_text(encoding="utf-8") == wire_schema_text(name), (
        "The Python models changed: run `make types` and commit the generated files."
    )


def test_every_event_model_is_in_the_schema_with_its_type() -> None:
    definitions = wire_schema("events")["$defs"]
    for model in EVENT_MODELS:
        properties = definitions[model.__name__]["properties"]
        assert properties["type"]["const"] == model.model_fields["type"].default
        assert {"type", "session_id"} <= set(definitions[model.__name__]["required"])


def fixture_events() -> list[dict[str, Any]]:
    return [
        event
        for path in sorted(FIXTURES.glob("*/*.json"))
        for event in json.loads(path.read_text(encoding="utf-8"))["events"]
    ]


def test_the_shared_fixtures_events_validate() -> None:
    events = fixture_events()
    kinds = {event["type"] for event in events}
    assert kinds >= {"content", "tool_call", "tool_end", "approval_required", "check_result"}
    check = validator()
    for event in events:
        check.validate(event)


def test_a_field_is_required_exactly_when_it_is_always_sent() -> None:
    """As `sse_message` sends an event (None left out), it has every required field, and
    an optional one exactly when its value is not None."""
    check = validator()
    definitions = wire_schema("events")["$defs"]
    for event in fixture_events():
        parsed = parse_event(event)
        sent = json.loads(sse_message(parsed).removeprefix("data: "))
        check.validate(sent)
        definition = definitions[type(parsed).__name__]
        required, properties = set(definition["required"]), set(definition["properties"])
        assert required <= set(sent) <= properties, event
        values = parsed.model_dump()
        assert {key for key in properties - required if values[key] is not None} == (
            set(sent) - required
        ), event


def test_an_event_missing_a_required_field_does_not_validate() -> None:
    with pytest.raises(jsonschema.ValidationError):
        validator().validate({"type": "tool_end", "session_id": "s", "tool_name": "t"})


def test_the_fixtures_turns_and_their_bundle_validate() -> None:
    """The turns the shared fixtures reduce to (as saved, None kept) and a bundle of them."""
    turns = [
        json.loads(path.read_text(encoding="utf-8"))["turn"]
        for path in sorted((FIXTURES / "turns").glob("*.json"))
    ]
    assert turns
    check = validator("turns")
    for direct_run in (False, True):
        bundle = turn_bundle(turns, project_id="p", session_id="s", direct_run=direct_run)
        check.validate(json.loads(json.dumps(bundle)))
    turn = reduce_turn("hi", [{"type": "content", "session_id": "s", "content": "x"}])
    broken = json.loads(json.dumps(turn_bundle([turn], project_id="p")))
    check.validate(broken)
    broken["turns"][0]["items"][0]["kind"] = "paragraph"
    with pytest.raises(jsonschema.ValidationError):
        check.validate(broken)


NOT_READ = {
    "OpenAPIDocument",
    "SkillsReloaded",
    "ToolInfo",
    "Topology",
    "TurnSummary",
    "RunAbortAnswer",
}
"""JSON answers the front end never reads: the API's own document, the administrator's
skills reload, the tool catalogue and topology JSON (for the kernel and scripts), a
`"stream": false` turn (it always streams), a run's abort (the widget's Stop reads only
its status)."""
NOT_SENT = {"NotebookProjectRequest", "LabAttachRequest", "LabStageRequest", "ToolRunRequest"}
"""Request bodies only the kernel's client sends."""


def test_the_answers_are_every_json_answer_the_front_end_reads() -> None:
    """A new route's answer fails this until it is generated or named unread; the decision
    answer (`DecisionTaken`) is read only as "not a stream" by the front end."""
    documented = {"ErrorBody", "LabEvent"}
    for op in operations():
        for answer in op.answers:
            for body in answer.content.values():
                model = body.model if isinstance(body, Many) else body
                if isinstance(model, type):
                    documented.add(model.__name__)
    assert {model.__name__ for model in ANSWERS} == documented - NOT_READ - {"DecisionTaken"}
    definitions = wire_schema("answers")["$defs"]
    assert {model.__name__ for model in ANSWERS} <= set(definitions)


def test_the_requests_are_every_body_the_front_end_sends() -> None:
    documented = {op.request.__name__ for op in operations() if op.request is not None}
    assert {model.__name__ for model in REQUESTS} == documented - NOT_SENT


def answer_validator(name: str) -> jsonschema.Draft202012Validator:
    definitions = wire_schema("answers")["$defs"]
    return jsonschema.Draft202012Validator({"$ref": f"#/$defs/{name}", "$defs": definitions})


@pytest.mark.parametrize(
    ("name", "body"),
    [
        ("AbortAnswer", AbortAnswer(status="ok", session_id="s").model_dump(mode="json")),
        ("ProjectSummary", ProjectSummary(project_id="p", name="n").model_dump(mode="json")),
        ("ErrorBody", ErrorAnswer(409, "busy", type="SessionBusy").body()),
        (
            "ErrorBody",
            ErrorAnswer(400, "x: y", type="ValidationError", field="x", rule="y").body(),
        ),
    ],
)
def test_answers_as_the_handlers_write_them_validate(name: str, body: dict[str, Any]) -> None:
    answer_validator(name).validate(body)


def test_a_lab_view_validates_and_a_wrong_one_does_not() -> None:
    lab = LabFile.model_validate(
        {
            "title": "T",
            "stages": [
                {
                    "id": "s1",
                    "title": "S",
                    "objectives": [
                        {
                            "id": "o1",
                            "text": "PC1 reaches PC2",
                            "check": {"kind": "reachable", "from": "PC1", "to": "PC2"},
                        }
                    ],
                }
            ],
        }
    )
    body = json.loads(lab_view(lab).model_dump_json())
    answer_validator("LabView").validate(body)
    body["stages"][0]["hints"] = "always"
    with pytest.raises(jsonschema.ValidationError):
        answer_validator("LabView").validate(body)


def test_the_widgets_operations_for_the_fixtures_validate() -> None:
    """The operations a `TurnBuilder` gives for the shared fixtures' turns (what the widget
    sends), and not an operation on an unknown item kind."""
    check = validator("ops")
    ops = []
    for path in sorted((FIXTURES / "turns").glob("*.json")):
        builder = TurnBuilder()
        for event in json.loads(path.read_text(encoding="utf-8"))["events"]:
            ops += builder.apply(event)
    assert {op["op"] for op in ops} == {"append", "item"}
    for op in json.loads(json.dumps(ops)):
        check.validate(op)
    with pytest.raises(jsonschema.ValidationError):
        check.validate({"op": "item", "index": 0, "item": {"kind": "paragraph", "text": "x"}})


def test_the_checklist_fixtures_bundles_validate() -> None:
    """The bundles a `%copilot check` output holds (`tests/fixtures/checks/`, which the
    kernel's checklist must display exactly), and not one without its results."""
    check = validator("checks")
    bundles = [
        bundle
        for path in sorted((FIXTURES / "checks").glob("*.json"))
        for bundle in json.loads(path.read_text(encoding="utf-8"))["bundles"]
    ]
    assert bundles
    for bundle in bundles:
        check.validate(bundle)
    with pytest.raises(jsonschema.ValidationError):
        check.validate({key: value for key, value in bundles[0].items() if key != "results"})
