"""The `frr` console dialect against a REAL FRR router (vtysh) in the local GNS3 lab.

R2 of the shared routed triangle (conftest.py: routers from the lab kit's "FRR router"
template, whose usage notes say `device_type:frr`) is driven through GNS3's telnet console
proxy, the way the tools do. R2's eth2, cabled to nothing there, is the one configured;
its address is taken off again afterwards.
"""

from __future__ import annotations

import pytest
from support.consoles import router_console
from support.tools import client_for

from jupyter_gns3_copilot.console import ConsoleTimeoutError
from jupyter_gns3_copilot.testing.pytest_plugin import GNS3Project

pytestmark = [pytest.mark.lab, pytest.mark.slow]

SPARE = "10.0.99.2/24"
"""The address the test gives R2's spare interface eth2."""


async def test_the_frr_dialect_drives_vtysh(triangle: GNS3Project) -> None:
    """Given R2 from the FRR template, started: its console resolves to the `frr` dialect
    and opens at `R2#` with paging off (a long `show interface` arrives whole);
    configuration mode is entered and left (`R2(config-if)#` on the way, `R2#` after);
    `% Unknown command` and `% Command incomplete` are failed lines; `ping` ends by itself
    after 5 probes; an overdue ping is interrupted and the console stays usable; a new
    connection finds the same vtysh at `R2#`; a vtysh restarted by the router's init (after
    `exit`, which the command policy never sends) greets with its banner and answers at
    `R2#` again, still without a pager."""
    pid = triangle.project_id
    async with client_for(triangle) as gns3:
        session = await router_console(gns3, pid, "R2", triangle.url)
        try:
            assert session.target.dialect == "frr"
            assert session.prompt == "R2#"
            shown = await session.send("show interface")
            assert shown.ok and all(f"Interface eth{n} " in shown.output for n in range(4))
            assert "--More--" not in shown.output and shown.output.count("\n") > 40

            configured = await session.configure(
                [
                    "interface eth2",
                    "ip address 10.0.99.2 255.255.255.0",
                    f"ip address {SPARE}",
                    "exit",
                    "router",
                ]
            )
            assert [result.ok for result in configured] == [True, False, True, True, False]
            assert configured[0].prompt == "R2(config)#"
            assert configured[1].prompt == "R2(config-if)#"
            assert "% Unknown command" in (configured[1].error or "")
            assert "% Command incomplete" in (configured[4].error or "")
            assert session.prompt == "R2#"
            brief = await session.send("show ip interface brief")
            assert not brief.ok and "% Unknown command" in (brief.error or "")
            brief = await session.send("show interface brief")
            assert brief.ok and SPARE in brief.output

            ping = await session.send("ping 127.0.0.1")
            assert ping.ok and "5 packets transmitted, 5 packets received" in ping.output
            with pytest.raises(ConsoleTimeoutError, match="interrupted"):
                await session.send("ping 10.0.99.99", timeout=1)
            assert session.is_open and session.prompt == "R2#"
            after = await session.send("show version")
            assert after.ok and "FRRouting" in after.output
        finally:
            await session.close()

        again = await router_console(gns3, pid, "R2", triangle.url)
        try:
            assert again.prompt == "R2#"
            shown = await again.send("show interface brief")
            assert shown.ok and SPARE in shown.output
            restarted = await again.send("exit")
            assert "Hello, this is FRRouting" in restarted.output and again.prompt == "R2#"
            shown = await again.send("show interface")
            assert shown.ok and all(f"Interface eth{n} " in shown.output for n in range(4))
        finally:
            taken_off = await again.configure(["interface eth2", f"no ip address {SPARE}"])
            await again.close()
        assert all(line.ok for line in taken_off), taken_off
