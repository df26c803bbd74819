"""IPython kernel configuration shipped by jupyter-gns3-copilot (installed as
`<environment>/etc/ipython/ipython_kernel_config.py`, read by every IPython kernel of the
environment in addition to the user's own profile configuration).

It loads the `%copilot` magics only in kernels started by a Jupyter server running the
copilot extension: that server publishes `GNS3_COPILOT_SERVER_URL` to its kernels
(`server/kernel_env.py`). Other kernels, terminal IPython and servers without the
extension are left alone. The extension is loaded as `jupyter_gns3_copilot.notebook.autoload`
so that a notebook's own `%load_ext jupyter_gns3_copilot` afterwards prints nothing.
"""

import os

if os.environ.get("GNS3_COPILOT_SERVER_URL"):
    c = get_config()  # noqa: F821 (IPython's config loader provides it)
    c.InteractiveShellApp.extensions.append("jupyter_gns3_copilot.notebook.autoload")
