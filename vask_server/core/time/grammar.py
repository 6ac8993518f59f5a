"""The grammar of time in a question: the rules (regular expressions) that find "last month", "in
March", "between February and March", "Q1 2024", "the past 30 days", "since January", "recently",
"when did I last…", their Spanish forms, and the Chinese, Japanese, German and French words of
core/time/words.py. Each rule names its parts for what they hold (`month`, `year`, `count`, `unit`;
by the rule's name where alternatives need their own: `es_weekday`, `month_day_from`), which
core/time/spans.py turns into days and core/time/expr.py into the range a question asks about.
"""

from __future__ import annotations

import re

from vask_server.core.cjk import has_cjk
from vask_server.core.time.words import (
    NUMBER_WORDS,
    NUMBERS,
    RECENT_TIME_WORDS,
    RELATIVE_TIME_WORDS,
    SEASONS,
    TIME_UNIT_WORDS,
    WEEKDAYS,
    month_words,
)

# -- the words of a rule -----------------------------------------------------------------------------

# Questions are read in English and Spanish (the rules below), so only their month names:
# "mai" or "mars" in a question is not a month here, though in a note's text it is.
MONTHS = month_words(("en", "en_abbr", "es"))
_MONTH = r"(?:" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
_WEEKDAY = "(?:" + "|".join(WEEKDAYS) + ")"
_COUNT = r"(?:\d{1,3}|" + "|".join(sorted((re.escape(n) for n in NUMBERS), key=len, reverse=True)) + ")"
_DAY = r"\d{1,2}(?:st|nd|rd|th|º)?"
_YEAR = r"(?:19|20)\d{2}"
_UNIT = r"(?:days?|weeks?|months?|years?|d[ií]as?|semanas?|mes(?:es)?|años?)"
_SEASON = "(?:" + "|".join(sorted(SEASONS, key=len, reverse=True)) + ")"

# -- English and Spanish -------------------------------------------------------------------------------

# A single span of time (an "atom"), by the name of its rule; core/time/spans.py has a reader for each.
ATOMS: tuple[tuple[str, str], ...] = (
    ("iso", r"(?P<iso>\d{4}-\d{2}-\d{2})"),
    (
        "day_month",
        rf"(?P<day>{_DAY})\s+(?:of\s+|de\s+)?(?P<month>{_MONTH})(?:,?\s+(?:de\s+|del\s+)?(?P<year>{_YEAR}))?",
    ),
    ("month_day", rf"(?P<month>{_MONTH})\s+(?P<day>{_DAY})(?![\d:])(?:,?\s+(?P<year>{_YEAR}))?"),
    (
        "week_of",
        rf"(?:the\s+|la\s+)?(?P<which_week>first|second|third|fourth|last|primera|segunda|tercera|cuarta|[uú]ltima)\s+"
        rf"(?:week|semana)\s+(?:of|de)\s+(?P<month>{_MONTH})(?:\s+(?:de\s+)?(?P<year>{_YEAR}))?",
    ),
    (
        "part_of_month",
        rf"(?P<part>early|mid|late|(?:the\s+)?(?:beginning|start|end|middle)\s+of|principios\s+de|mediados\s+de|"
        rf"finales\s+de)[\s-]+(?P<month>{_MONTH})(?:\s+(?:de\s+)?(?P<year>{_YEAR}))?",
    ),
    ("month_year", rf"(?P<month>{_MONTH})\s+(?:de\s+|of\s+)?(?P<year>{_YEAR})"),
    (
        "quarter",
        rf"(?:q(?P<quarter_number>[1-4])|(?:the\s+|el\s+)?(?P<quarter_word>first|second|third|fourth|primer|segundo|tercer|cuarto)\s+"
        rf"(?:quarter|trimestre))(?:\s+(?:of\s+|de\s+|del\s+)?(?P<year>{_YEAR}))?",
    ),
    ("relative_quarter", r"(?P<which>last|past|previous|this|current)\s+quarter"),
    # the first half of 2022, H2 2021, la segunda mitad de 2022
    (
        "half",
        rf"(?:h(?P<half_number>[12])|(?:the\s+|la\s+)?(?P<half_word>first|second|primera|segunda)\s+(?:half|mitad))"
        rf"\s+(?:of\s+|de\s+|del\s+)?(?P<year>{_YEAR})",
    ),
    # summer 2021, the fall of 2022, last winter, el verano de 2021, el otoño pasado
    (
        "season",
        rf"(?:the\s+|el\s+|la\s+)?(?P<season>{_SEASON})\s+(?:of\s+|de\s+|del\s+)?(?P<year>{_YEAR})"
        rf"|(?P<which>last|past|previous|this)\s+(?P<relative_season>{_SEASON})"
        rf"|(?:este|esta)\s+(?P<es_this_season>{_SEASON})|(?:el|la)\s+(?P<es_last_season>{_SEASON})\s+pasad[oa]",
    ),
    (
        "relative_unit",
        r"(?:(?P<which>last|past|previous|this|current)\s+(?P<unit>week|month|year))"
        r"|(?:the\s+(?P<before_last_unit>week|month|year)\s+before\s+last)"
        r"|(?:(?:este|esta)\s+(?P<es_this_unit>mes|semana|año|ano))"
        r"|(?:(?:el|la)\s+(?P<es_last_unit>mes|semana|año|ano)\s+(?P<es_past>pasad[oa]))",
    ),
    (
        "weekend",
        r"(?:(?P<which>last|this|the|past)\s+weekend)|(?:el\s+fin\s+de\s+semana(?:\s+(?P<es_past>pasado))?)",
    ),
    ("weekday", rf"(?:(?:last|this\s+past)\s+(?P<weekday>{_WEEKDAY}))|(?:el\s+(?P<es_weekday>{_WEEKDAY})\s+pasado)"),
    (
        "day_word",
        r"(?P<word>the\s+day\s+before\s+yesterday|yesterday|today|tonight|this\s+morning|anteayer|antes\s+de\s+ayer|"
        r"ayer|hoy|esta\s+mañana)",
    ),
    ("ago", rf"(?P<count>{_COUNT})\s+(?P<unit>{_UNIT})\s+ago|hace\s+(?P<hace_count>{_COUNT})\s+(?P<hace_unit>{_UNIT})"),
    (
        "past_n",
        rf"(?:the\s+)?(?:past|last)\s+(?P<count>{_COUNT})\s+(?P<unit>{_UNIT})"
        rf"|(?:the\s+)?(?:past|last)\s+(?P<bare_unit>days|weeks|months)"
        rf"|(?:los|las)\s+[uú]ltim[oa]s\s+(?P<es_count>{_COUNT})\s+(?P<es_unit>{_UNIT})",
    ),
    ("month", rf"(?P<month>{_MONTH})"),
    ("year", rf"(?P<year>{_YEAR})"),
)
# Any atom, without the names of its parts (an atom appears twice in a range; each is read on its own)
_ATOM = re.sub(r"\(\?P<\w+>", "(?:", "(?:" + "|".join(f"(?:{pattern})" for _, pattern in ATOMS) + ")")
# Each atom's rule alone, for reading the words one of the patterns below found
ATOM_RULES = [(name, re.compile(pattern + r"\Z", re.IGNORECASE)) for name, pattern in ATOMS]
_B = r"(?<![\w])"  # a word starts here
_E = r"(?![\w])"  # a word ends here

# A bare month or year is a time only after a word that makes it one ("in March", "en 2025"):
# otherwise "may I…", "march on", "the 2026 plan" would be read as dates.
_PREPOSITION = (
    r"in|during|over|from|since|before|until|till|after|by|of|to|through|and|between|"
    r"en|de|del|desde|hasta|durante|entre|y|a|antes\s+de|despu[eé]s\s+de"
)
BARE_CONTEXT_RE = re.compile(rf"{_B}(?:{_PREPOSITION})\s+\Z", re.IGNORECASE)

# between March and May; from November to February
RANGE_RE = re.compile(
    rf"{_B}(?:between|entre)\s+(?P<between_from>{_ATOM})\s+(?:and|y)\s+(?P<between_to>{_ATOM}){_E}"
    rf"|{_B}(?:from|desde|de)\s+(?P<from_from>{_ATOM})\s*(?:to|until|till|through|thru|hasta|a|al|-|–)\s*"
    rf"(?P<from_to>{_ATOM}){_E}",
    re.IGNORECASE,
)
# 9 to 15 March (day_month_…); March 9-15 (month_day_…)
DAY_RANGE_RE = re.compile(
    rf"{_B}(?:(?:from|between|del|entre)\s+)?(?P<day_month_from>{_DAY})\s*"
    rf"(?:to|and|until|till|through|-|–|al|y|a)\s*(?P<day_month_to>{_DAY})\s+(?:of\s+|de\s+)?"
    rf"(?P<day_month_month>{_MONTH})(?:,?\s+(?:de\s+)?(?P<day_month_year>{_YEAR}))?{_E}"
    rf"|{_B}(?:(?:from|between)\s+)?(?P<month_day_month>{_MONTH})\s+(?P<month_day_from>{_DAY})\s*"
    rf"(?:to|and|until|through|-|–)\s*(?P<month_day_to>{_DAY})(?:,?\s+(?P<month_day_year>{_YEAR}))?{_E}",
    re.IGNORECASE,
)
# since January, before 3 March, until Q2, after last week
OPEN_RE = re.compile(
    rf"{_B}(?P<bound>since|desde|before|antes\s+de|until|till|up\s+to|hasta|after|despu[eé]s\s+de)\s+(?:the\s+)?"
    rf"(?P<atom>{_ATOM}){_E}",
    re.IGNORECASE,
)
# in March, last week, on 14 February
SINGLE_RE = re.compile(
    rf"{_B}(?:(?P<preposition>in|during|over|on|from|en|durante|el|del)\s+(?:the\s+)?)?(?P<atom>{_ATOM}){_E}",
    re.IGNORECASE,
)
RECENT_RE = re.compile(
    r"(?<![\w])(?:recently|lately|of\s+late|these\s+days|in\s+recent\s+(?:days|weeks)|[uú]ltimamente|"
    r"recientemente|estos\s+d[ií]as)(?![\w])",
    re.IGNORECASE,
)
# The words that order by date, taken out of what is searched: "last" of "did I last", or the phrase
LATEST_RE = re.compile(
    r"(?<![\w])(?:did\s+(?:I|we)\s+(?P<after_did>last)|(?P<phrase>(?:the\s+)?last\s+time|most\s+recent(?:ly)?|latest|"
    r"la\s+[uú]ltima\s+vez|lo\s+m[aá]s\s+reciente))(?![\w])",
    re.IGNORECASE,
)
EARLIEST_RE = re.compile(
    r"(?<![\w])(?:did\s+(?:I|we)\s+(?P<after_did>first)|(?P<phrase>(?:the\s+)?first\s+time|earliest|la\s+primera\s+vez))"
    r"(?![\w])",
    re.IGNORECASE,
)
# this year, last year, del año pasado: after an atom that names no year of its own
THIS_YEAR_RE = re.compile(
    r"\s*,?\s+(?:(?P<which>this|last)\s+year|(?:(?:de\s+)?(?:este|el)|del)\s+año(?:\s+(?P<es_past>pasado))?)(?![\w])",
    re.IGNORECASE,
)
# Cheap test first: a question with none of these has no time in it (most questions).
GATE_RE = re.compile(
    rf"\d|{_B}(?:{_MONTH}|last|past|this|previous|current|ago|yesterday|today|tonight|week|weekend|month|year|"
    rf"quarter|recent|recently|lately|latest|earliest|first|since|late|early|mid|days|hace|ayer|hoy|anteayer|{_SEASON}|"
    rf"semana|mes|año|pasad[oa]|[uú]ltim[oa]|primera|desde|trimestre|recientemente|estos|{_WEEKDAY}){_E}",
    re.IGNORECASE,
)


# -- beyond English and Spanish ------------------------------------------------------------------------
# Chinese, Japanese, German and French time words, from the tables in core/time/words.py. Chinese and
# Japanese put no space around them ("上个月我读了什么书"), so their phrases are found anywhere; the
# others' as whole words.


def _phrase(words: str) -> str:
    """A table phrase as a pattern: any space, and either apostrophe ("l'année", "l’année")."""
    return r"\s+".join(re.escape(part).replace("'", "['’]") for part in words.split())


def _alternatives(words: object) -> str:
    return "|".join(_phrase(w) for w in sorted(words, key=len, reverse=True))  # type: ignore[call-overload]


RELATIVE_WORDS = {w: spec for table in RELATIVE_TIME_WORDS.values() for w, spec in table.items()}
UNIT_OF = {word: unit for unit, words in TIME_UNIT_WORDS.items() for word in words}
_CJK_NUMBER = r"(?:\d{1,3}|[一二两兩三四五六七八九十]{1,3})"
_WORD_NUMBER = rf"(?:\d{{1,3}}|{_alternatives(NUMBER_WORDS)})"
_CJK_UNIT = _alternatives(w for w in UNIT_OF if has_cjk(w))
_LATIN_UNIT = _alternatives(w for w in UNIT_OF if not has_cjk(w))
_FOREIGN_PATTERNS: tuple[tuple[str, str], ...] = (
    # the past N units: 最近三个月, 过去两周, 近30天, 過去3か月, ここ2週間, in den letzten 3 Monaten,
    # les 3 derniers mois
    (
        "past",
        rf"(?:最近|过去|過去|近|ここ)(?P<past_cjk_count>{_CJK_NUMBER})(?P<past_cjk_unit>{_CJK_UNIT})(?:以来|来|内|以内)?"
        rf"|{_B}(?:in\s+den\s+)?(?:letzten|vergangenen)\s+(?P<past_de_count>{_WORD_NUMBER})\s+(?P<past_de_unit>{_LATIN_UNIT}){_E}"
        rf"|{_B}(?:(?:pendant|durant|depuis)\s+)?(?:les|ces)\s+(?P<past_fr_count>{_WORD_NUMBER})\s+derni(?:er|ère)s\s+"
        rf"(?P<past_fr_unit>{_LATIN_UNIT}){_E}",
    ),
    # N units ago: 三个月前, 2週間前, vor 2 Wochen, il y a trois mois
    (
        "ago",
        rf"(?P<ago_cjk_count>{_CJK_NUMBER})(?P<ago_cjk_unit>{_CJK_UNIT})(?:以前|之前|前)"
        rf"|{_B}vor\s+(?P<ago_de_count>{_WORD_NUMBER})\s+(?P<ago_de_unit>{_LATIN_UNIT}){_E}"
        rf"|{_B}il\s+y\s+a\s+(?P<ago_fr_count>{_WORD_NUMBER})\s+(?P<ago_fr_unit>{_LATIN_UNIT}){_E}",
    ),
    (
        "relative",
        rf"(?P<relative_cjk>{_alternatives(w for w in RELATIVE_WORDS if has_cjk(w))})"
        rf"|{_B}(?P<relative_latin>{_alternatives(w for w in RELATIVE_WORDS if not has_cjk(w))}){_E}",
    ),
    # a date written the Chinese and Japanese way: 2025年3月, 3月14日, 三月份, 2025年
    (
        "cjk_date",
        r"(?:(?P<cjk_year>(?:19|20)\d{2})年)?(?P<cjk_month>1[0-2]|0?[1-9]|十[一二]?|[一二三四五六七八九])月(?:份)?"
        r"(?:(?P<cjk_day>[0-3]?\d|[一二三]?十[一二三四五六七八九]?|[一二三四五六七八九])[日号])?"
        r"|(?P<cjk_year_only>(?:19|20)\d{2})年(?!\d)",
    ),
)
FOREIGN_RE = re.compile("|".join(f"(?P<{name}>{pattern})" for name, pattern in _FOREIGN_PATTERNS), re.IGNORECASE)
FOREIGN_RECENT_RE = re.compile(
    rf"(?P<cjk>{_alternatives(w for table in RECENT_TIME_WORDS.values() for w in table if has_cjk(w))})"
    rf"|{_B}(?P<latin>{_alternatives(w for table in RECENT_TIME_WORDS.values() for w in table if not has_cjk(w))}){_E}",
    re.IGNORECASE,
)
