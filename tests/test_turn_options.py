"""`TurnOptions`: one turn's options from the edge (request body, `Copilot`'s arguments,
the magic's flags) to the engine, without a change on the wire."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from jupyter_gns3_copilot.agent.limits import TurnLimits
from jupyter_gns3_copilot.chat.options import TurnOptions
from jupyter_gns3_copilot.notebook.errors import UsageError
from jupyter_gns3_copilot.notebook.options import turn_options
from jupyter_gns3_copilot.server.schemas import ChatRequest

CHOSEN = TurnOptions(
    mode="lab_automation_assistant",
    temperature=0.4,
    max_iterations=7,
    max_tool_calls=3,
    max_execution_time_seconds=90,
    auto_approve=True,
)


def test_the_request_body_the_kernel_sends_gives_the_route_the_same_options() -> None:
    """Given options as the kernel spells them in the request body; when the route reads
    the body; then it builds the same options (mode chosen by the route)."""
    body = {"message": "hi", **CHOSEN.request_fields()}
    request = ChatRequest.model_validate(body)
    assert request.copilot_mode == "lab_automation_assistant"
    assert request.approval == "auto"
    assert request.turn_options(request.copilot_mode) == CHOSEN


def test_options_left_to_their_default_are_left_out_of_the_body() -> None:
    assert TurnOptions().request_fields() == {}
    assert TurnOptions(max_tool_calls=2).request_fields() == {"max_tool_calls": 2}


def test_limits_apply_the_defaults_and_name_a_value_out_of_range() -> None:
    """Given no limit; then the defaults; given a temperature of 2.5; then the error names
    the field (the turn's `error` event says it)."""
    assert TurnOptions().limits() == TurnLimits()
    assert CHOSEN.limits() == TurnLimits(
        temperature=0.4, max_iterations=7, max_tool_calls=3, max_execution_time_seconds=90
    )
    with pytest.raises(ValidationError, match="temperature"):
        TurnOptions(temperature=2.5).limits()


def test_the_kernel_builds_options_once_from_keywords_or_takes_them_whole() -> None:
    """Given the kernel's keywords (a short mode name); then options with the full name;
    given one `TurnOptions`; then it, its mode named in full; given both; then a usage
    error that says so; an unknown mode is refused before anything is sent."""
    for word in ("automation", "lab", "Lab-Automation"):  # its word, its old word, a spelling
        assert turn_options(mode=word, max_tool_calls=2) == TurnOptions(
            mode="lab_automation_assistant", max_tool_calls=2
        )
    assert turn_options(TurnOptions(mode="teaching", temperature=0.1)) == TurnOptions(
        mode="teaching_assistant", temperature=0.1
    )
    with pytest.raises(UsageError, match="not both"):
        turn_options(TurnOptions(), max_iterations=3)
    with pytest.raises(UsageError, match=r"use teaching \(teaching_assistant\) or automation "):
        turn_options(mode="exam")
