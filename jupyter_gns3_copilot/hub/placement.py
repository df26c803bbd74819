"""Where the hub service makes a student's copy of a lab: the `placement` setting.

- `"template"` (the default): where the template's nodes are (GNS3's duplicate keeps
  them there);
- `"least_loaded"`: on the compute using the least memory, as the computes report it
  (`GET /statistics`; 10-point steps, closer is a tie), then the one given the fewest
  copies in this assignment (computes on one host report the same memory), then the
  least CPU;
- a mapping hub group -> compute (name or id): the compute of the student's first group
  found in the mapping, in the mapping's order; a student in none of them gets the
  template's compute.

A compute the mapping names that GNS3 does not have is a `PlacementError` naming the
valid ones.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from ..gns3.client import GNS3Client
from ..gns3.computes import ComputeLoad, find_compute
from ..gns3.errors import GNS3NotFound

TEMPLATE = "template"
LEAST_LOADED = "least_loaded"
MEMORY_STEP = 10.0
"""Memory use (percent) differing by less than this counts as equal."""

PlacementRule = str | Mapping[str, str]


class PlacementError(ValueError):
    """The `placement` setting names a compute GNS3 does not have."""


def check_rule(rule: object) -> PlacementRule:
    """`rule` if it is a valid `placement` value, else ValueError saying what is."""
    if rule in (TEMPLATE, LEAST_LOADED):
        return str(rule)
    if isinstance(rule, Mapping) and all(
        isinstance(k, str) and isinstance(v, str) and k and v for k, v in rule.items()
    ):
        return dict(rule)
    raise ValueError(
        f"placement must be '{TEMPLATE}', '{LEAST_LOADED}' or a mapping of hub group to "
        f"compute name, not {rule!r}"
    )


def describe_placement(rule: PlacementRule) -> str:
    """Where copies go, as the dashboard says it ("... go <this>.")."""
    if rule == TEMPLATE:
        return "where the template's devices are"
    if rule == LEAST_LOADED:
        return "to the compute using the least memory"
    assert isinstance(rule, Mapping)
    groups = "; ".join(f"group {group} to {compute}" for group, compute in rule.items())
    return f"by hub group ({groups}; anyone else where the template's devices are)"


def least_loaded(loads: Sequence[ComputeLoad], placed: Counter[str]) -> str | None:
    """The compute id `least_loaded` chooses (module docstring); None when no compute
    reported its load."""
    if not loads:
        return None
    return min(
        loads,
        key=lambda load: (
            int(load.memory_usage_percent // MEMORY_STEP),
            placed[load.compute_id],
            load.cpu_usage_percent,
            load.name,
        ),
    ).compute_id


class ComputePlacement:
    """One assignment's placement decisions under `rule` (module docstring), asking the
    GNS3 administrator client `gns3`. Use a new one per assignment: it counts the copies
    it placed."""

    def __init__(self, gns3: GNS3Client, rule: PlacementRule) -> None:
        self.gns3 = gns3
        self.rule = check_rule(rule)
        self.placed: Counter[str] = Counter()

    async def compute_for(self, groups: Sequence[str]) -> str | None:
        """The compute id for the copy of a student in `groups`; None: the template's."""
        if self.rule == TEMPLATE:
            return None
        if self.rule == LEAST_LOADED:
            chosen = least_loaded(await self.gns3.compute_loads(), self.placed)
        else:
            assert isinstance(self.rule, Mapping)
            wanted = next((self.rule[g] for g in self.rule if g in groups), None)
            if wanted is None:
                return None
            try:
                chosen = find_compute(await self.gns3.list_computes(), wanted).compute_id
            except GNS3NotFound as exc:
                raise PlacementError(f"placement: {exc}") from None
        if chosen is not None:
            self.placed[chosen] += 1
        return chosen
