"""Who an autograding kernel grades (`notebook/grading.py`): read from nbgrader's variables
and directory, no server involved (the grading itself runs on a real hub with nbgrader in
tests/test_hub_grading.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from jupyter_gns3_copilot.notebook.errors import UsageError
from jupyter_gns3_copilot.notebook.grading import Autograding

HUB = {"GNS3_COPILOT_HUB_URL": "http://127.0.0.1:10101/services/gns3-copilot/"}
GRADING = {**HUB, "NBGRADER_EXECUTION": "autograde", "JUPYTERHUB_API_TOKEN": "staff-token"}
HERE = Path("/srv/course/autograded/alice/lab1")


def test_an_autograding_kernel_in_hub_mode_grades_the_student_of_its_directory() -> None:
    found = Autograding.detect(GRADING, HERE)
    assert found == Autograding(
        student="alice", service_url=HUB["GNS3_COPILOT_HUB_URL"], hub_token="staff-token"
    )


@pytest.mark.parametrize(
    "environ",
    [
        {},  # a notebook run as usual
        HUB,  # a student's kernel in hub mode
        {**HUB, "NBGRADER_EXECUTION": "validate"},  # a student validating their notebook
        {"NBGRADER_EXECUTION": "autograde"},  # nbgrader without a hub: the usual checks
    ],
)
def test_other_kernels_check_as_usual(environ: dict[str, str]) -> None:
    assert Autograding.detect(environ, HERE) is None


def test_autograding_says_what_it_cannot_tell() -> None:
    with pytest.raises(UsageError, match="cannot tell whose lab"):
        Autograding.detect(GRADING, Path("/srv/course/submitted/alice/lab1"))
    without_token = {k: v for k, v in GRADING.items() if k != "JUPYTERHUB_API_TOKEN"}
    with pytest.raises(UsageError, match="JUPYTERHUB_API_TOKEN"):
        Autograding.detect(without_token, HERE)
