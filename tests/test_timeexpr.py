"""Reading the time in a question: what a person writes, resolved against the day they ask."""

from datetime import date

import pytest

from vask_server.core.question import understand
from vask_server.core.retrieve import Filters
from vask_server.core.timeexpr import describe_range, parse_day, parse_now, read_time

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


def test_explicit_dates_win_over_the_words_of_the_question():
    given = Filters(date_from=date(2025, 1, 1), date_to=date(2025, 1, 31))
    understood = understand("what did I write last month?", today=MONDAY, filters=given)
    assert understood.filters.date_from == date(2025, 1, 1) and understood.text == "what did I write last month?"


def test_a_question_without_time_is_searched_as_asked():
    understood = understand("What did I decide about pricing?", today=MONDAY)
    assert understood.text == "What did I decide about pricing?" and understood.time_range is None
    assert understood.filters == Filters()


def test_time_reading_can_be_turned_off():
    understood = understand("what did I write last month?", today=MONDAY, read_time_words=False)
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
