"""Async client for the GNS3 v3 API, its typed errors and models, and the topology model.

Nothing here imports Jupyter.
"""

from .client import GNS3Client
from .computes import LOCAL_COMPUTE, Compute, ComputeLoad
from .errors import (
    GNS3APIError,
    GNS3AuthError,
    GNS3Conflict,
    GNS3Error,
    GNS3NotFound,
    GNS3Timeout,
    GNS3Unreachable,
)
from .models import Drawing, Link, LinkEnd, Node, Port, Project, Snapshot, Template, Version
from .topology import Connection, ConnectionEnd, Topology

__all__ = [
    "LOCAL_COMPUTE",
    "Compute",
    "ComputeLoad",
    "Connection",
    "ConnectionEnd",
    "Drawing",
    "GNS3APIError",
    "GNS3AuthError",
    "GNS3Client",
    "GNS3Conflict",
    "GNS3Error",
    "GNS3NotFound",
    "GNS3Timeout",
    "GNS3Unreachable",
    "Link",
    "LinkEnd",
    "Node",
    "Port",
    "Project",
    "Snapshot",
    "Template",
    "Topology",
    "Version",
]
