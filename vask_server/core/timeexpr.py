"""The time a question asks about: "last month", "in March", "between February and March", "Q1 2024",
"the past 30 days", "since January", "recently", "when did I last…", and their Spanish forms
("el mes pasado", "en febrero", "la semana pasada"). Pure: the moment the question is asked is passed in.

Finding the words is done here, by a small grammar, because the libraries that read dates out of free
text also read them where there are none ("…and may I…" became May 2025) and none reads ranges,
quarters or "the past 30 days" (docs/EVALUATION.md, "Reading time"). Calendar arithmetic is
`dateutil.relativedelta`'s.

Conventions, all inclusive: "last week" is the previous Monday–Sunday; "this week" Monday to today;
"last month" the previous calendar month; "in March" the most recent March that has begun; "the past
N days" N days back to today; "recently" the last 30 days; "since X" from X to today; "before X" up
to the day before X.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from dateutil.relativedelta import relativedelta

from vask_server.core.cjk import has_cjk
from vask_server.core.timewords import (
    NUMBER_WORDS,
    RECENT_TIME_WORDS,
    RELATIVE_TIME_WORDS,
    TIME_UNIT_WORDS,
    cjk_number,
    month_span,
    month_words,
)

RECENT_DAYS = 30


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


@dataclass(frozen=True)
class _Span:
    """What one atom of time resolves to."""

    start: date
    end: date
    notice: str | None = None


@dataclass(frozen=True)
class TimeQuery:
    """What a question says about time, and the question without those words (what is searched)."""

    range: TimeRange | None
    order: str | None  # "latest" ("when did I last…", "most recent"), "earliest" ("when did I first…")
    recent: bool  # "recently", "lately": a window of RECENT_DAYS that may be widened when it holds nothing
    text: str  # the question with the time words taken out


# -- vocabulary -------------------------------------------------------------------------------------

# Questions are read in English and Spanish (the time words below), so only their month names:
# "mai" or "mars" in a question is not a month here, though in a note's text it is.
_MONTHS = month_words(("en", "en_abbr", "es"))
_MONTH = r"(?:" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_WEEKDAYS = {
    name: number
    for number, names in enumerate(
        (
            "monday lunes",
            "tuesday martes",
            "wednesday miércoles miercoles",
            "thursday jueves",
            "friday viernes",
            "saturday sábado sabado",
            "sunday domingo",
        )
    )
    for name in names.split()
}
_WEEKDAY = "(?:" + "|".join(_WEEKDAYS) + ")"
_NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "un": 1,
    "una": 1,
    "uno": 1,
    "two": 2,
    "dos": 2,
    "couple of": 2,
    "a couple of": 2,
    "three": 3,
    "tres": 3,
    "few": 3,
    "a few": 3,
    "four": 4,
    "cuatro": 4,
    "five": 5,
    "cinco": 5,
    "six": 6,
    "seis": 6,
    "seven": 7,
    "siete": 7,
    "eight": 8,
    "ocho": 8,
    "nine": 9,
    "nueve": 9,
    "ten": 10,
    "diez": 10,
    "twelve": 12,
    "doce": 12,
}
_COUNT = r"(?:\d{1,3}|" + "|".join(sorted((re.escape(n) for n in _NUMBERS), key=len, reverse=True)) + ")"
_DAY = r"\d{1,2}(?:st|nd|rd|th|º)?"
_YEAR = r"(?:19|20)\d{2}"
_UNIT = r"(?:days?|weeks?|months?|years?|d[ií]as?|semanas?|mes(?:es)?|años?)"
_ORDINAL_WEEK = {"first": 1, "second": 2, "third": 3, "fourth": 4, "last": -1, "primera": 1, "segunda": 2}
_ORDINAL_WEEK.update({"tercera": 3, "cuarta": 4, "última": -1, "ultima": -1})
_QUARTER_WORDS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "primer": 1, "segundo": 2, "tercer": 3}
_QUARTER_WORDS.update({"cuarto": 4})

# A single span of time (an "atom"). Each alternative names its parts for `_resolve_atom`.
_ATOMS: tuple[tuple[str, str], ...] = (
    ("iso", r"(?P<iso>\d{4}-\d{2}-\d{2})"),
    ("day_month", rf"(?P<d1>{_DAY})\s+(?:of\s+|de\s+)?(?P<m1>{_MONTH})(?:,?\s+(?:de\s+|del\s+)?(?P<y1>{_YEAR}))?"),
    ("month_day", rf"(?P<m2>{_MONTH})\s+(?P<d2>{_DAY})(?![\d:])(?:,?\s+(?P<y2>{_YEAR}))?"),
    (
        "week_of",
        rf"(?:the\s+|la\s+)?(?P<wk>first|second|third|fourth|last|primera|segunda|tercera|cuarta|[uú]ltima)\s+"
        rf"(?:week|semana)\s+(?:of|de)\s+(?P<m3>{_MONTH})(?:\s+(?:de\s+)?(?P<y3>{_YEAR}))?",
    ),
    (
        "part_of_month",
        rf"(?P<part>early|mid|late|(?:the\s+)?(?:beginning|start|end|middle)\s+of|principios\s+de|mediados\s+de|"
        rf"finales\s+de)[\s-]+(?P<m4>{_MONTH})(?:\s+(?:de\s+)?(?P<y4>{_YEAR}))?",
    ),
    ("month_year", rf"(?P<m5>{_MONTH})\s+(?:de\s+|of\s+)?(?P<y5>{_YEAR})"),
    (
        "quarter",
        rf"(?:q(?P<q1>[1-4])|(?:the\s+|el\s+)?(?P<q2>first|second|third|fourth|primer|segundo|tercer|cuarto)\s+"
        rf"(?:quarter|trimestre))(?:\s+(?:of\s+|de\s+|del\s+)?(?P<y6>{_YEAR}))?",
    ),
    ("relative_quarter", r"(?P<rq>last|past|previous|this|current)\s+quarter"),
    (
        "relative_unit",
        r"(?:(?P<ru>last|past|previous|this|current)\s+(?P<ru_unit>week|month|year))"
        r"|(?:the\s+(?P<before_last_unit>week|month|year)\s+before\s+last)"
        r"|(?:(?:este|esta)\s+(?P<es_unit>mes|semana|año|ano))"
        r"|(?:(?:el|la)\s+(?P<es_unit2>mes|semana|año|ano)\s+(?P<es_past>pasad[oa]))",
    ),
    (
        "weekend",
        r"(?:(?P<we>last|this|the|past)\s+weekend)|(?:el\s+fin\s+de\s+semana(?:\s+(?P<we_es>pasado))?)",
    ),
    ("weekday", rf"(?:(?:last|this\s+past)\s+(?P<wd1>{_WEEKDAY}))|(?:el\s+(?P<wd2>{_WEEKDAY})\s+pasado)"),
    (
        "day_word",
        r"(?P<dw>the\s+day\s+before\s+yesterday|yesterday|today|tonight|this\s+morning|anteayer|antes\s+de\s+ayer|"
        r"ayer|hoy|esta\s+mañana)",
    ),
    ("ago", rf"(?P<ago_n>{_COUNT})\s+(?P<ago_unit>{_UNIT})\s+ago|hace\s+(?P<hace_n>{_COUNT})\s+(?P<hace_unit>{_UNIT})"),
    (
        "past_n",
        rf"(?:the\s+)?(?:past|last)\s+(?P<pn>{_COUNT})\s+(?P<pn_unit>{_UNIT})"
        rf"|(?:the\s+)?(?:past|last)\s+(?P<pn_bare>days|weeks|months)"
        rf"|(?:los|las)\s+[uú]ltim[oa]s\s+(?P<pe>{_COUNT})\s+(?P<pe_unit>{_UNIT})",
    ),
    ("month", rf"(?P<m6>{_MONTH})"),
    ("year", rf"(?P<y7>{_YEAR})"),
)
# (without the names: an atom appears twice in a range)
_ATOM = re.sub(r"\(\?P<\w+>", "(?:", "(?:" + "|".join(f"(?:{pattern})" for _, pattern in _ATOMS) + ")")
_ATOM_RES = [(name, re.compile(pattern + r"\Z", re.IGNORECASE)) for name, pattern in _ATOMS]
_B = r"(?<![\w])"  # a word starts here
_E = r"(?![\w])"  # a word ends here

# A bare month or year is a time only after a word that makes it one ("in March", "en 2025"):
# otherwise "may I…", "march on", "the 2026 plan" would be read as dates.
_PREPOSITION = (
    r"in|during|over|from|since|before|until|till|after|by|of|to|through|and|between|"
    r"en|de|del|desde|hasta|durante|entre|y|a|antes\s+de|despu[eé]s\s+de"
)
_BARE_CONTEXT = re.compile(rf"{_B}(?:{_PREPOSITION})\s+\Z", re.IGNORECASE)

_RANGE_RE = re.compile(
    rf"{_B}(?P<lead>between|entre)\s+(?P<a>{_ATOM})\s+(?:and|y)\s+(?P<b>{_ATOM}){_E}"
    rf"|{_B}(?P<lead2>from|desde|de)\s+(?P<c>{_ATOM})\s*(?:to|until|till|through|thru|hasta|a|al|-|–)\s*(?P<d>{_ATOM}){_E}",
    re.IGNORECASE,
)
_DAY_RANGE_RE = re.compile(
    rf"{_B}(?:(?:from|between|del|entre)\s+)?(?P<d1>{_DAY})\s*(?:to|and|until|till|through|-|–|al|y|a)\s*"
    rf"(?P<d2>{_DAY})\s+(?:of\s+|de\s+)?(?P<m>{_MONTH})(?:,?\s+(?:de\s+)?(?P<y>{_YEAR}))?{_E}"
    rf"|{_B}(?:(?:from|between)\s+)?(?P<m2>{_MONTH})\s+(?P<d3>{_DAY})\s*(?:to|and|until|through|-|–)\s*(?P<d4>{_DAY})"
    rf"(?:,?\s+(?P<y2>{_YEAR}))?{_E}",
    re.IGNORECASE,
)
_OPEN_RE = re.compile(
    rf"{_B}(?P<op>since|desde|before|antes\s+de|until|till|up\s+to|hasta|after|despu[eé]s\s+de)\s+(?:the\s+)?"
    rf"(?P<x>{_ATOM}){_E}",
    re.IGNORECASE,
)
_SINGLE_RE = re.compile(
    rf"{_B}(?:(?P<prep>in|during|over|on|from|en|durante|el|del)\s+(?:the\s+)?)?(?P<x>{_ATOM}){_E}",
    re.IGNORECASE,
)
_RECENT_RE = re.compile(
    r"(?<![\w])(?:recently|lately|of\s+late|these\s+days|in\s+recent\s+(?:days|weeks)|[uú]ltimamente|"
    r"recientemente|estos\s+d[ií]as)(?![\w])",
    re.IGNORECASE,
)
_LATEST_RE = re.compile(
    r"(?<![\w])(?:did\s+(?:I|we)\s+(?P<w1>last)|(?P<w2>(?:the\s+)?last\s+time|most\s+recent(?:ly)?|latest|"
    r"la\s+[uú]ltima\s+vez|lo\s+m[aá]s\s+reciente))(?![\w])",
    re.IGNORECASE,
)
_EARLIEST_RE = re.compile(
    r"(?<![\w])(?:did\s+(?:I|we)\s+(?P<w1>first)|(?P<w2>(?:the\s+)?first\s+time|earliest|la\s+primera\s+vez))"
    r"(?![\w])",
    re.IGNORECASE,
)
_THIS_YEAR_RE = re.compile(
    r"\s*,?\s+(?:(?P<which>this|last)\s+year|(?:(?:de\s+)?(?:este|el)|del)\s+año(?:\s+(?P<es>pasado))?)(?![\w])",
    re.IGNORECASE,
)
# Cheap test first: a question with none of these has no time in it (most questions).
_GATE_RE = re.compile(
    rf"\d|{_B}(?:{_MONTH}|last|past|this|previous|current|ago|yesterday|today|tonight|week|weekend|month|year|"
    rf"quarter|recent|recently|lately|latest|earliest|first|since|late|early|mid|days|hace|ayer|hoy|anteayer|"
    rf"semana|mes|año|pasad[oa]|[uú]ltim[oa]|primera|desde|trimestre|recientemente|estos|{_WEEKDAY}){_E}",
    re.IGNORECASE,
)


# -- beyond English and Spanish ------------------------------------------------------------------------
# Chinese, Japanese, German and French time words, from the tables in core/dates.py. Chinese and
# Japanese put no space around them ("上个月我读了什么书"), so their phrases are found anywhere; the
# others' as whole words.


def _phrase(words: str) -> str:
    """A table phrase as a pattern: any space, and either apostrophe ("l'année", "l’année")."""
    return r"\s+".join(re.escape(part).replace("'", "['’]") for part in words.split())


def _alternatives(words: object) -> str:
    return "|".join(_phrase(w) for w in sorted(words, key=len, reverse=True))  # type: ignore[call-overload]


_RELATIVE_WORDS = {w: spec for table in RELATIVE_TIME_WORDS.values() for w, spec in table.items()}
_UNIT_OF = {word: unit for unit, words in TIME_UNIT_WORDS.items() for word in words}
_CJK_NUMBER = r"(?:\d{1,3}|[一二两兩三四五六七八九十]{1,3})"
_WORD_NUMBER = rf"(?:\d{{1,3}}|{_alternatives(NUMBER_WORDS)})"
_CJK_UNIT = _alternatives(w for w in _UNIT_OF if has_cjk(w))
_LATIN_UNIT = _alternatives(w for w in _UNIT_OF if not has_cjk(w))
_FOREIGN_PATTERNS: tuple[tuple[str, str], ...] = (
    # the past N units: 最近三个月, 过去两周, 近30天, 過去3か月, ここ2週間, in den letzten 3 Monaten,
    # les 3 derniers mois
    (
        "past",
        rf"(?:最近|过去|過去|近|ここ)(?P<n1>{_CJK_NUMBER})(?P<u1>{_CJK_UNIT})(?:以来|来|内|以内)?"
        rf"|{_B}(?:in\s+den\s+)?(?:letzten|vergangenen)\s+(?P<n2>{_WORD_NUMBER})\s+(?P<u2>{_LATIN_UNIT}){_E}"
        rf"|{_B}(?:(?:pendant|durant|depuis)\s+)?(?:les|ces)\s+(?P<n3>{_WORD_NUMBER})\s+derni(?:er|ère)s\s+"
        rf"(?P<u3>{_LATIN_UNIT}){_E}",
    ),
    # N units ago: 三个月前, 2週間前, vor 2 Wochen, il y a trois mois
    (
        "ago",
        rf"(?P<n4>{_CJK_NUMBER})(?P<u4>{_CJK_UNIT})(?:以前|之前|前)"
        rf"|{_B}vor\s+(?P<n5>{_WORD_NUMBER})\s+(?P<u5>{_LATIN_UNIT}){_E}"
        rf"|{_B}il\s+y\s+a\s+(?P<n6>{_WORD_NUMBER})\s+(?P<u6>{_LATIN_UNIT}){_E}",
    ),
    (
        "relative",
        rf"(?P<cjk_rel>{_alternatives(w for w in _RELATIVE_WORDS if has_cjk(w))})"
        rf"|{_B}(?P<rel>{_alternatives(w for w in _RELATIVE_WORDS if not has_cjk(w))}){_E}",
    ),
    # a date written the Chinese and Japanese way: 2025年3月, 3月14日, 三月份, 2025年
    (
        "cjk_date",
        r"(?:(?P<y>(?:19|20)\d{2})年)?(?P<m>1[0-2]|0?[1-9]|十[一二]?|[一二三四五六七八九])月(?:份)?"
        r"(?:(?P<d>[0-3]?\d|[一二三]?十[一二三四五六七八九]?|[一二三四五六七八九])[日号])?"
        r"|(?P<y_only>(?:19|20)\d{2})年(?!\d)",
    ),
)
_FOREIGN_RE = re.compile("|".join(f"(?P<{name}>{pattern})" for name, pattern in _FOREIGN_PATTERNS), re.IGNORECASE)
_FOREIGN_RECENT_RE = re.compile(
    rf"(?P<cjk>{_alternatives(w for table in RECENT_TIME_WORDS.values() for w in table if has_cjk(w))})"
    rf"|{_B}(?P<latin>{_alternatives(w for table in RECENT_TIME_WORDS.values() for w in table if not has_cjk(w))}){_E}",
    re.IGNORECASE,
)


def _find_foreign(question: str, today: date) -> tuple[TimeRange | None, bool, str]:
    """The first Chinese, Japanese, German or French time words of the question: the range, whether it
    was "recently", and the question without them."""
    for match in _FOREIGN_RE.finditer(question):
        try:
            span = _foreign_span(match, today)
        except (ValueError, KeyError, OverflowError):
            continue
        if span is not None and span.start <= span.end:
            return TimeRange(span.start, span.end, _words(match[0]), span.notice), False, _cut(question, match)
    recent = _FOREIGN_RECENT_RE.search(question)
    if recent:
        found = TimeRange(_days_before(today, RECENT_DAYS), today, _words(recent[0]))
        return found, True, _cut(question, recent)
    return None, False, question


def _foreign_span(m: re.Match[str], today: date) -> _Span | None:
    if m["past"] or m["ago"]:
        number = next(m[f"n{i}"] for i in range(1, 7) if m[f"n{i}"])
        unit = _UNIT_OF[next(m[f"u{i}"] for i in range(1, 7) if m[f"u{i}"]).lower()]
        low = number.lower()
        count = int(low) if low.isdigit() else NUMBER_WORDS[low] if low in NUMBER_WORDS else cjk_number(low)
        return _past_span(count, unit, today) if m["past"] else _ago_span(count, unit, today)
    if m["relative"]:
        words = " ".join((m["cjk_rel"] or m["rel"]).lower().replace("’", "'").split())
        unit, back = _RELATIVE_WORDS[words]
        return _relative_span(unit, back, today)
    if m["y_only"]:
        year = int(m["y_only"])
        return _Span(date(year, 1, 1), date(year, 12, 31))
    month = cjk_number(m["m"])
    if not 1 <= month <= 12:
        return None
    if m["d"]:
        day = cjk_number(m["d"])
        return _real_day(int(m["y"]), month, day) if m["y"] else _latest_day(month, day, today)
    year = int(m["y"]) if m["y"] else _latest_month(month, today)
    return _Span(*month_span(year, month))


# -- reading a question -------------------------------------------------------------------------------


def read_time(question: str, today: date) -> TimeQuery | None:
    """The time `question` asks about, resolved against `today`; None when it asks about none."""
    if not _GATE_RE.search(question) and not (_FOREIGN_RE.search(question) or _FOREIGN_RECENT_RE.search(question)):
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
    recent_match = _RECENT_RE.search(text)
    if recent_match:
        if found is None:
            recent = True
            found = TimeRange(_days_before(today, RECENT_DAYS), today, _words(recent_match[0]))
        text = _cut(text, recent_match)
    order = None
    for name, regex in (("latest", _LATEST_RE), ("earliest", _EARLIEST_RE)):
        order_match = regex.search(text)
        if order_match:
            order = name
            group = "w1" if order_match["w1"] else "w2"
            text = text[: order_match.start(group)] + " " + text[order_match.end(group) :]
            break
    if found is None and order is None:
        return None
    return TimeQuery(found, order, recent, _tidy(text))


def _find_range(question: str, today: date) -> tuple[TimeRange | None, str]:
    """The first range the question names, and the question without its words."""
    text = question
    found: TimeRange | None = None
    for regex, read in ((_RANGE_RE, _between), (_DAY_RANGE_RE, _day_range)):
        match = regex.search(text)
        found = read(match, today) if match else None
        if match and found is not None:
            text = _cut(text, match)
            break
    if found is None:
        for match in _OPEN_RE.finditer(text):
            atom = _resolve_atom(match["x"], today)
            if atom is None:
                continue
            op = " ".join(match["op"].lower().split())
            words = _words(match[0])
            if op in ("since", "desde"):
                found = TimeRange(atom.start, today, words, atom.notice)
            elif op in ("before", "antes de"):
                found = TimeRange(None, _days_before(atom.start, 1), words, atom.notice)
            elif op in ("after", "después de", "despues de"):
                after = _days_before(atom.end, -1)
                found = TimeRange(after, max(after, today), words, atom.notice)
            else:  # until, up to, hasta
                found = TimeRange(None, atom.end, words, atom.notice)
            text = _cut(text, match)
            break
    if found is None:
        for match in _SINGLE_RE.finditer(text):
            kind = _atom_kind(match["x"])
            if kind in ("month", "year"):
                before = text[: match.start("x")]
                if not match["prep"] and not _BARE_CONTEXT.search(before):
                    continue
                if kind == "year" and (match["prep"] or "").lower() in ("el", "on"):
                    continue
            year_word = _THIS_YEAR_RE.match(text, match.end())
            if year_word and kind in _YEARLESS:
                # "30 June this year", "in March last year": read in the year the words name
                last_year = (year_word["which"] or "").lower() == "last" or bool(year_word["es"])
                atom = _resolve_atom(match["x"], today, year=today.year - (1 if last_year else 0))
                if atom is None:
                    continue
                found = TimeRange(atom.start, atom.end, _words(text[match.start() : year_word.end()]), atom.notice)
                text = text[: match.start()] + " " + text[year_word.end() :]
                break
            atom = _resolve_atom(match["x"], today)
            if atom is None:
                continue
            found = TimeRange(atom.start, atom.end, _words(match[0]), atom.notice)
            text = _cut(text, match)
            break
    return found, text


def _between(match: re.Match[str], today: date) -> TimeRange | None:
    """A range such as "between March and May", or "from November to February" (the November before)."""
    first = _resolve_atom(match["a"] or match["c"], today)
    last = _resolve_atom(match["b"] or match["d"], today)
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
    month = _month_number(_s(m, "m", "m2"))
    first, last = (int(re.sub(r"\D", "", _s(m, k))) for k in (("d1", "d2") if _g(m, "d1") else ("d3", "d4")))
    year_text = _g(m, "y") or _g(m, "y2")
    if not (1 <= first <= last <= 31):
        return None
    try:
        start = _real_day(int(year_text), month, first) if year_text else _latest_day(month, first, today)
        end = _real_day(start.start.year, month, last)
    except (ValueError, OverflowError):
        return None
    return TimeRange(start.start, max(start.start, end.start), _words(m[0]), start.notice or end.notice)


def _atom_kind(text: str) -> str | None:
    for name, regex in _ATOM_RES:
        if regex.match(text.strip()):
            return name
    return None


def _resolve_atom(text: str, today: date, year: int | None = None) -> _Span | None:
    """The span an atom names, resolved against `today`; `year`: the year "this year" or "last year"
    after it names, for an atom that names none itself. None when the words name no real time (a
    year before the calendar's first, a week that does not exist)."""
    text = " ".join(text.split())
    for name, regex in _ATOM_RES:
        match = regex.match(text)
        if match is None:
            continue
        try:
            span = _RESOLVERS[name](match, today, year)
        except (ValueError, KeyError, OverflowError):
            return None
        return span if span.start <= span.end else None
    return None


def _month_number(name: str) -> int:
    return _MONTHS[name.lower().rstrip(".")]


def _count(text: str) -> int:
    text = " ".join(text.lower().split())
    return int(text) if text.isdigit() else _NUMBERS[text]


def _latest_month(month: int, today: date) -> int:
    """The year of the most recent `month` that has begun by `today`."""
    return today.year if month <= today.month else today.year - 1


def _latest_day(month: int, day: int, today: date) -> _Span:
    """The most recent `day` of `month` up to `today`: "29 February" is the last one there was; a day
    no such month has ("31 April") is the month's last day, with a notice."""
    if day > month_span(2000, month)[1].day:  # (2000: a leap year, so every month at its longest)
        last = month_span(today.year, month)[1]
        return _real_day(today.year if last <= today else today.year - 1, month, day)
    for year in range(today.year, max(today.year - 9, 0), -1):  # (29 February: within 8 years)
        if _valid(year, month, day) and date(year, month, day) <= today:
            return _Span(date(year, month, day), date(year, month, day))
    raise ValueError(f"no {day} of month {month} before {today}")


def _real_day(year: int, month: int, day: int) -> _Span:
    """That day, or the last day of that month when it has no such day, saying so."""
    last = month_span(year, month)[1]
    if day <= last.day:
        return _Span(date(year, month, day), date(year, month, day))
    named = f"{day} {last.strftime('%B')}"
    lacks = f"{year} has no {named}" if month == 2 and day == 29 else f"There is no {named}"
    return _Span(last, last, f"{lacks}: read as {last.day} {last.strftime('%B')} {year}.")


def _valid(year: int, month: int, day: int) -> bool:
    try:
        date(year, month, day)
    except ValueError:
        return False
    return True


def _days_before(day: date, days: int) -> date:
    """`day` less `days` days, held within the calendar (a `now` near year 1 or 9999 does not crash)."""
    try:
        return day - timedelta(days=days)
    except OverflowError:
        return date.min if days > 0 else date.max


def _day_span(day: date) -> _Span:
    return _Span(day, day)


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


# Each resolver: (the atom's match, today, the year "this/last year" names or None) -> its span.
# Only the atoms in _YEARLESS read that year; the others name their own, or none.


def _r_iso(m: re.Match[str], today: date, year: int | None) -> _Span:
    y, month, day = (int(part) for part in _s(m, "iso").split("-"))
    if not (1 <= month <= 12 and 1 <= day <= 31):
        raise ValueError(f"not a date: {_s(m, 'iso')}")
    return _real_day(y, month, day)


def _r_day_month(m: re.Match[str], today: date, year: int | None) -> _Span:
    day, month = int(re.sub(r"\D", "", _s(m, "d1", "d2"))), _month_number(_s(m, "m1", "m2"))
    if not 1 <= day <= 31:
        raise ValueError(f"no day {day}")
    named = _g(m, "y1") or _g(m, "y2")
    if named:
        year = int(named)
    return _real_day(year, month, day) if year is not None else _latest_day(month, day, today)


def _r_week_of(m: re.Match[str], today: date, year: int | None) -> _Span:
    month = _month_number(_s(m, "m3"))
    year = int(_s(m, "y3")) if _g(m, "y3") else year if year is not None else _latest_month(month, today)
    first, last = month_span(year, month)
    which = _ORDINAL_WEEK[_s(m, "wk").lower()]
    if which < 0:
        return _Span(last - timedelta(days=6), last)
    start = first + timedelta(days=7 * (which - 1))
    return _Span(start, min(last, start + timedelta(days=6)))


def _r_part_of_month(m: re.Match[str], today: date, year: int | None) -> _Span:
    month = _month_number(_s(m, "m4"))
    year = int(_s(m, "y4")) if _g(m, "y4") else year if year is not None else _latest_month(month, today)
    first, last = month_span(year, month)
    part = " ".join(_s(m, "part").lower().split())
    if part in ("early", "beginning of", "the beginning of", "start of", "the start of", "principios de"):
        return _Span(first, first + timedelta(days=9))
    if part in ("mid", "middle of", "the middle of", "mediados de"):
        return _Span(first + timedelta(days=10), first + timedelta(days=19))
    return _Span(first + timedelta(days=20), last)


def _r_month_year(m: re.Match[str], today: date, year: int | None) -> _Span:
    return _Span(*month_span(int(_s(m, "y5")), _month_number(_s(m, "m5"))))


def _r_quarter(m: re.Match[str], today: date, year: int | None) -> _Span:
    quarter = int(_s(m, "q1")) if _g(m, "q1") else _QUARTER_WORDS[_s(m, "q2").lower()]
    if _g(m, "y6"):
        return _Span(*_quarter_span(int(_s(m, "y6")), quarter))
    latest = today.year if 3 * (quarter - 1) + 1 <= today.month else today.year - 1
    return _Span(*_quarter_span(latest, quarter))


def _r_relative_quarter(m: re.Match[str], today: date, year: int | None) -> _Span:
    current = (today.month - 1) // 3 + 1
    if _s(m, "rq").lower() in ("this", "current"):
        return _Span(_quarter_span(today.year, current)[0], today)
    previous = today - relativedelta(months=3)
    return _Span(*_quarter_span(previous.year, (previous.month - 1) // 3 + 1))


def _r_relative_unit(m: re.Match[str], today: date, year: int | None) -> _Span:
    if _g(m, "es_unit") or _g(m, "es_unit2"):
        unit = {"mes": "month", "semana": "week", "año": "year", "ano": "year"}[_s(m, "es_unit", "es_unit2").lower()]
        back = 1 if _g(m, "es_past") else 0
    elif _g(m, "before_last_unit"):
        unit, back = _s(m, "before_last_unit").lower(), 2
    else:
        unit, back = _s(m, "ru_unit").lower(), 0 if _s(m, "ru").lower() in ("this", "current") else 1
    return _relative_span(unit, back, today)


def _relative_span(unit: str, back: int, today: date) -> _Span:
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
    return _Span(start, today if back == 0 else end)


def _r_weekend(m: re.Match[str], today: date, year: int | None) -> _Span:
    word = (_g(m, "we") or "").lower()
    if today.weekday() >= 5 and word in ("this", "the", "past") and not _g(m, "we_es"):
        saturday = today - timedelta(days=today.weekday() - 5)
        return _Span(saturday, today)
    saturday = today - timedelta(days=today.weekday() + 2)  # the Saturday before this week began
    return _Span(saturday, saturday + timedelta(days=1))


def _r_weekday(m: re.Match[str], today: date, year: int | None) -> _Span:
    weekday = _WEEKDAYS[(_s(m, "wd1", "wd2")).lower()]
    back = (today.weekday() - weekday) % 7 or 7
    return _day_span(today - timedelta(days=back))


def _r_day_word(m: re.Match[str], today: date, year: int | None) -> _Span:
    word = " ".join(_s(m, "dw").lower().split())
    back = {"yesterday": 1, "ayer": 1, "the day before yesterday": 2, "anteayer": 2, "antes de ayer": 2}.get(word, 0)
    return _day_span(today - timedelta(days=back))


def _unit(text: str) -> str:
    text = text.lower()
    for prefix, unit in (("d", "day"), ("w", "week"), ("sem", "week"), ("mo", "month"), ("mes", "month")):
        if text.startswith(prefix):
            return unit
    return "year"


def _r_ago(m: re.Match[str], today: date, year: int | None) -> _Span:
    if _g(m, "ago_n"):
        count, unit = _count(_s(m, "ago_n")), _unit(_s(m, "ago_unit"))
    else:
        count, unit = _count(_s(m, "hace_n")), _unit(_s(m, "hace_unit"))
    return _ago_span(count, unit, today)


def _ago_span(count: int, unit: str, today: date) -> _Span:
    """The day, week, month or year `count` of them before today's."""
    if unit == "day":
        return _day_span(today - timedelta(days=count))
    if unit == "week":
        return _Span(*_week_of(today - timedelta(weeks=count)))
    if unit == "month":
        shifted = today - relativedelta(months=count)
        return _Span(*month_span(shifted.year, shifted.month))
    return _Span(date(today.year - count, 1, 1), date(today.year - count, 12, 31))


def _r_past_n(m: re.Match[str], today: date, year: int | None) -> _Span:
    if _g(m, "pn_bare"):  # "the past weeks": a few of them
        count, unit = 3, _unit(_s(m, "pn_bare"))
    elif _g(m, "pn"):
        count, unit = _count(_s(m, "pn")), _unit(_s(m, "pn_unit"))
    else:
        count, unit = _count(_s(m, "pe")), _unit(_s(m, "pe_unit"))
    return _past_span(count, unit, today)


def _past_span(count: int, unit: str, today: date) -> _Span:
    """The last `count` days, weeks, months or years, up to today."""
    delta = {
        "day": relativedelta(days=count),
        "week": relativedelta(weeks=count),
        "month": relativedelta(months=count),
        "year": relativedelta(years=count),
    }[unit]
    return _Span(today - delta, today)


def _r_month(m: re.Match[str], today: date, year: int | None) -> _Span:
    month = _month_number(_s(m, "m6"))
    return _Span(*month_span(year if year is not None else _latest_month(month, today), month))


def _r_year(m: re.Match[str], today: date, year: int | None) -> _Span:
    named = int(_s(m, "y7"))
    return _Span(date(named, 1, 1), date(named, 12, 31))


# The atoms that name no year of their own, so "this year" / "last year" after them says which
_YEARLESS = ("day_month", "month_day", "month", "week_of", "part_of_month")

_RESOLVERS = {
    "iso": _r_iso,
    "day_month": _r_day_month,
    "month_day": _r_day_month,
    "week_of": _r_week_of,
    "part_of_month": _r_part_of_month,
    "month_year": _r_month_year,
    "quarter": _r_quarter,
    "relative_quarter": _r_relative_quarter,
    "relative_unit": _r_relative_unit,
    "weekend": _r_weekend,
    "weekday": _r_weekday,
    "day_word": _r_day_word,
    "ago": _r_ago,
    "past_n": _r_past_n,
    "month": _r_month,
    "year": _r_year,
}


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


# -- dates the caller gives ---------------------------------------------------------------------------


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
