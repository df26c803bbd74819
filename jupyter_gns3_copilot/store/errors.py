"""Errors raised by the store, each saying what went wrong and what to do."""

from __future__ import annotations


class StoreError(Exception):
    """Base class for store errors."""


class InvalidProjectId(StoreError, ValueError):
    """A project id that is not a UUID (and so not a safe directory name)."""


class SessionExists(StoreError):
    """A chat session with this thread id already exists."""


class InvalidTitle(StoreError, ValueError):
    """A session title outside 1-255 characters."""


class SecretInMetadata(StoreError, ValueError):
    """Session metadata carrying something that looks like a credential."""
