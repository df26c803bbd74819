"""An instance directory: everything of one lab, and the files in it.

``gns3_server.conf`` (0600), the controller database and JWT secret gns3-server writes
next to it, projects/images/... folders, ``bin/`` (helper scripts), ``server.log``,
``lab.env`` (0600: GNS3_URL, GNS3_USER, GNS3_PASSWORD), ``lab-state.json`` (how
another process finds the running lab) and ``computes/<compute_id>/`` (one directory like
this per extra compute, ``computes.py``).
"""

from __future__ import annotations

import configparser
import contextlib
import os
import shlex
from pathlib import Path

from pydantic import BaseModel, Field

from .executables import HelperPaths
from .ports import PortBlock
from .provision import GNS3_SERVER_VERSION

STATE_FILE = "lab-state.json"
ENV_FILE = "lab.env"
CONFIG_FILE = "gns3_server.conf"
SERVER_LOG = "server.log"
CONSOLE_LOG = "server-console.log"
DATABASE_FILE = "gns3_controller.db"
INSTANCE_FOLDERS = ("projects", "images", "appliances", "symbols", "configs")


class ComputeState(BaseModel):
    """What the state file records about one of the lab's extra computes (no secrets)."""

    compute_id: str
    name: str
    host: str
    pid: int
    port: int
    url: str
    instance_dir: Path
    ports: PortBlock


class LabState(BaseModel):
    """What ``lab-state.json`` records about a started lab (no secrets)."""

    lab_id: str
    pid: int
    port: int
    url: str
    username: str
    instance_dir: Path
    env_file: Path
    started_at: float
    ports: PortBlock
    gns3_server_version: str = GNS3_SERVER_VERSION
    computes: list[ComputeState] = Field(default_factory=list)


def read_env_file(path: Path) -> dict[str, str]:
    """Parse a ``KEY=value`` file as written by ``write_env_file`` ({} if missing)."""
    try:
        lines = path.read_text().splitlines()
    except OSError:
        return {}
    values = {}
    for line in lines:
        key, sep, raw = line.partition("=")
        if sep and key.strip() and not key.startswith("#"):
            words = shlex.split(raw)
            values[key.strip()] = words[0] if words else ""
    return values


def write_env_file(path: Path, values: dict[str, str]) -> None:
    """Write ``KEY='value'`` lines, readable by the owner only (0600)."""
    path.unlink(missing_ok=True)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w") as out:
        out.write("# GNS3 lab credentials: `set -a; . ./lab.env; set +a` loads them in a shell\n")
        out.writelines(f"{key}={shlex.quote(value)}\n" for key, value in values.items())


def read_state(instance_dir: Path) -> LabState | None:
    try:
        return LabState.model_validate_json((instance_dir / STATE_FILE).read_text())
    except (OSError, ValueError):
        return None


def log_tail(instance_dir: Path, lines: int = 25) -> str:
    parts = []
    for name in (SERVER_LOG, CONSOLE_LOG):
        with contextlib.suppress(OSError):
            text = (instance_dir / name).read_text(errors="replace").strip()
            if text:
                tail = "\n".join(text.splitlines()[-lines:])
                parts.append(f"--- last lines of {instance_dir / name} ---\n{tail}")
    return "\n".join(parts) or f"(no log output in {instance_dir})"


def write_config(
    instance: Path,
    port: int,
    block: PortBlock,
    helpers: HelperPaths,
    credentials: tuple[str, str],
    compute_credentials: tuple[str, str],
    host: str = "127.0.0.1",
    name: str | None = None,
) -> None:
    """Write ``gns3_server.conf`` (0600) for host:port (a loopback address), the block's
    port ranges, the helper executables, the admin ``(username, password)`` and the
    compute ``(username, password)`` its controller uses with its computes; create its
    folders. ``name``: the server's name (GNS3's default is the host name)."""
    for folder in INSTANCE_FOLDERS:
        (instance / folder).mkdir(exist_ok=True)
    config = configparser.ConfigParser(interpolation=None)
    config["Server"] = {
        "host": host,
        "port": str(port),
        "report_errors": "False",
        **{f"{folder}_path": str(instance / folder) for folder in INSTANCE_FOLDERS},
        "console_start_port_range": str(block.console_start),
        "console_end_port_range": str(block.console_end),
        "udp_start_port_range": str(block.udp_start),
        "udp_end_port_range": str(block.udp_end),
        "ubridge_path": str(helpers.ubridge),
        "enable_builtin_templates": "True",
        "install_builtin_appliances": "False",
        "auto_discover_images": "False",
        "compute_username": compute_credentials[0],
        "compute_password": compute_credentials[1],
        **({"name": name} if name else {}),
    }
    config["Controller"] = {
        "default_admin_username": credentials[0],
        "default_admin_password": credentials[1],
    }
    config["VPCS"] = {"vpcs_path": str(helpers.vpcs)}
    config["Dynamips"] = {"dynamips_path": str(helpers.dynamips)}
    # The Linux router (router.py) is emulated: a paravirtual /dev/kvm boots no stock kernel.
    config["Qemu"] = {
        "enable_hardware_acceleration": "False",
        "require_hardware_acceleration": "False",
    }
    path = instance / CONFIG_FILE
    with path.open("w") as out:
        config.write(out)
    path.chmod(0o600)
