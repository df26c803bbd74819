"""The student's side of the classroom: what a student's Jupyter server (hub mode) and its
kernels run to use the hub service (`hub/`, a process of its own). `client`:
`HubServiceClient` (session, budget, the lab routes) and `request_grade_report` (an
autograding kernel's); `labs`: `HubProjectLabs`, the lab provider of a server in hub mode.
Imports the core and the hub service's API models (`hub/api_models.py`), never `server/`,
so the kernel side may use it too. No Jupyter or tornado import."""

HUB_URL_ENV = "GNS3_COPILOT_HUB_URL"
"""The hub service's URL as students' servers (and their kernels) reach it: hub mode."""
