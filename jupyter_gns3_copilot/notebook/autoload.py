"""The name under which the shipped kernel configuration loads the magics.

`jupyter-config/ipython/ipython_kernel_config.py` loads this module as the IPython
extension, not the package itself: IPython's `%load_ext jupyter_gns3_copilot` prints
"The jupyter_gns3_copilot extension is already loaded ..." for a name it loaded before,
and the example notebooks (and a student's own) start with that line so that they also
work where nothing loads the magics beforehand. Under this name, that line finds the
magics registered already and prints nothing (`load_ipython_extension` of the package is
idempotent).
"""

from __future__ import annotations

from typing import Any


def load_ipython_extension(ipython: Any) -> None:
    """Register the `%copilot` magics (as `%load_ext jupyter_gns3_copilot` does)."""
    from .. import load_ipython_extension as load

    load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    """Remove the magics and close their client."""
    from .. import unload_ipython_extension as unload

    unload(ipython)
