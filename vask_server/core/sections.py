"""A note read in parts: one section by its heading, and a window of its lines capped in size with
the line to read on from. Pure: the lines and headings come in, as the parser made them.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from vask_server.core.models import Heading


@dataclass(frozen=True)
class Section:
    """Lines `start` to `end` (1-based, inclusive) of a note; `heading` is None for the whole note."""

    start: int
    end: int
    heading: Heading | None = None
    path: tuple[str, ...] = ()  # the headings above it and its own: ("Plan", "Pricing")


def _norm(text: str) -> str:
    return " ".join(text.strip().lstrip("#").split()).casefold()


def heading_paths(headings: Sequence[Heading]) -> list[tuple[Heading, tuple[str, ...]]]:
    """Each heading with the texts of the headings it sits under, then its own."""
    above: list[Heading] = []
    out = []
    for heading in headings:
        while above and above[-1].level >= heading.level:
            above.pop()
        above.append(heading)
        out.append((heading, tuple(h.text for h in above)))
    return out


def find_section(headings: Sequence[Heading], wanted: str, last_line: int) -> Section | None:
    """The section under the heading `wanted` names: its text ("Pricing", "## Pricing", any case), or
    its path as a citation writes it ("Plan > Pricing", "Plan#Pricing"), whose last part is matched
    and whose earlier parts must be among the headings above it. The first such heading wins. It runs
    to the line before the next heading of its level or higher, else to the note's end."""
    parts = [_norm(part) for part in wanted.replace("#", " > ").split(" > ")]
    parts = [part for part in parts if part]
    if not parts:
        return None
    pathed = heading_paths(headings)
    for index, (heading, path) in enumerate(pathed):
        if _norm(heading.text) != parts[-1]:
            continue
        above = [_norm(text) for text in path[:-1]]
        if not all(part in above for part in parts[:-1]):
            continue
        end = last_line
        for later, _ in pathed[index + 1 :]:
            if later.level <= heading.level:
                end = later.line - 1
                break
        return Section(heading.line, max(heading.line, end), heading, path)
    return None


@dataclass(frozen=True)
class Window:
    """The lines read (`first` to `last`, 1-based) and, when the section goes on past the cap, the
    line to read on from."""

    text: str
    first: int
    last: int
    next_line: int | None


def window(lines: Sequence[str], section: Section, from_line: int | None, max_chars: int) -> Window:
    """The section's lines from `from_line` (its first when None), whole lines until `max_chars`
    (at least one line, cut at `max_chars` when that line alone is longer)."""
    first = section.start if from_line is None else max(section.start, from_line)
    taken: list[str] = []
    size = 0
    line = first
    while line <= section.end and line <= len(lines):
        text = lines[line - 1]
        if taken and size + len(text) + 1 > max_chars:
            break
        if not taken and len(text) > max_chars:
            taken.append(text[:max_chars])
            line += 1
            break
        taken.append(text)
        size += len(text) + 1
        line += 1
    last = line - 1
    more = line <= min(section.end, len(lines))
    return Window("\n".join(taken), first, max(first, last), line if more else None)


def plain(value: Any) -> Any:
    """A frontmatter value as JSON can carry it: dates as ISO text, other objects as their text."""
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if isinstance(value, datetime.date | datetime.datetime | datetime.time):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(key): plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple | set):
        return [plain(item) for item in value]
    return str(value)
