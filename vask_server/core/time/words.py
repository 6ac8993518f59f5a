"""The words of time in the languages vask reads, one table of each kind: month names, weekday names,
the English and Spanish words a question counts and orders with, and the relative time words, units
and counting words of Chinese, Japanese, German and French. Both readers take their words from here:
core/time/dates.py (dates written in notes) and core/time/expr.py (the time a question asks about). With
them, the two calendar facts the tables need: a number written in Chinese, and the days of a month.
"""

from __future__ import annotations

import calendar
from collections.abc import Iterable
from datetime import date

# -- months ------------------------------------------------------------------------------------------

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


# Every month name of every language: a date in a note's text may be written in any of them.
MONTH_NAMES = month_words()

# -- weekdays ----------------------------------------------------------------------------------------

# The weekday names a question is read in (English and Spanish), Monday 0 to Sunday 6.
WEEKDAYS = {
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
# Their first three letters, as a weekday is shortened in a dated row ("Mon 3 Feb", "mié 4").
WEEKDAY_PREFIXES = {name[:3] for name in WEEKDAYS}

# -- counting and ordering words of questions in English and Spanish ----------------------------------

NUMBERS = {
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
ORDINAL_WEEK = {"first": 1, "second": 2, "third": 3, "fourth": 4, "last": -1, "primera": 1, "segunda": 2}
ORDINAL_WEEK.update({"tercera": 3, "cuarta": 4, "última": -1, "ultima": -1})
# The seasons (the meteorological ones of the northern hemisphere), by the month each begins in:
# "winter 2022" is December 2022 to February 2023, the winter that begins in that year.
SEASONS = {
    "spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12,
    "primavera": 3, "verano": 6, "otoño": 9, "otono": 9, "invierno": 12,
}  # fmt: skip
HALF_WORDS = {"first": 1, "second": 2, "primera": 1, "segunda": 2}
QUARTER_WORDS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "primer": 1, "segundo": 2, "tercer": 3}
QUARTER_WORDS.update({"cuarto": 4})

# -- the words of other languages ----------------------------------------------------------------------

# Time words of questions in languages beyond English and Spanish (whose words core/time/grammar.py
# spells out in its rules), by language: a phrase → (unit, how many of them back: 0 this one so far, 1 the one
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
# "recently", "lately": the last RECENT_DAYS days (core/time/expr.py), widened when they hold nothing
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


def month_span(year: int, month: int) -> tuple[date, date]:
    return date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1])
