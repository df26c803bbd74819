"""Sphinx extension: the pages of the documentation that are generated from the code.

A page holds a marker line, an HTML comment that renders nothing without this extension,
which the `source-read` event replaces with Markdown before MyST parses the page:

- `<!-- generated: traits package.module:Class -->`: a table of every configurable trait
  the class declares, itself or through the settings classes of its own package it
  inherits (name, environment variable, default, help); the traits of the framework it
  builds on (traitlets, jupyter_server) are not listed. The environment variable is read
  from the trait's `@default` method (the most derived one) (`os.environ.get(NAME, ...)`,
  `os.environ[NAME]`, `os.getenv(NAME)` or an `env_list(NAME)` helper, NAME a string or a
  module constant); the default is the method's docstring when it has one, else the value
  in an environment without those variables (a machine-dependent value is an error).
- `<!-- generated: openapi -->`: the API from `server.openapi.openapi_document`, route by
  route, then its schemas; the document itself is written next to the page as
  `openapi.json`.

Pages with a marker are rebuilt on every build (the code may have changed).
"""

from __future__ import annotations

import ast
import getpass
import inspect
import json
import os
import re
import textwrap
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from traitlets import HasTraits

MARKER = re.compile(r"^<!-- generated: (\w+)(?: (\S+))? -->$", re.MULTILINE)
OPENAPI_FILE = "openapi.json"
ENV_CALLS = {"get", "getenv", "env_list", "_env_list"}
"""Call names whose first argument names an environment variable (in `@default` methods)."""
JUPYTERHUB_ENV = ("JUPYTERHUB_API_TOKEN", "JUPYTERHUB_SERVICE_PREFIX", "JUPYTERHUB_SERVICE_URL")
"""Variables that change some defaults (hub mode, JupyterHub), removed while evaluating."""


@dataclass(frozen=True)
class TraitRow:
    name: str
    environment: tuple[str, ...]
    default: str
    """Markdown."""
    help: str


def settings_classes(cls: type) -> list[type]:
    """`cls` and the classes of its own top-level package it inherits from, bases first:
    the classes that declare its settings."""
    package = cls.__module__.split(".")[0]
    return [base for base in reversed(cls.__mro__) if base.__module__.split(".")[0] == package]


def _default_methods(cls: type) -> dict[str, ast.FunctionDef]:
    """The `@default("trait")` methods of the class body, by trait name."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    methods = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef):
            continue
        for decorator in node.decorator_list:
            if (
                isinstance(decorator, ast.Call)
                and isinstance(decorator.func, ast.Name)
                and decorator.func.id == "default"
                and decorator.args
                and isinstance(decorator.args[0], ast.Constant)
            ):
                methods[decorator.args[0].value] = node
    return methods


def _declaration_order(cls: type) -> list[str]:
    """The class's own attribute names in the order its body assigns them."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    body = tree.body[0]
    assert isinstance(body, ast.ClassDef)
    return [
        target.id
        for node in body.body
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name)
    ]


def environment_variables(cls: type, method: ast.FunctionDef) -> tuple[str, ...]:
    """The environment variables a `@default` method reads; an error when it reads the
    environment in a way this function does not understand."""
    module = inspect.getmodule(cls)
    names: list[str] = []
    source = ast.unparse(method)

    def resolve(node: ast.expr) -> str:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name) and isinstance(getattr(module, node.id, None), str):
            return getattr(module, node.id)
        raise ValueError(f"{cls.__name__}.{method.name}: cannot resolve {ast.unparse(node)}")

    for node in ast.walk(method):
        if isinstance(node, ast.Call) and node.args:
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            on_environ = isinstance(func, ast.Attribute) and ast.unparse(func.value) in (
                "os.environ",
                "os",
            )
            if called in ENV_CALLS and (on_environ or called.endswith("env_list")):
                names.append(resolve(node.args[0]))
        elif isinstance(node, ast.Subscript) and ast.unparse(node.value) == "os.environ":
            names.append(resolve(node.slice))
    if not names and ("environ" in source or "getenv" in source or "env_list" in source):
        raise ValueError(f"{cls.__name__}.{method.name} reads the environment unrecognised")
    return tuple(dict.fromkeys(names))


@contextmanager
def _without(names: tuple[str, ...]) -> Iterator[None]:
    saved = {name: os.environ.pop(name) for name in names if name in os.environ}
    try:
        yield
    finally:
        os.environ.update(saved)


def _markdown_value(value: Any) -> str:
    """A Python value as Markdown code (the settings are Python)."""
    return f"`{value!r}`"


def _json_value(value: Any) -> str:
    """A JSON value as Markdown code (the API speaks JSON)."""
    return f"`{json.dumps(value, ensure_ascii=False)}`"


def _machine_dependent(text: str) -> bool:
    """Whether a default shows something of the machine that built the docs."""
    home = str(Path.home())
    return home in text or str(Path.cwd()) in text or repr(getpass.getuser()) in text


def trait_rows(cls: type[HasTraits]) -> list[TraitRow]:
    """Every configurable trait `cls` declares (`settings_classes`), in declaration order,
    the bases' first."""
    classes = settings_classes(cls)
    traits = {
        name: trait
        for owner in classes
        if issubclass(owner, HasTraits)
        for name, trait in owner.class_own_traits(config=True).items()
    }
    methods = {
        name: (owner, method)
        for owner in classes
        for name, method in _default_methods(owner).items()
    }
    order = [name for owner in classes for name in _declaration_order(owner)]
    rows = []
    for name in sorted(traits, key=order.index):
        trait = traits[name]
        owner, method = methods.get(name, (cls, None))
        environment = environment_variables(owner, method) if method else ()
        if method is not None and ast.get_docstring(method):
            default = " ".join(ast.get_docstring(method).split())
        else:
            with _without(environment + JUPYTERHUB_ENV):
                default = _markdown_value(getattr(cls(), name))
            if _machine_dependent(default):
                raise ValueError(
                    f"{cls.__name__}.{name}'s default depends on the machine ({default}): "
                    "give its @default method a docstring saying what it is"
                )
        rows.append(TraitRow(name, environment, default, " ".join((trait.help or "").split())))
    return rows


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def traits_markdown(cls: type[HasTraits]) -> str:
    """The traits of `cls` as a Markdown definition list: the name; its help, then its
    environment variable and default."""
    out = []
    for row in trait_rows(cls):
        environment = ", ".join(f"`{name}`" for name in row.environment)
        facts = f"Environment variable {environment}. " if environment else ""
        out += [f"`{row.name}`", f": {row.help}", "", f"  {facts}Default: {row.default}", ""]
    return "\n".join(out)


# -- the API ------------------------------------------------------------------------------


def _schema_name(ref: str) -> str:
    return ref.rsplit("/", 1)[-1]


def _anchor(name: str) -> str:
    """MyST's anchor of a heading made of `name`."""
    return re.sub(r"[^\w\- ]", "", name.strip().lower()).replace(" ", "-")


def type_text(schema: Mapping[str, Any]) -> str:
    """A JSON schema's type in a few words (Markdown, schema names linked)."""
    if "$ref" in schema:
        name = _schema_name(schema["$ref"])
        return f"[{name}](#{_anchor(name)})"
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return " or ".join(type_text(option) for option in schema[key])
    if "const" in schema:
        return _json_value(schema["const"])
    if "enum" in schema:
        return " or ".join(_json_value(value) for value in schema["enum"])
    kind = schema.get("type", "any")
    if kind == "array":
        return f"array of {type_text(schema.get('items', {}))}"
    if kind == "object" and isinstance(schema.get("additionalProperties"), dict):
        return f"object of {type_text(schema['additionalProperties'])}"
    return str(kind)


CONSTRAINTS = {
    "minLength": "length at least {}",
    "maxLength": "length at most {}",
    "minimum": "at least {}",
    "maximum": "at most {}",
    "pattern": "matches `{}`",
}


def _field_notes(schema: Mapping[str, Any]) -> str:
    options = [schema, *schema.get("anyOf", [])]
    notes = [
        template.format(option[key])
        for option in options
        for key, template in CONSTRAINTS.items()
        if key in option
    ]
    if "default" in schema:
        notes.append(f"default {_json_value(schema['default'])}")
    text = " ".join(schema.get("description", "").split())
    return "; ".join([text, *notes] if text else notes)


def _properties_table(schema: Mapping[str, Any]) -> list[str]:
    properties = schema.get("properties", {})
    if not properties:
        return []
    required = set(schema.get("required", ()))
    lines = ["| field | type | required | notes |", "| --- | --- | --- | --- |"]
    for name, field in properties.items():
        lines.append(
            f"| `{name}` | {_cell(type_text(field))} | {'yes' if name in required else ''} "
            f"| {_cell(_field_notes(field))} |"
        )
    return [*lines, ""]


def openapi_markdown(document: Mapping[str, Any]) -> str:
    """The document's routes, then its schemas (Markdown; headings from level 2)."""
    out = ["## Routes", ""]
    for path, verbs in document["paths"].items():
        for verb, operation in verbs.items():
            route = f"`{verb.upper()} {{base_url}}{path[1:]}`"
            out += [f"### {operation['summary']}", "", route, ""]
            out += [operation["description"], ""]
            query = [p for p in operation.get("parameters", []) if p["in"] == "query"]
            if query:
                out += ["Query:", ""]
                out += [f"- `{p['name']}`: {p['description']}" for p in query]
                out.append("")
            if "requestBody" in operation:
                body = operation["requestBody"]["content"]["application/json"]["schema"]
                out += [f"Body: {type_text(body)}", ""]
            answers = []
            for status, answer in operation["responses"].items():
                media = [
                    f"{type_text(content['schema'])} (`{name}`)"
                    for name, content in answer.get("content", {}).items()
                ]
                if status.startswith("2"):
                    answers.append(f"- **{status}**: {answer['description']} {', '.join(media)}")
            errors = [s for s in operation["responses"] if not s.startswith("2")]
            out += [*answers, f"- errors: {', '.join(errors)} ([meanings](#errors))", ""]
    out += ["## Errors", "", "Every error is JSON, [ErrorBody](#errorbody):", ""]
    meanings: dict[str, str] = {}
    for verbs in document["paths"].values():
        for operation in verbs.values():
            for status, answer in operation["responses"].items():
                if not status.startswith("2"):
                    meanings[status] = answer["description"]
    out += [f"- **{status}**: {meanings[status]}" for status in sorted(meanings)] + [""]
    out += ["## Schemas", ""]
    for name, schema in sorted(document["components"]["schemas"].items()):
        out += [f"### {name}", ""]
        if schema.get("description"):
            out += [schema["description"], ""]
        if "oneOf" in schema:
            out += ["One of: " + ", ".join(type_text(option) for option in schema["oneOf"]), ""]
        out += _properties_table(schema)
    return "\n".join(out) + "\n"


# -- Sphinx -------------------------------------------------------------------------------


def _generate(kind: str, argument: str | None) -> str:
    if kind == "traits" and argument:
        module_name, _, class_name = argument.partition(":")
        module = __import__(module_name, fromlist=[class_name])
        return traits_markdown(getattr(module, class_name))
    if kind == "openapi":
        from jupyter_gns3_copilot.server.openapi import openapi_document

        return openapi_markdown(openapi_document("/"))
    raise ValueError(f"unknown generated block: {kind} {argument or ''}")


def _source_read(app: Any, docname: str, source: list[str]) -> None:
    if MARKER.search(source[0]):
        app.env.copilot_generated = {*getattr(app.env, "copilot_generated", ()), docname}
        source[0] = MARKER.sub(lambda m: _generate(m.group(1), m.group(2)), source[0])


def _always_outdated(app: Any, env: Any, added: Any, changed: Any, removed: Any) -> list[str]:
    return sorted(getattr(env, "copilot_generated", ()))


def _write_openapi(app: Any, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    from jupyter_gns3_copilot.server.openapi import openapi_document

    for docname in getattr(app.env, "copilot_generated", ()):
        if "<!-- generated: openapi -->" in Path(app.env.doc2path(docname)).read_text():
            target = Path(app.outdir) / Path(docname).parent / OPENAPI_FILE
            target.write_text(json.dumps(openapi_document("/"), indent=2) + "\n")


def setup(app: Any) -> dict[str, Any]:
    app.connect("source-read", _source_read)
    app.connect("env-get-outdated", _always_outdated)
    app.connect("build-finished", _write_openapi)
    # The generated pages are recorded on the environment, which parallel reads would split.
    return {"parallel_read_safe": False, "parallel_write_safe": True}
