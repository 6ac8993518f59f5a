"""Reading one note, or one section of it, as it is on disk now: its frontmatter, its outline, the notes it
links to and those that link to it, capped in size with the line to read on from; and the notes of the
index, a page at a time. For any door (the MCP door's read tool and resources; the HTTP API could serve
them the same way).

Only a note the index holds can be read, and only while no exclusion keeps it out now: the rules as
they are (VASK_EXCLUDE, Obsidian's Excluded files read anew) and its own frontmatter (`vask: exclude`),
read again from the file. A note kept out is answered exactly as a path that holds no note, so that
no answer tells it exists.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from vask_server.adapters.sql import sql_string
from vask_server.adapters.vault import NoteUnreadable, is_note_path
from vask_server.core.exclude import opted_out, opted_out_text
from vask_server.core.filetypes import MARKDOWN, file_type
from vask_server.core.models import Heading
from vask_server.core.parse import normalize_newlines, parse_note
from vask_server.core.sections import Section, find_section, plain, window
from vask_server.errors import BadRequest, NotFound
from vask_server.services.context import QueryServices
from vask_server.services.paths import note_path
from vask_server.services.query.graph import LinkGraph

MAX_CHARS = 20_000  # a read's text, at most, unless the caller asks for less
MAX_LINKS = 50  # links each way, at most
_HEADINGS_LISTED = 40  # in the hint of a heading the note lacks


def no_such_note() -> NotFound:
    """The one answer for a path that holds no note the index has, or one kept out (never said which)."""
    return NotFound(
        "No note at this path in the index.",
        "Give a vault-relative path as search results cite it (e.g. 'Projects/Plan.md'); search_notes finds "
        "notes, and the resources list them.",
    )


@dataclass(frozen=True)
class LinkedNote:
    path: str
    title: str


@dataclass(frozen=True)
class NoteRead:
    path: str
    title: str
    kind: str  # "note", "canvas" or "pdf"
    text: str
    first_line: int  # the lines of `text` (1-based; for a canvas or PDF, its passages numbered in order)
    last_line: int
    total_lines: int
    next_line: int | None  # where to read on from (the section, or the note, goes on); None: read to its end
    section: str | None = None  # the heading path of the section read ("Plan > Pricing"); None: the note
    frontmatter: dict[str, Any] = field(default_factory=dict)
    tags: tuple[str, ...] = ()
    headings: tuple[tuple[int, str, int], ...] = ()  # (level, text, line) of every heading: the outline
    links_to: tuple[LinkedNote, ...] = ()
    linked_from: tuple[LinkedNote, ...] = ()
    links_to_total: int = 0
    linked_from_total: int = 0


async def readable_path(services: QueryServices, value: str, name: str = "path") -> tuple[str, LinkGraph]:
    """`value` as a note the index holds and no exclusion keeps out now, and the index's link graph;
    else the same NotFound for every other case (a path outside the vault or not a note's name is
    the caller's error, said as such)."""
    path = note_path(services.vault, value, name)
    index = services.searcher.active()
    graph = await services.searcher.graphs.get(index)
    if path not in graph or not is_note_path(path) or await asyncio.to_thread(_excluded_by_rule, services, path):
        raise no_such_note()
    return path, graph


def _excluded_by_rule(services: QueryServices, path: str) -> bool:
    return services.searcher.exclusions()(path)


async def readable_filter(services: QueryServices, paths: Collection[str]) -> set[str]:
    """Which of these indexed paths no exclusion rule keeps out now (the index may predate a rule:
    one given to this process alone, or an Excluded files entry added since the last sync)."""

    def check() -> set[str]:
        kept_out = services.searcher.exclusions()  # (the rules as they are now: services/query/exclusions.py)
        return {p for p in paths if is_note_path(p) and not kept_out(p)}

    return await asyncio.to_thread(check) if paths else set()


async def read_note(
    services: QueryServices,
    value: str,
    *,
    heading: str | None = None,
    from_line: int | None = None,
    max_chars: int = MAX_CHARS,
    max_links: int = MAX_LINKS,
) -> NoteRead:
    """The note at `value` (or its section under `heading`), from `from_line` on, up to `max_chars`."""
    path, graph = await readable_path(services, value)
    kind = file_type(path) or MARKDOWN
    if kind == MARKDOWN:
        lines, headings, front, tags = await _markdown(services, path)
    else:
        lines, headings = await _passages(services, path)
        front, tags = {}, ()
    section = Section(1, max(1, len(lines)))
    if heading is not None:
        found = find_section(headings, heading, len(lines))
        if found is None:
            listed = [h.text for h in headings[:_HEADINGS_LISTED]]
            hint = f"Its headings: {'; '.join(listed)}." if listed else "It has no headings: read it whole."
            raise BadRequest(f"This note has no heading {heading!r}.", hint)
        section = found
    if from_line is not None and not section.start <= from_line <= section.end:
        raise BadRequest(
            f"'from_line' {from_line} is outside what was asked (lines {section.start}-{section.end}).",
            "Leave it out to read from the start; give the next_line of a previous read to read on.",
        )
    part = window(lines, section, from_line, max_chars)
    outgoing = sorted(graph.links_to(path))
    incoming = sorted(graph.linked_from(path))
    return NoteRead(
        path=path,
        title=graph.title(path) or path,
        kind={MARKDOWN: "note"}.get(kind, kind),
        text=part.text,
        first_line=part.first,
        last_line=part.last,
        total_lines=len(lines),
        next_line=part.next_line,
        section=" > ".join(section.path) if section.heading is not None else None,
        frontmatter=front,
        tags=tags,
        headings=tuple((h.level, h.text, h.line) for h in headings),
        links_to=tuple(LinkedNote(p, graph.title(p) or p) for p in outgoing[:max_links]),
        linked_from=tuple(LinkedNote(p, graph.title(p) or p) for p in incoming[:max_links]),
        links_to_total=len(outgoing),
        linked_from_total=len(incoming),
    )


async def _markdown(
    services: QueryServices, path: str
) -> tuple[list[str], list[Heading], dict[str, Any], tuple[str, ...]]:
    def read() -> tuple[list[str], list[Heading], dict[str, Any], tuple[str, ...]]:
        try:
            text, _ = services.vault.read_note(path, services.settings.max_note_bytes)
        except NoteUnreadable:
            raise no_such_note() from None  # (gone, or too large to be indexed: the index holds no such text)
        if opted_out_text(text):
            raise no_such_note()
        note = parse_note(path, text)
        if opted_out(note.frontmatter):
            raise no_such_note()
        lines = normalize_newlines(text).split("\n")
        if lines and lines[-1] == "" and len(lines) > 1:
            lines.pop()
        return lines, list(note.headings), plain(note.frontmatter), note.tags

    return await asyncio.to_thread(read)


async def _passages(services: QueryServices, path: str) -> tuple[list[str], list[Heading]]:
    """A canvas or a PDF, as the index holds its text: its passages in order, each under its heading
    (a PDF's under its page), numbered as lines of their own."""
    index = services.searcher.active()
    rows = await services.store.tables(index).all_chunk_rows(
        ["heading", "text", "ordinal", "page"],
        where=f"path = {sql_string(path)} AND kind = 'chunk'",
    )
    lines: list[str] = []
    headings: list[Heading] = []
    for row in sorted(rows.to_pylist(), key=lambda r: r["ordinal"]):
        title = f"Page {row['page']}" if row.get("page") else (row["heading"] or "").split(" > ")[-1]
        if title and (not headings or headings[-1].text != title):
            lines.append(f"## {title}")
            headings.append(Heading(2, title, len(lines)))
        lines.extend((row["text"] or "").split("\n"))
        lines.append("")
    return lines, headings


@dataclass(frozen=True)
class NotesPage:
    notes: list[LinkedNote]
    total: int
    next_offset: int | None


async def list_notes(services: QueryServices, offset: int, limit: int) -> NotesPage:
    """The notes of the index that no exclusion keeps out now, by path, `limit` from `offset` on."""
    index = services.searcher.active()
    graph = await services.searcher.graphs.get(index)

    def page() -> NotesPage:
        kept_out = services.searcher.exclusions()
        paths = sorted(p for p in graph if is_note_path(p) and not kept_out(p))
        chosen = paths[offset : offset + limit]
        more = offset + limit < len(paths)
        return NotesPage(
            [LinkedNote(p, graph.title(p) or p) for p in chosen], len(paths), offset + limit if more else None
        )

    return await asyncio.to_thread(page)
