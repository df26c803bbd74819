"""The documentation site (docs/, Sphinx + MyST): it builds with warnings as errors (every
cross-reference and `page.md#heading` link resolved, nitpicky), every relative link and
anchor of the built HTML resolves, and the generated pages say what the code does: every
setting of the server extension and of the hub service with the environment variable its
code reads, and every route of the API with the OpenAPI document next to the page.

The site is built once per run into a temporary directory, with no network.
"""

from __future__ import annotations

import json
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest
from traitlets import Dict, HasTraits, List, Unicode, default

from jupyter_gns3_copilot.hub.app import CopilotHubService
from jupyter_gns3_copilot.server.app import GNS3Copilot
from jupyter_gns3_copilot.server.openapi import openapi_document

DOCS = Path(__file__).resolve().parents[1] / "docs"
sys.path.insert(0, str(DOCS / "_ext"))

from copilot_docs import environment_variables, settings_classes, trait_rows  # noqa: E402

APPS = (GNS3Copilot, CopilotHubService)


class Links(HTMLParser):
    """The ids of one HTML page and the links it holds (href and src)."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name == "id" and value:
                self.ids.add(value)
            if name in ("href", "src") and value:
                self.links.append(value)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parse(page: Path) -> Links:
    links = Links()
    links.feed(page.read_text())
    return links


def page_text(page: Path) -> str:
    """The page's text, its whitespace runs made single spaces."""
    return " ".join("".join(parse(page).text).split())


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("docs") / "html"
    build = subprocess.run(
        [
            sys.executable,
            "-m",
            "sphinx",
            "-b",
            "html",
            "-n",
            "-W",
            "--keep-going",
            "-q",
            *(
                str(DOCS),
                str(out),
            ),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert build.returncode == 0, build.stderr
    return out


def test_the_site_builds_with_warnings_as_errors(site: Path) -> None:
    pages = {page.relative_to(site).as_posix() for page in site.rglob("*.html")}
    assert {
        "index.html",
        "tutorial/student.html",
        "tutorial/magics.html",
        "instructor/one-machine.html",
        "instructor/jupyterhub.html",
        "instructor/approvals.html",
        "instructor/labkit.html",
        "reference/configuration.html",
        "reference/api.html",
        "architecture.html",
        "performance.html",
        "reliability.html",
    } <= pages


def test_every_relative_link_and_anchor_resolves(site: Path) -> None:
    # The site's pages; the theme's template macros copied to _static are no pages
    parsed = {page: parse(page) for page in site.rglob("*.html") if "_static" not in page.parts}
    broken = []
    for page, links in parsed.items():
        for link in links.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or link.startswith("mailto:"):
                continue
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                broken.append(f"{page.relative_to(site)}: {link} (no such file)")
            elif parts.fragment and target.suffix == ".html":
                ids = parsed[target].ids if target in parsed else parse(target).ids
                if unquote(parts.fragment) not in ids:
                    broken.append(f"{page.relative_to(site)}: {link} (no such anchor)")
    assert broken == []
    assert sum(len(links.links) for links in parsed.values()) > 500, "the link scan saw too few"


def test_the_configuration_page_names_every_setting_with_its_environment_variable(
    site: Path,
) -> None:
    text = page_text(site / "reference" / "configuration.html")
    for app in APPS:
        rows = trait_rows(app)
        framework = next(base for base in app.__mro__ if base not in settings_classes(app))
        declared = set(app.class_traits(config=True)) - set(framework.class_traits(config=True))
        assert {row.name for row in rows} == declared
        for row in rows:
            assert row.name in text
            for name in row.environment:
                assert f"Environment variable {name}" in text, (app.__name__, row.name)
    # Defaults that depend on the machine are said in words, never as a path of this one
    assert str(Path.home()) not in text


@pytest.mark.parametrize("app", APPS, ids=lambda app: app.__name__)
def test_each_environment_variable_found_is_read_by_its_setting(
    app: type[HasTraits], monkeypatch: pytest.MonkeyPatch
) -> None:
    for row in trait_rows(app):
        trait = app.class_traits()[row.name]
        for name in row.environment:
            if isinstance(trait, List):
                raw, expected = "probe-a,probe-b", ["probe-a", "probe-b"]
            elif isinstance(trait, Dict):
                raw, expected = '{"probe": 1}', {"probe": 1}
            else:
                raw, expected = "probe-value", "probe-value"
            monkeypatch.setenv(name, raw)
            assert getattr(app(), row.name) == expected, (row.name, name)
            monkeypatch.delenv(name)
        # The help text names no variable the code does not read
        for word in row.help.replace(",", " ").replace(";", " ").replace(")", " ").split():
            if word.startswith(("GNS3_", "OPENAI_")) and word.isupper():
                assert word.strip(".") in row.environment, (row.name, word)


def test_an_environment_read_the_generator_does_not_understand_is_an_error() -> None:
    import os

    class Unclear(HasTraits):
        setting = Unicode().tag(config=True)

        @default("setting")
        def _setting(self) -> str:
            return dict(os.environ).get("SOME_VARIABLE", "")

    method = next(iter(__import__("copilot_docs")._default_methods(Unclear).values()))
    with pytest.raises(ValueError, match="reads the environment"):
        environment_variables(Unclear, method)


def test_the_api_page_lists_every_route_next_to_the_openapi_document(site: Path) -> None:
    page = site / "reference" / "api.html"
    text = page_text(page)
    document = openapi_document("/")
    for path, verbs in document["paths"].items():
        for verb in verbs:
            assert f"{verb.upper()} {{base_url}}{path[1:]}" in text
    served_beside: Any = json.loads((page.parent / "openapi.json").read_text())
    assert served_beside == document
