"""When a note, or a part of it, was written. Pure: the vault adapter passes in the vault's periodic-note
settings and the file's modification time.

A note's date comes from, in this order: its name as a periodic note (daily, weekly, monthly, quarterly,
yearly, read through the vault's own Daily notes / Periodic Notes settings); a frontmatter date
(`date`, `created`, …); a date in its file name (a Zettelkasten ID `202602111800`, `2025-11-02 Kickoff`);
and only when nothing else says, the file's modification time, which sync tools and checkouts rewrite.
Inside a note, a heading that holds a date (`## 2026-03-14`, `### Mon 3 Feb`, `## 1 de febrero de 2026`)
or is a period (`## March 2026`, `## Q1 2026`, `### Magnesium (Jan–Feb 2026)`) dates its section, and a
table row led by a date or a month (a running log, a monthly budget) dates that row.

The words it reads dates in are core/time/words.py's; the periodic-note formats are core/time/periodic.py's,
and its `PeriodicFormat`, `parse_moment` and `periodic_formats` are also importable from here.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import date, datetime
from typing import Any

from vask_server.core.models import Chunk, Note
from vask_server.core.parse import LINE_HEADING, LINE_TABLE
from vask_server.core.time.periodic import DEFAULT_PERIODIC
from vask_server.core.time.periodic import PeriodicFormat as PeriodicFormat
from vask_server.core.time.periodic import parse_moment as parse_moment
from vask_server.core.time.periodic import periodic_formats as periodic_formats
from vask_server.core.time.words import MONTH_NAMES, WEEKDAY_PREFIXES, month_span

# Where a date came from, as the API reports it.
SOURCE_FRONTMATTER = "frontmatter"  # reported as "frontmatter:<key>"
SOURCE_HEADING = "heading"
SOURCE_TABLE_ROW = "table-row"
SOURCE_FILE_NAME = "file-name"
SOURCE_FILE_TIME = "file-time"
PERIODIC_SOURCES = {"daily": "daily-note", "weekly": "weekly-note", "monthly": "monthly-note"}
PERIODIC_SOURCES.update(quarterly="quarterly-note", yearly="yearly-note")

DEFAULT_DATE_KEYS = (
    "date",
    "created",
    "created_at",
    "createdAt",
    "creation date",
    "date created",
    "created on",
    "day",
)
DEFAULT_MODIFIED_KEYS = ("modified", "updated", "last_modified", "date modified", "lastmod", "modified_at")


@dataclass(frozen=True)
class DateSpan:
    """Inclusive days: one day for a daily note or a dated heading, a week for a weekly note."""

    start: date
    end: date
    source: str

    def overlaps(self, first: date | None, last: date | None) -> bool:
        return (first is None or self.end >= first) and (last is None or self.start <= last)


@dataclass(frozen=True)
class DateOptions:
    periodic: tuple[PeriodicFormat, ...] = DEFAULT_PERIODIC
    date_keys: tuple[str, ...] = DEFAULT_DATE_KEYS
    modified_keys: tuple[str, ...] = DEFAULT_MODIFIED_KEYS

    def fingerprint(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class NoteDates:
    note: DateSpan  # the note as a whole
    modified: date
    lines: tuple[DateSpan | None, ...] = field(default=())  # per line (1-based i is lines[i - 1]): its own date


# -- periodic notes ---------------------------------------------------------------------------------


def periodic_date(path: str, formats: Sequence[PeriodicFormat]) -> DateSpan | None:
    """The span a periodic note covers, read from its path as the vault names such notes."""
    stem = path[:-3] if path.lower().endswith(".md") else path
    for periodic in formats:
        folder = periodic.folder
        if folder:
            if not stem.startswith(folder + "/"):
                continue
            relative = stem[len(folder) + 1 :]
        else:
            relative = stem
        # A format with folders in it ("YYYY/MM/YYYY-MM-DD") matches as many trailing path parts.
        parts = relative.split("/")
        depth = periodic.format.count("/") + 1
        if len(parts) < depth:
            continue
        span = parse_moment("/".join(parts[-depth:]), periodic.format)
        if span is not None:
            return DateSpan(span[0], span[1], PERIODIC_SOURCES[periodic.kind])
    return None


# -- dates written in text -----------------------------------------------------------------------------

_MONTH_RE = "|".join(sorted((re.escape(n) for n in MONTH_NAMES), key=len, reverse=True))
_ORDINAL = r"(?:st|nd|rd|th|º|er)?"
# 2026-03-14, 2026/03/14, 2026.03.14 (year first only: 03/04/2026 is ambiguous)
_ISO_DATE_RE = re.compile(r"(?<!\d)(?P<year>\d{4})[-/.](?P<month>\d{1,2})[-/.](?P<day>\d{1,2})(?!\d)")
# 3 Feb, 3rd of February 2026, 1 de febrero de 2026, 3. März 2026
_DAY_MONTH_RE = re.compile(
    rf"(?<![\w\d])(?P<day>\d{{1,2}}){_ORDINAL}\.?\s+(?:of\s+|de\s+)?(?P<month>{_MONTH_RE})\.?(?![\w])"
    rf"(?:,?\s+(?:de\s+|del\s+)?(?P<year>\d{{4}}))?",
    re.IGNORECASE,
)
# Feb 3, February 3rd, 2026
_MONTH_DAY_RE = re.compile(
    rf"(?<![\w])(?P<month>{_MONTH_RE})\.?\s+(?P<day>\d{{1,2}}){_ORDINAL}(?![\w\d:])(?:,?\s+(?P<year>\d{{4}}))?",
    re.IGNORECASE,
)


def find_day(text: str, default_year: int | None) -> date | None:
    """The first day-precision date written in `text` (ISO, "3 Feb", "February 3, 2026", "1 de
    febrero de 2026"); a date without a year takes `default_year`, and without one is no date."""
    if any(ch.isdigit() for ch in text):
        match = _ISO_DATE_RE.search(text)
        if match:
            return _real_date(int(match["year"]), int(match["month"]), int(match["day"]))
        for regex in (_DAY_MONTH_RE, _MONTH_DAY_RE):
            found = regex.search(text)
            if found:
                year = int(found["year"]) if found["year"] else default_year
                if year is None:
                    return None
                return _real_date(year, MONTH_NAMES[found["month"].lower()], int(found["day"]))
    return None


# A period written as a whole heading or cell, or in brackets in a heading: "March", "March 2026",
# "Q1 2026", "(Jan–Feb 2026)", "(Dec 2025)". Months without a year take the note's.
_PERIOD_RE = re.compile(
    rf"^(?:(?P<first_month>{_MONTH_RE})\.?(?:\s*[–—-]\s*(?P<last_month>{_MONTH_RE})\.?)?"
    rf"(?:,?\s+(?:de\s+)?(?P<year>\d{{4}}))?"
    rf"|Q(?P<quarter>[1-4])\s+(?P<quarter_year>\d{{4}}))$",
    re.IGNORECASE,
)
_BRACKETED_RE = re.compile(r"\((?P<inside>[^()]{3,30})\)")
_NUMBERING_RE = re.compile(r"^\s*(?:\d+[.)]\s+)?")


def find_period(text: str, default_year: int | None, *, bracketed: bool = False) -> tuple[date, date] | None:
    """A month, a run of months or a quarter that `text` is (after a list number, before any mark
    such as an emoji), or with `bracketed` that it holds in brackets: "(Jan–Feb 2026)"."""
    candidates = [_NUMBERING_RE.sub("", text).strip(" *_:—–-✅❌⚠️🤷⏳")]
    if bracketed:
        candidates.extend(m["inside"].strip() for m in _BRACKETED_RE.finditer(text))
    for candidate in candidates:
        match = _PERIOD_RE.match(candidate)
        if not match:
            continue
        if match["quarter"]:
            first_month, year = 3 * (int(match["quarter"]) - 1) + 1, int(match["quarter_year"])
            return date(year, first_month, 1), month_span(year, first_month + 2)[1]
        written = int(match["year"]) if match["year"] else default_year
        if written is None:
            continue
        year = written
        first = MONTH_NAMES[match["first_month"].lower()]
        last = MONTH_NAMES[match["last_month"].lower()] if match["last_month"] else first
        if last < first:
            continue
        return date(year, first, 1), month_span(year, last)[1]
    return None


def _real_date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


_YEAR_RE = re.compile(r"(?<!\d)((?:19|20)\d{2})(?!\d)")
# A date at the start of a file name: a Zettelkasten ID (202602111800) or "2025-11-02 Kickoff".
_NAME_STAMP_RE = re.compile(r"^(?P<year>(?:19|20)\d{2})(?P<month>\d{2})(?P<day>\d{2})(?:\d{2}){0,3}(?!\d)")


def file_name_date(path: str) -> date | None:
    name = posixpath.basename(path)
    stamp = _NAME_STAMP_RE.match(name)
    if stamp:
        return _real_date(int(stamp["year"]), int(stamp["month"]), int(stamp["day"]))
    match = _ISO_DATE_RE.match(name)
    return _real_date(int(match["year"]), int(match["month"]), int(match["day"])) if match else None


# -- frontmatter ---------------------------------------------------------------------------------------


def _key(name: str) -> str:
    return re.sub(r"[\s_-]+", "", name).lower()


def frontmatter_value(front: Mapping[str, object], keys: Iterable[str]) -> tuple[str, date] | None:
    """The first of `keys` (compared without case, spaces, `_` or `-`) whose value reads as a date."""
    by_key = {_key(str(k)): (str(k), v) for k, v in front.items()}
    for wanted in keys:
        found = by_key.get(_key(wanted))
        if found is None:
            continue
        day = value_as_date(found[1])
        if day is not None:
            return found[0], day
    return None


def value_as_date(value: object) -> date | None:
    """A frontmatter value as a date: YAML dates and date-times, ISO strings (with a time, a `T`, a
    zone), and written dates ("14 February 2026", "Feb 14, 2026", "14 de febrero de 2026")."""
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    if isinstance(value, list) and value:
        return value_as_date(value[0])
    if not isinstance(value, str):
        return None
    text = value.strip().strip("[]\"'")  # "[[2026-02-14]]", a date written as a link
    match = _ISO_DATE_RE.match(text)
    if match:
        return _real_date(int(match["year"]), int(match["month"]), int(match["day"]))
    return find_day(text, None)


# -- a whole note ------------------------------------------------------------------------------------


def date_note(note: Note, mtime: datetime, options: DateOptions) -> NoteDates:
    """The note's date, its modified day, and the date of each line that has one of its own."""
    modified_key = frontmatter_value(note.frontmatter, options.modified_keys)
    modified = modified_key[1] if modified_key else mtime.date()
    span = periodic_date(note.path, options.periodic)
    if span is None:
        keyed = frontmatter_value(note.frontmatter, options.date_keys)
        if keyed is not None:
            span = DateSpan(keyed[1], keyed[1], f"{SOURCE_FRONTMATTER}:{keyed[0]}")
    if span is None:
        named = file_name_date(note.path)
        if named is not None:
            span = DateSpan(named, named, SOURCE_FILE_NAME)
    if span is None:
        day = mtime.date()
        span = DateSpan(day, day, SOURCE_FILE_TIME)
    return NoteDates(span, modified, _line_dates(note, span))


def _context_year(note: Note, span: DateSpan) -> int | None:
    """The year a date written without one ("Mon 3 Feb") belongs to: the note's, unless that is only
    the file's time; then a year in the title ("Running log 2026"), else the year of the first full
    date the note writes ("Born 4 January 2026")."""
    if span.source != SOURCE_FILE_TIME:
        return span.start.year
    years = _YEAR_RE.findall(note.title)
    if years:
        return int(years[-1])
    for line in note.lines:
        if _YEAR_RE.search(line):
            day = find_day(line, None)
            if day is not None:
                return day.year
    return None


def _line_dates(note: Note, span: DateSpan) -> tuple[DateSpan | None, ...]:
    """A date for each line under a dated heading (the innermost wins) or in a dated table row."""
    default_year = _context_year(note, span)
    headings = {h.line: h for h in note.headings}
    stack: list[tuple[int, DateSpan | None]] = []  # (heading level, its date or the inherited one)
    out: list[DateSpan | None] = []
    for number, (text, kind) in enumerate(zip(note.lines, note.kinds, strict=True), start=1):
        heading = headings.get(number) if kind == LINE_HEADING else None
        if heading is not None:
            while stack and stack[-1][0] >= heading.level:
                stack.pop()
            inherited = stack[-1][1] if stack else None
            year = inherited.start.year if inherited else default_year
            stack.append((heading.level, _heading_span(heading.text, year) or inherited))
            out.append(stack[-1][1])
            continue
        current = stack[-1][1] if stack else None
        if kind == LINE_TABLE and "|" in text:
            year = current.start.year if current else default_year
            row = _row_date(text, year)
            if row is not None:
                out.append(row)
                continue
        out.append(current)
    return tuple(out)


def _heading_span(text: str, default_year: int | None) -> DateSpan | None:
    day = find_day(text, default_year)
    if day is not None:
        return DateSpan(day, day, SOURCE_HEADING)
    period = find_period(text, default_year, bracketed=True)
    return DateSpan(period[0], period[1], SOURCE_HEADING) if period else None


def _row_date(line: str, default_year: int | None) -> DateSpan | None:
    """A table row's date: its first cell when that is only a date ("2026-01-03", "4 Jan") or a
    month ("March"), as in a log. A date further along the row is what the row is about (a
    milestone's target date), not when it was written."""
    cell = line.strip().strip("|").split("|")[0].strip().strip("*_")
    if not cell or len(cell) > 30:
        return None
    day = find_day(cell, default_year)
    if day is not None and not re.sub(r"[\d\W_]", "", _strip_date_words(cell)):
        return DateSpan(day, day, SOURCE_TABLE_ROW)
    period = find_period(cell, default_year)
    return DateSpan(period[0], period[1], SOURCE_TABLE_ROW) if period else None


def _strip_date_words(cell: str) -> str:
    """The cell without month names, ordinals and weekday names: what is left is not part of a date."""
    words = [w for w in re.split(r"[\s,./-]+", cell.lower()) if w]
    kept = [
        w
        for w in words
        if w.rstrip(".") not in MONTH_NAMES
        and w not in ("de", "del", "of")
        and w[:3] not in WEEKDAY_PREFIXES
        and not re.fullmatch(r"\d+(st|nd|rd|th|º|er)?", w)
    ]
    return "".join(kept)


def chunk_dates(chunks: Sequence[Chunk], dates: NoteDates) -> list[DateSpan]:
    """Each chunk's span: the earliest to the latest date of its dated lines (a chunk can hold two
    small dated sections), or the note's when none of its lines has a date of its own. A note-level
    record takes the note's date."""
    out: list[DateSpan] = []
    for chunk in chunks:
        if chunk.kind != "chunk" or not dates.lines:
            out.append(dates.note)
            continue
        own = [d for d in dates.lines[chunk.line_start - 1 : chunk.line_end] if d is not None]
        if not own:
            out.append(dates.note)
            continue
        sources = {d.source for d in own}
        out.append(
            DateSpan(
                min(d.start for d in own),
                max(d.end for d in own),
                SOURCE_HEADING if SOURCE_HEADING in sources else own[0].source,
            )
        )
    return out
