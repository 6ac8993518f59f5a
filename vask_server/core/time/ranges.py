"""A range of days a question asks about, and the days a caller gives: what core/time/expr.py reads
out of a question, what `--since`/`--until` and the API's `date_from`/`date_to` and `now` say, and
how a range is shown ("Notes from 1 Jan – 31 Mar 2026"). Pure.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime


@dataclass(frozen=True)
class TimeRange:
    start: date | None  # None: from the beginning
    end: date | None  # None: up to now
    text: str  # the words understood, as written
    # Said when the words name a day the calendar lacks ("31 April", "29 February 2025"): the
    # nearest real day is searched, and this says so.
    notice: str | None = None

    def to_dict(self) -> dict[str, str | None]:
        return {
            "from": self.start.isoformat() if self.start else None,
            "to": self.end.isoformat() if self.end else None,
            "text": self.text,
            "notice": self.notice,
        }


def parse_day(text: str, name: str) -> date:
    """An ISO date ("2026-03-14") from a flag or a request; ValueError says what is wrong."""
    try:
        return date.fromisoformat(text.strip())
    except (ValueError, AttributeError):
        raise ValueError(f"{name} must be an ISO date like 2026-03-14, got {text!r}") from None


def parse_now(text: str, name: str = "now") -> date:
    """The day a question is asked, from an ISO date or date-time ("2026-03-14", "2026-03-14T09:30:00+01:00"):
    the date as written, in the asker's own time zone."""
    try:
        return datetime.fromisoformat(text.strip().replace("Z", "+00:00")).date()
    except (ValueError, AttributeError):
        raise ValueError(
            f"{name} must be an ISO date or date-time like 2026-03-14 or 2026-03-14T09:30:00+01:00, got {text!r}"
        ) from None


def describe_range(time_range: TimeRange) -> str:
    """ "Notes from 1 Jan – 31 Mar 2026", as the command line and the plugin show it."""

    def day(value: date, with_year: bool) -> str:
        return f"{value.day} {value.strftime('%b')}" + (f" {value.year}" if with_year else "")

    start, end = time_range.start, time_range.end
    if start and end:
        if start == end:
            return f"Notes from {day(start, True)}"
        return f"Notes from {day(start, start.year != end.year)} – {day(end, True)}"
    if start:
        return f"Notes since {day(start, True)}"
    if end:
        return f"Notes up to {day(end, True)}"
    return "Notes from any time"
