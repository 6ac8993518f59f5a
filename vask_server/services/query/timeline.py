"""The notes written or changed within a range of days: "what did I write last week?", a week of daily
notes. From the index's dates (core/time/dates.py): a passage's date says when it was written (a daily note's
day, a dated heading, the frontmatter's `created`), a note's `modified` when it last changed (its
frontmatter's `modified`/`updated`, else the file's time). For any door.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from vask_server.adapters.sql import filters_to_where
from vask_server.core.retrieve import Filters
from vask_server.services.context import QueryServices
from vask_server.services.query.notes import readable_filter

FILE_TIME = "file-time"  # a passage dated by its file's time alone: when it was saved, not written


@dataclass(frozen=True)
class DatedNote:
    path: str
    title: str
    written: tuple[date, date] | None  # the first and last day of its passages written within the range
    modified: date | None  # the note's last change, when that is within the range
    passages: int  # its passages written within the range
    headings: tuple[str, ...]  # the headings of those passages, in the note's order (a few)

    @property
    def latest(self) -> date:
        days = [d for d in (self.written[1] if self.written else None, self.modified) if d is not None]
        return max(days) if days else date.min


@dataclass(frozen=True)
class DatedPage:
    notes: list[DatedNote]
    total: int
    next_offset: int | None


_HEADINGS_KEPT = 5


async def notes_in_range(
    services: QueryServices,
    start: date | None,
    end: date | None,
    *,
    written: bool = True,
    changed: bool = True,
    filters: Filters | None = None,
    offset: int = 0,
    limit: int = 20,
) -> DatedPage:
    """The notes with a passage written within [start, end] (`written`) or last changed within it
    (`changed`), latest first, `limit` from `offset` on. `filters`: folders and tags they must be in."""
    index = services.searcher.active()
    clauses = ["kind = 'chunk'"]
    own = filters_to_where(filters)
    if own:
        clauses.append(f"({own})")
    wanted = []
    if written:
        wanted.append(_overlap("date", "date_end", start, end))
    if changed:
        wanted.append(_overlap("modified", "modified", start, end))
    clauses.append("(" + " OR ".join(wanted) + ")")
    rows = await services.store.tables(index).all_chunk_rows(
        ["path", "title", "heading", "ordinal", "date", "date_end", "date_source", "modified"],
        where=" AND ".join(clauses),
    )
    allowed = await readable_filter(services, set(rows["path"].to_pylist()))
    by_path: dict[str, list[dict[str, object]]] = {}
    for row in rows.to_pylist():
        if row["path"] in allowed:
            by_path.setdefault(row["path"], []).append(row)
    found = [_dated(path, items, start, end, written=written, changed=changed) for path, items in by_path.items()]
    kept = sorted((note for note in found if note is not None), key=lambda n: (-n.latest.toordinal(), n.path))
    chosen = kept[offset : offset + limit]
    return DatedPage(chosen, len(kept), offset + limit if offset + limit < len(kept) else None)


def _overlap(first: str, last: str, start: date | None, end: date | None) -> str:
    # (date.isoformat() is digits and dashes only: nothing to escape)
    parts = [f"{first} IS NOT NULL"]
    if start is not None:
        parts.append(f"{last} >= date '{start.isoformat()}'")
    if end is not None:
        parts.append(f"{first} <= date '{end.isoformat()}'")
    return "(" + " AND ".join(parts) + ")"


def _within(day: date | None, start: date | None, end: date | None) -> bool:
    return day is not None and (start is None or day >= start) and (end is None or day <= end)


def _dated(
    path: str, rows: list[dict[str, object]], start: date | None, end: date | None, *, written: bool, changed: bool
) -> DatedNote | None:
    rows = sorted(rows, key=lambda r: int(r["ordinal"] or 0))  # type: ignore[call-overload]
    inside = [
        r
        for r in rows
        if written
        and r["date_source"] != FILE_TIME
        and isinstance(r["date"], date)
        and isinstance(r["date_end"], date)
        and (start is None or r["date_end"] >= start)
        and (end is None or r["date"] <= end)
    ]
    modified = next((r["modified"] for r in rows if isinstance(r["modified"], date)), None)
    if not (changed and _within(modified, start, end)):
        modified = None
    if not inside and modified is None:
        return None  # (only file-time dates in range, and changes not asked for)
    days = [d for r in inside for d in (r["date"], r["date_end"]) if isinstance(d, date)]
    headings = tuple(dict.fromkeys(str(r["heading"] or "") for r in inside if r["heading"]))[:_HEADINGS_KEPT]
    return DatedNote(
        path=path,
        title=str(rows[0]["title"] or path),
        written=(min(days), max(days)) if days else None,
        modified=modified if isinstance(modified, date) else None,
        passages=len(inside),
        headings=headings,
    )
