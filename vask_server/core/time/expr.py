"""The time a question asks about: "last month", "in March", "between February and March", "Q1 2024",
"the past 30 days", "since January", "recently", "when did I last…", their Spanish forms ("el mes
pasado", "en febrero", "la semana pasada") and the Chinese, Japanese, German and French ones of
core/time/words.py ("上个月", "letzten Monat"). Pure: the moment the question is asked is passed in.

Finding the words is done here, by a small grammar, because the libraries that read dates out of free
text also read them where there are none ("…and may I…" became May 2025) and none reads ranges,
quarters or "the past 30 days" (docs/EVALUATION.md, "Reading time"). The rules are
core/time/grammar.py's, the days each names core/time/spans.py's; this module finds the first range a
question names and takes its words out. `TimeRange`, `describe_range`, `parse_day` and `parse_now`
live in core/time/ranges.py and are importable from here.

Conventions, all inclusive: "last week" is the previous Monday–Sunday; "this week" Monday to today;
"last month" the previous calendar month; "in March" the most recent March that has begun; "the past
N days" N days back to today; "recently" the last 30 days; "since X" from X to today; "before X" up
to the day before X.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from dateutil.relativedelta import relativedelta

from vask_server.core.time.grammar import (
    BARE_CONTEXT_RE,
    DAY_RANGE_RE,
    EARLIEST_RE,
    FOREIGN_RE,
    FOREIGN_RECENT_RE,
    GATE_RE,
    LATEST_RE,
    OPEN_RE,
    RANGE_RE,
    RECENT_RE,
    SINGLE_RE,
    THIS_YEAR_RE,
)
from vask_server.core.time.ranges import TimeRange as TimeRange
from vask_server.core.time.ranges import describe_range as describe_range
from vask_server.core.time.ranges import parse_day as parse_day
from vask_server.core.time.ranges import parse_now as parse_now
from vask_server.core.time.spans import (
    YEARLESS,
    atom_kind,
    days_before,
    foreign_span,
    latest_day,
    month_number,
    real_day,
    resolve_atom,
)

RECENT_DAYS = 30


@dataclass(frozen=True)
class TimeQuery:
    """What a question says about time, and the question without those words (what is searched)."""

    range: TimeRange | None
    order: str | None  # "latest" ("when did I last…", "most recent"), "earliest" ("when did I first…")
    recent: bool  # "recently", "lately": a window of RECENT_DAYS that may be widened when it holds nothing
    text: str  # the question with the time words taken out


# -- reading a question -------------------------------------------------------------------------------


def read_time(question: str, today: date) -> TimeQuery | None:
    """The time `question` asks about, resolved against `today`; None when it asks about none."""
    if not GATE_RE.search(question) and not (FOREIGN_RE.search(question) or FOREIGN_RECENT_RE.search(question)):
        return None
    found, text = _find_range(question, today)
    foreign_recent = False
    if found is None:
        found, foreign_recent, text = _find_foreign(question, today)
    if found is not None and found.start is not None and found.start > today:
        # A time to come ("my deadlines on 30 June this year") is what the notes are about, not when
        # they were written: the question is searched as asked.
        found, text = None, question
    recent = foreign_recent and found is not None
    recent_match = RECENT_RE.search(text)
    if recent_match:
        if found is None:
            recent = True
            found = TimeRange(days_before(today, RECENT_DAYS), today, _words(recent_match[0]))
        text = _cut(text, recent_match)
    order = None
    for name, regex in (("latest", LATEST_RE), ("earliest", EARLIEST_RE)):
        order_match = regex.search(text)
        if order_match:
            order = name
            group = "after_did" if order_match["after_did"] else "phrase"
            text = text[: order_match.start(group)] + " " + text[order_match.end(group) :]
            break
    if found is None and order is None:
        return None
    return TimeQuery(found, order, recent, _tidy(text))


def _find_range(question: str, today: date) -> tuple[TimeRange | None, str]:
    """The first range the question names, and the question without its words."""
    text = question
    found: TimeRange | None = None
    for regex, read in ((RANGE_RE, _between), (DAY_RANGE_RE, _day_range)):
        match = regex.search(text)
        found = read(match, today) if match else None
        if match and found is not None:
            text = _cut(text, match)
            break
    if found is None:
        for match in OPEN_RE.finditer(text):
            atom = resolve_atom(match["atom"], today)
            if atom is None:
                continue
            op = " ".join(match["bound"].lower().split())
            words = _words(match[0])
            if op in ("since", "desde"):
                found = TimeRange(atom.start, today, words, atom.notice)
            elif op in ("before", "antes de"):
                found = TimeRange(None, days_before(atom.start, 1), words, atom.notice)
            elif op in ("after", "después de", "despues de"):
                after = days_before(atom.end, -1)
                found = TimeRange(after, max(after, today), words, atom.notice)
            else:  # until, up to, hasta
                found = TimeRange(None, atom.end, words, atom.notice)
            text = _cut(text, match)
            break
    if found is None:
        for match in SINGLE_RE.finditer(text):
            kind = atom_kind(match["atom"])
            if kind in ("month", "year"):
                before = text[: match.start("atom")]
                if not match["preposition"] and not BARE_CONTEXT_RE.search(before):
                    continue
                if kind == "year" and (match["preposition"] or "").lower() in ("el", "on"):
                    continue
            year_word = THIS_YEAR_RE.match(text, match.end())
            if year_word and kind in YEARLESS:
                # "30 June this year", "in March last year": read in the year the words name
                last_year = (year_word["which"] or "").lower() == "last" or bool(year_word["es_past"])
                atom = resolve_atom(match["atom"], today, year=today.year - (1 if last_year else 0))
                if atom is None:
                    continue
                found = TimeRange(atom.start, atom.end, _words(text[match.start() : year_word.end()]), atom.notice)
                text = text[: match.start()] + " " + text[year_word.end() :]
                break
            atom = resolve_atom(match["atom"], today)
            if atom is None:
                continue
            found = TimeRange(atom.start, atom.end, _words(match[0]), atom.notice)
            text = _cut(text, match)
            break
    return found, text


def _between(match: re.Match[str], today: date) -> TimeRange | None:
    """A range such as "between March and May", or "from November to February" (the November before)."""
    first = resolve_atom(match["between_from"] or match["from_from"], today)
    last = resolve_atom(match["between_to"] or match["from_to"], today)
    if not (first and last):
        return None
    start, end = first.start, last.end
    if end < start:
        try:
            start = start - relativedelta(years=1)
        except ValueError:  # (before the calendar's first year)
            return None
        if end < start:  # "between 2025 and 2023": as the words come, no range
            return None
    return TimeRange(start, end, _words(match[0]), first.notice or last.notice)


def _day_range(m: re.Match[str], today: date) -> TimeRange | None:
    """A run of days of one month: "9 to 15 March" (the day_month_ parts) or "March 9-15" (month_day_)."""
    rule = "day_month" if m["day_month_from"] else "month_day"
    month = month_number(m[f"{rule}_month"])
    first, last = (int(re.sub(r"\D", "", m[f"{rule}_{end}"])) for end in ("from", "to"))
    year_text = m[f"{rule}_year"]
    if not (1 <= first <= last <= 31):
        return None
    try:
        start = real_day(int(year_text), month, first) if year_text else latest_day(month, first, today)
        end = real_day(start.start.year, month, last)
    except (ValueError, OverflowError):
        return None
    return TimeRange(start.start, max(start.start, end.start), _words(m[0]), start.notice or end.notice)


# -- beyond English and Spanish ------------------------------------------------------------------------


def _find_foreign(question: str, today: date) -> tuple[TimeRange | None, bool, str]:
    """The first Chinese, Japanese, German or French time words of the question: the range, whether it
    was "recently", and the question without them."""
    for match in FOREIGN_RE.finditer(question):
        try:
            span = foreign_span(match, today)
        except (ValueError, KeyError, OverflowError):
            continue
        if span is not None and span.start <= span.end:
            return TimeRange(span.start, span.end, _words(match[0]), span.notice), False, _cut(question, match)
    recent = FOREIGN_RECENT_RE.search(question)
    if recent:
        found = TimeRange(days_before(today, RECENT_DAYS), today, _words(recent[0]))
        return found, True, _cut(question, recent)
    return None, False, question


# -- the words of a question ---------------------------------------------------------------------------


def _words(text: str) -> str:
    return " ".join(text.split())


def _cut(text: str, match: re.Match[str]) -> str:
    return text[: match.start()] + " " + text[match.end() :]


_DANGLING_RE = re.compile(r"\s+([?.!,;:)])")
_LEFTOVER_RE = re.compile(r"(?<![\w])(?:in|during|over|on|from|en|durante)\s*(?=[?.!]?\s*$)", re.IGNORECASE)


def _tidy(text: str) -> str:
    """The question without the time words: one space between words, no space before punctuation,
    no preposition left hanging at the end ("…about my knee in?" → "…about my knee?")."""
    text = " ".join(text.split())
    text = _DANGLING_RE.sub(r"\1", text)
    text = _LEFTOVER_RE.sub("", text).strip()
    text = _DANGLING_RE.sub(r"\1", " ".join(text.split()))
    return re.sub(r"^[,;:]\s*", "", text)
