"""`%copilot` subcommands of the server connection and settings: status, config, connect."""

from __future__ import annotations

import getpass
import re
from typing import Any

from ..copilot import Copilot
from ..errors import UsageError
from ..reports import config_text, status_text
from .context import NOT_A_SUBCOMMAND, MagicContext, Subcommand, say_recalled

_URL_LIKE = re.compile(r"^(https?|http\+unix)://|^[\w.-]+:\d+(/|$)|^\[[0-9a-f:]+\]:\d+", re.I)
CONFIG_NUMBERS = {"temperature": float, "context_limit": int}


class ConnectionCommands:
    """The subcommands of the server and the user's model settings."""

    def __init__(self, context: MagicContext) -> None:
        self.context = context

    def handlers(self) -> dict[str, Subcommand]:
        """Each subcommand's word and handler."""
        return {"status": self.status, "config": self.config, "connect": self.connect}

    def status(self, tail: str, argv: list[str]) -> Any:
        _, words = self.context.options(argv, tail)
        if words:
            return NOT_A_SUBCOMMAND
        api = self.context.api
        print(status_text(api.status(), api.server.describe()))
        return None

    def config(self, tail: str, argv: list[str]) -> Any:
        _, words = self.context.options(argv, tail)
        updates: dict[str, Any] = {}
        for word in words:
            key, equals, value = word.partition("=")
            key = key.strip().replace("-", "_")
            if key == "api_key" and not equals:
                value = getpass.getpass("API key for the model endpoint (not shown): ")
            elif not equals:
                if len(words) == 1 and not updates:
                    return NOT_A_SUBCOMMAND
                raise UsageError(f"Write settings as key=value (got {word!r}).")
            elif key == "api_key":
                print(
                    "Note: the key is now in this notebook's source; `%copilot config "
                    "api_key` asks for it without showing it."
                )
            updates[key] = config_value(key, value)
        print(config_text(self.context.api.config(**updates)))
        return None

    def connect(self, tail: str, argv: list[str]) -> Any:
        options, words = self.context.options(argv, tail)
        if len(words) > 1 or (words and not _URL_LIKE.search(words[0])):
            return NOT_A_SUBCOMMAND
        url = words[0] if words else None
        if self.context.copilot is None:
            copilot = (
                Copilot(url, options.token, on_recall=say_recalled)
                if url
                else Copilot(on_recall=say_recalled)
            )
            copilot.check()
            self.context.copilot = copilot
            server = copilot.server
        else:
            server = self.context.copilot.connect(url, options.token)
        print(f"Connected to {server.describe()}: the GNS3 Copilot extension answers.")
        return None


def config_value(key: str, value: str) -> Any:
    """A `config key=value` value as the server takes it: None for none/null/default/"",
    a number for `CONFIG_NUMBERS`' keys."""
    value = value.strip()
    if value.lower() in ("none", "null", "default", ""):
        return None
    convert: type[float] | type[int] | None = CONFIG_NUMBERS.get(key)
    if convert is None:
        return value
    try:
        return convert(value)
    except ValueError:
        raise UsageError(f"{key} must be a number, got {value!r}.") from None
