"""Plain data that flows through the pipeline: notes, chunks, hits. No I/O here."""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Link:
    """A wikilink, embed or Markdown link as written, plus where it points in the vault."""

    target: str  # as written, e.g. "Projects/Plan" ("" for same-note links like [[#Heading]])
    resolved: str | None  # vault-relative path of the file it opens, None when unresolved or external
    heading: str | None = None
    block: str | None = None
    alias: str | None = None
    embed: bool = False


@dataclass(frozen=True)
class Heading:
    level: int
    text: str
    line: int  # 1-based line in the file


@dataclass(frozen=True)
class Note:
    path: str  # vault-relative, forward slashes, with .md
    title: str
    aliases: tuple[str, ...]
    tags: tuple[str, ...]
    links: tuple[Link, ...]
    headings: tuple[Heading, ...]
    # Cleaned text of every line of the file (1-based line i is lines[i - 1]); frontmatter lines and
    # comments are blank, links are display text. Keeping one entry per line keeps line numbers exact.
    lines: tuple[str, ...]
    kinds: tuple[str, ...]  # per line: text, blank, heading, fence, code, table, meta
    body_start: int  # first line after the frontmatter (1-based)
    warnings: tuple[str, ...] = ()
    frontmatter: dict[str, object] = field(default_factory=dict, compare=False, hash=False)


@dataclass(frozen=True)
class Chunk:
    id: str
    path: str
    title: str
    heading_path: tuple[str, ...]  # (title, H1, H2, ...)
    anchor: str  # heading text for an Obsidian link "path#anchor"; "" for the top of the note
    line_start: int
    line_end: int
    text: str  # what a reader sees
    embed_text: str  # heading path + text: what the model embeds
    hash: str  # content hash of embed_text: equal hashes share one vector
    ordinal: int  # position within the note
    kind: str = "chunk"  # "chunk", or "note" for the note-level record
    page: int | None = None  # a PDF's page (1-based): a chunk never spans two; None for other files

    @property
    def heading(self) -> str:
        return " > ".join(self.heading_path)


@dataclass(frozen=True)
class Hit:
    """A retrieved chunk with its score, ready to show, cite or link."""

    chunk_id: str
    path: str
    title: str
    heading: str
    anchor: str
    line_start: int
    line_end: int
    score: float  # what the ranking used: cosine (vector mode) or fused relevance scaled to 0-1 (hybrid)
    text: str
    tags: tuple[str, ...] = ()
    similarity: float | None = None  # cosine to the question, when known
    # When the passage was written (core/time/dates.py): one day, or the span of a weekly note or of a
    # chunk that holds two dated sections. None only in an index built before dates were read.
    date: datetime.date | None = None
    date_end: datetime.date | None = None
    date_source: str | None = None
    page: int | None = None  # the PDF page it is on (1-based); None for notes and canvases
    # In the answer to "what connects to [[X]]?" only: how this note is linked with X ("links to": X
    # links to it; "linked from"; "both"; "unlinked"), and the heading of X's passage it is closest to.
    linked: str | None = None
    near: str | None = None
    # Found by keyword in a note whose passages are not embedded yet (during a first sync): no cosine.
    keyword_only: bool = False

    @property
    def link(self) -> str:
        """Obsidian link text (what goes inside [[...]]): a note's path without .md, then #heading;
        a PDF's path with #page=N (which Obsidian opens at that page); a canvas's path."""
        if self.page is not None:
            return f"{self.path}#page={self.page}"
        base = self.path[:-3] if self.path.lower().endswith(".md") else self.path
        return f"{base}#{self.anchor}" if self.anchor else base

    def to_dict(self, n: int | None = None) -> dict[str, Any]:
        """The public shape of a source: the same in the CLI's JSON and the HTTP API."""
        out: dict[str, Any] = {} if n is None else {"n": n}
        out.update(
            path=self.path,
            title=self.title,
            heading=self.heading,
            anchor=self.anchor,
            line_start=self.line_start,
            line_end=self.line_end,
            score=round(self.score, 4),
            similarity=None if self.similarity is None else round(self.similarity, 4),
            link=self.link,
            date=self.date.isoformat() if self.date else None,
            date_end=self.date_end.isoformat() if self.date_end else None,
            date_source=self.date_source,
            page=self.page,
        )
        if self.linked is not None:
            out.update(linked=self.linked, near=self.near)
        if self.keyword_only:
            out.update(keyword_only=True)
        return out
