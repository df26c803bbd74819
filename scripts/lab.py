"""`make lab`: JupyterLab with the copilot on a local GNS3 lab, for trying it by hand.

The same setup as `make demo` (the local GNS3 lab, a Jupyter server with the copilot
extension, the model named by `OPENAI_API_KEY` / `OPENAI_BASE_URL` / `GNS3_COPILOT_MODEL`
or else the scripted test model), with JupyterLab on 127.0.0.1, the example notebooks
(and the graded lab's lab file) copied to build/lab/notebooks (the originals stay clean)
and their projects prepared, and approvals on as by default (`require_approval =
"changes"`: a change waits for Approve / Reject). Prints the URL with its token and the
approval setting, and runs until Ctrl+C, then stops everything.

Its lab outlives it: the GNS3 lab (build/lab/gns3, with its projects), the Jupyter
server's data (build/lab/jupyter: chats, each student's lab progress) and the class secret
that makes the graded lab's values (build/lab/lab.salt, readable by this user only) are
kept, and the next start reuses them: the same projects (same ids, their nodes started
again), the same values. At Ctrl+C each running PC's configuration is saved (VPCS `save`)
so that it comes back. `--reset` (`make lab RESET=1`) deletes them first and builds all
anew; the notebook copies are kept (delete them to get fresh ones).

`GNS3_COPILOT_LAB_PORT` chooses JupyterLab's port (default: a free one);
`GNS3_COPILOT_LAB_DIR` the directory instead of build/lab.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import sys
import threading
from pathlib import Path

from jupyter_gns3_copilot.labkit import LabServer
from jupyter_gns3_copilot.private_files import read_or_create_secret
from jupyter_gns3_copilot.testing.local_stack import (
    NOTEBOOK_PROJECTS,
    JupyterServer,
    ModelEndpoint,
    notebook_replies,
    prepare_projects,
    save_device_configs,
)
from jupyter_gns3_copilot.testing.scripted_llm import ScriptedLLM

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = ROOT / "tests" / "notebook_scripts"
WORK_DIR = ROOT / "build" / "lab"
KEPT = ("gns3", "jupyter", "lab.salt")
"""What a restart reuses, under WORK_DIR (and `--reset` deletes)."""


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


def copy_notebooks(work: Path) -> Path:
    target = work / "notebooks"
    target.mkdir(parents=True, exist_ok=True)
    for name, recipe in NOTEBOOK_PROJECTS.items():
        sources = [ROOT / "notebooks" / f"{name}.ipynb"]
        if recipe.lab_file is not None:
            sources.append(recipe.lab_file)
        for source in sources:
            if not (target / source.name).exists():
                shutil.copyfile(source, target / source.name)
    return target


def reset(work: Path) -> None:
    """Delete what a restart would reuse (`KEPT`)."""
    for name in KEPT:
        path = work / name
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--reset", action="store_true", help="start from a new lab (its projects, chats, values)"
    )
    args = parser.parse_args(argv)
    work = Path(os.environ.get("GNS3_COPILOT_LAB_DIR") or WORK_DIR).resolve()
    if args.reset:
        say(f"Resetting: deleting the lab, the chats and the lab values in {work}...")
        reset(work)
    kept = (work / "gns3").exists()
    real = ModelEndpoint.from_environment()
    scripted = None if real else ScriptedLLM(models=["scripted-model"]).start()
    model = real or ModelEndpoint.scripted_model(scripted)
    # The class secret that makes each student's lab values (the graded lab's).
    salt = read_or_create_secret(work / "lab.salt")
    port = int(os.environ.get("GNS3_COPILOT_LAB_PORT") or 0) or None
    stopping = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stopping.set())
    try:
        say("Starting the local GNS3 lab (the first run installs gns3-server: a minute)...")
        with LabServer(instance_dir=work / "gns3") as lab:
            say(f"GNS3 {lab.url} (user {lab.username}, password in {lab.env_file})")
            recipes = list(NOTEBOOK_PROJECTS.values())
            names = ", ".join(repr(r.name) for r in recipes)
            if kept:
                say(f"Reusing the lab of the last run (its projects {names}); --reset starts anew")
            else:
                say(f"Preparing the projects {names}...")
            project_ids = prepare_projects(lab, recipes, keep=True)
            notebooks = copy_notebooks(work)
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
                say(f"Notebooks: {notebooks} (copies; delete them to get fresh ones)")
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
                say("\nSaving the PCs' configurations, stopping JupyterLab and the lab...")
                unsaved = save_device_configs(lab, project_ids.values())
                if unsaved:
                    say(f"Not saved (they start without it): {', '.join(unsaved)}")
    finally:
        if scripted is not None:
            scripted.stop()
    say(f"Stopped. The lab is kept in {work} for the next start (--reset starts anew).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
