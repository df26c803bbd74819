"""Lab objectives: the lab file (`lab.yaml`: stages, objectives, checks, per-student
parameters), read and checked before anything runs, and checked on the real devices.

- `model`: the lab file's models (its JSON Schema, `lab.schema.json`, is generated from them);
- `loader`: `load_lab(text)`, problems named by file, line and field (`errors`);
- `parameters`, `templating`: each student's values and the texts and checks rendered with them;
- `devices`, `checks` (`network_checks`, `routing_checks`), `runner`: deciding objectives on
  the devices;
- `results`: what a check run gives; `service`: each project's lab (`ProjectLabs`);
- `api`: the lab routes' request bodies and answers; `view`: the lab as a student sees it.

Nothing is imported here, so that the event models can use `results` cheaply. No Jupyter.
"""

SALT_ENV = "GNS3_COPILOT_LAB_SALT"
"""The environment variable of the class's salt (the extension's `lab_salt` and, in hub
mode, the hub service's: students' servers then have none)."""
SALT_FILE = "lab.salt"
"""Where a salt is generated once (in the data directory) when none is set."""
