"""The house's size figures, measured from the code as it stands: package files over 500
lines, classes over 25 methods (Python and the TypeScript front end), hand-written
TypeScript types that copy a pydantic model, `Any` per subpackage and the subpackages
mypy checks strictly. tests/test_rooms.py holds the package to the first two, with the
exceptions docs/architecture.md names.

    python benchmarks/structure.py
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "jupyter_gns3_copilot"
FRONTEND = ROOT / "labextension" / "src"
MAX_LINES = 500
MAX_METHODS = 25
ASIDE = ("testing/", "labkit/standins/")
"""The test doubles and the lab kit's stand-ins: code of the tests, outside the rule."""


@dataclass(frozen=True)
class Room:
    """A file or a class over its size limit: `where` is a path below the repository,
    with `::Class` for a class."""

    where: str
    size: int


def package_files() -> Iterator[Path]:
    """The package's Python files, the test doubles and stand-ins left out."""
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if not relative.startswith(ASIDE):
            yield path


def frontend_files() -> Iterator[Path]:
    """The front end's own TypeScript: no tests, nothing generated."""
    for path in sorted(FRONTEND.rglob("*.ts")):
        relative = path.relative_to(FRONTEND).as_posix()
        if not (relative.startswith("generated/") or ".test." in path.name):
            yield path


def _name(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def long_files() -> list[Room]:
    """Package files over `MAX_LINES` lines (Python and TypeScript)."""
    rooms = []
    for path in [*package_files(), *frontend_files()]:
        lines = len(path.read_text().splitlines())
        if lines > MAX_LINES:
            rooms.append(Room(_name(path), lines))
    return rooms


def python_classes() -> Iterator[tuple[str, int]]:
    """Each class of the package as `path::Class` and how many functions its body defines."""
    for path in package_files():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                methods = [
                    item
                    for item in node.body
                    if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
                ]
                yield f"{_name(path)}::{node.name}", len(methods)


_TS_CLASS = re.compile(r"^(export )?(default )?(abstract )?class (\w+)", re.MULTILINE)
_TS_METHOD = re.compile(
    r"^  (?:(?:public|private|protected|static|async|readonly|override|get|set) )*"
    r"#?\w+\s*(?:<[^>]*>)?\([^;]*$"
)


def typescript_classes() -> Iterator[tuple[str, int]]:
    """Each class of the front end and how many methods it defines (members two spaces in
    that open a parameter list and do not end in `;`, as the code is formatted)."""
    for path in frontend_files():
        text = path.read_text()
        for match in _TS_CLASS.finditer(text):
            body = text[match.end() :].split("\n}\n", 1)[0]
            methods = sum(
                1
                for line in body.splitlines()
                if _TS_METHOD.match(line) and not line.lstrip().startswith(("if", "for", "while"))
            )
            yield f"{_name(path)}::{match.group(4)}", methods


def big_classes() -> list[Room]:
    """Classes over `MAX_METHODS` methods, Python and TypeScript."""
    return [
        Room(where, count)
        for where, count in [*python_classes(), *typescript_classes()]
        if count > MAX_METHODS
    ]


def pydantic_models() -> dict[str, set[str]]:
    """The package's pydantic models by class name, with their field names (a model
    subclassing another of the package inherits its fields as written there)."""
    bases: dict[str, list[str]] = {}
    fields: dict[str, set[str]] = {}
    for path in package_files():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                bases[node.name] = [ast.unparse(base).split(".")[-1] for base in node.bases]
                fields[node.name] = {
                    item.target.id
                    for item in node.body
                    if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)
                }

    def is_model(name: str, seen: frozenset[str] = frozenset()) -> bool:
        if name in seen or name not in bases:
            return False
        return any(
            base in ("BaseModel", "RootModel") or is_model(base, seen | {name})
            for base in bases[name]
        )

    def all_fields(name: str) -> set[str]:
        inherited = [all_fields(base) for base in bases.get(name, []) if base in bases]
        return fields.get(name, set()).union(*inherited)

    return {name: all_fields(name) for name in bases if is_model(name)}


_TS_TYPE = re.compile(r"^export (?:interface (\w+)[^{]*\{|type (\w+) = \{)", re.MULTILINE)
_TS_FIELD = re.compile(r"^  (?:readonly )?(\w+)\??:([^;]*);", re.MULTILINE)


def copied_models() -> list[str]:
    """Hand-written TypeScript object types that copy a pydantic model: the same name, or
    at least three fields, all of one model's, none of them typed with the front end's own
    view types (a view built from a model is not a copy of it)."""
    models = pydantic_models()
    declared = {
        path: [(m.group(1) or m.group(2), m.end()) for m in _TS_TYPE.finditer(path.read_text())]
        for path in frontend_files()
    }
    views = {name for found in declared.values() for name, _ in found}
    copies = []
    for path, found in declared.items():
        text = path.read_text()
        for name, end in found:
            body = text[end:].split("\n}", 1)[0]
            fields = dict(_TS_FIELD.findall(body))
            names = set(fields)
            same = name in models and bool(names & models[name])
            typed_by_views = any(set(re.findall(r"\w+", kind)) & views for kind in fields.values())
            subset = (
                len(names) >= 3
                and not typed_by_views
                and any(names <= model for model in models.values())
            )
            if same or subset:
                copies.append(f"{_name(path)}::{name}")
    return copies


def any_per_subpackage() -> Counter[str]:
    """How often the code names `Any`, by subpackage (a root module counts as its own)."""
    counts: Counter[str] = Counter()
    for path in package_files():
        part = path.relative_to(PACKAGE).parts[0]
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Name) and node.id == "Any") or (
                isinstance(node, ast.Attribute) and node.attr == "Any"
            ):
                counts[part] += 1
    return counts


def strict_subpackages() -> tuple[list[str], list[str]]:
    """The subpackages (and root modules) that mypy checks strictly, and those it does not:
    all of them when `[tool.mypy]` sets `strict = true`, else those an override lists with
    the strict checks."""
    # pyproject.toml is read as text: tomllib is not in Python 3.10.
    config = (ROOT / "pyproject.toml").read_text()
    blocks = config.split("[[tool.mypy.overrides]]")
    top = blocks[0].split("[tool.mypy]", 1)[-1].split("\n[", 1)[0]
    everything = set()
    for path in package_files():
        relative = path.relative_to(PACKAGE)
        if relative.parts[0] not in ("__init__.py", "_version.py"):
            everything.add(relative.parts[0].removesuffix(".py"))
    if re.search(r"^strict = true$", top, re.MULTILINE):
        return sorted(everything), []
    strict = set()
    for block in blocks[1:]:
        block = block.split("\n[", 1)[0]
        if "disallow_untyped_defs = true" in block:
            for module in re.findall(r'"jupyter_gns3_copilot\.([\w.]+?)(?:\.\*)?"', block):
                strict.add(module)
    return sorted(everything & strict), sorted(everything - strict)


def _is_module(part: str) -> bool:
    return (PACKAGE / f"{part}.py").is_file()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="the same figures (they are quick)")
    parser.parse_args()
    files = long_files()
    print(f"files over {MAX_LINES} lines: {len(files)}")
    for room in sorted(files, key=lambda room: -room.size):
        print(f"  {room.size:5d}  {room.where}")
    classes = big_classes()
    print(f"classes over {MAX_METHODS} methods: {len(classes)}")
    for room in sorted(classes, key=lambda room: -room.size):
        print(f"  {room.size:5d}  {room.where}")
    copies = copied_models()
    print(f"hand-written TypeScript types copying a Python model: {len(copies)}")
    for copy in copies:
        print(f"         {copy}")
    counts = any_per_subpackage()
    print(
        f"Any: {sum(counts.values())} in all; "
        + ", ".join(f"{part} {count}" for part, count in counts.most_common())
    )
    strict, loose = strict_subpackages()
    for kind, is_kind in (("subpackages", str.isidentifier), ("root modules", _is_module)):
        yes = [
            part
            for part in strict
            if is_kind(part) and (kind != "subpackages" or (PACKAGE / part).is_dir())
        ]
        no = [
            part
            for part in loose
            if is_kind(part) and (kind != "subpackages" or (PACKAGE / part).is_dir())
        ]
        print(
            f"mypy strict {kind}: {len(yes)} of {len(yes) + len(no)}; not: {', '.join(no) or '-'}"
        )


if __name__ == "__main__":
    sys.exit(main())
