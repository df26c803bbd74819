"""Errors of the local lab, each saying what went wrong and what to do."""

from __future__ import annotations


class LabError(RuntimeError):
    """The local GNS3 lab could not be provisioned, started, stopped or found."""


class LabNotRunning(LabError):
    """No running lab was found where one was expected."""
