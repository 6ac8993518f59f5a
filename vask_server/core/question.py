"""A question as asked → what to search for and within which limits: one place, for the command line,
the HTTP API and so the plugin alike.

The scope it names first ("in [[Project X]], …", `#tag`, `path:Folder`: core/scope.py), then the
time ("…last month", "in March") in what is left; the dates a caller gives explicitly (`--since`,
`filters.date_from`) take precedence over the question's.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date

from vask_server.core.retrieve import Filters
from vask_server.core.scope import Directory, Scope, Unmatched, find_mentions, resolve
from vask_server.core.timeexpr import TimeRange, read_time


@dataclass(frozen=True)
class Understood:
    text: str  # what is embedded and searched: the question without the words that set its limits
    filters: Filters
    time_range: TimeRange | None = None  # what the question (or the caller) limited the dates to
    order: str | None = None  # "latest" or "earliest": "when did I last/first…"
    recent: bool = False  # "recently": a window that may be widened when it holds nothing
    scope: Scope | None = None  # the notes, tags and folders the question named, as the index holds them
    unmatched: tuple[Unmatched, ...] = ()  # mentions that name nothing in the index (the caller says so)


def understand(
    question: str,
    *,
    today: date,
    filters: Filters | None = None,
    read_time_words: bool = True,
    directory: Directory | None = None,
) -> Understood:
    """`question` with its scope resolved in `directory` (what the index holds; None: mentions are
    left in the text, as before an index exists) and its time read against `today` (unless
    `read_time_words` is off: the user asked to search without it), merged with the caller's
    `filters`."""
    given = filters or Filters()
    text, scope = question, None
    unmatched: tuple[Unmatched, ...] = ()
    mentions, without = find_mentions(question) if directory is not None else ([], question)
    if mentions and directory is not None:
        found, missing = resolve(mentions, directory)
        # "summarize [[Project X]]" leaves a word to search; "[[Project X]]" alone leaves nothing,
        # so its names are searched (within the same scope).
        text = without if any(ch.isalnum() for ch in without) else " ".join(m.value for m in mentions)
        scope = found if not found.is_empty() else None
        unmatched = tuple(missing)
        given = replace(given, scope=scope)
    understood = _with_time(text, given, today, read_time_words)
    return replace(understood, scope=scope, unmatched=unmatched)


def _with_time(question: str, given: Filters, today: date, read_time_words: bool) -> Understood:
    if given.dated:
        return Understood(question, given, TimeRange(given.date_from, given.date_to, ""))
    time = read_time(question, today) if read_time_words else None
    if time is None:
        return Understood(question, given)
    dated = given
    if time.range is not None:
        dated = replace(given, date_from=time.range.start, date_to=time.range.end)
    return Understood(time.text or question, dated, time.range, time.order, time.recent)
