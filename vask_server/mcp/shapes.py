"""What each tool answers: text a model reads well (short, with the `[[path#heading]]` link to cite), and
the same as structured content whose schema the tool publishes (`outputSchema`)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from vask_server.core.citations import location, written_on
from vask_server.core.models import Hit
from vask_server.core.time.ranges import TimeRange, describe_range

if TYPE_CHECKING:  # (the services import the database: loaded once the index is opened, not before)
    from vask_server.mcp.calls import Connections, Dated
    from vask_server.services.query.notes import NoteRead
    from vask_server.services.query.search import SearchResult

_PASSAGE_CHARS = 4_000  # a passage's text in a search's or connection's answer, at most


class Passage(BaseModel):
    citation: str = Field(description="The Obsidian link to cite it by: [[path#heading]]")
    path: str
    title: str
    heading: str = Field(description="Its heading path in the note ('Title > Section'); '' at the top")
    line_start: int
    line_end: int
    page: int | None = Field(None, description="A PDF's page")
    date: str | None = Field(None, description="When it was written (ISO day), when known")
    date_end: str | None = Field(None, description="The last day it covers, for a span")
    date_source: str | None = Field(None, description="Where the date was read: daily-note, frontmatter, heading, …")
    score: float
    text: str
    linked: str | None = Field(
        None, description="In connections: links to, linked from, both, unlinked (not linked yet), seed"
    )
    near: str | None = Field(None, description="In connections: the heading of the seed's passage it is closest to")


class SearchOutput(BaseModel):
    searched: str = Field(description="What was searched: the question without the time words it named")
    mode: str = Field(description="hybrid, vector, keyword (the model server was down) or connections")
    notice: str | None = Field(None, description="Anything the answer depends on: fallbacks, an index behind")
    index_state: str = Field(description="current, behind, building or not_indexed")
    time_range: dict[str, str | None] | None = None
    scope: dict[str, list[str]] | None = None
    order: str | None = Field(None, description="latest or earliest: the closest passages by date")
    connection: dict[str, str] | None = Field(None, description="For 'what connects to [[X]]?': the seed note")
    passages: list[Passage]


class LinkedNote(BaseModel):
    path: str
    title: str
    citation: str


class HeadingLine(BaseModel):
    level: int
    text: str
    line: int


class ReadOutput(BaseModel):
    path: str
    title: str
    kind: str = Field(description="note, canvas or pdf (a canvas's or PDF's indexed text)")
    citation: str
    section: str | None = Field(None, description="The heading path of the section read; null: the note")
    first_line: int
    last_line: int
    total_lines: int
    next_line: int | None = Field(None, description="Call again with from_line = this to read on; null: done")
    text: str
    frontmatter: dict[str, Any]
    tags: list[str]
    headings: list[HeadingLine]
    links_to: list[LinkedNote]
    linked_from: list[LinkedNote]
    links_to_total: int
    linked_from_total: int


class ConnectionsOutput(BaseModel):
    path: str
    title: str
    citation: str
    connected: list[Passage] = Field(description="Each connected note's passage that connects, best first")


class DatedNoteOutput(BaseModel):
    path: str
    title: str
    citation: str
    written_from: str | None = None
    written_to: str | None = None
    modified: str | None = Field(None, description="Its last change, when within the range")
    passages: int = Field(description="Its passages written within the range")
    headings: list[str]


class DatedOutput(BaseModel):
    date_from: str | None
    date_to: str | None
    words: str | None = Field(None, description="The time words read from 'when'")
    total: int
    next_offset: int | None = Field(None, description="Call again with offset = this for more; null: all shown")
    notes: list[DatedNoteOutput]
    notice: str | None = None


class StatusOutput(BaseModel):
    vault: str
    state: str = Field(description="current, behind, building or not_indexed")
    notice: str | None
    notes: int = Field(description="Notes searchable by meaning (during a first index: embedded so far)")
    chunks: int
    keyword_only_notes: int = Field(description="During a first index: notes found by keyword until embedded")
    model: str | None
    dimension: int | None
    configured_model: str
    last_sync: str | None
    building: str | None = Field(description="The model of an index being built, if one is")
    paused: bool
    notes_in_vault: int
    notes_indexed: int
    changed_since_sync: int
    deleted_since_sync: int
    excluded: dict[str, int] = Field(description="Notes kept out, counted by the rule (never named)")
    failed: int
    skipped: int
    store_errors: list[str]


def citation(path: str, anchor: str = "") -> str:
    base = path[:-3] if path.lower().endswith(".md") else path
    return f"[[{base}#{anchor}]]" if anchor else f"[[{base}]]"


def _passage(hit: Hit) -> Passage:
    return Passage(
        citation=f"[[{hit.link}]]",
        path=hit.path,
        title=hit.title,
        heading=hit.heading,
        line_start=hit.line_start,
        line_end=hit.line_end,
        page=hit.page,
        date=hit.date.isoformat() if hit.date else None,
        date_end=hit.date_end.isoformat() if hit.date_end else None,
        date_source=hit.date_source,
        score=round(hit.score, 4),
        text=_cut(hit.text, _PASSAGE_CHARS),
        linked=hit.linked,
        near=hit.near,
    )


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit].rstrip() + " …"


def _joined(*notices: str | None) -> str | None:
    return " ".join(n for n in notices if n) or None


def _range_words(time_range: TimeRange | None) -> str | None:
    if time_range is None:
        return None
    described = describe_range(time_range)
    return f'{described} ("{time_range.text}")' if time_range.text else described


def search_output(result: SearchResult, index_state: str, index_notice: str | None) -> tuple[str, SearchOutput]:
    passages = [_passage(hit) for hit in result.hits]
    out = SearchOutput(
        searched=result.query or "",
        mode=result.mode,
        notice=_joined(result.notice, index_notice),
        index_state=index_state,
        time_range=result.time_range.to_dict() if result.time_range else None,
        scope=result.scope.to_dict() if result.scope else None,
        order=result.order,
        connection=result.connection_dict(),
        passages=passages,
    )
    lines: list[str] = []
    if result.seed is not None:
        lines.append(f"Notes connected to {citation(result.seed)} ({result.seed_title}):")
    elif passages:
        lines.append(
            f"{len(passages)} passage{'s' if len(passages) != 1 else ''} from the notes ({result.mode} search):"
        )
    else:
        lines.append(
            "Nothing in the notes comes close enough to this question: say so rather than guess "
            "(or search again with other words, or a wider range)."
        )
    if scope := result.scope:
        lines.append(f"Within {scope.describe()}.")
    if words := _range_words(result.time_range):
        lines.append(f"{words}.")
    if result.order:
        lines.append(f"The closest passages come by date, {result.order} first.")
    if out.notice:
        lines.append(f"Note: {out.notice}")
    for n, (hit, passage) in enumerate(zip(result.hits, passages, strict=True), start=1):
        lines.append("")
        lines.append(f"[{n}] {passage.citation} · {_where(hit)} · score {passage.score:.3f}")
        lines.append(passage.text)
    if passages:
        lines.append("")
        lines.append("Cite a passage by its [[…]] link; read_note reads a note or one section of it whole.")
    return "\n".join(lines), out


def _where(hit: Hit) -> str:
    parts = [hit.path, location(hit)]
    if hit.date:
        parts.append(f"written {written_on(hit)}")
    if hit.linked and hit.linked != "seed":
        parts.append(hit.linked if hit.linked != "unlinked" else "not linked yet")
    if hit.near:
        parts.append(f"near “{hit.near}”")
    return " · ".join(parts)


def read_output(note: NoteRead) -> tuple[str, ReadOutput]:
    def linked(items: tuple[Any, ...]) -> list[LinkedNote]:
        return [LinkedNote(path=i.path, title=i.title, citation=citation(i.path)) for i in items]

    out = ReadOutput(
        path=note.path,
        title=note.title,
        kind=note.kind,
        citation=citation(note.path),
        section=note.section,
        first_line=note.first_line,
        last_line=note.last_line,
        total_lines=note.total_lines,
        next_line=note.next_line,
        text=note.text,
        frontmatter=note.frontmatter,
        tags=list(note.tags),
        headings=[HeadingLine(level=lv, text=tx, line=ln) for lv, tx, ln in note.headings],
        links_to=linked(note.links_to),
        linked_from=linked(note.linked_from),
        links_to_total=note.links_to_total,
        linked_from_total=note.linked_from_total,
    )
    part = f", section “{note.section}”" if note.section else ""
    lines = [f"{out.citation} “{note.title}”{part}: lines {note.first_line}-{note.last_line} of {note.total_lines}"]
    if note.frontmatter:
        shown = "; ".join(f"{key}: {value}" for key, value in note.frontmatter.items())
        lines.append(f"Frontmatter: {_cut(shown, 600)}")
    for name, items, total in (
        ("Links to", out.links_to, note.links_to_total),
        ("Linked from", out.linked_from, note.linked_from_total),
    ):
        if total:
            more = f" (+{total - len(items)} more)" if total > len(items) else ""
            lines.append(f"{name} ({total}): {', '.join(i.citation for i in items)}{more}")
    lines.append("---")
    lines.append(note.text)
    lines.append("---")
    if note.next_line is not None:
        lines.append(f"It goes on: call read_note with from_line={note.next_line} to read the next part.")
    return "\n".join(lines), out


def connections_output(found: Connections, index_notice: str | None) -> tuple[str, ConnectionsOutput]:
    passages = [
        _passage(_with(c.passage, linked=c.linked, near=c.seed_heading, score=c.score)) for c in found.connected
    ]
    out = ConnectionsOutput(path=found.path, title=found.title, citation=citation(found.path), connected=passages)
    lines = [f"Notes connected to {out.citation} (“{found.title}”), best first:"]
    if index_notice:
        lines.append(f"Note: {index_notice}")
    if not passages:
        lines.append("No other note connects to it within what was asked.")
    for n, (c, passage) in enumerate(zip(found.connected, passages, strict=True), start=1):
        how = "not linked yet" if c.linked == "unlinked" else c.linked
        near = f" · near its part “{c.seed_heading}”" if c.seed_heading else ""
        lines.append("")
        lines.append(f"[{n}] {passage.citation} “{c.title}” · {how}{near} · score {passage.score:.3f}")
        lines.append(passage.text)
    return "\n".join(lines), out


def _with(hit: Hit, **changes: Any) -> Hit:
    return replace(hit, **changes)


def dated_output(found: Dated, index_notice: str | None) -> tuple[str, DatedOutput]:
    notes = [
        DatedNoteOutput(
            path=n.path,
            title=n.title,
            citation=citation(n.path),
            written_from=n.written[0].isoformat() if n.written else None,
            written_to=n.written[1].isoformat() if n.written else None,
            modified=n.modified.isoformat() if n.modified else None,
            passages=n.passages,
            headings=list(n.headings),
        )
        for n in found.page.notes
    ]
    out = DatedOutput(
        date_from=found.start.isoformat() if found.start else None,
        date_to=found.end.isoformat() if found.end else None,
        words=found.words,
        total=found.page.total,
        next_offset=found.page.next_offset,
        notes=notes,
        notice=index_notice,
    )
    described = describe_range(TimeRange(found.start, found.end, found.words or ""))
    lines = [f"{described}: {found.page.total} note{'s' if found.page.total != 1 else ''}, latest first."]
    if index_notice:
        lines.append(f"Note: {index_notice}")
    for n in notes:
        when = []
        if n.written_from:
            span = n.written_from if n.written_from == n.written_to else f"{n.written_from} – {n.written_to}"
            when.append(f"written {span} ({n.passages} passage{'s' if n.passages != 1 else ''})")
        if n.modified:
            when.append(f"changed {n.modified}")
        parts = f" — {'; '.join(n.headings)}" if n.headings else ""
        lines.append(f"- {n.citation} “{n.title}”: {', '.join(when)}{parts}")
    if found.page.next_offset is not None:
        lines.append(f"More: call again with offset={found.page.next_offset}.")
    return "\n".join(lines), out


def status_output(status: dict[str, Any]) -> tuple[str, StatusOutput]:
    out = StatusOutput(**status)
    lines = [f"vault {out.vault}: index {out.state}"]
    if out.model:
        lines.append(f"{out.notes:,} notes, {out.chunks:,} passages, model {out.model} ({out.dimension}-d)")
        lines.append(
            f"last sync {out.last_sync}; {out.changed_since_sync + out.deleted_since_sync:,} notes changed since"
        )
    if out.building:
        lines.append(f"being built with {out.building}: {out.notes_indexed:,} of about {out.notes_in_vault:,} notes")
    if out.keyword_only_notes:
        lines.append(
            f"searchable now: {out.notes:,} notes by meaning and keyword, {out.keyword_only_notes:,} more by keyword"
            " until they are embedded"
        )
    if out.paused:
        lines.append("indexing is paused (`vask resume`)")
    if out.excluded:
        lines.append("excluded: " + "; ".join(f"{count} by {rule}" for rule, count in out.excluded.items()))
    if out.failed or out.skipped:
        lines.append(f"{out.failed} notes could not be read, {out.skipped} were skipped (`vask status` lists them)")
    lines.extend(out.store_errors)
    if out.notice:
        lines.append(f"Note: {out.notice}")
    return "\n".join(lines), out
