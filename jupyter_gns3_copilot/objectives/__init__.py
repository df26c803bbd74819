"""Lab objectives: the lab file (`lab.yaml`: stages, objectives, checks, per-student
parameters), read and checked before anything runs.

No Jupyter here: the server extension, the hub service and the command line use it alike.
"""

from .errors import LabFileError, LabProblem
from .loader import LabDocument, load_lab
from .model import LabFile, Objective, Stage
from .parameters import student_values

__all__ = [
    "LabDocument",
    "LabFile",
    "LabFileError",
    "LabProblem",
    "Objective",
    "Stage",
    "load_lab",
    "student_values",
]
