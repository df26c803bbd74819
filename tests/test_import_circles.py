"""No import circle between the modules of a package (type-only imports included), read
from the source itself, in the packages that have none (the sizes of files and classes:
tests/test_rooms.py)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import jupyter_gns3_copilot

PACKAGE = Path(jupyter_gns3_copilot.__file__).parent
CORE = ["gns3", "console", "labkit", "hub"]


def modules(package: str) -> dict[str, ast.Module]:
    return {
        path.stem: ast.parse(path.read_text(encoding="utf-8"))
        for path in sorted((PACKAGE / package).glob("*.py"))
    }


def sibling_imports(tree: ast.Module, siblings: set[str]) -> set[str]:
    """The modules of the same package that `tree` imports (`from .x import ...`)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            names = [node.module.split(".")[0]] if node.module else [a.name for a in node.names]
            found.update(name for name in names if name in siblings)
    return found


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


@pytest.mark.parametrize("package", CORE)
def test_no_import_circle_between_the_modules_of(package: str) -> None:
    trees = modules(package)
    graph = {name: sibling_imports(tree, set(trees)) for name, tree in trees.items()}
    assert circles(graph) == []


def test_the_circle_finder_finds_a_circle() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
