"""Reading a `lab.yaml`: YAML with line numbers, the lab file's schema, and the checks a
schema cannot make.

`load_lab(text, source)` returns a `LabDocument` or raises `LabFileError` listing every
problem with its file, line and field; nothing of an invalid file runs. What is checked:

- YAML syntax, duplicate keys (YAML would keep the last silently), size;
- the schema (`model.py`, shipped as `lab.schema.json`): fields, types, kinds, ranges;
- unique stage and objective ids;
- every template renders, for a sample student, into a valid lab (an address template
  that renders to no address is found here, not in class);
- the commands of `command`, `parsed` and `json` checks are read-only for the dialects known at
  this point (`platform`, or the nodes' dialects given by `LabDocument.check_commands`):
  a check never changes a device.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml
from pydantic import ValidationError

from ..console import DialectError, dialect_by_name
from ..devices.policy import CommandPolicy
from .errors import LabFileError, LabProblem
from .fault_model import STEP_KINDS, ConfigStep, MtuStep, NodeStoppedStep
from .model import (
    CHECK_KINDS,
    Check,
    CommandCheck,
    LabFile,
    LinkCheck,
    ParsedCheck,
    ReachableCheck,
    TrafficCheck,
)
from .model_base import FOUND, is_ipv4, is_template, link_ports
from .parameters import ParameterValue, student_values
from .routing_model import JsonCheck
from .templating import RenderProblem, render_data

MAX_LAB_BYTES = 512 * 1024
"""Largest lab file read: far above any lab (a hundred objectives are ~20 kB)."""
SAMPLE_USER = "lab-file-check"
"""The student a file's templates are tried with when it is loaded."""
SAMPLE_SALT = "lab-file-check"
POLICY_DIALECTS = ("vpcs", "cisco_ios", "frr", "linux")
"""The dialects the command policy knows."""

Path_ = tuple[str | int, ...]
DialectOf = Callable[[str], str | None]
"""A node name's console dialect (`vpcs`, `cisco_ios`, `linux`), None when unknown."""
CommandCheckFn = Callable[[str, str], str | None]
"""(command, dialect) -> why it may not run as a read-only check, or None."""


@dataclass(frozen=True)
class LabDocument:
    """A valid lab file: the lab (templates unrendered), where it came from, and the line
    of each of its fields (for problems found later, e.g. against a project's nodes)."""

    lab: LabFile
    source: str
    text: str
    lines: Mapping[Path_, int] = field(repr=False)

    def problem(self, path: Path_, message: str) -> LabProblem:
        """A problem at `path` of this file."""
        return LabProblem(self.source, line_of(self.lines, path), dotted(path), message)

    def render(self, values: Mapping[str, ParameterValue]) -> LabFile:
        """The lab with every template rendered with `values` (one student's)."""
        return _render(self, values)

    def for_student(self, user: str, salt: str | bytes) -> LabFile:
        """The lab as `user` sees it under the class's `salt`."""
        return self.render(student_values(self.lab, user, salt))

    def check_commands(self, refused: CommandCheckFn, dialect_of: DialectOf) -> None:
        """Raise `LabFileError` when a check's command would change a device
        (`command_problems`)."""
        problems = self.command_problems(refused, dialect_of)
        if problems:
            raise LabFileError(problems)

    def command_problems(self, refused: CommandCheckFn, dialect_of: DialectOf) -> list[LabProblem]:
        """The checks whose command would change a device. `refused` decides per dialect;
        the dialect is the check's `platform`, else the node's (`dialect_of`); for a node
        whose dialect is not known yet a command is refused when no dialect would run it
        read-only. Commands are judged as rendered for a sample student."""
        problems = []
        sample = self.for_student(SAMPLE_USER, SAMPLE_SALT)
        for path, check in command_checks(sample):
            known = (isinstance(check, ParsedCheck) and check.platform) or dialect_of(check.node)
            dialects = [_policy_dialect(known)] if known else list(POLICY_DIALECTS)
            reasons = [refused(check.command, dialect) for dialect in dialects]
            if all(reasons):
                on = f"on {check.node} ({known})" if known else "on any device"
                problems.append(
                    self.problem(
                        (*path, "command"),
                        f"a check may only read a device; {check.command!r} is refused "
                        f"{on}: {_first_sentence(reasons[0])}",
                    )
                )
        return problems

    def node_problems(self, nodes: Collection[str]) -> list[LabProblem]:
        """The checks that name a node that is not one of `nodes` (the project's; case does
        not matter, as when a check runs). Names are judged as rendered for a sample
        student."""
        known = {name.lower() for name in nodes}
        listed = ", ".join(sorted(nodes, key=str.lower))
        has = f"its nodes are {listed}" if nodes else "it has no nodes yet"
        return [
            self.problem(path, f"the project has no node called {name} ({has})")
            for path, name in node_names(self.for_student(SAMPLE_USER, SAMPLE_SALT))
            if name.lower() not in known
        ]


def load_lab(
    text: str | bytes, source: str = "lab.yaml", *, refused: CommandCheckFn | None = None
) -> LabDocument:
    """Read and check a lab file (module docstring); `source` names it in problems.
    `refused` judges check commands (default: the shipped command policy's read-only
    rules)."""
    if len(text) > MAX_LAB_BYTES:
        raise LabFileError(
            [LabProblem(source, 1, "", f"the file is over {MAX_LAB_BYTES // 1024} kB")]
        )
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise LabFileError([LabProblem(source, 1, "", f"not UTF-8 text ({exc})")]) from None
    data, lines = _parse_yaml(text, source)
    document = _validate(data, lines, source, text)
    document.check_commands(refused or _refused_by_policy, lambda _node: None)
    return document


def command_checks(
    lab: LabFile,
) -> Iterator[tuple[Path_, CommandCheck | ParsedCheck | JsonCheck]]:
    """Every `command`, `parsed` and `json` check (the checks that name their command)
    with its path in the file."""
    for path, check in _checks(lab):
        if isinstance(check, CommandCheck | ParsedCheck | JsonCheck):
            yield path, check


def node_names(lab: LabFile) -> Iterator[tuple[Path_, str]]:
    """Every node a check or a fault names, with its path in the file (an address in `to`
    is not a node)."""
    yield from _fault_nodes(lab)
    for path, check in _checks(lab):
        if isinstance(check, ReachableCheck):
            yield (*path, "from"), check.source
            if not is_ipv4(check.to):
                yield (*path, "to"), check.to
        elif isinstance(check, LinkCheck):
            for i, end in enumerate(check.between):
                if isinstance(end, str):
                    yield (*path, "between", i), end
                else:
                    yield (*path, "between", i, 0), end[0]
        elif isinstance(check, TrafficCheck):
            ends = link_ports(check.link)
            if isinstance(check.link, str):
                yield (*path, "link"), ends.a
                yield (*path, "link"), ends.b
            else:
                yield (*path, "link", "a"), ends.a
                yield (*path, "link", "b"), ends.b
            if check.during is not None:
                ping = check.during.ping
                yield (*path, "during", "ping", "from"), ping.source
                if not is_ipv4(ping.to):
                    yield (*path, "during", "ping", "to"), ping.to
        else:
            yield (*path, "node"), check.node


def _fault_nodes(lab: LabFile) -> Iterator[tuple[Path_, str]]:
    for f, fault in enumerate(lab.faults):
        yield ("faults", f, "diagnosis", "device"), fault.diagnosis.device
        for i, step in enumerate(fault.apply):
            path: Path_ = ("faults", f, "apply", i)
            if isinstance(step, ConfigStep | NodeStoppedStep | MtuStep):
                yield (*path, "node"), step.node
            elif not (isinstance(step.link, str) and is_template(step.link)):
                ends = link_ports(step.link)
                yield (*path, "link"), ends.a
                yield (*path, "link"), ends.b


def _checks(lab: LabFile) -> Iterator[tuple[Path_, Check]]:
    """Every check with its path in the file."""
    for s, stage in enumerate(lab.stages):
        for o, objective in enumerate(stage.objectives):
            base: Path_ = ("stages", s, "objectives", o)
            if objective.check is not None:
                yield (*base, "check"), objective.check
            else:
                way = "all" if objective.all is not None else "any"
                for i, check in enumerate(objective.checks):
                    yield (*base, way, i), check


def line_of(lines: Mapping[Path_, int], path: Path_) -> int:
    """The line of `path`, or of its nearest enclosing field that is in the file."""
    while path and path not in lines:
        path = path[:-1]
    return lines.get(path, 1)


def dotted(path: Path_) -> str:
    """`("stages", 0, "title")` as `stages[0].title`."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


# -- YAML with lines ---------------------------------------------------------------------------


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader with YAML 1.2's booleans: only true and false, so `hints: off`
    is the word off and a node called `yes` stays a name."""


_BOOL = "tag:yaml.org,2002:bool"
_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != _BOOL]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver(
    _BOOL, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)


def _parse_yaml(text: str, source: str) -> tuple[dict[str, object], dict[Path_, int]]:
    try:
        root = yaml.compose(text, Loader=_Loader)
        data = yaml.load(text, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 1
        raise LabFileError(
            [LabProblem(source, line, "", f"not valid YAML: {exc.problem or exc}")]
        ) from None
    except yaml.YAMLError as exc:
        raise LabFileError([LabProblem(source, 1, "", f"not valid YAML: {exc}")]) from None
    if root is None or not isinstance(data, dict):
        raise LabFileError(
            [LabProblem(source, 1, "", "a lab file is a mapping with title and stages")]
        )
    lines: dict[Path_, int] = {}
    problems: list[LabProblem] = []
    _record_lines(root, (), lines, problems, source)
    if problems:
        raise LabFileError(problems)
    return data, lines


def _record_lines(
    node: yaml.Node,
    path: Path_,
    lines: dict[Path_, int],
    problems: list[LabProblem],
    source: str,
) -> None:
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        seen: set[object] = set()
        for key_node, value_node in node.value:
            key = key_node.value
            if key in seen:
                problems.append(
                    LabProblem(
                        source,
                        key_node.start_mark.line + 1,
                        dotted((*path, key)),
                        f"{key!r} is given twice",
                    )
                )
            seen.add(key)
            key_path = (*path, key)
            lines[key_path] = key_node.start_mark.line + 1
            _record_lines(value_node, key_path, lines, problems, source)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _record_lines(item, (*path, index), lines, problems, source)


# -- schema and ids ----------------------------------------------------------------------------


def _validate(data: object, lines: Mapping[Path_, int], source: str, text: str) -> LabDocument:
    try:
        lab = LabFile.model_validate(data)
    except ValidationError as exc:
        raise LabFileError(_schema_problems(exc, data, lines, source)) from None
    document = LabDocument(lab, source, text, lines)
    problems = _duplicate_ids(document) + _fault_problems(document)
    if problems:
        raise LabFileError(problems)
    return document


def _schema_problems(
    exc: ValidationError, data: object, lines: Mapping[Path_, int], source: str
) -> list[LabProblem]:
    problems = []
    for error in exc.errors(include_url=False):
        path = _data_path(error["loc"], data)
        message = error["msg"].removeprefix("Value error, ")
        if error["type"] == "extra_forbidden":
            message = f"unknown field {path[-1]!r}" if path else "unknown field"
        elif error["type"] == "union_tag_invalid":
            message = f"unknown check kind; the kinds are {_kinds()}"
        elif error["type"] == "string_pattern_mismatch" and path and path[-1] == "id":
            message = "an id starts with a letter, then letters, digits, _ or - (at most 64)"
        elif error["type"] == "union_tag_not_found":
            message = f"a check names its kind with kind: ({_kinds()})"
        problems.append(LabProblem(source, line_of(lines, path), dotted(path), message))
    return problems


def _data_path(loc: tuple[int | str, ...], data: object) -> Path_:
    """The path in the file's data of a validation error's `loc`: the union tags and
    validator names pydantic inserts (`reachable`, `function-after[...]`) are left out."""
    path: list[str | int] = []
    current: Any = data  # the lab file's YAML, walked down by `loc`
    tag_seen = False
    for part in loc:
        if not tag_seen and isinstance(current, Mapping) and current.get("kind") == part:
            tag_seen = True  # the union's tag, not the field of the same name
            continue
        if _holds(current, part):
            current = current[part]
            path.append(part)
            tag_seen = False
        elif isinstance(current, Mapping) and isinstance(part, str) and not _is_tag(part):
            path.append(part)  # a missing field: named, with its parent's line
            current = None
    return tuple(path)


def _holds(data: object, part: object) -> bool:
    if isinstance(data, Mapping):
        return part in data
    return isinstance(data, list) and isinstance(part, int) and 0 <= part < len(data)


def _is_tag(part: str) -> bool:
    return part in CHECK_KINDS or part in STEP_KINDS or "[" in part


def _kinds() -> str:
    return ", ".join(CHECK_KINDS)


def _duplicate_ids(document: LabDocument) -> list[LabProblem]:
    problems = []
    stages: set[str] = set()
    objectives: set[str] = set()
    for s, stage in enumerate(document.lab.stages):
        if stage.id in stages:
            problems.append(
                document.problem(("stages", s, "id"), f"another stage has the id {stage.id!r}")
            )
        stages.add(stage.id)
        for o, objective in enumerate(stage.objectives):
            if objective.id in objectives:
                problems.append(
                    document.problem(
                        ("stages", s, "objectives", o, "id"),
                        f"another objective has the id {objective.id!r}",
                    )
                )
            objectives.add(objective.id)
    return problems


def _fault_problems(document: LabDocument) -> list[LabProblem]:
    """Faults with a taken id, or naming a stage or an objective the lab does not have."""
    lab = document.lab
    objectives = lab.objective_ids()
    stages = [s.id for s in lab.stages]
    problems = []
    seen: set[str] = set()
    for f, fault in enumerate(lab.faults):
        if fault.id in seen:
            problems.append(
                document.problem(("faults", f, "id"), f"another fault has the id {fault.id!r}")
            )
        seen.add(fault.id)
        if fault.stage is not None and fault.stage not in stages:
            problems.append(
                document.problem(
                    ("faults", f, "stage"),
                    f"no stage {fault.stage!r} (stages: {', '.join(stages)})",
                )
            )
        for b, objective in enumerate(fault.breaks):
            if objective not in objectives:
                problems.append(
                    document.problem(
                        ("faults", f, "breaks", b), f"no objective {objective!r} in the lab"
                    )
                )
    return problems


# -- rendering -----------------------------------------------------------------------------------


def _render(document: LabDocument, values: Mapping[str, ParameterValue]) -> LabFile:
    data = document.lab.model_dump(by_alias=True, exclude_unset=True)
    data.pop("parameters", None)
    # A command check's `say` names `{{ found }}` too, known only when the check runs: it
    # renders to itself here, for the check to fill in.
    says = {path: check.pop("say") for path, check in check_data(data) if "say" in check}
    late = {**values, FOUND: f"{{{{ {FOUND} }}}}"}
    try:
        rendered = render_data(data, values)
        assert isinstance(rendered, dict)  # a mapping renders to a mapping
        for path, say in says.items():
            _at(rendered, path)["say"] = render_data(say, late, (*path, "say"))
    except RenderProblem as exc:
        raise LabFileError([document.problem(exc.path, str(exc))]) from None
    rendered["parameters"] = document.lab.model_dump(by_alias=True)["parameters"]
    try:
        return LabFile.model_validate(rendered)
    except ValidationError as exc:
        problems = _schema_problems(exc, rendered, document.lines, document.source)
        raise LabFileError(
            [
                LabProblem(p.source, p.line, p.field, f"{p.message} (once rendered)")
                for p in problems
            ]
        ) from None


def check_data(data: Mapping[str, Any]) -> Iterator[tuple[Path_, dict[str, Any]]]:
    """Every check of a lab file's data (as `model_dump` gives it) with its path."""
    for s, stage in enumerate(data.get("stages", [])):
        for o, objective in enumerate(stage.get("objectives", [])):
            base: Path_ = ("stages", s, "objectives", o)
            if isinstance(objective.get("check"), dict):
                yield (*base, "check"), objective["check"]
            for way in ("all", "any"):
                for i, check in enumerate(objective.get(way) or []):
                    yield (*base, way, i), check


def _at(data: Any, path: Path_) -> Any:
    for part in path:
        data = data[part]
    return data


# -- commands ------------------------------------------------------------------------------------


def _policy_dialect(platform: str) -> str:
    """The command policy's dialect for a platform name (`cisco_ios`, `vpcs`, `linux`)."""
    try:
        return dialect_by_name(platform).name
    except DialectError:
        return platform


def _first_sentence(text: str | None) -> str:
    """The policy's reason without its advice to the model."""
    return (text or "").split(". ")[0].rstrip(".")


def _refused_by_policy(command: str, dialect: str) -> str | None:
    return CommandPolicy().check(command, dialect=dialect, read_only=True)
