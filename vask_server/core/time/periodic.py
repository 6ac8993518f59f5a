"""Periodic notes as the vault configures them: the daily, weekly, monthly, quarterly and yearly
formats of the Daily notes core plugin and the Periodic Notes plugin, and a name read strictly with
such a moment.js format into the span it names. Pure: the vault adapter passes in the parsed settings.
"""

from __future__ import annotations

import calendar
import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from vask_server.core.time.words import month_span


@dataclass(frozen=True)
class PeriodicFormat:
    """One kind of periodic note as the vault configures it: a moment.js format and a folder."""

    kind: str  # daily, weekly, monthly, quarterly, yearly
    format: str
    folder: str = ""  # vault-relative; "" means anywhere in the vault


DEFAULT_PERIODIC = (PeriodicFormat("daily", "YYYY-MM-DD"),)

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
