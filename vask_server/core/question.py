"""A question as asked → what to search for and within which limits: one place, for the command line,
the HTTP API and so the plugin alike.

Today that is the time a question names ("…last month", "in March"); the filters a caller gives
explicitly (`--since`, `filters.date_from`) take precedence over it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date

from vask_server.core.retrieve import Filters
from vask_server.core.timeexpr import TimeRange, read_time


@dataclass(frozen=True)
class Understood:
    text: str  # what is embedded and searched: the question without the words that set its limits
    filters: Filters
    time_range: TimeRange | None = None  # what the question (or the caller) limited the dates to
    order: str | None = None  # "latest" or "earliest": "when did I last/first…"
    recent: bool = False  # "recently": a window that may be widened when it holds nothing


def understand(
    question: str, *, today: date, filters: Filters | None = None, read_time_words: bool = True
) -> Understood:
    """`question` with its time read against `today` (unless `read_time_words` is off: the user asked
    to search without it), merged with the caller's `filters`."""
    given = filters or Filters()
    if given.dated:
        return Understood(question, given, TimeRange(given.date_from, given.date_to, ""))
    time = read_time(question, today) if read_time_words else None
    if time is None:
        return Understood(question, given)
    dated = given
    if time.range is not None:
        dated = replace(given, date_from=time.range.start, date_to=time.range.end)
    return Understood(time.text or question, dated, time.range, time.order, time.recent)
