"""The example graded lab (notebooks/04-graded-lab: VPCS PC1-PC3, the Linux router R1)
brought to its solved state by console, as a student would configure it."""

from __future__ import annotations

from jupyter_gns3_copilot.devices.access import Devices
from jupyter_gns3_copilot.objectives.model import LabFile
from jupyter_gns3_copilot.testing.local_stack import EXAMPLES

GRADED = EXAMPLES / "04-graded-lab.lab.yaml"


def host(lab: LabFile, objective: str) -> str:
    """The address an `address` objective of the graded lab asks for."""
    [(_, found)] = [(s, o) for s in lab.stages for o in s.objectives if o.id == objective]
    return str(found.check.address)  # type: ignore[union-attr]


async def working(devices: Devices, project_id: str, lab: LabFile) -> None:
    """Bring the graded lab to its solved state: nodes started, every device configured
    as the lab asks (what a student does in its stages)."""
    await devices.gns3.start_all(project_id)
    a_gw, b_gw = (host(lab, o).split("/")[0] for o in ("r1-lan-a", "r1-lan-b"))
    setup = {
        "PC1": [f"ip {host(lab, 'pc1-address')} {a_gw}"],
        "PC2": [f"ip {host(lab, 'pc2-address')} {a_gw}"],
        "PC3": [f"ip {host(lab, 'pc3-address')} {b_gw}"],
        "R1": [
            "ip addr flush dev eth0",
            "ip addr flush dev eth1",
            f"ip addr add {host(lab, 'r1-lan-a')} dev eth0",
            f"ip addr add {host(lab, 'r1-lan-b')} dev eth1",
            "sysctl -w net.ipv4.ip_forward=1",
        ],
    }
    nodes = {n.name: n for n in await devices.nodes(project_id)}
    jobs = [(await devices.console_target(nodes[name]), lines) for name, lines in setup.items()]
    for result in await devices.consoles.run_many(jobs):
        assert result.status == "success", result
