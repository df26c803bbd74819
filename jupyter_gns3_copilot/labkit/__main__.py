"""``python -m jupyter_gns3_copilot.labkit``: same as ``gns3-copilot-lab``."""

import sys

from .cli import main

sys.exit(main())
