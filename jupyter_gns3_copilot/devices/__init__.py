"""The device layer: what tools and lab checks both need to read and configure the lab's
devices, below `tools/` and `objectives/` (neither is imported here).

- `policy/`: the command policy (what may be typed on a console, per dialect and mode).
- `reachability/`: pings and traces read from a device's output, per dialect.
- `readers.py`: addresses and parsed `show` rows read from device output, per dialect.
- `template_cache.py`: GNS3's templates, whose tags and notes also tell a node's dialect.

A dialect's transport-level part (prompts, paging, errors, how a command is sent) stays
in `console/dialects.py`, next to the sessions that use it; what a dialect's commands
mean (which change a device, how their output reads) lives here.
"""
