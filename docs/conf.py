"""Sphinx configuration of the documentation site (`make docs`; `make test` builds it with
warnings as errors and checks its links, tests/test_docs_site.py)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "_ext"))

from jupyter_gns3_copilot._version import __version__

project = "jupyter_gns3_copilot"
author = "The jupyter_gns3_copilot contributors"
copyright = "the jupyter_gns3_copilot contributors"
version = release = __version__

extensions = ["myst_parser", "copilot_docs"]
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build", "z2jh-values.yaml"]
root_doc = "index"

# Every cross-reference must resolve; headings get anchors for `page.md#heading` links.
nitpicky = True
myst_heading_anchors = 4
myst_enable_extensions = ["colon_fence", "deflist"]
suppress_warnings: list[str] = []

html_theme = "pydata_sphinx_theme"
html_title = "GNS3 Copilot for Jupyter"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "footer_start": ["copyright"],
    "footer_end": [],
    "secondary_sidebar_items": ["page-toc"],
    "header_links_before_dropdown": 5,
}
# The pages are one level deep: no section navigation on the left, more room for tables.
html_sidebars: dict[str, list[str]] = {"**": []}
html_show_sourcelink = False
html_last_updated_fmt = None
