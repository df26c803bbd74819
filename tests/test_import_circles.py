"""No import circle between the modules of a package (type-only and function-level imports
included), read from the source itself, in every subpackage, nested ones too. Within a
package, a subpackage counts as one module: `server/handlers/base.py` importing
`server/app.py`, which imports `server/handlers/`, is a circle of `server/` (the sizes of
files and classes: tests/test_rooms.py)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import jupyter_gns3_copilot

PACKAGE = Path(jupyter_gns3_copilot.__file__).parent
SUBPACKAGES = sorted(
    {path.parent.relative_to(PACKAGE).as_posix() for path in PACKAGE.rglob("*.py")} - {"."}
)
"""Every directory below the package holding Python code, each a package here."""

Where = tuple[str, ...]
"""A module or package as its path of names below the package: ("server", "app")."""


def imported(node: ast.Import | ast.ImportFrom, package: Where) -> list[Where]:
    """What the import statement `node`, in a module of `package`, names inside the package
    (each module or name it imports, as a path below the package); other imports left out."""
    top = PACKAGE.name
    if isinstance(node, ast.Import):
        dotted = [alias.name.split(".") for alias in node.names]
        return [tuple(parts[1:]) for parts in dotted if parts[0] == top]
    if node.level == 0:
        parts = (node.module or "").split(".")
        base = tuple(parts[1:]) if parts[0] == top else None
    else:
        up = node.level - 1
        base = package[: len(package) - up] if up <= len(package) else None
        if base is not None and node.module:
            base += tuple(node.module.split("."))
    if base is None:
        return []
    return [(*base, alias.name) for alias in node.names]


def import_graph(package: str) -> dict[str, set[str]]:
    """The modules of `package` (its subpackages each as one), each with those of them it
    imports (`__init__` for a name the package itself holds)."""
    root = tuple(package.split("/"))
    directory = PACKAGE / package
    nodes = {
        path.relative_to(directory).parts[0].removesuffix(".py") for path in directory.rglob("*.py")
    }
    graph: dict[str, set[str]] = {node: set() for node in nodes}
    for path in sorted(directory.rglob("*.py")):
        source = path.relative_to(directory).parts[0].removesuffix(".py")
        owner = tuple(path.parent.relative_to(PACKAGE).parts)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            for target in imported(node, owner):
                if target[: len(root)] != root:
                    continue
                below = target[len(root) :]
                step = below[0] if below and below[0] in nodes else "__init__"
                if step != source and step in graph:
                    graph[source].add(step)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Each import circle, as the modules on it (found from its smallest module)."""
    found = []
    for start in sorted(graph):
        paths = [[start]]
        while paths:
            path = paths.pop()
            for step in sorted(graph[path[-1]]):
                if step == start:
                    found.append(path)
                elif step > start and step not in path:
                    paths.append([*path, step])
    return found


@pytest.mark.parametrize("package", SUBPACKAGES)
def test_no_import_circle_between_the_modules_of(package: str) -> None:
    assert circles(import_graph(package)) == []


def test_every_subpackage_is_read() -> None:
    """Nested packages included: the rule cannot pass by reading nothing."""
    assert {"gns3", "notebook", "server", "server/handlers", "devices/policy"} <= set(SUBPACKAGES)
    assert {"notebook/subcommands", "labkit/standins"} <= set(SUBPACKAGES)


def test_a_subpackage_counts_as_one_module_of_its_package() -> None:
    """`server/app.py` imports the handlers, whose modules import the app's package
    modules: the edges run from `handlers` as one module."""
    graph = import_graph("server")
    assert "handlers" in graph and "app" in graph
    assert "handlers" in graph["app"]
    assert "errors" in graph["handlers"]


def test_the_circle_finder_finds_a_circle() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
