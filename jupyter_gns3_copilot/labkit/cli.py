"""``gns3-copilot-lab start|stop|status|provision``: the local GNS3 lab from a shell.

The default lab lives in ``<cache>/lab`` (one named default lab); ``--instance-dir``
selects another. ``start`` returns once the server answers and keeps it running after
the command exits (``--computes N`` adds N computes to its controller); ``stop`` ends it,
its computes and every process it started; ``status`` prints JSON (computes included)
and exits 0 when the lab runs, 1 when it does not; ``provision`` only installs what a
lab needs (gns3-server's venv, a check for VPCS), so CI pays for it outside any test.
"""

from __future__ import annotations

import argparse
import logging
import shlex
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from .errors import LabError, LabNotRunning
from .frr import unpacked_frr
from .provision import ensure_gns3_server, find_vpcs, resolve_cache_dir
from .router import RouterUnavailable
from .server import LabServer


def _instance_dir(args: argparse.Namespace) -> Path:
    if args.instance_dir:
        return Path(args.instance_dir).expanduser().resolve()
    return resolve_cache_dir(args.cache_dir) / "lab"


def _attached(args: argparse.Namespace) -> LabServer | None:
    try:
        return LabServer.from_instance(_instance_dir(args), cache_dir=args.cache_dir)
    except LabNotRunning:
        return None


def _print_lab(lab: LabServer, headline: str) -> None:
    env_file = shlex.quote(str(lab.env_file))
    print(headline)
    print(f"  url:      {lab.url}")
    print(f"  user:     {lab.username}")
    print(f"  password: {lab.password}")
    print(f"  env file: {lab.env_file}  (load it: set -a; . {env_file}; set +a)")
    print(f"  pid:      {lab.pid}")
    for compute in lab.computes:
        print(f"  compute:  {compute.name} at {compute.url} (id {compute.compute_id})")
    print(
        f"Stop it with: gns3-copilot-lab stop --instance-dir {shlex.quote(str(lab.instance_dir))}"
    )


def _start(args: argparse.Namespace) -> int:
    running = _attached(args)
    if running is not None and running.is_running():
        _print_lab(running, "The GNS3 lab is already running.")
        if len(running.computes) != args.computes:
            print(f"It has {len(running.computes)} extra computes: stop it to change that.")
        return 0
    lab = LabServer(
        port=args.port,
        cache_dir=args.cache_dir,
        instance_dir=_instance_dir(args),
        computes=args.computes,
    )
    began = time.monotonic()
    lab.start(timeout=args.timeout)
    _print_lab(lab, f"GNS3 lab started in {time.monotonic() - began:.1f} s.")
    return 0


def _stop(args: argparse.Namespace) -> int:
    lab = _attached(args)
    if lab is None:
        print(f"No lab to stop in {_instance_dir(args)}.")
        return 0
    was_running = lab.is_running()
    began = time.monotonic()
    lab.stop()
    verb = "Stopped" if was_running else "Cleaned up after"
    print(f"{verb} the GNS3 lab in {_instance_dir(args)} ({time.monotonic() - began:.1f} s).")
    return 0


def _status(args: argparse.Namespace) -> int:
    lab = _attached(args) or LabServer(cache_dir=args.cache_dir, instance_dir=_instance_dir(args))
    status = lab.status()
    print(status.model_dump_json(indent=2))
    return 0 if status.running else 1


def _provision(args: argparse.Namespace) -> int:
    cache_dir = resolve_cache_dir(args.cache_dir)
    print(f"gns3server: {ensure_gns3_server(cache_dir)}")
    print(f"vpcs: {find_vpcs()}")
    try:
        print(f"FRR router packages: {unpacked_frr(cache_dir)}")
    except RouterUnavailable as exc:
        print(f"no FRR router: {exc}")
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gns3-copilot-lab",
        description="A local GNS3 v3 server (gns3-server 3.0.6, VPCS, switch/hub stand-ins).",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    for name, help_text in (
        ("start", "start the lab (installs gns3-server on first use) and print its credentials"),
        ("stop", "stop the lab and every process it started"),
        ("status", "print the lab's status as JSON (exit 1 when not running)"),
        ("provision", "install gns3-server into its own venv and check for VPCS, then exit"),
    ):
        command = commands.add_parser(name, help=help_text)
        command.add_argument(
            "--cache-dir",
            help="where gns3-server's venv lives (default: "
            "$GNS3_COPILOT_LAB_CACHE or ~/.cache/jupyter_gns3_copilot)",
        )
        command.add_argument("--instance-dir", help="the lab's directory (default: <cache>/lab)")
        if name == "start":
            command.add_argument("--port", type=int, help="TCP port (default: a free one)")
            command.add_argument(
                "--computes",
                type=int,
                default=0,
                metavar="N",
                help="also run N gns3-server processes as computes of the lab's controller "
                "(named compute-1...; default: 0, nodes only on the controller's own compute)",
            )
            command.add_argument(
                "--timeout",
                type=float,
                default=120.0,
                help="seconds to wait for the server (default: 120)",
            )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    logging.getLogger("jupyter_gns3_copilot").setLevel(logging.INFO)
    actions = {"start": _start, "stop": _stop, "status": _status, "provision": _provision}
    try:
        return actions[args.command](args)
    except LabError as error:
        print(f"gns3-copilot-lab {args.command}: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
