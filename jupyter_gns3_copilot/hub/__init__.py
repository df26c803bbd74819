"""The classroom hub service; imports the core, never server/ or kernel code."""

HUB_URL_ENV = "GNS3_COPILOT_HUB_URL"
"""The hub service's URL as students' servers (and their kernels) reach it: hub mode."""
