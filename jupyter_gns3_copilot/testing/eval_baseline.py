"""The copilot benchmark's scripted baseline: a lab of three VPCS on a switch
(`LAB_FILE`, every address fixed, three faults), the PCs' working configuration (`PCS`,
a `ProjectRecipe`'s) and the scripted model's answers to its faults (`baseline_script`):
one fixed, one fixed wrongly, one fixed by breaking something else. `tests/test_eval.py`
checks the scores come out as scripted; `benchmarks/faults.py` times it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .scripted_llm import ToolCall, When, text, tool_call, tool_calls

LAB_FILE = Path(__file__).with_name("eval-vpcs.lab.yaml")
PCS = {
    "PC1": "ip 10.9.0.1/24 10.9.0.254",
    "PC2": "ip 10.9.0.2/24 10.9.0.254",
    "PC3": "ip 10.9.0.3/24 10.9.0.254",
}


def usage(tokens_in: int, tokens_out: int) -> dict[str, int]:
    return {"prompt_tokens": tokens_in, "completion_tokens": tokens_out}


def baseline_script() -> list[Any]:
    """The scripted model's answers, fault by fault (two turns at most per run)."""
    title = text("A fault", when=When(tools=False))
    pc2 = {"device": "PC2", "commands": ["ip 10.9.0.2/24 10.9.0.254"]}
    pc3 = {"device": "PC3", "commands": ["ip 10.9.0.3/24 10.9.0.254"]}
    pc1_moved = {"device": "PC1", "commands": ["ip 10.9.0.11/24 10.9.0.254"]}
    cable = {"a": "PC3", "a_port": "e0", "b": "Switch1", "b_port": "e2"}
    return [
        # pc2-wrong-address: fixed.
        tool_call("run_vpcs_commands", {"devices": [pc2]}, usage=usage(1000, 50)),
        text(
            "PC2 had the wrong address 10.9.0.22; it has 10.9.0.2/24 again.", usage=usage(1200, 30)
        ),
        title,
        # pc1-wrong-gateway: the wrong PC changed, twice told it still fails.
        tool_call("run_vpcs_commands", {"devices": [pc3]}, usage=usage(900, 40)),
        text("PC3's gateway was wrong; it is 10.9.0.254 now.", usage=usage(1100, 20)),
        title,
        text("PC3 looks right to me now.", usage=usage(1500, 10)),
        # pc3-cable-pulled: the cable back up, and PC1 moved to another address.
        tool_calls(
            ToolCall(name="set_link_state", arguments={"links": [cable], "state": "up"}),
            ToolCall(name="run_vpcs_commands", arguments={"devices": [pc1_moved]}),
            usage=usage(800, 60),
        ),
        text("PC3's cable on e0 to Switch1 was down; the link is up again.", usage=usage(1000, 25)),
        title,
    ]
