"""Answer text + retrieved hits → citations that point at real notes, and the Sources block."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from vask_server.core.models import Hit

_BRACKET_RE = re.compile(r"\[\[?([^\[\]\n]{1,200})\]?\]")


@dataclass(frozen=True)
class Citation:
    title: str
    path: str
    heading: str
    anchor: str
    line: int
    link: str  # Obsidian link text: "Folder/Note#Heading", "Folder/File.pdf#page=3"
    page: int | None = None  # a PDF's page

    def to_dict(self) -> dict[str, object]:
        return {
            "title": self.title,
            "path": self.path,
            "heading": self.heading,
            "anchor": self.anchor,
            "line": self.line,
            "link": self.link,
            "page": self.page,
        }


def _key(text: str) -> str:
    return " ".join(text.casefold().split())


def extract_citations(answer: str, hits: Sequence[Hit]) -> list[Citation]:
    """Titles the model cited in [brackets] that match a retrieved note; anything else (an invented
    title, a number) is not presented as a source."""
    by_key: dict[str, Hit] = {}
    for hit in hits:  # best hit of each note first
        for key in (_key(hit.title), _key(hit.path), _key(hit.path.removesuffix(".md")), _key(hit.link)):
            by_key.setdefault(key, hit)
    citations: list[Citation] = []
    seen: set[str] = set()
    for match in _BRACKET_RE.finditer(answer):
        label = match.group(1).split("|")[0].strip()
        found = by_key.get(_key(label)) or by_key.get(_key(label.split("#")[0]))
        if found is None or found.path in seen:
            continue
        seen.add(found.path)
        citations.append(citation_for(found))
    return citations


def citation_for(hit: Hit) -> Citation:
    return Citation(hit.title, hit.path, hit.heading, hit.anchor, hit.line_start, hit.link, hit.page)


def unique_sources(hits: Sequence[Hit]) -> list[Hit]:
    """One entry per note and heading, in retrieval order."""
    seen: set[str] = set()
    out: list[Hit] = []
    for hit in hits:
        if hit.link not in seen:
            seen.add(hit.link)
            out.append(hit)
    return out


def sources_block(hits: Sequence[Hit]) -> str:
    """The deterministic block printed after an answer: Obsidian links that resolve to real notes."""
    lines = ["Sources:"]
    for hit in unique_sources(hits):
        when = f"{written_on(hit)}, " if hit.date else ""
        lines.append(f"  [[{hit.link}]]  ({when}{location(hit)}, score {hit.score:.2f})")
    return "\n".join(lines)


def location(hit: Hit) -> str:
    """Where in its file a passage is, in the file's own terms: a PDF's page, a note's lines (a
    canvas's lines are its cards in reading order, which no editor shows: none)."""
    if hit.page is not None:
        return f"p. {hit.page}"
    if hit.path.lower().endswith(".canvas"):
        return "canvas"
    return f"lines {hit.line_start}-{hit.line_end}"


def written_on(hit: Hit) -> str:
    """ "2026-02-14", "2026-02-12 – 2026-02-22" for a span, marked "file date" when only the file's
    time says so."""
    if hit.date is None:
        return ""
    text = hit.date.isoformat()
    if hit.date_end is not None and hit.date_end != hit.date:
        text = f"{text} – {hit.date_end.isoformat()}"
    return f"{text} (file date)" if hit.date_source == "file-time" else text
