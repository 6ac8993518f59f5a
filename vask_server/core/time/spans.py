"""The days each rule of core/time/grammar.py names: "last month", "in March", "the past 30 days",
"三个月前", resolved against the day the question is asked. Pure: that day is passed in. Calendar
arithmetic is `dateutil.relativedelta`'s.

Conventions, all inclusive: "last week" is the previous Monday–Sunday; "this week" Monday to today;
"last month" the previous calendar month; "in March" the most recent March that has begun; "the past
N days" N days back to today.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta

from dateutil.relativedelta import relativedelta

from vask_server.core.time.grammar import ATOM_RULES, MONTHS, RELATIVE_WORDS, UNIT_OF
from vask_server.core.time.words import (
    HALF_WORDS,
    NUMBER_WORDS,
    NUMBERS,
    ORDINAL_WEEK,
    QUARTER_WORDS,
    SEASONS,
    WEEKDAYS,
    cjk_number,
    month_span,
)


@dataclass(frozen=True)
class Span:
    """What one atom of time resolves to."""

    start: date
    end: date
    notice: str | None = None


# -- an atom -----------------------------------------------------------------------------------------


def atom_kind(text: str) -> str | None:
    for name, regex in ATOM_RULES:
        if regex.match(text.strip()):
            return name
    return None


def resolve_atom(text: str, today: date, year: int | None = None) -> Span | None:
    """The span an atom names, resolved against `today`; `year`: the year "this year" or "last year"
    after it names, for an atom that names none itself. None when the words name no real time (a
    year before the calendar's first, a week that does not exist)."""
    text = " ".join(text.split())
    for name, regex in ATOM_RULES:
        match = regex.match(text)
        if match is None:
            continue
        try:
            span = _RESOLVERS[name](match, today, year)
        except (ValueError, KeyError, OverflowError):
            return None
        return span if span.start <= span.end else None
    return None


# -- the calendar -------------------------------------------------------------------------------------


def month_number(name: str) -> int:
    return MONTHS[name.lower().rstrip(".")]


def _count(text: str) -> int:
    text = " ".join(text.lower().split())
    return int(text) if text.isdigit() else NUMBERS[text]


def _latest_month(month: int, today: date) -> int:
    """The year of the most recent `month` that has begun by `today`."""
    return today.year if month <= today.month else today.year - 1


def latest_day(month: int, day: int, today: date) -> Span:
    """The most recent `day` of `month` up to `today`: "29 February" is the last one there was; a day
    no such month has ("31 April") is the month's last day, with a notice."""
    if day > month_span(2000, month)[1].day:  # (2000: a leap year, so every month at its longest)
        last = month_span(today.year, month)[1]
        return real_day(today.year if last <= today else today.year - 1, month, day)
    for year in range(today.year, max(today.year - 9, 0), -1):  # (29 February: within 8 years)
        if _valid(year, month, day) and date(year, month, day) <= today:
            return Span(date(year, month, day), date(year, month, day))
    raise ValueError(f"no {day} of month {month} before {today}")


def real_day(year: int, month: int, day: int) -> Span:
    """That day, or the last day of that month when it has no such day, saying so."""
    last = month_span(year, month)[1]
    if day <= last.day:
        return Span(date(year, month, day), date(year, month, day))
    named = f"{day} {last.strftime('%B')}"
    lacks = f"{year} has no {named}" if month == 2 and day == 29 else f"There is no {named}"
    return Span(last, last, f"{lacks}: read as {last.day} {last.strftime('%B')} {year}.")


def _valid(year: int, month: int, day: int) -> bool:
    try:
        date(year, month, day)
    except ValueError:
        return False
    return True


def days_before(day: date, days: int) -> date:
    """`day` less `days` days, held within the calendar (a `now` near year 1 or 9999 does not crash)."""
    try:
        return day - timedelta(days=days)
    except OverflowError:
        return date.min if days > 0 else date.max


def _day_span(day: date) -> Span:
    return Span(day, day)


def _week_of(day: date) -> tuple[date, date]:
    start = day - timedelta(days=day.weekday())
    return start, start + timedelta(days=6)


def _quarter_span(year: int, quarter: int) -> tuple[date, date]:
    first = 3 * (quarter - 1) + 1
    return date(year, first, 1), month_span(year, first + 2)[1]


def _g(m: re.Match[str], name: str) -> str | None:
    """A named part of an atom's match, None when that atom has no such part or it is empty."""
    return m[name] if name in m.re.groupindex and m[name] else None


def _s(m: re.Match[str], *names: str) -> str:
    """The first of these parts that the match has (the resolver is called only on its own atom)."""
    for name in names:
        value = _g(m, name)
        if value is not None:
            return value
    raise KeyError(names[0])


# -- each rule's reader -------------------------------------------------------------------------------

# Each resolver: (the atom's match, today, the year "this/last year" names or None) -> its span.
# Only the atoms in YEARLESS read that year; the others name their own, or none.


def _r_iso(m: re.Match[str], today: date, year: int | None) -> Span:
    y, month, day = (int(part) for part in _s(m, "iso").split("-"))
    if not (1 <= month <= 12 and 1 <= day <= 31):
        raise ValueError(f"not a date: {_s(m, 'iso')}")
    return real_day(y, month, day)


def _r_day_month(m: re.Match[str], today: date, year: int | None) -> Span:
    day, month = int(re.sub(r"\D", "", _s(m, "day"))), month_number(_s(m, "month"))
    if not 1 <= day <= 31:
        raise ValueError(f"no day {day}")
    named = _g(m, "year")
    if named:
        year = int(named)
    return real_day(year, month, day) if year is not None else latest_day(month, day, today)


def _r_week_of(m: re.Match[str], today: date, year: int | None) -> Span:
    month = month_number(_s(m, "month"))
    year = int(_s(m, "year")) if _g(m, "year") else year if year is not None else _latest_month(month, today)
    first, last = month_span(year, month)
    which = ORDINAL_WEEK[_s(m, "which_week").lower()]
    if which < 0:
        return Span(last - timedelta(days=6), last)
    start = first + timedelta(days=7 * (which - 1))
    return Span(start, min(last, start + timedelta(days=6)))


def _r_part_of_month(m: re.Match[str], today: date, year: int | None) -> Span:
    month = month_number(_s(m, "month"))
    year = int(_s(m, "year")) if _g(m, "year") else year if year is not None else _latest_month(month, today)
    first, last = month_span(year, month)
    part = " ".join(_s(m, "part").lower().split())
    if part in ("early", "beginning of", "the beginning of", "start of", "the start of", "principios de"):
        return Span(first, first + timedelta(days=9))
    if part in ("mid", "middle of", "the middle of", "mediados de"):
        return Span(first + timedelta(days=10), first + timedelta(days=19))
    return Span(first + timedelta(days=20), last)


def _r_month_year(m: re.Match[str], today: date, year: int | None) -> Span:
    return Span(*month_span(int(_s(m, "year")), month_number(_s(m, "month"))))


def _r_quarter(m: re.Match[str], today: date, year: int | None) -> Span:
    quarter = int(_s(m, "quarter_number")) if _g(m, "quarter_number") else QUARTER_WORDS[_s(m, "quarter_word").lower()]
    if _g(m, "year"):
        return Span(*_quarter_span(int(_s(m, "year")), quarter))
    latest = today.year if 3 * (quarter - 1) + 1 <= today.month else today.year - 1
    return Span(*_quarter_span(latest, quarter))


def _r_relative_quarter(m: re.Match[str], today: date, year: int | None) -> Span:
    current = (today.month - 1) // 3 + 1
    if _s(m, "which").lower() in ("this", "current"):
        return Span(_quarter_span(today.year, current)[0], today)
    previous = today - relativedelta(months=3)
    return Span(*_quarter_span(previous.year, (previous.month - 1) // 3 + 1))


def _r_half(m: re.Match[str], today: date, year: int | None) -> Span:
    half = int(_s(m, "half_number")) if _g(m, "half_number") else HALF_WORDS[_s(m, "half_word").lower()]
    named = int(_s(m, "year"))
    return Span(date(named, 1, 1), date(named, 6, 30)) if half == 1 else Span(date(named, 7, 1), date(named, 12, 31))


def _season_span(year: int, first_month: int) -> tuple[date, date]:
    """The three months from `first_month` of `year` (winter runs into the next year)."""
    start = date(year, first_month, 1)
    return start, start + relativedelta(months=3) - timedelta(days=1)


def _r_season(m: re.Match[str], today: date, year: int | None) -> Span:
    """ "summer 2021": that year's; "last summer": the most recent that has ended; "this summer": this
    year's (this winter: the one under way or, before December, the one that began last December)."""
    if _g(m, "year"):
        return Span(*_season_span(int(_s(m, "year")), SEASONS[_s(m, "season").lower()]))
    word = next(_s(m, name) for name in ("relative_season", "es_this_season", "es_last_season") if _g(m, name))
    first_month = SEASONS[word.lower()]
    this = _g(m, "es_this_season") or (_g(m, "which") and _s(m, "which").lower() == "this")
    begun = today.year if first_month <= today.month else today.year - 1  # the latest that has begun
    start, end = _season_span(begun, first_month)
    if this:
        return Span(start, min(end, today))
    return Span(start, end) if end < today else Span(*_season_span(begun - 1, first_month))


def _r_relative_unit(m: re.Match[str], today: date, year: int | None) -> Span:
    if _g(m, "es_this_unit") or _g(m, "es_last_unit"):
        spanish = _s(m, "es_this_unit", "es_last_unit").lower()
        unit = {"mes": "month", "semana": "week", "año": "year", "ano": "year"}[spanish]
        back = 1 if _g(m, "es_past") else 0
    elif _g(m, "before_last_unit"):
        unit, back = _s(m, "before_last_unit").lower(), 2
    else:
        unit, back = _s(m, "unit").lower(), 0 if _s(m, "which").lower() in ("this", "current") else 1
    return _relative_span(unit, back, today)


def _relative_span(unit: str, back: int, today: date) -> Span:
    """This day, week, month or year so far (`back` 0), or the whole one `back` of them before."""
    if unit == "day":
        return _day_span(today - timedelta(days=back))
    if unit == "week":
        start, end = _week_of(today - timedelta(weeks=back))
    elif unit == "month":
        shifted = today - relativedelta(months=back)
        start, end = month_span(shifted.year, shifted.month)
    else:
        start, end = date(today.year - back, 1, 1), date(today.year - back, 12, 31)
    return Span(start, today if back == 0 else end)


def _r_weekend(m: re.Match[str], today: date, year: int | None) -> Span:
    word = (_g(m, "which") or "").lower()
    if today.weekday() >= 5 and word in ("this", "the", "past") and not _g(m, "es_past"):
        saturday = today - timedelta(days=today.weekday() - 5)
        return Span(saturday, today)
    saturday = today - timedelta(days=today.weekday() + 2)  # the Saturday before this week began
    return Span(saturday, saturday + timedelta(days=1))


def _r_weekday(m: re.Match[str], today: date, year: int | None) -> Span:
    weekday = WEEKDAYS[_s(m, "weekday", "es_weekday").lower()]
    back = (today.weekday() - weekday) % 7 or 7
    return _day_span(today - timedelta(days=back))


def _r_day_word(m: re.Match[str], today: date, year: int | None) -> Span:
    word = " ".join(_s(m, "word").lower().split())
    back = {"yesterday": 1, "ayer": 1, "the day before yesterday": 2, "anteayer": 2, "antes de ayer": 2}.get(word, 0)
    return _day_span(today - timedelta(days=back))


def _unit(text: str) -> str:
    text = text.lower()
    for prefix, unit in (("d", "day"), ("w", "week"), ("sem", "week"), ("mo", "month"), ("mes", "month")):
        if text.startswith(prefix):
            return unit
    return "year"


def _r_ago(m: re.Match[str], today: date, year: int | None) -> Span:
    if _g(m, "count"):
        count, unit = _count(_s(m, "count")), _unit(_s(m, "unit"))
    else:
        count, unit = _count(_s(m, "hace_count")), _unit(_s(m, "hace_unit"))
    return _ago_span(count, unit, today)


def _ago_span(count: int, unit: str, today: date) -> Span:
    """The day, week, month or year `count` of them before today's."""
    if unit == "day":
        return _day_span(today - timedelta(days=count))
    if unit == "week":
        return Span(*_week_of(today - timedelta(weeks=count)))
    if unit == "month":
        shifted = today - relativedelta(months=count)
        return Span(*month_span(shifted.year, shifted.month))
    return Span(date(today.year - count, 1, 1), date(today.year - count, 12, 31))


def _r_past_n(m: re.Match[str], today: date, year: int | None) -> Span:
    if _g(m, "bare_unit"):  # "the past weeks": a few of them
        count, unit = 3, _unit(_s(m, "bare_unit"))
    elif _g(m, "count"):
        count, unit = _count(_s(m, "count")), _unit(_s(m, "unit"))
    else:
        count, unit = _count(_s(m, "es_count")), _unit(_s(m, "es_unit"))
    return _past_span(count, unit, today)


def _past_span(count: int, unit: str, today: date) -> Span:
    """The last `count` days, weeks, months or years, up to today."""
    delta = {
        "day": relativedelta(days=count),
        "week": relativedelta(weeks=count),
        "month": relativedelta(months=count),
        "year": relativedelta(years=count),
    }[unit]
    return Span(today - delta, today)


def _r_month(m: re.Match[str], today: date, year: int | None) -> Span:
    month = month_number(_s(m, "month"))
    return Span(*month_span(year if year is not None else _latest_month(month, today), month))


def _r_year(m: re.Match[str], today: date, year: int | None) -> Span:
    named = int(_s(m, "year"))
    return Span(date(named, 1, 1), date(named, 12, 31))


# The atoms that name no year of their own, so "this year" / "last year" after them says which
YEARLESS = ("day_month", "month_day", "month", "week_of", "part_of_month")

_RESOLVERS = {
    "iso": _r_iso,
    "day_month": _r_day_month,
    "month_day": _r_day_month,
    "week_of": _r_week_of,
    "part_of_month": _r_part_of_month,
    "month_year": _r_month_year,
    "quarter": _r_quarter,
    "relative_quarter": _r_relative_quarter,
    "half": _r_half,
    "season": _r_season,
    "relative_unit": _r_relative_unit,
    "weekend": _r_weekend,
    "weekday": _r_weekday,
    "day_word": _r_day_word,
    "ago": _r_ago,
    "past_n": _r_past_n,
    "month": _r_month,
    "year": _r_year,
}


# -- beyond English and Spanish ------------------------------------------------------------------------

# The counted rules of core.timegrammar.FOREIGN_RE ("最近三个月", "vor 2 Wochen"), each with a count and a unit
_FOREIGN_COUNTED = tuple(f"{rule}_{language}" for rule in ("past", "ago") for language in ("cjk", "de", "fr"))


def foreign_span(m: re.Match[str], today: date) -> Span | None:
    """The span of a match of core.timegrammar.FOREIGN_RE (Chinese, Japanese, German, French), or None
    when its month is no month."""
    if m["past"] or m["ago"]:
        rule = next(name for name in _FOREIGN_COUNTED if m[f"{name}_count"])
        number, unit = m[f"{rule}_count"], UNIT_OF[m[f"{rule}_unit"].lower()]
        low = number.lower()
        count = int(low) if low.isdigit() else NUMBER_WORDS[low] if low in NUMBER_WORDS else cjk_number(low)
        return _past_span(count, unit, today) if m["past"] else _ago_span(count, unit, today)
    if m["relative"]:
        words = " ".join((m["relative_cjk"] or m["relative_latin"]).lower().replace("’", "'").split())
        unit, back = RELATIVE_WORDS[words]
        return _relative_span(unit, back, today)
    if m["cjk_year_only"]:
        year = int(m["cjk_year_only"])
        return Span(date(year, 1, 1), date(year, 12, 31))
    month = cjk_number(m["cjk_month"])
    if not 1 <= month <= 12:
        return None
    if m["cjk_day"]:
        day = cjk_number(m["cjk_day"])
        return real_day(int(m["cjk_year"]), month, day) if m["cjk_year"] else latest_day(month, day, today)
    year = int(m["cjk_year"]) if m["cjk_year"] else _latest_month(month, today)
    return Span(*month_span(year, month))
