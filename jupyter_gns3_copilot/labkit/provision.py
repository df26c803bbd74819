"""What a local lab needs on this machine: gns3-server in its own venv, and VPCS.

gns3-server pins many libraries exactly (pydantic, fastapi, sqlalchemy...), so it gets
its own virtual environment ``<cache>/gns3-server-<version>``, installed from PyPI once
and reused. A file lock keeps two concurrent first starts from both installing.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from .errors import LabError
from .locks import file_lock

GNS3_SERVER_VERSION = "3.0.6"
CACHE_ENV = "GNS3_COPILOT_LAB_CACHE"
VPCS_CANDIDATES = ("/usr/bin/vpcs", "/usr/local/bin/vpcs")

log = logging.getLogger(__name__)


def resolve_cache_dir(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """The cache directory: the argument, else ``$GNS3_COPILOT_LAB_CACHE``, else
    ``$XDG_CACHE_HOME/jupyter_gns3_copilot``, else ``~/.cache/jupyter_gns3_copilot``."""
    if cache_dir:
        return Path(cache_dir).expanduser().resolve()
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).expanduser().resolve()
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg).expanduser().resolve() / "jupyter_gns3_copilot"


def venv_dir(cache_dir: Path) -> Path:
    return cache_dir / f"gns3-server-{GNS3_SERVER_VERSION}"


def _is_installed(venv: Path) -> bool:
    """The venv has a runnable Python and gns3-server's metadata (no subprocess: cheap)."""
    python = venv / "bin" / "python"
    if not (venv / "bin" / "gns3server").is_file() or not python.exists():
        return False
    pattern = f"lib/python*/site-packages/gns3_server-{GNS3_SERVER_VERSION}.dist-info/METADATA"
    return any(venv.glob(pattern))


def _run_logged(command: list[str], logfile: Path, timeout: float, what: str) -> None:
    with logfile.open("a") as out:
        try:
            result = subprocess.run(
                command, stdout=out, stderr=subprocess.STDOUT, timeout=timeout, check=False
            )
        except subprocess.TimeoutExpired:
            raise LabError(f"{what} took longer than {timeout:.0f} s; see {logfile}") from None
    if result.returncode != 0:
        tail = "\n".join(logfile.read_text(errors="replace").splitlines()[-15:])
        raise LabError(f"{what} failed (exit {result.returncode}); see {logfile}:\n{tail}")


def ensure_gns3_server(cache_dir: Path, timeout: float = 900.0) -> Path:
    """Return the ``gns3server`` executable, installing gns3-server into its venv if needed.

    A present venv is reused when it has a Python and gns3-server's metadata at this
    version; anything else there is rebuilt. Raises LabError (with the installer's
    output tail) when installing fails.
    """
    venv = venv_dir(cache_dir)
    executable = venv / "bin" / "gns3server"
    if _is_installed(venv):
        return executable
    with file_lock(
        cache_dir / f"{venv.name}.lock", timeout, "another process is installing gns3-server"
    ):
        if _is_installed(venv):
            return executable
        if venv.exists():
            log.warning("removing broken gns3-server environment %s", venv)
            shutil.rmtree(venv)
        logfile = cache_dir / f"{venv.name}-install.log"
        log.warning("installing gns3-server %s into %s (about a minute)", GNS3_SERVER_VERSION, venv)
        started = time.monotonic()
        _run_logged(
            [sys.executable, "-m", "venv", str(venv)],
            logfile,
            120,
            "creating a virtual environment (on Debian: apt-get install python3-venv)",
        )
        _run_logged(
            [
                str(venv / "bin" / "python"),
                "-m",
                "pip",
                "install",
                "--disable-pip-version-check",
                f"gns3-server=={GNS3_SERVER_VERSION}",
            ],
            logfile,
            max(timeout - (time.monotonic() - started), 60),
            f"pip install gns3-server=={GNS3_SERVER_VERSION}",
        )
        if not _is_installed(venv):
            raise LabError(f"gns3-server was installed into {venv} but does not run; see {logfile}")
        return executable


def find_vpcs() -> Path:
    """The real VPCS binary; LabError telling how to install it when missing."""
    found = shutil.which("vpcs")
    candidates = [found] if found else []
    candidates += [path for path in VPCS_CANDIDATES if Path(path).is_file()]
    for candidate in candidates:
        if os.access(candidate, os.X_OK):
            return Path(candidate).resolve()
    raise LabError(
        "VPCS (Virtual PC Simulator) is not installed; the local lab needs it. "
        "Install it with: sudo apt-get install vpcs"
    )
