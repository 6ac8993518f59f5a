"""Every reading of the time code, printed, so two checkouts can be compared byte for byte (`cmp`).

A refactoring of `core/time/expr.py` or `core/time/dates.py` should change none of what they read. This
prints, one line each, what `read_time` makes of a few thousand phrasings at a few `now`s (the
strings of the time tests, the questions of every eval set, and combinations of leads, days, tails,
counts and units in English, Spanish, Chinese, Japanese, German and French), with `describe_range`
of each range, what `find_day`, `find_period`, `value_as_date` and `file_name_date` make of the same
texts, and `date_note` of every note of sample_vault:

    git archive <before> vask_server | tar -x -C /tmp/vask-before
    PYTHONPATH=/tmp/vask-before uv run --frozen python scripts/time_equivalence.py > /tmp/before.txt
    uv run --frozen python scripts/time_equivalence.py > /tmp/after.txt
    cmp /tmp/before.txt /tmp/after.txt

(Run as a file, not with `-m`, so that the checkout's own directory is not first on the path and
PYTHONPATH says which `vask_server` is read.) The count
of phrasings and of lines goes to stderr, with the `vask_server` that was read.
"""

from __future__ import annotations

import ast
import itertools
import json
import sys
from datetime import date, datetime
from pathlib import Path

import vask_server
from vask_server.core.parse import parse_note
from vask_server.core.time.dates import DateOptions, date_note, file_name_date, find_day, find_period, value_as_date
from vask_server.core.time.expr import describe_range, read_time

ROOT = Path(__file__).resolve().parents[1]
NOWS = (date(2026, 3, 30), date(2024, 2, 29), date(2025, 1, 1), date(2100, 3, 1), date(1, 1, 5))
TEST_FILES = ("test_timeexpr.py", "test_cjk.py", "test_dates.py", "test_time_search.py")

LEADS = ("on", "since", "before", "after", "until", "in", "during", "from", "between", "el", "en", "desde", "hasta", "")
ATOMS = (
    "March",
    "may",
    "2025",
    "14 February",
    "February 14th",
    "29 February",
    "31 April",
    "1 de febrero de 2026",
    "2026-03-14",
    "Q1",
    "Q3 2024",
    "the second quarter",
    "el primer trimestre",
    "last quarter",
    "this month",
    "last week",
    "the month before last",
    "el mes pasado",
    "esta semana",
    "last weekend",
    "el fin de semana pasado",
    "last Tuesday",
    "el lunes pasado",
    "yesterday",
    "anteayer",
    "early March",
    "the end of January",
    "mediados de febrero",
    "the last week of February",
    "la primera semana de marzo",
    "March 2024",
    "marzo de 2025",
)
TAILS = ("", " this year", " last year", " del año pasado", ", 2024")
COUNTS = ("1", "2", "3", "12", "30", "a", "a few", "couple of", "two", "dos", "tres", "diez")
UNITS = ("days", "weeks", "months", "years", "días", "semanas", "meses", "años", "day", "week")
FOREIGN = (
    "最近三个月",
    "过去两周",
    "近30天",
    "三个月前",
    "2週間前",
    "上个月",
    "上上周",
    "去年",
    "先月",
    "今年",
    "2025年3月",
    "3月14日",
    "三月份",
    "2025年",
    "十二月",
    "最近",
    "letzten Monat",
    "in den letzten 3 Monaten",
    "vor zwei Wochen",
    "diese Woche",
    "kürzlich",
    "le mois dernier",
    "il y a trois mois",
    "les 2 dernières semaines",
    "l’année dernière",
    "récemment",
)


def test_strings() -> list[str]:
    """Every string written in the time tests."""
    found: list[str] = []
    for name in TEST_FILES:
        tree = ast.parse((ROOT / "tests" / name).read_text("utf-8"))
        found.extend(
            node.value
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and 0 < len(node.value) < 300
        )
    return found


def eval_questions() -> list[str]:
    found: list[str] = []
    for path in sorted((ROOT / "tests" / "eval").glob("*.jsonl")):
        for line in path.read_text("utf-8").splitlines():
            if line.strip():
                question = json.loads(line).get("question")
                if isinstance(question, str):
                    found.append(question)
    return found


def combinations() -> list[str]:
    found = [f"what did I write {lead} {atom}{tail}?" for lead, atom, tail in itertools.product(LEADS, ATOMS, TAILS)]
    found += [f"what did I do {count} {unit} ago?" for count, unit in itertools.product(COUNTS, UNITS)]
    found += [f"the past {count} {unit} at work" for count, unit in itertools.product(COUNTS, UNITS)]
    found += [f"qué hice hace {count} {unit}" for count, unit in itertools.product(COUNTS, UNITS)]
    found += [f"between {a} and {b}, what did I cook" for a, b in itertools.product(ATOMS[:12], ATOMS[:12])]
    days = ("9 to 15 March", "March 9-15", "28 - 31 February", "del 3 al 5 de febrero", "April 30 through 31")
    found += [f"what did I log {lead} {words}{tail}" for lead, words, tail in itertools.product(LEADS, days, TAILS)]
    found += [f"{words}我读了什么书" for words in FOREIGN] + [f"was habe ich {words} gelesen" for words in FOREIGN]
    found += [f"when did I last {verb} recently" for verb in ("run", "see Ana", "write")]
    found += [f"when did I first {verb}" for verb in ("run", "see Ana", "write")]
    return found


def phrasings() -> list[str]:
    return list(dict.fromkeys(test_strings() + eval_questions() + combinations()))


def main() -> None:
    texts = phrasings()
    out: list[str] = []
    for now in NOWS:
        for text in texts:
            try:
                found: object = read_time(text, now)
            except Exception as error:  # (an error is a reading too: it must stay the same)
                found = f"raised {type(error).__name__}: {error}"
            described = describe_range(found.range) if hasattr(found, "range") and found.range else ""
            out.append(f"{now} {text!r} {found!r} {described!r}")
    for text in texts:
        readings = []
        for read in (
            lambda t: find_day(t, 2026),
            lambda t: find_day(t, None),
            lambda t: find_period(t, 2026, bracketed=True),
            lambda t: find_period(t, None),
            value_as_date,
            file_name_date,
        ):
            try:
                readings.append(repr(read(text)))
            except Exception as error:
                readings.append(f"raised {type(error).__name__}: {error}")
        out.append(f"{text!r} {' '.join(readings)}")
    notes = sorted((ROOT / "sample_vault").rglob("*.md"))
    for path in notes:
        relative = path.relative_to(ROOT / "sample_vault").as_posix()
        note = parse_note(relative, path.read_text("utf-8"))
        out.append(f"{relative!r} {date_note(note, datetime(2030, 1, 2, 9, 0), DateOptions())!r}")
    sys.stdout.write("\n".join(out) + "\n")
    print(
        f"{len(texts)} phrasings x {len(NOWS)} days, {len(notes)} notes: {len(out)} lines from {vask_server.__file__}",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
