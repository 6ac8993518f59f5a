"""Reading the time in a question: what a person writes, resolved against the day they ask."""

from datetime import date
from typing import Any

import pytest

from vask_server.core.question import Question, understand
from vask_server.core.retrieve import Filters
from vask_server.core.time.expr import describe_range, parse_day, parse_now, read_time

MONDAY = date(2026, 3, 30)  # a Monday


@pytest.mark.parametrize(
    ("question", "first", "last", "words", "searched"),
    [
        (
            "What did I write about my knee last month?",
            "2026-02-01",
            "2026-02-28",
            "last month",
            "What did I write about my knee?",
        ),
        ("What did I log last week?", "2026-03-23", "2026-03-29", "last week", "What did I log?"),
        ("What did I cook this week?", "2026-03-30", "2026-03-30", "this week", "What did I cook?"),
        (
            "Anything in the first week of February?",
            "2026-02-01",
            "2026-02-07",
            "in the first week of February",
            "Anything?",
        ),
        ("What was I worried about in Q1?", "2026-01-01", "2026-03-31", "in Q1", "What was I worried about?"),
        # halves and seasons (meteorological, northern: winter 2024 is December 2024 to February 2025)
        ("Plans from the second half of 2024?", "2024-07-01", "2024-12-31", "from the second half of 2024", "Plans?"),
        ("notes in H1 2025", "2025-01-01", "2025-06-30", "in H1 2025", "notes"),
        (
            "Anything from summer 2021 about pandoc?",
            "2021-06-01",
            "2021-08-31",
            "from summer 2021",
            "Anything about pandoc?",
        ),
        ("ideas from the fall of 2025", "2025-09-01", "2025-11-30", "from the fall of 2025", "ideas"),
        ("what did I plan for winter 2024", "2024-12-01", "2025-02-28", "winter 2024", "what did I plan for"),
        ("what did I read last summer?", "2025-06-01", "2025-08-31", "last summer", "what did I read?"),
        ("how was this winter?", "2025-12-01", "2026-02-28", "this winter", "how was?"),
        ("¿qué escribí el verano pasado?", "2025-06-01", "2025-08-31", "el verano pasado", "¿qué escribí?"),
        ("What did I write in March 2024?", "2024-03-01", "2024-03-31", "in March 2024", "What did I write?"),
        (
            "What did I plan in April?",
            "2025-04-01",
            "2025-04-30",
            "in April",
            "What did I plan?",
        ),  # April 2026 has not begun
        (
            "Between February and March, what did I cook?",
            "2026-02-01",
            "2026-03-31",
            "Between February and March",
            "what did I cook?",
        ),
        ("Since January what have I read?", "2026-01-01", "2026-03-30", "Since January", "what have I read?"),
        ("What did I plan before March?", None, "2026-02-28", "before March", "What did I plan?"),
        (
            "What did I do the past 30 days about Tidepool?",
            "2026-02-28",
            "2026-03-30",
            "the past 30 days",
            "What did I do about Tidepool?",
        ),
        ("What did I build in 2024?", "2024-01-01", "2024-12-31", "in 2024", "What did I build?"),
        ("What happened on 14 February?", "2026-02-14", "2026-02-14", "on 14 February", "What happened?"),
        ("What did I write yesterday?", "2026-03-29", "2026-03-29", "yesterday", "What did I write?"),
        ("What did I do over the weekend?", "2026-03-28", "2026-03-29", "over the weekend", "What did I do?"),
        (
            "What did I log 2 weeks ago about running?",
            "2026-03-16",
            "2026-03-22",
            "2 weeks ago",
            "What did I log about running?",
        ),
        ("What did I write from 9 to 15 March?", "2026-03-09", "2026-03-15", "from 9 to 15 March", "What did I write?"),
        (
            "What did I note in early March about sleep?",
            "2026-03-01",
            "2026-03-10",
            "in early March",
            "What did I note about sleep?",
        ),
        (
            "In the last three months which ideas connect to Tidepool?",
            "2025-12-30",
            "2026-03-30",
            "In the last three months",
            "which ideas connect to Tidepool?",
        ),
        ("What did I write on 2026-02-23?", "2026-02-23", "2026-02-23", "on 2026-02-23", "What did I write?"),
        (
            "¿Qué escribí el mes pasado sobre correr?",
            "2026-02-01",
            "2026-02-28",
            "el mes pasado",
            "¿Qué escribí sobre correr?",
        ),
        ("¿Qué hice en febrero?", "2026-02-01", "2026-02-28", "en febrero", "¿Qué hice?"),
        ("¿Qué pasó la semana pasada?", "2026-03-23", "2026-03-29", "la semana pasada", "¿Qué pasó?"),
        ("¿Qué cociné el 14 de febrero?", "2026-02-14", "2026-02-14", "el 14 de febrero", "¿Qué cociné?"),
        ("What did I do in March last year?", "2025-03-01", "2025-03-31", "in March last year", "What did I do?"),
        ("¿Qué hice en marzo del año pasado?", "2025-03-01", "2025-03-31", "en marzo del año pasado", "¿Qué hice?"),
    ],
)
def test_time_words_become_an_inclusive_range_and_leave_the_question(question, first, last, words, searched):
    time = read_time(question, MONDAY)
    assert time is not None and time.range is not None
    assert time.range.start == (date.fromisoformat(first) if first else None)
    assert time.range.end == date.fromisoformat(last)
    assert time.range.text == words
    assert time.text == searched


@pytest.mark.parametrize(
    "question",
    [
        "May I ask what Shape Up says about appetite?",
        "What did I decide about the Valencia 10K 2025?",
        "What are my goals for 2026?",
        "What is the march of progress?",
        "En la entrada del diario de la semana antes de Liverpool, ¿cuántos subjuntivos usé?",
        "Which shoes do I rotate?",
        "Which of my deadlines fall on 30 June this year?",  # a time to come: what the notes are about
    ],
)
def test_words_that_only_look_like_times_are_not_read_as_one(question):
    time = read_time(question, MONDAY)
    assert time is None or time.range is None


def test_recently_is_a_window_of_thirty_days_that_may_widen():
    time = read_time("What have I thought about shipping recently?", MONDAY)
    assert time is not None and time.recent and time.range is not None
    assert (time.range.start, time.range.end) == (date(2026, 2, 28), MONDAY)


@pytest.mark.parametrize(
    ("question", "order", "searched"),
    [
        ("When did I last get my bike serviced?", "latest", "When did I get my bike serviced?"),
        ("When did I first mention Bruno?", "earliest", "When did I mention Bruno?"),
        ("What's my latest thinking on pricing?", "latest", "What's my thinking on pricing?"),
    ],
)
def test_when_did_i_last_orders_by_date_without_a_range(question, order, searched):
    time = read_time(question, MONDAY)
    assert time is not None and time.range is None
    assert time.order == order and time.text == searched


def _asked(text: str, **fields: Any) -> Question:
    return Question(text, today=MONDAY, top_k=6, min_similarity=0.0, **fields)


def test_explicit_dates_win_over_the_words_of_the_question():
    given = Filters(date_from=date(2025, 1, 1), date_to=date(2025, 1, 31))
    understood = understand(_asked("what did I write last month?", filters=given))
    assert understood.filters.date_from == date(2025, 1, 1) and understood.text == "what did I write last month?"


def test_a_question_without_time_is_searched_as_asked():
    understood = understand(_asked("What did I decide about pricing?"))
    assert understood.text == "What did I decide about pricing?" and understood.time_range is None
    assert understood.filters == Filters()


def test_time_reading_can_be_turned_off():
    understood = understand(_asked("what did I write last month?", read_time=False))
    assert understood.time_range is None and understood.text == "what did I write last month?"


def test_caller_dates_are_checked():
    assert parse_day("2026-03-14", "--since") == date(2026, 3, 14)
    assert parse_now("2026-03-14T23:30:00-05:00") == date(2026, 3, 14)  # the asker's own day
    with pytest.raises(ValueError, match="--since must be an ISO date"):
        parse_day("14/03/2026", "--since")
    with pytest.raises(ValueError, match="now must be an ISO date or date-time"):
        parse_now("yesterday-ish")


def test_ranges_are_described_as_the_plugin_and_cli_show_them():
    time = read_time("what did I write between January and March?", MONDAY)
    assert time is not None and time.range is not None
    assert describe_range(time.range) == "Notes from 1 Jan – 31 Mar 2026"
    december = read_time("what did I write from December 2025 to February 2026?", MONDAY)
    assert december is not None and december.range is not None
    assert describe_range(december.range) == "Notes from 1 Dec 2025 – 28 Feb 2026"


# -- days the calendar lacks, and any phrasing on any day --------------------------------------------


@pytest.mark.parametrize(
    ("question", "now", "day", "notice"),
    [
        ("what did I write on 29 February this year?", "2025-03-10", "2025-02-28", "2025 has no 29 February"),
        ("February 29 this year", "2025-03-10", "2025-02-28", "2025 has no 29 February"),
        ("29th Feb this year", "2025-02-28", "2025-02-28", "2025 has no 29 February"),
        ("notes from 29 February 2025", "2026-01-01", "2025-02-28", "2025 has no 29 February"),
        ("on 2025-02-29", "2026-01-01", "2025-02-28", "2025 has no 29 February"),
        ("what happened on 31 April?", "2026-12-05", "2026-04-30", "There is no 31 April"),
        ("what happened on 31 April?", "2026-04-10", "2025-04-30", "There is no 31 April"),
        ("el 31 de abril", "2026-12-05", "2026-04-30", "There is no 31 April"),
        # a 29 February that was: the last one, not an error
        ("what did I write on 29 February?", "2026-12-05", "2024-02-29", None),
        ("29 de febrero del año pasado", "2025-03-01", "2024-02-29", None),
        ("29 de febrero del año pasado", "2024-02-29", "2023-02-28", "2023 has no 29 February"),
        ("what did I write on 29 February?", "2100-03-01", "2096-02-29", None),
    ],
)
def test_a_day_the_calendar_lacks_is_read_as_the_nearest_real_day_and_says_so(question, now, day, notice):
    found = read_time(question, date.fromisoformat(now))
    assert found is not None and found.range is not None
    assert (found.range.start, found.range.end) == (date.fromisoformat(day), date.fromisoformat(day))
    if notice is None:
        assert found.range.notice is None
    else:
        assert found.range.notice is not None and found.range.notice.startswith(notice)
        assert found.range.to_dict()["notice"] == found.range.notice


def test_a_month_this_or_last_year_is_that_whole_month_in_that_year():
    """'February last year' is read in that year, leap days and all (it used to shift this year's
    February back a year, and crashed on 29 February)."""
    found = read_time("in February last year", date(2025, 3, 10))
    assert found is not None and found.range is not None
    assert (found.range.start, found.range.end) == (date(2024, 2, 1), date(2024, 2, 29))
    found = read_time("in February last year", date(2024, 2, 29))
    assert found is not None and found.range is not None
    assert (found.range.start, found.range.end) == (date(2023, 2, 1), date(2023, 2, 28))
    found = read_time("the last week of February last year", date(2025, 3, 1))
    assert found is not None and found.range is not None
    assert (found.range.start, found.range.end) == (date(2024, 2, 23), date(2024, 2, 29))


# Phrasings that name days, including days that do not exist in every year or in any, and the words
# around them that change which year is meant.
_DAYS = [
    "29 February",
    "February 29",
    "29th Feb",
    "31 April",
    "30 February",
    "31 November",
    "1 March",
    "2025-02-29",
    "2024-02-29",
    "2025-13-01",
    "29 de febrero",
    "31 de abril",
    "0 March",
    "32 May",
    "March 31",
]
_LEADS = ["on", "since", "before", "after", "until", "in", "between 28 February and", "from 1 February to", "el", ""]
_TAILS = ["", " this year", " last year", " 2025", ", 2024", " del año pasado", " de este año", " 2100"]
_OTHERS = [
    "last month",
    "the week before last",
    "the past 999 years",
    "999 days ago",
    "recently",
    "in Q1 this year",
    "the second half of 2024",
    "summer 2021",
    "the last week of February this year",
    "end of February last year",
    "between 2025 and 2023",
    "from November to February",
    "29-30 February",
    "30-31 April 2025",
    "el fin de semana pasado",
    "hace 12 años",
]


def _phrasing():
    from hypothesis import strategies as st

    named_day = st.builds(
        lambda lead, day, tail: f"what did I write {lead} {day}{tail}?",
        st.sampled_from(_LEADS),
        st.sampled_from(_DAYS),
        st.sampled_from(_TAILS),
    )
    return st.one_of(named_day, st.sampled_from(_OTHERS).map(lambda words: f"what did I write {words}?"))


def test_the_time_reader_never_raises_and_every_range_is_well_formed():
    """Over phrasing x the day asked (leap years, 2100, the calendar's ends): a reading or none, never
    an error; a range runs forwards, its words are in the question, and a shifted day says why."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    days = st.one_of(
        st.dates(min_value=date(1900, 1, 1), max_value=date(2200, 12, 31)),
        st.sampled_from(
            [
                date(2025, 3, 10),
                date(2024, 2, 29),
                date(2100, 3, 1),
                date(2000, 2, 29),
                date.min,
                date.max,
                date(1, 12, 31),
                date(9999, 1, 1),
            ]
        ),
    )

    @settings(max_examples=1500, deadline=None, derandomize=True)
    @given(question=_phrasing(), today=days)
    def check(question, today):
        found = read_time(question, today)
        if found is None or found.range is None:
            return
        start, end = found.range.start, found.range.end
        if start is not None and end is not None:
            assert start <= end, (question, today, found)
        assert found.range.text and found.range.text.lower() in " ".join(question.split()).lower()
        if found.range.notice is not None:
            assert "no " in found.range.notice and "read as" in found.range.notice

    check()


def test_every_phrasing_of_the_sweep_reads_on_every_day_without_an_error():
    """Every combination once (the property test above samples them)."""
    days = [date(2025, 3, 10), date(2024, 2, 29), date(2100, 3, 1), date(2100, 1, 1), date(2026, 12, 5)]
    questions = [f"what did I write {lead} {day}{tail}?" for lead in _LEADS for day in _DAYS for tail in _TAILS]
    questions += [f"what did I write {words}?" for words in _OTHERS]
    for today in days:
        for question in questions:
            found = read_time(question, today)
            if found is not None and found.range is not None and found.range.start and found.range.end:
                assert found.range.start <= found.range.end, (question, today)
