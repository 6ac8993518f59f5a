"""Each tool's arguments → the service call that answers it: one small function per tool, the same calls
`/v1/search` and `/v1/related` make (web/routes.py), checked by the same value checks
(core/arguments.py). The SDK has already checked the arguments' types against the tool's schema."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any

from vask_server.core import arguments
from vask_server.core.question import Question
from vask_server.core.retrieve import Filters
from vask_server.core.time.expr import read_time
from vask_server.errors import BadRequest, NotIndexed
from vask_server.services.context import QueryServices, index_status
from vask_server.services.query.connections import Connected
from vask_server.services.query.notes import NoteRead, read_note, readable_path
from vask_server.services.query.related import connections_of
from vask_server.services.query.search import SearchResult
from vask_server.services.query.timeline import DatedPage, notes_in_range
from vask_server.services.sync.freshness import Freshness


def _filters(
    *,
    folders: list[str] | None = None,
    tags: list[str] | None = None,
    notes: list[str] | None = None,
    date_from: str | None = None,
    date_to: str | None = None,
) -> Filters | None:
    body: dict[str, Any] = {
        "folders": folders,
        "tags": tags,
        "paths": notes,
        "date_from": date_from,
        "date_to": date_to,
    }
    return arguments.filters({name: value for name, value in body.items() if value is not None})


async def search(
    services: QueryServices,
    *,
    question: str,
    date_from: str | None = None,
    date_to: str | None = None,
    folders: list[str] | None = None,
    tags: list[str] | None = None,
    notes: list[str] | None = None,
    limit: int | None = None,
    today: str | None = None,
) -> SearchResult:
    """As POST /v1/search with {query, filters, top_k, now}: one `Question`, searched whole. Before a
    first sync has written anything there is nothing to search: an empty answer (the index's state
    says why), not a failure."""
    settings = services.settings
    meta = services.store.read_meta()
    if meta.building and not meta.active:
        index = services.searcher.active()
        try:
            await services.store.tables(index).count_chunks()
        except NotIndexed:
            return SearchResult([], "none", declined=True, query=question)
    question_asked = Question(
        arguments.text({"question": question}, "question"),
        today=arguments.today(today, "today") or date.today(),
        top_k=arguments.integer(limit, "limit", settings.top_k, 1, arguments.MAX_TOP_K),
        min_similarity=settings.min_similarity,
        filters=_filters(folders=folders, tags=tags, notes=notes, date_from=date_from, date_to=date_to),
    )
    return await services.searcher.search_question(question_asked)


async def read(
    services: QueryServices,
    *,
    path: str,
    heading: str | None = None,
    from_line: int | None = None,
    max_chars: int | None = None,
) -> NoteRead:
    if heading is not None:
        heading = arguments.text({"heading": heading}, "heading", max_chars=500)
    return await read_note(
        services,
        path,
        heading=heading,
        from_line=from_line,
        max_chars=arguments.integer(max_chars, "max_chars", 20_000, 200, 100_000),
    )


@dataclass(frozen=True)
class Connections:
    path: str
    title: str
    connected: list[Connected]


async def connections(
    services: QueryServices,
    *,
    path: str,
    limit: int | None = None,
    date_from: str | None = None,
    date_to: str | None = None,
    folders: list[str] | None = None,
    tags: list[str] | None = None,
) -> Connections:
    """As GET /v1/related?path=…&top_k=…, within the dates, folders and tags given."""
    seed, graph = await readable_path(services, path)
    index = services.searcher.active()
    found = await connections_of(
        services.searcher,
        index,
        seed,
        arguments.integer(limit, "limit", 10, 1, arguments.MAX_TOP_K),
        _filters(folders=folders, tags=tags, date_from=date_from, date_to=date_to),
    )
    return Connections(seed, graph.title(seed) or seed, found)


@dataclass(frozen=True)
class Dated:
    start: date | None
    end: date | None
    words: str | None  # the time words read, when given as words
    page: DatedPage


async def dated(
    services: QueryServices,
    *,
    when: str | None = None,
    date_from: str | None = None,
    date_to: str | None = None,
    kind: str = "both",
    folders: list[str] | None = None,
    tags: list[str] | None = None,
    limit: int | None = None,
    offset: int | None = None,
    today: str | None = None,
) -> Dated:
    """The notes written or changed within a range: given as words ("last week", read as a question's
    time words are) or as dates."""
    start = arguments.day(date_from, "date_from")
    end = arguments.day(date_to, "date_to")
    words = None
    if when is not None:
        day = arguments.today(today, "today") or date.today()
        read = read_time(arguments.text({"when": when}, "when", max_chars=200), day)
        if read is None or read.range is None:
            raise BadRequest(
                f"No range of days could be read in {when!r}.",
                "Write it as in a question ('last week', 'yesterday', 'in March', 'Q1 2026', '2026-03-14'), "
                "or give date_from and date_to.",
            )
        start, end, words = start or read.range.start, end or read.range.end, read.range.text
    if start is None and end is None:
        raise BadRequest(
            "Say which days: 'when', or 'date_from' and/or 'date_to'.", 'For example {"when": "last week"}.'
        )
    if start and end and start > end:
        raise BadRequest("'date_from' is after 'date_to'.", "Give the earlier day as date_from.")
    if kind not in ("written", "changed", "both"):
        raise BadRequest("'kind' must be 'written', 'changed' or 'both'.")
    page = await notes_in_range(
        services,
        start,
        end,
        written=kind != "changed",
        changed=kind != "written",
        filters=_filters(folders=folders, tags=tags),
        offset=arguments.integer(offset, "offset", 0, 0, 1_000_000),
        limit=arguments.integer(limit, "limit", 20, 1, 100),
    )
    return Dated(start, end, words, page)


async def status(services: QueryServices, freshness: Freshness) -> dict[str, Any]:
    """What GET /v1/status says of the index (without the disk walk), and how far behind the vault it is."""
    detail = await index_status(services)
    return {
        "vault": detail["vault"],
        "state": freshness.state,
        "notice": freshness.notice(),
        "notes": detail["notes"],
        "chunks": detail["chunks"],
        "keyword_only_notes": detail["keyword_only_notes"],
        "model": detail["model"],
        "dimension": detail["dimension"],
        "configured_model": detail["configured_model"],
        "last_sync": detail["last_sync"],
        "building": (detail["building"] or {}).get("model") if detail["building"] else None,
        "paused": detail["paused"],
        "notes_in_vault": freshness.notes_in_vault,
        "notes_indexed": freshness.notes_indexed,
        "changed_since_sync": freshness.changed,
        "deleted_since_sync": freshness.deleted,
        "excluded": detail["excluded"],
        "failed": len(detail["failed"]),
        "skipped": len(detail["skipped"]),
        "store_errors": [f"{p['message']}. {p['hint']}" for p in detail["store_errors"]],
    }
