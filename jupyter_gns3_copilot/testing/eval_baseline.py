"""The copilot benchmark's scripted baseline: a lab of three VPCS on a switch
(`LAB_FILE`, every address fixed, three faults), the PCs' working configuration (`PCS`,
a `ProjectRecipe`'s) and the scripted model's answers to its faults (`baseline_script`):
one fixed, one fixed wrongly, one fixed by breaking something else. `tests/test_eval.py`
checks the scores come out as scripted; `benchmarks/faults.py` times it.

The same for the example graded lab (`GRADED_LAB`, a Linux router, seven faults:
`graded_answers`, `GRADED_SCORES`), the example OSPF lab (`OSPF_LAB`, three FRR routers,
seven faults: `ospf_answers`, `OSPF_SCORES`) and the example BGP lab (`BGP_LAB`, the same
routers, four faults: `bgp_answers`, `BGP_SCORES`): they answer the faults of one
student's rendered lab (`script` puts them in the lab's order), and the scores must come
out as given.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..objectives.model import LabFile
from .local_stack import EXAMPLES
from .scripted_llm import ToolCall, When, text, tool_call, tool_calls
from .solved_labs import address_of

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


GRADED_LAB = EXAMPLES / "04-graded-lab.lab.yaml"
GRADED_SCORES = {
    "pc1-wrong-gateway": (True, True, True),
    "pc3-no-gateway": (True, True, True),
    "pc1-wrong-mask": (False, True, True),
    "pc1-cable-pulled": (True, True, True),
    "r1-forwarding-off": (True, True, True),
    "lan-b-cable-pulled": (True, True, True),
    "pc3-link-loss": (True, True, True),
}
"""Fault -> (diagnosed, fixed, safe) as `graded_answers` answers it."""


def graded_answers(lab: LabFile) -> dict[str, list[Any]]:
    """Fault -> the scripted model's answers to it in the graded lab `lab` (one student's
    rendering), one turn each: every fault fixed, the wrong mask without naming it (the
    answer says PC1's address was wrong)."""
    title = text("A fault", when=When(tools=False))
    gateway_a = address_of(lab, "r1-lan-a").split("/")[0]
    gateway_b = address_of(lab, "r1-lan-b").split("/")[0]
    pc1 = {"device": "PC1", "commands": [f"ip {address_of(lab, 'pc1-address')} {gateway_a}"]}
    pc3 = {"device": "PC3", "commands": [f"ip {address_of(lab, 'pc3-address')} {gateway_b}"]}

    def cable(a: str, a_port: str, b: str, b_port: str) -> dict[str, Any]:
        link = {"a": a, "a_port": a_port, "b": b, "b_port": b_port}
        return {"links": [link], "state": "up"}

    def answer(call: Any, said: str, tokens_in: int) -> list[Any]:
        return [call, text(said, usage=usage(tokens_in + 300, 25)), title]

    lossless = {"link": {"a": "PC3", "a_port": "e0", "b": "Switch2", "b_port": "e1"}}
    forwarding = {"devices": [{"device": "R1", "commands": ["sysctl -w net.ipv4.ip_forward=1"]}]}
    return {
        "pc1-wrong-gateway": answer(
            tool_call("run_vpcs_commands", {"devices": [pc1]}, usage=usage(1500, 40)),
            f"PC1's default gateway was wrong; it is R1 ({gateway_a}) again.",
            1500,
        ),
        "pc3-no-gateway": answer(
            tool_call("run_vpcs_commands", {"devices": [pc3]}, usage=usage(1600, 40)),
            f"PC3 had no default gateway; it is R1 ({gateway_b}) now.",
            1600,
        ),
        "pc1-wrong-mask": answer(
            tool_call("run_vpcs_commands", {"devices": [pc1]}, usage=usage(1400, 40)),
            "PC1's address was not the one asked; it is right again.",
            1400,
        ),
        "pc1-cable-pulled": answer(
            tool_call("set_link_state", cable("PC1", "e0", "Switch1", "e0"), usage=usage(1300, 50)),
            "PC1's cable on e0 to Switch1 was down; the link is up again.",
            1300,
        ),
        "r1-forwarding-off": answer(
            tool_call("run_show_commands", forwarding, usage=usage(1700, 40)),
            "R1 did not forward packets (ip_forward was 0); forwarding is on again.",
            1700,
        ),
        "lan-b-cable-pulled": answer(
            tool_call("set_link_state", cable("R1", "e1", "Switch2", "e0"), usage=usage(1500, 50)),
            "R1's cable on eth1 to LAN B's switch was down; the link is up again.",
            1500,
        ),
        "pc3-link-loss": answer(
            tool_call("set_link_filter", lossless, usage=usage(1800, 50)),
            "PC3's link on e0 dropped every packet (100 % loss); its filter is cleared.",
            1800,
        ),
    }


OSPF_LAB = EXAMPLES / "05-ospf-lab.lab.yaml"
OSPF_SCORES = {
    "r2-area-mismatch": (True, True, True),
    "r1-dead-interval-mismatch": (False, False, True),
    "r3-passive-to-r1": (True, True, True),
    "r1-lan-not-advertised": (True, True, True),
    "r3-lan-wrong-mask": (True, True, False),
    "r1-r2-cable-pulled": (True, True, True),
    "r2-mtu-mismatch": (True, True, True),
}
"""Fault -> (diagnosed, fixed, safe) as `ospf_answers` answers it."""


def script(
    lab: LabFile, answers: dict[str, list[Any]], faults: Sequence[str] | None = None
) -> list[Any]:
    """The scripted model's `answers` (`graded_answers(lab)`, `ospf_answers(lab)`...) to
    `faults` (default: all), in the lab's order: what a `ScriptedLLM` replays for an eval
    of them."""
    return [item for f in lab.faults if faults is None or f.id in faults for item in answers[f.id]]


def _config(device: str, *lines: str) -> dict[str, Any]:
    """`run_config_commands`' arguments typing `lines` on `device`."""
    return {"devices": [{"device": device, "commands": list(lines)}]}


def ospf_answers(lab: LabFile) -> dict[str, list[Any]]:
    """Fault -> the scripted model's answers to it in the OSPF lab `lab` (one student's
    rendering), two turns at most per run: six fixed, the dead interval "fixed" on the
    wrong router (R2 keeps its 4 s; twice told it still fails), the wrong mask fixed
    while moving PC1 to another address (PC1's address objective a regression; PC2 may
    still reach PC1's old address while R1 remembers its hardware address)."""
    title = text("A fault", when=When(tools=False))
    r2r3 = ipaddress.IPv4Interface(address_of(lab, "r2-addresses", 1)).network
    lan1 = ipaddress.IPv4Interface(address_of(lab, "r1-addresses", 2))
    lan2 = ipaddress.IPv4Interface(address_of(lab, "r3-addresses", 2))
    pc1 = ipaddress.IPv4Interface(address_of(lab, "pc1-lan1"))
    moved = f"ip {pc1.ip + 1}/{pc1.network.prefixlen} {lan1.ip}"
    cable = {"a": "R1", "a_port": "e0", "b": "R2", "b_port": "e0"}

    return {
        "r2-area-mismatch": [
            tool_call(
                "run_config_commands",
                _config("R2", "router ospf", f"no network {r2r3} area 1", f"network {r2r3} area 0"),
                usage=usage(2000, 60),
            ),
            text(
                "R2 had its link to R3 (eth1) in area 1; it is in area 0 again.",
                usage=usage(2400, 30),
            ),
            title,
        ],
        "r1-dead-interval-mismatch": [
            tool_call(
                "run_config_commands",
                _config("R2", "interface eth0", "ip ospf dead-interval 4"),
                usage=usage(1800, 40),
            ),
            text("R2's dead interval on eth0 was wrong; it is 4 s now.", usage=usage(2100, 20)),
            title,
            text("R2's timers look right to me now.", usage=usage(2600, 10)),
        ],
        "r3-passive-to-r1": [
            tool_call(
                "run_config_commands",
                _config("R3", "router ospf", "no passive-interface eth1"),
                usage=usage(1900, 40),
            ),
            text(
                "R3's eth1 towards R1 was a passive interface; it sends hellos again.",
                usage=usage(2200, 25),
            ),
            title,
        ],
        "r1-lan-not-advertised": [
            tool_call(
                "run_config_commands",
                _config("R1", "router ospf", f"network {lan1.network} area 0"),
                usage=usage(2100, 40),
            ),
            text(
                "R1 had no network statement for LAN 1; it advertises it again.",
                usage=usage(2500, 25),
            ),
            title,
        ],
        "r3-lan-wrong-mask": [
            tool_calls(
                ToolCall(
                    name="run_config_commands",
                    arguments=_config(
                        "R3", "interface eth2", f"no ip address {lan2.ip}/25", f"ip address {lan2}"
                    ),
                ),
                ToolCall(name="run_vpcs_commands", arguments=_config("PC1", moved)),
                usage=usage(2300, 70),
            ),
            text("R3's eth2 had a /25 mask; it has /24 again.", usage=usage(2700, 25)),
            title,
        ],
        "r1-r2-cable-pulled": [
            tool_call("set_link_state", {"links": [cable], "state": "up"}, usage=usage(1700, 50)),
            text(
                "The cable between R1 eth0 and R2 was down; the link is up again.",
                usage=usage(2000, 25),
            ),
            title,
        ],
        "r2-mtu-mismatch": [
            tool_call(
                "run_config_commands",
                _config("R2", "interface eth1", "ip ospf mtu-ignore"),
                usage=usage(2200, 40),
            ),
            text(
                "R2's eth1 has an MTU of 1400 and R3's eth0 1500, so R2 dropped R3's database "
                "descriptions; R2 ignores the MTU in OSPF now.",
                usage=usage(2600, 35),
            ),
            title,
        ],
    }


BGP_LAB = EXAMPLES / "06-bgp-lab.lab.yaml"
BGP_SCORES = {
    "r1-wrong-remote-as": (True, True, True),
    "r3-wrong-neighbor-address": (True, True, True),
    "r1-lan-not-advertised": (False, False, True),
    "r2-session-to-r3-shut": (True, True, False),
}
"""Fault -> (diagnosed, fixed, safe) as `bgp_answers` answers it."""


def bgp_answers(lab: LabFile) -> dict[str, list[Any]]:
    """Fault -> the scripted model's answers to it in the BGP lab `lab` (one student's
    rendering), two turns at most per run: the wrong remote AS and the wrong neighbour
    address fixed, LAN 1 "advertised" from R2 (which has no route to it, so BGP announces
    nothing; twice told it still fails), the shut session opened again while moving PC2
    to another address (PC2's address objective a regression)."""
    title = text("A fault", when=When(tools=False))
    r1_r2 = ipaddress.IPv4Interface(address_of(lab, "r2-interfaces", 0)).ip
    r2r3 = ipaddress.IPv4Interface(address_of(lab, "r2-interfaces", 1)).network
    lan1 = ipaddress.IPv4Interface(address_of(lab, "r1-interfaces", 2)).network
    lan2 = ipaddress.IPv4Interface(address_of(lab, "r3-interfaces", 2))
    pc2 = ipaddress.IPv4Interface(address_of(lab, "pc2-lan"))
    moved = f"ip {pc2.ip + 1}/{pc2.network.prefixlen} {lan2.ip}"
    return {
        "r1-wrong-remote-as": [
            tool_call(
                "run_config_commands",
                _config("R1", "router bgp 65001", f"neighbor {r1_r2} remote-as 65002"),
                usage=usage(2000, 50),
            ),
            text(
                f"R1 had the wrong remote AS (65020) for R2 ({r1_r2}, on eth0); it is 65002 "
                "again and the session is up.",
                usage=usage(2400, 30),
            ),
            title,
        ],
        "r3-wrong-neighbor-address": [
            tool_call(
                "run_config_commands",
                _config(
                    "R3",
                    "router bgp 65003",
                    f"no neighbor {r2r3[4]}",
                    f"neighbor {r2r3[2]} remote-as 65002",
                    f"neighbor {r2r3[2]} timers connect 1",
                ),
                usage=usage(2100, 70),
            ),
            text(
                f"R3 had the wrong neighbor address for R2 on eth0 ({r2r3[4]} instead of "
                f"{r2r3[2]}); it peers with {r2r3[2]} again.",
                usage=usage(2500, 35),
            ),
            title,
        ],
        "r1-lan-not-advertised": [
            tool_call(
                "run_config_commands",
                _config("R2", "router bgp 65002", "address-family ipv4 unicast", f"network {lan1}"),
                usage=usage(1900, 50),
            ),
            text(f"R2 did not announce LAN 1 ({lan1}); it does now.", usage=usage(2200, 20)),
            title,
            text("R2's BGP looks right to me now.", usage=usage(2700, 10)),
        ],
        "r2-session-to-r3-shut": [
            tool_calls(
                ToolCall(
                    name="run_config_commands",
                    arguments=_config("R2", "router bgp 65002", f"no neighbor {r2r3[3]} shutdown"),
                ),
                ToolCall(name="run_vpcs_commands", arguments=_config("PC2", moved)),
                usage=usage(2300, 70),
            ),
            text(
                "R2's session with R3 (eth1) was shut down; it is up again.",
                usage=usage(2700, 25),
            ),
            title,
        ],
    }
