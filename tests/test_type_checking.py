"""mypy checks the whole package strictly (docs/development.md, "Type checking"): the
settings in pyproject.toml, as mypy itself reads them, give every module of
`jupyter_gns3_copilot`, and one not written yet, every check `--strict` turns on.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from mypy.main import define_options, process_options

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "jupyter_gns3_copilot"


def modules() -> list[str]:
    """Every module of the package, and one of a subpackage nobody has added yet."""
    names = ["jupyter_gns3_copilot.a_new_subpackage.module"]
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def test_every_module_of_the_package_is_checked_strictly(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(ROOT)
    _, options = process_options(["--config-file", "pyproject.toml"], require_targets=False)
    _, _, strict = define_options()
    loose: dict[str, list[str]] = {}
    for module in modules():
        settings = options.clone_for_module(module)
        missing = [flag for flag, value in strict if getattr(settings, flag) != value]
        if missing:
            loose[module] = missing
    assert strict and not loose
