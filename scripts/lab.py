"""`make lab`: JupyterLab with the copilot on a local GNS3 lab, for trying it by hand.

The same setup as `make demo` (the local GNS3 lab, a Jupyter server with the copilot
extension, the model named by `OPENAI_API_KEY` / `OPENAI_BASE_URL` / `GNS3_COPILOT_MODEL`
or else the scripted test model), with JupyterLab on 127.0.0.1, the example notebooks
(and the graded lab's lab file) copied to build/lab/notebooks (the originals stay clean)
and their projects prepared, and approvals on as by default (`require_approval =
"changes"`: a change waits for Approve / Reject). Prints the URL with its token and the
approval setting, and runs until Ctrl+C, then stops everything.

`GNS3_COPILOT_LAB_PORT` chooses JupyterLab's port (default: a free one).
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import sys
import tempfile
import threading
from pathlib import Path

from jupyter_gns3_copilot.labkit import LabServer
from jupyter_gns3_copilot.testing.local_stack import (
    NOTEBOOK_PROJECTS,
    JupyterServer,
    ModelEndpoint,
    notebook_replies,
    prepare_projects,
)
from jupyter_gns3_copilot.testing.scripted_llm import ScriptedLLM

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = ROOT / "tests" / "notebook_scripts"
WORK_DIR = ROOT / "build" / "lab"


def say(text: str = "") -> None:
    print(text, flush=True)


def approval_banner(setting: str) -> str:
    """The banner's line on approvals for `require_approval` = `setting`."""
    if setting == "changes":
        return (
            'APPROVALS: require_approval = "changes": every change to the lab or to a '
            "device's\nconfiguration waits for Approve / Reject in the notebook or the "
            "sidebar."
        )
    if setting == "none":
        return 'APPROVALS: require_approval = "none": changes run without asking.'
    return f"APPROVALS: require_approval = {setting!r}: these tools ask first."


def copy_notebooks() -> Path:
    target = WORK_DIR / "notebooks"
    target.mkdir(parents=True, exist_ok=True)
    for name, recipe in NOTEBOOK_PROJECTS.items():
        sources = [ROOT / "notebooks" / f"{name}.ipynb"]
        if recipe.lab_file is not None:
            sources.append(recipe.lab_file)
        for source in sources:
            if not (target / source.name).exists():
                shutil.copyfile(source, target / source.name)
    return target


def main() -> int:
    real = ModelEndpoint.from_environment()
    scripted = None if real else ScriptedLLM(models=["scripted-model"]).start()
    model = real or ModelEndpoint.scripted_model(scripted)
    # The class secret that makes each student's lab values (the graded lab's).
    salt = secrets.token_hex(16)
    port = int(os.environ.get("GNS3_COPILOT_LAB_PORT") or 0) or None
    stopping = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stopping.set())
    work = Path(tempfile.mkdtemp(prefix="copilot-lab-"))
    try:
        say("Starting the local GNS3 lab (the first run installs gns3-server: a minute)...")
        with LabServer(instance_dir=work / "gns3") as lab:
            say(f"GNS3 {lab.url} (user {lab.username}, password in {lab.env_file})")
            recipes = list(NOTEBOOK_PROJECTS.values())
            say(f"Preparing the projects {', '.join(repr(r.name) for r in recipes)}...")
            prepare_projects(lab, recipes)
            notebooks = copy_notebooks()
            # A person is there to decide: changes to the lab and to device configurations
            # ask first, as the extension's default says (the scripted model waits too).
            server = JupyterServer(
                lab,
                model,
                work / "jupyter",
                app="lab",
                root_dir=notebooks,
                port=port,
                traits={"require_approval": "changes"},
                lab_salt=salt,
            )
            if scripted is not None:
                for name, recipe in NOTEBOOK_PROJECTS.items():
                    script = SCRIPTS / f"{name}.json"
                    scripted.extend(notebook_replies(script, recipe, server.user, salt))
            with server:
                say("\nJupyterLab with the GNS3 Copilot is ready:")
                say(f"    {server.url}lab?token={server.token}")
                say(f"Notebooks: {notebooks.relative_to(ROOT)} (copies; delete them to reset)")
                if scripted is not None:
                    say(
                        "MODEL: the SCRIPTED test model (OPENAI_API_KEY is not set): it only "
                        "answers\nthe example notebooks' messages, once each. Set "
                        "OPENAI_API_KEY to talk to a real model."
                    )
                else:
                    say(f"MODEL: {model.describe()}")
                say(approval_banner(server.require_approval))
                say("Press Ctrl+C to stop everything.")
                while not stopping.wait(1.0):
                    if not server.is_running():
                        say(f"JupyterLab exited:\n{server.log_tail()}")
                        break
                say("\nStopping JupyterLab and the lab...")
    finally:
        if scripted is not None:
            scripted.stop()
        shutil.rmtree(work, ignore_errors=True)
    say("Stopped.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
