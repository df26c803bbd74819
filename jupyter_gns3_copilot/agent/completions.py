"""openai's chat completions resource, sending LangChain's messages as they are.

Before every request the openai SDK walks the request's parameters through their typed
descriptions (`async_maybe_transform`), each message through every member of the message
type union: about 0.35 ms per message on this machine, on the event loop, for every model
call (14 ms with 40 messages, so every step of a long turn). For chat messages that walk
changes nothing (their types declare no renamed or reformatted field), and LangChain has
already built them in the API's shape. `MessagesAsGiven` hands them to the SDK in
`extra_body`, which it merges into the request body as it is, and an empty `messages`
list to walk: the same body reaches the endpoint.

It is the `async_client` of the `ChatOpenAI` made by `models.make_chat_model` (the field
LangChain offers for supplying the client); every other attribute is the wrapped resource's.
"""

from __future__ import annotations

from typing import Any


class MessagesAsGiven:
    """Wraps openai's `AsyncCompletions` (or its `with_raw_response` view)."""

    def __init__(self, completions: Any) -> None:
        self._completions = completions

    async def create(self, **params: Any) -> Any:
        """`completions.create(**params)`, the messages sent as given (module docstring)."""
        messages = params.pop("messages", None)
        if messages is not None:
            params["extra_body"] = {**(params.get("extra_body") or {}), "messages": messages}
            params["messages"] = []
        return await self._completions.create(**params)

    @property
    def with_raw_response(self) -> MessagesAsGiven:
        """The raw-response view, sending messages the same way."""
        return MessagesAsGiven(self._completions.with_raw_response)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._completions, name)
