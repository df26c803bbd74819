"""The classroom hub service; imports the core, never server/ or kernel code."""
