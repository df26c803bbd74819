"""An AI copilot for GNS3 network labs, inside Jupyter notebooks.

Importing this package is cheap: the server extension, the magics and the heavy
libraries they need are imported only when Jupyter or IPython asks for them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._version import __version__

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

    from .notebook.copilot import Copilot

__all__ = ["Copilot", "__version__"]


def __getattr__(name: str) -> object:
    if name == "Copilot":
        from .notebook.copilot import Copilot

        return Copilot
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    """Where the prebuilt JupyterLab extension is (for `jupyter-builder develop`)."""
    return [{"src": "labextension", "dest": "jupyter-gns3-copilot"}]


def load_ipython_extension(ipython: InteractiveShell) -> None:
    """`%load_ext jupyter_gns3_copilot`: register the `%copilot` magics. Magics registered
    already (the kernel configuration loaded them: `notebook/autoload.py`) are kept, with
    the project and conversations they hold."""
    from .notebook.magics import CopilotMagics
    from .notebook.subcommands.parsing import keep_question_marks

    if CopilotMagics.__name__ not in ipython.magics_manager.registry:
        ipython.register_magics(CopilotMagics)
    if keep_question_marks not in ipython.input_transformers_cleanup:
        ipython.input_transformers_cleanup.append(keep_question_marks)


def unload_ipython_extension(ipython: InteractiveShell) -> None:
    """`%unload_ext jupyter_gns3_copilot`: remove the magics and close their client."""
    from .notebook.magics import CopilotMagics
    from .notebook.subcommands.parsing import keep_question_marks

    if keep_question_marks in ipython.input_transformers_cleanup:
        ipython.input_transformers_cleanup.remove(keep_question_marks)
    magics = ipython.magics_manager.registry.pop(CopilotMagics.__name__, None)
    if magics is not None:
        magics.close()
    for kind in ("line", "cell"):
        ipython.magics_manager.magics[kind].pop("copilot", None)


def _jupyter_server_extension_points() -> list[dict[str, object]]:
    """Declare the server extension (found by jupyter_server at start-up)."""
    from .server.app import GNS3Copilot

    return [{"module": "jupyter_gns3_copilot", "app": GNS3Copilot}]
