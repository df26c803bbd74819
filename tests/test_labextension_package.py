"""The front end ships prebuilt: JupyterLab lists the extension as enabled and
OK, and a wheel built from the checkout carries the labextension (with `install.json`) and the
widget bundle, so installing the wheel needs no Node.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NAME = "jupyter-gns3-copilot"
SHARE = f"share/jupyter/labextensions/{NAME}"


def test_jupyterlab_lists_the_extension_enabled_and_ok() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "jupyter", "labextension", "list"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    listing = re.sub(r"\x1b\[[0-9;]*m", "", result.stdout + result.stderr)
    assert re.search(rf"{NAME} v\S+ enabled OK", listing), listing


@pytest.mark.slow
def test_the_wheel_carries_the_prebuilt_front_end(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(ROOT)],
        check=True,
        timeout=600,
    )
    (wheel,) = tmp_path.glob("jupyter_gns3_copilot-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    data = next(
        name.split("/")[0]
        for name in names
        if name.endswith(".data/data/" + SHARE + "/package.json")
    )
    shared = {name.removeprefix(f"{data}/data/") for name in names if name.startswith(data)}
    assert f"{SHARE}/install.json" in shared
    assert any(re.fullmatch(rf"{SHARE}/static/remoteEntry\.\w+\.js", name) for name in shared)
    assert "jupyter_gns3_copilot/static/widget.js" in names
    package = json.loads(zipfile.ZipFile(wheel).read(f"{data}/data/{SHARE}/package.json"))
    assert package["name"] == NAME
    assert package["jupyterlab"]["_build"]["load"].startswith("static/remoteEntry.")
