"""`python -m jupyter_gns3_copilot.hub`: run the copilot hub service (see `hub/app.py`)."""

from .app import main

main()
