"""The question as one value: what each of its parts means, a follow-up read with the question before
it, each request's question read once, and a door that builds a `Question` itself (as the command
line, `vask eval` and any other do) gets what the HTTP API gives."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from tests.web_helpers import running_app
from vask_server.cli.command import main
from vask_server.core.question import Question, understand
from vask_server.core.scope import Directory
from vask_server.services.query.search import Searcher
from vask_server.web.keys import SERVICES

TODAY = date(2026, 4, 1)
SEED = "01 Projects/Launch Tidepool app.md"
FEEDBACK = "01 Projects/Tidepool beta feedback.md"
HISTORY = (
    {"role": "user", "content": "What did I run in February?"},
    {"role": "assistant", "content": "Long runs."},
)


def _asked(text: str, **fields: Any) -> Question:
    return Question(text, today=TODAY, top_k=6, min_similarity=0.0, **fields)


def test_this_note_is_the_note_open_else_the_note_asked_about() -> None:
    assert _asked("q").this_note is None
    assert _asked("q", about_note=FEEDBACK).this_note == FEEDBACK
    assert _asked("q", open_note=SEED).this_note == SEED
    assert _asked("q", open_note=SEED, about_note=FEEDBACK).this_note == SEED


def test_the_previous_question_is_the_last_one_the_user_asked() -> None:
    assert _asked("and in March?").previous is None
    assert _asked("and in March?", history=HISTORY).previous == "What did I run in February?"
    later = (*HISTORY, {"role": "user", "content": ""}, {"role": "assistant", "content": "…"})
    assert _asked("and in March?", history=later).previous == "What did I run in February?"


def test_a_follow_up_is_read_with_the_question_before_it_in_its_own_time_or_else_the_previous_ones() -> None:
    kept = understand(_asked("and the tempo sessions?", history=HISTORY))
    assert kept.question.text == "and the tempo sessions?"  # (as asked, not the one before)
    assert kept.text.endswith("\nand the tempo sessions?") and "February" not in kept.text
    assert kept.time_range is not None and kept.time_range.start == date(2026, 2, 1)
    own = understand(_asked("and in March?", history=HISTORY))
    assert own.time_range is not None and own.time_range.start == date(2026, 3, 1)
    assert own.filters.date_from == date(2026, 3, 1)


def test_a_follow_up_answers_only_for_its_own_mentions() -> None:
    directory = Directory([SEED], [])
    gone = ({"role": "user", "content": "how did [[Deleted note]] go?"},)
    read = understand(_asked("and [[Launch Tidepool app]]?", history=gone), directory)
    assert read.unmatched == () and read.scope is not None and read.scope.notes == (SEED,)
    missing = understand(_asked("and [[Nowhere]]?", history=gone), directory)
    assert [miss.mention.written for miss in missing.unmatched] == ["[[Nowhere]]"]


@pytest.fixture
def readings(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The questions the searcher reads, one entry a reading."""
    read: list[str] = []
    original = Searcher.understand

    async def counted(self: Searcher, question: Question) -> Any:
        read.append(question.text)
        return await original(self, question)

    monkeypatch.setattr(Searcher, "understand", counted)
    return read


async def test_each_request_reads_its_question_once(fake_ollama, vault, settings_for, readings):
    async with running_app(settings_for(vault)) as api:
        await api.search("what relates to this project?", open_note=SEED)
        assert readings == ["what relates to this project?"]
        readings.clear()
        events = await api.ask_events({"question": "and the tempo sessions?", "history": list(HISTORY)})
        assert events[-1]["type"] == "done" and readings == ["and the tempo sessions?"]
        readings.clear()
        unknown = await api.post("/v1/ask", {"question": "how did [[No such note]] go?"})
        assert unknown.status == 400 and readings == ["how did [[No such note]] go?"]


def test_the_command_line_reads_its_question_once(cli_env, vault, capsys, readings):
    assert main(["index", "--vault", str(vault), "--quiet"]) == 0
    for command in ("search", "ask"):
        readings.clear()
        assert main([command, "--vault", str(vault), "what relates to this note?", "--note", SEED]) == 0
        assert readings == ["what relates to this note?"], command
    capsys.readouterr()


async def test_a_door_that_builds_the_question_gets_what_the_http_api_gives(fake_ollama, vault, settings_for):
    body = {
        "question": "What could help with this project?",
        "now": "2026-03-30",
        "current_note": FEEDBACK,
        "open_note": SEED,
        "top_k": 4,
    }
    async with running_app(settings_for(vault)) as api:
        services = api.client.app[SERVICES]
        over_http = await api.ask_events(body)
        question = Question(
            str(body["question"]),
            today=date(2026, 3, 30),
            top_k=4,
            min_similarity=services.settings.min_similarity,
            open_note=SEED,
            about_note=FEEDBACK,
        )
        direct = [event async for event in services.qa.ask(question)]
        searched = await services.searcher.search_question(question)
    assert direct == over_http
    assert over_http[0]["connection"]["seed"] == SEED  # "this project": the note open, not the one asked about
    assert [hit.path for hit in searched.hits] == [source["path"] for source in over_http[0]["sources"]]
