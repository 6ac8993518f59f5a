"""When a note, or a part of it, was written. Pure: the vault adapter passes in the vault's periodic-note
settings and the file's modification time.

A note's date comes from, in this order: its name as a periodic note (daily, weekly, monthly, quarterly,
yearly, read through the vault's own Daily notes / Periodic Notes settings); a frontmatter date
(`date`, `created`, …); a date in its file name (a Zettelkasten ID `202602111800`, `2025-11-02 Kickoff`);
and only when nothing else says, the file's modification time, which sync tools and checkouts rewrite.
Inside a note, a heading that holds a date (`## 2026-03-14`, `### Mon 3 Feb`, `## 1 de febrero de 2026`)
or is a period (`## March 2026`, `## Q1 2026`, `### Magnesium (Jan–Feb 2026)`) dates its section, and a
table row led by a date or a month (a running log, a monthly budget) dates that row.
"""

from __future__ import annotations

import calendar
import functools
import posixpath
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

from vask_server.core.models import Chunk, Note
from vask_server.core.parse import LINE_HEADING, LINE_TABLE

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
class PeriodicFormat:
    """One kind of periodic note as the vault configures it: a moment.js format and a folder."""

    kind: str  # daily, weekly, monthly, quarterly, yearly
    format: str
    folder: str = ""  # vault-relative; "" means anywhere in the vault


DEFAULT_PERIODIC = (PeriodicFormat("daily", "YYYY-MM-DD"),)


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


# -- the vault's settings ----------------------------------------------------------------------------

_PERIODIC_KINDS = ("daily", "weekly", "monthly", "quarterly", "yearly")
_DEFAULT_FORMATS = {
    "daily": "YYYY-MM-DD",
    "weekly": "gggg-[W]ww",
    "monthly": "YYYY-MM",
    "quarterly": "YYYY-[Q]Q",
    "yearly": "YYYY",
}


def periodic_formats(
    daily_notes: Mapping[str, Any] | None, periodic_notes: Mapping[str, Any] | None
) -> tuple[PeriodicFormat, ...]:
    """The formats of `.obsidian/daily-notes.json` (core plugin) and of the Periodic Notes plugin's
    `data.json`, as parsed JSON; the default daily `YYYY-MM-DD` anywhere when neither says."""
    found: list[PeriodicFormat] = []
    if periodic_notes:
        for kind in _PERIODIC_KINDS:
            entry = periodic_notes.get(kind)
            if isinstance(entry, Mapping) and entry.get("enabled", kind == "daily"):
                found.append(_periodic(kind, entry))
    if daily_notes and not any(f.kind == "daily" for f in found):
        found.append(_periodic("daily", daily_notes))
    if not any(f.kind == "daily" for f in found):
        found.append(PeriodicFormat("daily", _DEFAULT_FORMATS["daily"]))
    return tuple(found)


def _periodic(kind: str, entry: Mapping[str, Any]) -> PeriodicFormat:
    text = entry.get("format")
    folder = entry.get("folder")
    return PeriodicFormat(
        kind,
        text.strip() if isinstance(text, str) and text.strip() else _DEFAULT_FORMATS[kind],
        folder.strip().strip("/") if isinstance(folder, str) else "",
    )


# -- moment.js formats -------------------------------------------------------------------------------

_MONTHS_EN = [calendar.month_name[i].lower() for i in range(1, 13)]
_MONTHS_EN_SHORT = [calendar.month_abbr[i].lower() for i in range(1, 13)]
_WEEKDAYS_EN = [calendar.day_name[i].lower() for i in range(7)]
_WEEKDAYS_EN_SHORT = [calendar.day_abbr[i].lower() for i in range(7)]

# moment token → (regex, field); longest tokens first so "YYYY" is not read as "YY" twice.
_MOMENT_TOKENS: tuple[tuple[str, str, str | None], ...] = (
    ("YYYY", r"\d{4}", "year"),
    ("gggg", r"\d{4}", "week_year"),
    ("GGGG", r"\d{4}", "iso_week_year"),
    ("MMMM", "|".join(_MONTHS_EN), "month_name"),
    ("MMM", "|".join(_MONTHS_EN_SHORT), "month_name"),
    ("DDDD", r"\d{3}", "day_of_year"),
    ("dddd", "|".join(_WEEKDAYS_EN), None),
    ("ddd", "|".join(_WEEKDAYS_EN_SHORT), None),
    ("Do", r"\d{1,2}(?:st|nd|rd|th)", "day"),
    ("YY", r"\d{2}", "year2"),
    ("MM", r"\d{2}", "month"),
    ("DD", r"\d{2}", "day"),
    ("ww", r"\d{2}", "week"),
    ("WW", r"\d{2}", "iso_week"),
    ("HH", r"\d{2}", None),
    ("hh", r"\d{2}", None),
    ("mm", r"\d{2}", None),
    ("ss", r"\d{2}", None),
    ("dd", r"mo|tu|we|th|fr|sa|su", None),
    ("M", r"\d{1,2}", "month"),
    ("D", r"\d{1,2}", "day"),
    ("w", r"\d{1,2}", "week"),
    ("W", r"\d{1,2}", "iso_week"),
    ("Q", r"[1-4]", "quarter"),
    ("H", r"\d{1,2}", None),
    ("h", r"\d{1,2}", None),
    ("m", r"\d{1,2}", None),
    ("s", r"\d{1,2}", None),
    ("A", r"am|pm", None),
    ("a", r"am|pm", None),
    ("d", r"[0-6]", None),
)


@functools.lru_cache(maxsize=64)
def _moment_regex(fmt: str) -> re.Pattern[str]:
    """A moment.js format as an anchored, case-insensitive regex with one named group per field."""
    out: list[str] = []
    used: set[str] = set()
    position = 0
    while position < len(fmt):
        if fmt[position] == "[":
            end = fmt.find("]", position)
            if end < 0:
                end = len(fmt)
            out.append(re.escape(fmt[position + 1 : end]))
            position = end + 1
            continue
        for token, pattern, name in _MOMENT_TOKENS:
            if fmt.startswith(token, position):
                if name is not None and name not in used:
                    used.add(name)
                    out.append(f"(?P<{name}>{pattern})")
                else:
                    out.append(f"(?:{pattern})")
                position += len(token)
                break
        else:
            out.append(re.escape(fmt[position]))
            position += 1
    return re.compile("".join(out) + r"\Z", re.IGNORECASE)


def parse_moment(text: str, fmt: str) -> tuple[date, date] | None:
    """`text` read strictly with the moment.js format `fmt`: the span it names (a day, a week, a
    month, a quarter or a year), or None when it does not fit the format or is no real date."""
    match = _moment_regex(fmt).match(text)
    if not match:
        return None
    fields = {k: v for k, v in match.groupdict().items() if v is not None}
    try:
        return _span_of(fields)
    except ValueError:
        return None


def _span_of(fields: dict[str, str]) -> tuple[date, date] | None:
    if "iso_week" in fields:
        year = int(fields.get("iso_week_year") or fields.get("year") or 0)
        start = date.fromisocalendar(year, int(fields["iso_week"]), 1)
        return start, start + timedelta(days=6)
    if "week" in fields:
        # moment's English locale: weeks start on Sunday, week 1 holds 1 January
        year = int(fields.get("week_year") or fields.get("year") or 0)
        week = int(fields["week"])
        if not 1 <= week <= 53:
            return None
        january_first = date(year, 1, 1)
        start = january_first - timedelta(days=(january_first.weekday() + 1) % 7) + timedelta(weeks=week - 1)
        return start, start + timedelta(days=6)
    if "year" in fields:
        year = int(fields["year"])
    elif "year2" in fields:
        year = 2000 + int(fields["year2"])
    else:
        return None
    if "day_of_year" in fields:
        start = date(year, 1, 1) + timedelta(days=int(fields["day_of_year"]) - 1)
        return (start, start) if start.year == year else None
    month = _month_of(fields)
    if month is not None and "day" in fields:
        day = date(year, month, int(re.sub(r"\D", "", fields["day"])))
        return day, day
    if month is not None:
        return month_span(year, month)
    if "quarter" in fields:
        first = 3 * (int(fields["quarter"]) - 1) + 1
        return date(year, first, 1), month_span(year, first + 2)[1]
    return date(year, 1, 1), date(year, 12, 31)


def _month_of(fields: dict[str, str]) -> int | None:
    if "month" in fields:
        return int(fields["month"])
    name = fields.get("month_name")
    if name is None:
        return None
    name = name.lower()
    return (_MONTHS_EN.index(name) if name in _MONTHS_EN else _MONTHS_EN_SHORT.index(name)) + 1


def month_span(year: int, month: int) -> tuple[date, date]:
    return date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1])


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

# Month names of the languages a vault is most often kept in, January to December, a word a month
# ("a|b": either; "-": none); a word may name a month in more than one language.
_MONTH_WORDS = {
    "en": "january february march april may june july august september october november december",
    "en_abbr": "jan feb mar apr may jun jul aug sep|sept oct nov dec",
    "es": "enero febrero marzo abril mayo junio julio agosto septiembre|setiembre octubre noviembre diciembre",
    "es_abbr": "ene febr - abr - - - - - - - dic",
    "fr": "janvier février mars avril mai juin juillet août|aout septembre octobre novembre décembre",
    "fr_abbr": "janv févr - - - - juil - - - - déc",
    "de": "januar februar märz april mai juni juli august september oktober november dezember",
    "de_abbr": "jän - mär - - - - - - okt - dez",
    "pt": "janeiro fevereiro março|marco abril maio junho julho agosto setembro outubro novembro dezembro",
    "pt_abbr": "- fev - - - - - - - - - -",
    "it": "gennaio febbraio marzo aprile maggio giugno luglio agosto settembre ottobre novembre dicembre",
}


def month_words(languages: Iterable[str] = tuple(_MONTH_WORDS)) -> dict[str, int]:
    """Each month name of these languages (keys of `_MONTH_WORDS`) with its month, 1 to 12."""
    found: dict[str, int] = {}
    for language in languages:
        for number, slot in enumerate(_MONTH_WORDS[language].split(), start=1):
            for word in slot.split("|"):
                if word != "-":
                    found.setdefault(word, number)
    return found


_MONTH_NAMES = month_words()

# Time words of questions in languages beyond English and Spanish (whose words core/timeexpr.py's own
# grammar reads), by language: a phrase → (unit, how many of them back: 0 this one so far, 1 the one
# before, 2 the one before that). "上个月" is last month, "今年" this year up to today. (French "hier",
# yesterday, is left out: it is German for "here".)
RELATIVE_TIME_WORDS: dict[str, dict[str, tuple[str, int]]] = {
    "zh": {
        "今天": ("day", 0), "昨天": ("day", 1), "前天": ("day", 2),
        "本周": ("week", 0), "这周": ("week", 0), "这个星期": ("week", 0), "这星期": ("week", 0),
        "上周": ("week", 1), "上个星期": ("week", 1), "上星期": ("week", 1), "上上周": ("week", 2),
        "本月": ("month", 0), "这个月": ("month", 0), "上个月": ("month", 1), "上月": ("month", 1),
        "上上个月": ("month", 2),
        "今年": ("year", 0), "去年": ("year", 1), "前年": ("year", 2),
    },
    "ja": {
        "今日": ("day", 0), "昨日": ("day", 1), "一昨日": ("day", 2),
        "今週": ("week", 0), "先週": ("week", 1), "先々週": ("week", 2),
        "今月": ("month", 0), "先月": ("month", 1), "先々月": ("month", 2),
        "今年": ("year", 0), "去年": ("year", 1), "昨年": ("year", 1), "一昨年": ("year", 2),
    },
    "de": {
        "heute": ("day", 0), "gestern": ("day", 1), "vorgestern": ("day", 2),
        "diese woche": ("week", 0), "letzte woche": ("week", 1), "vorige woche": ("week", 1),
        "vergangene woche": ("week", 1), "letzter woche": ("week", 1),
        "diesen monat": ("month", 0), "letzten monat": ("month", 1), "letzter monat": ("month", 1),
        "vorigen monat": ("month", 1), "im letzten monat": ("month", 1), "vergangenen monat": ("month", 1),
        "dieses jahr": ("year", 0), "letztes jahr": ("year", 1), "letzten jahr": ("year", 1),
        "voriges jahr": ("year", 1), "im letzten jahr": ("year", 1), "vergangenes jahr": ("year", 1),
    },
    "fr": {
        "aujourd'hui": ("day", 0), "avant-hier": ("day", 2),
        "cette semaine": ("week", 0), "la semaine dernière": ("week", 1), "la semaine passée": ("week", 1),
        "ce mois-ci": ("month", 0), "ce mois": ("month", 0), "le mois dernier": ("month", 1),
        "le mois passé": ("month", 1),
        "cette année": ("year", 0), "l'année dernière": ("year", 1), "l'an dernier": ("year", 1),
        "l'année passée": ("year", 1), "l'an passé": ("year", 1),
    },
}  # fmt: skip
# "recently", "lately": the last RECENT_DAYS days (core/timeexpr.py), widened when they hold nothing
RECENT_TIME_WORDS = {
    "zh": ("最近", "近来", "近期", "这段时间"),
    "ja": ("最近", "近頃", "このごろ", "この頃"),
    "de": ("kürzlich", "neulich", "in letzter zeit", "letztens"),
    "fr": ("récemment", "dernièrement", "ces derniers temps"),
}
# Units of "the past three months" and "two weeks ago", by the words each language counts them in
TIME_UNIT_WORDS = {
    "day": ("天", "日", "日間", "tag", "tage", "tagen", "jour", "jours"),
    "week": ("周", "个星期", "星期", "週", "週間", "woche", "wochen", "semaine", "semaines"),
    "month": ("个月", "ヶ月", "か月", "ヵ月", "カ月", "ケ月", "monat", "monate", "monaten", "mois"),
    "year": ("年", "年間", "jahr", "jahre", "jahren", "an", "ans", "année", "années"),
}
# Counting words of those languages (digits are read as digits; Chinese numerals up to 99 as such)
NUMBER_WORDS = {
    "ein": 1, "einem": 1, "einen": 1, "einer": 1, "zwei": 2, "drei": 3, "vier": 4, "fünf": 5, "sechs": 6,
    "sieben": 7, "acht": 8, "neun": 9, "zehn": 10, "zwölf": 12,
    "un": 1, "une": 1, "deux": 2, "trois": 3, "quatre": 4, "cinq": 5, "six": 6, "sept": 7, "huit": 8,
    "neuf": 9, "dix": 10, "douze": 12,
}  # fmt: skip
CJK_NUMERALS = {"一": 1, "二": 2, "两": 2, "兩": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}


def cjk_number(text: str) -> int:
    """ "3", "三", "十二", "二十" → the number (Chinese numerals up to 99). ValueError otherwise."""
    if text.isdigit():
        return int(text)
    if "十" in text:
        tens, _, ones = text.partition("十")
        return (CJK_NUMERALS[tens] if tens else 1) * 10 + (CJK_NUMERALS[ones] if ones else 0)
    if text in CJK_NUMERALS:
        return CJK_NUMERALS[text]
    raise ValueError(f"not a number: {text}")


_MONTH_RE = "|".join(sorted((re.escape(n) for n in _MONTH_NAMES), key=len, reverse=True))
_ORDINAL = r"(?:st|nd|rd|th|º|er)?"
# 2026-03-14, 2026/03/14, 2026.03.14 (year first only: 03/04/2026 is ambiguous)
_ISO_DATE_RE = re.compile(r"(?<!\d)(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?!\d)")
# 3 Feb, 3rd of February 2026, 1 de febrero de 2026, 3. März 2026
_DAY_MONTH_RE = re.compile(
    rf"(?<![\w\d])(\d{{1,2}}){_ORDINAL}\.?\s+(?:of\s+|de\s+)?({_MONTH_RE})\.?(?![\w])(?:,?\s+(?:de\s+|del\s+)?(\d{{4}}))?",
    re.IGNORECASE,
)
# Feb 3, February 3rd, 2026
_MONTH_DAY_RE = re.compile(
    rf"(?<![\w])({_MONTH_RE})\.?\s+(\d{{1,2}}){_ORDINAL}(?![\w\d:])(?:,?\s+(\d{{4}}))?", re.IGNORECASE
)


def find_day(text: str, default_year: int | None) -> date | None:
    """The first day-precision date written in `text` (ISO, "3 Feb", "February 3, 2026", "1 de
    febrero de 2026"); a date without a year takes `default_year`, and without one is no date."""
    if any(ch.isdigit() for ch in text):
        match = _ISO_DATE_RE.search(text)
        if match:
            return _real_date(int(match[1]), int(match[2]), int(match[3]))
        for regex, day_group, month_group in ((_DAY_MONTH_RE, 1, 2), (_MONTH_DAY_RE, 2, 1)):
            found = regex.search(text)
            if found:
                year = int(found[3]) if found[3] else default_year
                if year is None:
                    return None
                return _real_date(year, _MONTH_NAMES[found[month_group].lower()], int(found[day_group]))
    return None


# A period written as a whole heading or cell, or in brackets in a heading: "March", "March 2026",
# "Q1 2026", "(Jan–Feb 2026)", "(Dec 2025)". Months without a year take the note's.
_PERIOD_RE = re.compile(
    rf"^(?:(?P<m1>{_MONTH_RE})\.?(?:\s*[–—-]\s*(?P<m2>{_MONTH_RE})\.?)?(?:,?\s+(?:de\s+)?(?P<y>\d{{4}}))?"
    rf"|Q(?P<q>[1-4])\s+(?P<qy>\d{{4}}))$",
    re.IGNORECASE,
)
_BRACKETED_RE = re.compile(r"\(([^()]{3,30})\)")
_NUMBERING_RE = re.compile(r"^\s*(?:\d+[.)]\s+)?")


def find_period(text: str, default_year: int | None, *, bracketed: bool = False) -> tuple[date, date] | None:
    """A month, a run of months or a quarter that `text` is (after a list number, before any mark
    such as an emoji), or with `bracketed` that it holds in brackets: "(Jan–Feb 2026)"."""
    candidates = [_NUMBERING_RE.sub("", text).strip(" *_:—–-✅❌⚠️🤷⏳")]
    if bracketed:
        candidates.extend(m.group(1).strip() for m in _BRACKETED_RE.finditer(text))
    for candidate in candidates:
        match = _PERIOD_RE.match(candidate)
        if not match:
            continue
        if match["q"]:
            first_month, year = 3 * (int(match["q"]) - 1) + 1, int(match["qy"])
            return date(year, first_month, 1), month_span(year, first_month + 2)[1]
        written = int(match["y"]) if match["y"] else default_year
        if written is None:
            continue
        year = written
        first = _MONTH_NAMES[match["m1"].lower()]
        last = _MONTH_NAMES[match["m2"].lower()] if match["m2"] else first
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
_NAME_STAMP_RE = re.compile(r"^((?:19|20)\d{2})(\d{2})(\d{2})(?:\d{2}){0,3}(?!\d)")


def file_name_date(path: str) -> date | None:
    name = posixpath.basename(path)
    stamp = _NAME_STAMP_RE.match(name)
    if stamp:
        return _real_date(int(stamp[1]), int(stamp[2]), int(stamp[3]))
    match = _ISO_DATE_RE.match(name)
    return _real_date(int(match[1]), int(match[2]), int(match[3])) if match else None


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
        return _real_date(int(match[1]), int(match[2]), int(match[3]))
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
        if w.rstrip(".") not in _MONTH_NAMES
        and w not in ("de", "del", "of")
        and w[:3] not in _WEEKDAY_PREFIXES
        and not re.fullmatch(r"\d+(st|nd|rd|th|º|er)?", w)
    ]
    return "".join(kept)


_WEEKDAY_PREFIXES = {d[:3] for d in _WEEKDAYS_EN} | {"lun", "mar", "mié", "mie", "jue", "vie", "sáb", "sab", "dom"}


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
