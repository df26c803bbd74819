"""The `frr` console dialect against a REAL FRR router (vtysh) in the local GNS3 lab.

One router is booted (from the lab kit's "FRR router" template, whose usage notes say
`device_type:frr`) and driven through GNS3's telnet console proxy, the way the tools do.
"""

from __future__ import annotations

from typing import Any

import pytest
from support.consoles import router_console
from support.tools import client_for

from jupyter_gns3_copilot.console import ConsoleTimeoutError
from jupyter_gns3_copilot.labkit.frr import FRR_TEMPLATE
from jupyter_gns3_copilot.labkit.router import hostname_command_line

pytestmark = [pytest.mark.lab, pytest.mark.slow]


async def test_the_frr_dialect_drives_vtysh(gns3_project: Any) -> None:
    """Given R1 from the FRR template, started: its console resolves to the `frr` dialect
    and opens at `R1#` with paging off (a long `show interface` arrives whole);
    configuration mode is entered and left (`R1(config-if)#` on the way, `R1#` after);
    `% Unknown command` and `% Command incomplete` are failed lines; `ping` ends by itself
    after 5 probes; an overdue ping is interrupted and the console stays usable; a new
    connection finds the same vtysh at `R1#`; a vtysh restarted by the router's init (after
    `exit`, which the command policy never sends) greets with its banner and answers at
    `R1#` again, still without a pager."""
    pid = gns3_project.project_id
    async with client_for(gns3_project) as gns3:
        node = await gns3.create_node_from_template(pid, FRR_TEMPLATE, "R1")
        line = hostname_command_line("R1")
        await gns3.update_node(pid, node.node_id, properties={"kernel_command_line": line})
        await gns3.start_all(pid)
        session = await router_console(gns3, pid, "R1", gns3_project.url)
        try:
            assert session.target.dialect == "frr"
            assert session.prompt == "R1#"
            shown = await session.send("show interface")
            assert shown.ok and all(f"Interface eth{n} " in shown.output for n in range(4))
            assert "--More--" not in shown.output and shown.output.count("\n") > 40

            configured = await session.configure(
                [
                    "interface eth0",
                    "ip address 10.0.12.1 255.255.255.0",
                    "ip address 10.0.12.1/24",
                    "exit",
                    "router",
                ]
            )
            assert [result.ok for result in configured] == [True, False, True, True, False]
            assert configured[0].prompt == "R1(config)#"
            assert configured[1].prompt == "R1(config-if)#"
            assert "% Unknown command" in (configured[1].error or "")
            assert "% Command incomplete" in (configured[4].error or "")
            assert session.prompt == "R1#"
            brief = await session.send("show ip interface brief")
            assert not brief.ok and "% Unknown command" in (brief.error or "")
            brief = await session.send("show interface brief")
            assert brief.ok and "10.0.12.1/24" in brief.output

            ping = await session.send("ping 127.0.0.1")
            assert ping.ok and "5 packets transmitted, 5 packets received" in ping.output
            with pytest.raises(ConsoleTimeoutError, match="interrupted"):
                await session.send("ping 10.0.12.99", timeout=1)
            assert session.is_open and session.prompt == "R1#"
            after = await session.send("show version")
            assert after.ok and "FRRouting" in after.output
        finally:
            await session.close()

        again = await router_console(gns3, pid, "R1", gns3_project.url)
        try:
            assert again.prompt == "R1#"
            shown = await again.send("show interface brief")
            assert shown.ok and "10.0.12.1/24" in shown.output
            restarted = await again.send("exit")
            assert "Hello, this is FRRouting" in restarted.output and again.prompt == "R1#"
            shown = await again.send("show interface")
            assert shown.ok and all(f"Interface eth{n} " in shown.output for n in range(4))
        finally:
            await again.close()
