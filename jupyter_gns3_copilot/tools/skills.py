"""Device skills: short guidance documents per device type and topic, looked up by the model.

A skills directory holds one folder per device type (a console dialect name such as `vpcs`
or `cisco_ios`, or any other name) and one Markdown file per topic::

    skills/cisco_ios/ospf.md

Each file starts with a small header between `---` lines (plain `key: value` lines; no YAML
library involved) followed by the guidance itself::

    ---
    title: OSPF on Cisco IOS
    summary: Single- and multi-area OSPFv2: configuration, verification, common faults
    keywords: ospf, routing, neighbor, area
    prompt: router ospf takes a process number: router ospf 1
    ---
    ...

`prompt` (optional) is one short line the model reads in its system prompt, without
looking the topic up, whenever the project has a device of that type (`prompt_notes`):
the few differences that trip people up, e.g. FRR's CIDR addresses.

The shipped starter set lives in the package (`jupyter_gns3_copilot/skills`); directories
given to `SkillsLibrary` come after it, and a topic they define replaces the shipped one.
Lookup goes index -> topic list -> full text, so the model reads only what it needs.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ..console import DialectError, dialect_by_name

SHIPPED_SKILLS_DIR = Path(__file__).resolve().parent.parent / "skills"
"""The starter skills shipped with the package."""

_HEADER = re.compile(r"\A---[ \t]*\n(?P<header>.*?)\n---[ \t]*\n", re.DOTALL)


class SkillTopic(BaseModel):
    """One guidance document: its device type, topic name (the file name) and header."""

    device_type: str
    topic: str
    title: str
    summary: str = ""
    keywords: list[str] = []
    prompt: str = ""
    path: str

    def brief(self) -> dict[str, str]:
        """The topic as listed to the model."""
        return {"topic": self.topic, "title": self.title, "summary": self.summary}


def slug(name: str) -> str:
    """`name` lower-case, with `_` for runs of spaces and dashes (`IP addressing` ->
    `ip_addressing`)."""
    return re.sub(r"[\s\-]+", "_", name.strip().lower())


def canonical_device_type(name: str) -> str:
    """`name` as a skills folder name: a dialect's canonical name when it is one
    (`ios` -> `cisco_ios`, `VPCS` -> `vpcs`), else its `slug`.
    """
    try:
        return dialect_by_name(name).name
    except DialectError:
        return slug(name)


def read_skill_file(path: Path) -> tuple[dict[str, str], str]:
    """The header fields and the body text of a skill file."""
    text = path.read_text(encoding="utf-8").replace("\r\n", "\n")
    match = _HEADER.match(text)
    if match is None:
        return {}, text.strip()
    fields: dict[str, str] = {}
    for line in match.group("header").splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip():
            fields[key.strip().lower()] = value.strip()
    return fields, text[match.end() :].strip()


class SkillsLibrary:
    """The skills of the shipped directory plus `extra_dirs` (later ones win per topic).

    The index (device types, topics, headers) is built on first use and rebuilt by
    `reload()`; full texts are read from disk on each request, so edits to a topic's body
    show at once. Safe to share between threads.
    """

    def __init__(
        self,
        extra_dirs: Iterable[str | os.PathLike[str]] = (),
        *,
        include_shipped: bool = True,
    ) -> None:
        self.dirs = [SHIPPED_SKILLS_DIR] if include_shipped else []
        self.dirs += [Path(d).expanduser() for d in extra_dirs]
        self._lock = threading.Lock()
        self._index: dict[str, dict[str, SkillTopic]] | None = None

    def reload(self) -> int:
        """Rebuild the index now; returns the number of topics found."""
        with self._lock:
            self._index = self._scan()
            return sum(len(topics) for topics in self._index.values())

    def index(self) -> dict[str, dict[str, SkillTopic]]:
        """Topics by device type, then by topic name (both sorted)."""
        with self._lock:
            if self._index is None:
                self._index = self._scan()
            return self._index

    def device_types(self) -> list[str]:
        """The device types that have at least one topic."""
        return list(self.index())

    def prompt_notes(self, device_type: str) -> list[str]:
        """The `prompt` lines of `device_type`'s topics, in topic order ([] when none)."""
        topics = self.index().get(canonical_device_type(device_type), {})
        return [topic.prompt for topic in topics.values() if topic.prompt]

    def find_device_type(self, name: str) -> str | None:
        """The device type `name` designates (aliases allowed), if the library has it."""
        wanted = canonical_device_type(name)
        return wanted if wanted in self.index() else None

    def find_topic(self, device_type: str, name: str) -> SkillTopic | None:
        """The topic of `device_type` that `name` designates: its file name, else the only
        topic whose file name, title or keywords start with or contain the words of `name`.
        """
        topics = self.index().get(device_type, {})
        wanted = slug(name)
        if wanted in topics:
            return topics[wanted]
        words = [word for word in wanted.split("_") if word]
        if not words:
            return None
        for scope in (_names, _searchable):
            matches = [
                topic
                for topic in topics.values()
                if all(any(term.startswith(word) for term in scope(topic)) for word in words)
            ]
            if len(matches) == 1:
                return matches[0]
        return None

    def read(self, topic: SkillTopic) -> str:
        """The full guidance text of `topic` (without its header)."""
        return read_skill_file(Path(topic.path))[1]

    def lookup(self, device_type: str | None, topic: str | None) -> dict[str, Any]:
        """The `device_skills` tool's answer: the index, a device type's topics, or a text.

        Never raises for unknown names: the answer says what exists instead.
        """
        index = self.index()
        if device_type is None and topic is None:
            return {
                "device_types": [
                    {"device_type": kind, "topics": list(topics)} for kind, topics in index.items()
                ],
                "hint": "Call device_skills again with device_type and topic to read one.",
            }
        if device_type is None:
            assert topic is not None
            found = [t for kind in index if (t := self.find_topic(kind, topic)) is not None]
            if len(found) == 1:
                return self._full(found[0])
            return {
                "status": "failed",
                "error": f"Give a device_type to look up topic {topic!r}.",
                "matches": [{"device_type": t.device_type, **t.brief()} for t in found],
                "device_types": list(index),
            }
        kind = self.find_device_type(device_type)
        if kind is None:
            return {
                "status": "failed",
                "error": f"No skills for device type {device_type!r}.",
                "device_types": list(index),
            }
        if topic is None:
            return {
                "device_type": kind,
                "topics": [t.brief() for t in index[kind].values()],
                "hint": "Call device_skills again with this device_type and a topic.",
            }
        chosen = self.find_topic(kind, topic)
        if chosen is None:
            return {
                "status": "failed",
                "error": f"No {kind} skill about {topic!r}.",
                "device_type": kind,
                "topics": [t.brief() for t in index[kind].values()],
            }
        return self._full(chosen)

    def _full(self, topic: SkillTopic) -> dict[str, Any]:
        return {
            "device_type": topic.device_type,
            "topic": topic.topic,
            "title": topic.title,
            "content": self.read(topic),
        }

    def _scan(self) -> dict[str, dict[str, SkillTopic]]:
        found: dict[str, dict[str, SkillTopic]] = {}
        for directory in self.dirs:
            if not directory.is_dir():
                continue
            for path in sorted(directory.glob("*/*.md")):
                kind = canonical_device_type(path.parent.name)
                name = slug(path.stem)
                fields, _ = read_skill_file(path)
                found.setdefault(kind, {})[name] = SkillTopic(
                    device_type=kind,
                    topic=name,
                    title=fields.get("title") or name.replace("_", " ").capitalize(),
                    summary=fields.get("summary", ""),
                    keywords=_keywords(fields.get("keywords", "")),
                    prompt=fields.get("prompt", ""),
                    path=str(path),
                )
        return {kind: dict(sorted(topics.items())) for kind, topics in sorted(found.items())}


def _keywords(text: str) -> list[str]:
    return [slug(keyword) for keyword in text.split(",") if keyword.strip()]


def _names(topic: SkillTopic) -> list[str]:
    return topic.topic.split("_")


def _searchable(topic: SkillTopic) -> list[str]:
    words = [*_names(topic), *topic.keywords, *re.split(r"\W+", topic.title.lower())]
    return [word for word in words if word]
