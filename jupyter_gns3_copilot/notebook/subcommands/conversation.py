"""`%copilot` subcommands of the conversation: ask, sessions, history, rename, pin, unpin,
delete, abort, export, approve, reject."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..models import SessionInfo
from ..reports import Records
from ..transcript import APPROVAL_OUTCOMES, TextStream, history_text
from .context import NOT_A_SUBCOMMAND, MagicContext, Subcommand
from .turns import TurnOutput


class ConversationCommands:
    """The subcommands that work on the project's conversations."""

    def __init__(self, context: MagicContext, turns: TurnOutput) -> None:
        self.context = context
        self.turns = turns

    def handlers(self) -> dict[str, Subcommand]:
        """Each subcommand's word and handler."""
        return {
            "ask": self.ask,
            "sessions": self.sessions,
            "history": self.history,
            "rename": self.rename,
            "pin": self.pin,
            "unpin": self.unpin,
            "delete": self.delete,
            "abort": self.abort,
            "export": self.export,
            "approve": self.approve,
            "reject": self.reject,
        }

    def ask(self, tail: str, argv: list[str]) -> Any:
        if not tail:
            raise UsageError("Write the message after `ask`.")
        return self.turns.chat(tail, self.context.parse(argv))

    def sessions(self, tail: str, argv: list[str]) -> Any:
        options, words = self.context.options(argv, tail)
        if words:
            return NOT_A_SUBCOMMAND
        api = self.context.api
        current = api.session_id

        def tokens_of(s: SessionInfo) -> str:
            return f"{s.input_tokens:,} / {s.output_tokens:,}"

        return Records(
            api.sessions(limit=options.limit or 100),
            [
                ("", lambda s: "*" if s.thread_id == current else ""),
                ("session_id", lambda s: s.thread_id),
                ("title", lambda s: s.title),
                ("messages", lambda s: s.message_count),
                ("tokens in / out", tokens_of),
                ("pinned", lambda s: s.pinned),
                ("updated", lambda s: (s.updated_at or "")[:19].replace("T", " ")),
            ],
            empty="No conversations in this project yet.",
        )

    def history(self, tail: str, argv: list[str]) -> Any:
        options, words = self.context.options(argv, tail)
        if words:
            return NOT_A_SUBCOMMAND
        print(history_text(self.context.api.history(options.session, limit=options.limit or 100)))
        return None

    def rename(self, tail: str, argv: list[str]) -> None:
        options, words = self.context.options(argv, tail)
        title = " ".join(words).strip()
        if not title:
            raise UsageError("Give the new title: `%copilot rename <title>`.")
        session = self.context.api.rename(title, options.session)
        print(f"Conversation {session.thread_id} is now titled {session.title!r}.")

    def pin(self, tail: str, argv: list[str], *, pinned: bool = True) -> Any:
        options, words = self.context.options(argv, tail)
        if words:
            return NOT_A_SUBCOMMAND
        session = self.context.api.pin(options.session, pinned=pinned)
        print(f"Conversation {session.thread_id} {'pinned' if pinned else 'unpinned'}.")
        return None

    def unpin(self, tail: str, argv: list[str]) -> Any:
        return self.pin(tail, argv, pinned=False)

    def delete(self, tail: str, argv: list[str]) -> Any:
        options, words = self.context.options(argv, tail)
        if words:
            return NOT_A_SUBCOMMAND
        deleted = self.context.api.delete(options.session)
        print(f"Conversation {deleted} deleted; the next message starts a new one.")
        return None

    def abort(self, tail: str, argv: list[str]) -> Any:
        options, words = self.context.options(argv, tail)
        if words:
            return NOT_A_SUBCOMMAND
        answer = self.context.api.abort(options.session)
        if answer.get("status") == "ok":
            print(f"Stopping the turn of conversation {answer.get('session_id')}.")
        else:
            print(f"Nothing is running in conversation {answer.get('session_id')}.")
        return None

    def export(self, tail: str, argv: list[str]) -> Any:
        options, words = self.context.options(argv, tail)
        if len(words) > 1:
            return NOT_A_SUBCOMMAND
        export_format = (options.format or "ipynb").lower()
        if export_format not in ("ipynb", "md"):
            raise UsageError(f"--format is ipynb or md, got {options.format!r}.")
        filename, content = self.context.api.export(export_format, options.session)
        # Only the name of the server's suggestion: it never picks the directory.
        default = Path(filename).name or f"copilot.{export_format}"
        path = Path(words[0]).expanduser() if words else Path(default)
        if path.is_dir():
            path = path / default
        if path.exists() and not options.force:
            raise UsageError(f"{path} exists: give another path, or add --force to replace it.")
        path.write_bytes(content)
        print(f"Conversation exported to {path}.")
        return None

    def approve(self, tail: str, argv: list[str]) -> Any:
        return self._decide("approve", tail, argv)

    def reject(self, tail: str, argv: list[str]) -> Any:
        return self._decide("reject", tail, argv)

    def _decide(self, decision: str, tail: str, argv: list[str]) -> Any:
        """`%copilot approve|reject [comment]`: decide the change the conversation waits
        for; with no stream waiting for it, the rest of the turn is shown here."""
        options, words = self.context.options(argv, tail)
        comment = " ".join(words) or None
        copilot = self.context.api
        decide = copilot.approve if decision == "approve" else copilot.reject
        printer = TextStream(sys.stdout.write, flush=sys.stdout.flush)
        answer = decide(comment, session=options.session, on_event=printer)
        if isinstance(answer, dict):
            print(f"{APPROVAL_OUTCOMES[decision].capitalize()}; the waiting cell goes on.")
            return None
        printer.finish(answer)
        return answer
