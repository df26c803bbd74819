"""The device layer sits below the tools and the lab objectives: lab checks read devices
without going through the tools, and the device layer uses neither."""

from __future__ import annotations

import json
import subprocess
import sys

_IMPORTS = (
    "import importlib, json, pkgutil, sys\n"
    "import jupyter_gns3_copilot.{package} as package\n"
    "for module in pkgutil.walk_packages(package.__path__, package.__name__ + '.'):\n"
    "    importlib.import_module(module.name)\n"
    "layers = ('tools', 'objectives', 'devices')\n"
    "print(json.dumps(sorted({{name.split('.')[1] for name in sys.modules\n"
    "                         if name.startswith('jupyter_gns3_copilot.')}} & set(layers))))\n"
)


def _layers_imported(package: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", _IMPORTS.format(package=package)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return list(json.loads(done.stdout))


def test_the_lab_objectives_import_the_device_layer_and_never_the_tools() -> None:
    assert _layers_imported("objectives") == ["devices", "objectives"]


def test_the_device_layer_imports_neither_the_tools_nor_the_objectives() -> None:
    assert _layers_imported("devices") == ["devices"]
