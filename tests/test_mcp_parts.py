"""The pure parts of the MCP door and the services it reads with: a section found by its heading and a
read capped at whole lines with where to go on, a client's call budget, the Origin check of /mcp."""

from __future__ import annotations

import pytest

from vask_server.core.models import Heading
from vask_server.core.ratelimit import CallBudget
from vask_server.core.sections import Section, find_section, plain, window
from vask_server.errors import ForbiddenOrigin
from vask_server.web.middleware import allowed_names, check_origin

HEADINGS = [
    Heading(1, "Plan", 1),
    Heading(2, "Pricing", 3),
    Heading(3, "Annual", 6),
    Heading(2, "Budget", 9),
    Heading(2, "Notes", 12),
    Heading(3, "Pricing", 14),
]


@pytest.mark.parametrize(
    ("wanted", "span"),
    [
        ("Pricing", (3, 8)),  # (its subsections with it, up to the next heading of its level)
        ("## pricing", (3, 8)),
        ("Annual", (6, 8)),
        ("Plan > Budget", (9, 11)),
        ("Notes > Pricing", (14, 20)),  # (the one under Notes, not the first)
        ("Plan#Notes", (12, 20)),
        ("Plan", (1, 20)),
    ],
)
def test_a_section_is_found_by_its_heading_or_its_path(wanted: str, span: tuple[int, int]) -> None:
    found = find_section(HEADINGS, wanted, 20)
    assert found is not None and (found.start, found.end) == span


@pytest.mark.parametrize("wanted", ["Nothing", "Budget > Pricing", "", "  #  "])
def test_a_heading_the_note_lacks_is_none(wanted: str) -> None:
    assert find_section(HEADINGS, wanted, 20) is None


def test_a_window_takes_whole_lines_up_to_the_cap_and_says_where_to_go_on() -> None:
    lines = [f"line {n:02d} " + "x" * 10 for n in range(1, 21)]  # 18 characters each
    whole = Section(1, 20)
    first = window(lines, whole, None, 60)
    assert (first.first, first.last, first.next_line) == (1, 3, 4) and first.text.count("\n") == 2
    rest = window(lines, whole, first.next_line, 1000)
    assert (rest.first, rest.last, rest.next_line) == (4, 20, None)
    part = window(lines, Section(5, 8), None, 1000)
    assert (part.first, part.last, part.next_line) == (5, 8, None)
    long = window(["y" * 500, "z"], whole, None, 100)  # one line longer than the cap: cut, then on
    assert long.text == "y" * 100 and long.next_line == 2


def test_frontmatter_values_as_json_carries_them() -> None:
    import datetime

    assert plain({"created": datetime.date(2026, 3, 14), "tags": ("a", "b"), "n": 3, "x": {"y": None}}) == {
        "created": "2026-03-14",
        "tags": ["a", "b"],
        "n": 3,
        "x": {"y": None},
    }


def test_a_clients_budget_refuses_past_its_rate_and_its_calls_at_once() -> None:
    budget = CallBudget(rate=3, window=10.0, in_flight=2)
    assert budget.admit("a", 0.0) is None and budget.admit("a", 0.1) is None
    assert budget.admit("a", 0.2) == 0.0  # (two unanswered: wait for answers)
    budget.done("a")
    assert budget.admit("a", 0.3) is None
    budget.done("a")
    budget.done("a")
    wait = budget.admit("a", 0.4)  # (three in ten seconds: wait until the first is ten seconds old)
    assert wait is not None and wait == pytest.approx(10.0 - 0.4)
    assert budget.admit("b", 0.4) is None  # (another client has its own)
    assert budget.admit("a", 10.5) is None


@pytest.mark.parametrize(
    ("origin", "allowed"),
    [
        (None, True),
        ("app://obsidian.md", True),
        ("capacitor://localhost", True),
        ("http://localhost:3000", True),
        ("https://127.0.0.1:8765", True),
        ("http://[::1]", True),
        ("https://vask.home.arpa", True),  # (a name of VASK_ALLOWED_HOSTS)
        ("https://evil.example", False),
        ("http://localhost.evil.example", False),
        ("null", False),
        ("file://", False),
        ("http://127.0.0.1@evil.example", False),
        ("https://192.168.1.20", False),
    ],
)
def test_the_origin_check(origin: str | None, allowed: bool) -> None:
    names = allowed_names(frozenset({"vask.home.arpa"}))
    if allowed:
        check_origin(origin, names)
    else:
        with pytest.raises(ForbiddenOrigin):
            check_origin(origin, names)


def test_bound_to_every_address_any_ip_literal_origin_is_the_servers_own() -> None:
    check_origin("https://192.168.1.20:8765", allowed_names(), any_address=True)
    with pytest.raises(ForbiddenOrigin):
        check_origin("https://evil.example", allowed_names(), any_address=True)
