"""Questions about time, end to end: the HTTP API, the command line, the answer's prompt, and an index
that re-dates its notes when the vault's Daily notes settings change."""

import json
from datetime import date

from tests.web_helpers import running_app
from vask_server.cli.command import main
from vask_server.core.models import Hit
from vask_server.core.prompt import fit_prompt
from vask_server.core.time.expr import TimeRange
from vask_server.services.context import open_services


def _within(hit: dict, first: str, last: str) -> bool:
    return hit["date_end"] >= first and hit["date"] <= last


async def test_a_question_naming_a_month_searches_only_that_month(fake_ollama, vault, settings_for):
    async with running_app(settings_for(vault)) as api:
        result = await api.search("what did I write about my knee last month?", now="2026-03-20T09:00:00+01:00")
        assert result["time_range"] == {"from": "2026-02-01", "to": "2026-02-28", "text": "last month", "notice": None}
        assert result["hits"] and all(_within(h, "2026-02-01", "2026-02-28") for h in result["hits"])
        assert all(h["date_source"] for h in result["hits"])
        # the same words, read without their time: the whole vault, and no range
        loose = await api.search("what did I write about my knee last month?", now="2026-03-20", read_time=False)
        assert loose["time_range"] is None
        assert any(not _within(h, "2026-02-01", "2026-02-28") for h in loose["hits"])


async def test_explicit_date_filters_and_their_errors(fake_ollama, vault, settings_for):
    async with running_app(settings_for(vault)) as api:
        result = await api.search("running", filters={"date_from": "2026-03-01", "date_to": "2026-03-15"})
        assert result["time_range"] == {"from": "2026-03-01", "to": "2026-03-15", "text": "", "notice": None}
        assert result["hits"] and all(_within(h, "2026-03-01", "2026-03-15") for h in result["hits"])
        for body, field in [
            ({"query": "x", "now": "next tuesday"}, "now"),
            ({"query": "x", "filters": {"date_from": "14/03/2026"}}, "filters.date_from"),
            ({"query": "x", "filters": {"date_from": "2026-03-15", "date_to": "2026-03-01"}}, "filters.date_from"),
            ({"query": "x", "read_time": "no"}, "read_time"),
        ]:
            response = await api.post("/v1/search", body)
            error = (await response.json())["error"]
            assert response.status == 400 and error["code"] == "bad_request" and field in error["message"], body


async def test_an_answer_carries_the_range_and_dated_sources(fake_ollama, vault, settings_for):
    async with running_app(settings_for(vault)) as api:
        events = await api.ask_events({"question": "How did the long runs go in February?", "now": "2026-04-01"})
        sources = events[0]
        assert sources["type"] == "sources"
        assert sources["time_range"] == {
            "from": "2026-02-01",
            "to": "2026-02-28",
            "text": "in February",
            "notice": None,
        }
        assert sources["sources"] and all(_within(s, "2026-02-01", "2026-02-28") for s in sources["sources"])
        assert events[-1]["type"] == "done" and events[-1]["time_range"] == sources["time_range"]
        # the model was told today's date and each passage's
        system = fake_ollama.fake.chat_requests[-1]["messages"][0]["content"]
        assert "Today is Wednesday 2026-04-01." in system and "(written: 2026-02-" in system


async def test_a_follow_up_keeps_the_previous_questions_time_unless_it_names_its_own(fake_ollama, vault, settings_for):
    async with running_app(settings_for(vault)) as api:
        history = [
            {"role": "user", "content": "What did I run in February?"},
            {"role": "assistant", "content": "Long runs."},
        ]
        kept = await api.ask_events({"question": "and the tempo sessions?", "history": history, "now": "2026-04-01"})
        assert kept[0]["time_range"]["from"] == "2026-02-01"
        own = await api.ask_events({"question": "and in March?", "history": history, "now": "2026-04-01"})
        assert own[0]["time_range"] == {"from": "2026-03-01", "to": "2026-03-31", "text": "in March", "notice": None}


def test_the_command_line_takes_since_until_and_now(cli_env, vault, capsys, monkeypatch):
    monkeypatch.setenv("VASK_VAULT", str(vault))
    assert main(["index", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["search", "long run", "--since", "2026-02-01", "--until", "2026-02-28", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["time_range"] == {"from": "2026-02-01", "to": "2026-02-28", "text": "", "notice": None}
    assert result["hits"] and all(_within(h, "2026-02-01", "2026-02-28") for h in result["hits"])
    assert main(["search", "what did I log last week?", "--now", "2026-03-25"]) == 0
    out = capsys.readouterr().out
    assert out.startswith('Notes from 16 Mar – 22 Mar 2026 ("last week"):') and "2026-03-" in out
    assert main(["search", "x", "--since", "2026-03-02", "--until", "2026-03-01"]) == 2
    assert "--since is after --until" in capsys.readouterr().err


async def test_changing_the_daily_note_format_re_dates_every_note(fake_ollama, small_vault, settings_for):
    settings = settings_for(small_vault)
    (small_vault / "Journal").mkdir()
    (small_vault / "Journal" / "14.02.2026.md").write_text("# A walk\nWalked to the harbour with Sam.\n")
    async with open_services(settings) as services:
        await services.indexer.sync()
        before = await services.searcher.search("walk harbour", top_k=3, min_similarity=0.0)
        assert before.hits[0].date_source == "file-time"
        obsidian = small_vault / ".obsidian"
        obsidian.mkdir(exist_ok=True)
        (obsidian / "daily-notes.json").write_text(json.dumps({"format": "DD.MM.YYYY", "folder": "Journal"}))
        await services.indexer.sync(["Journal/14.02.2026.md"])  # a targeted sync notices and redoes all
        after = await services.searcher.search("walk harbour", top_k=3, min_similarity=0.0)
    assert (after.hits[0].date, after.hits[0].date_source) == (date(2026, 2, 14), "daily-note")


def test_the_prompt_gives_each_passage_its_date_and_says_when_only_the_file_says():
    hits = [
        Hit("a", "Daily/2026-02-14.md", "2026-02-14", "2026-02-14", "", 1, 3, 0.5, "ran", date=date(2026, 2, 14)),
        Hit(
            "b", "Notes/Idea.md", "Idea", "Idea", "", 1, 2, 0.4, "idea", date=date(2026, 12, 1), date_source="file-time"
        ),
    ]
    prompt = fit_prompt(
        "what did I do?", hits, today=date(2026, 3, 2), time_range=TimeRange(date(2026, 2, 1), date(2026, 2, 28), "")
    )
    system = prompt.messages[0]["content"]
    assert "(written: 2026-02-14)" in system and "(written: 2026-12-01, going by the file date)" in system
    assert "Today is Monday 2026-03-02." in system and "from 1 Feb – 28 Feb 2026" in system


async def test_a_day_the_calendar_lacks_is_searched_as_the_nearest_real_day_with_a_notice(
    fake_ollama, vault, settings_for
):
    async with running_app(settings_for(vault)) as api:
        result = await api.search("what did I write on 29 February this year?", now="2025-03-10")
        assert result["time_range"] == {
            "from": "2025-02-28",
            "to": "2025-02-28",
            "text": "on 29 February this year",
            "notice": "2025 has no 29 February: read as 28 February 2025.",
        }


async def test_when_did_i_last_says_its_list_is_by_date_and_other_lists_are_by_score(fake_ollama, vault, settings_for):
    async with running_app(settings_for(vault)) as api:
        latest = await api.search("when did I last run a long run?", now="2026-04-01")
        assert latest["order"] == "latest" and latest["hits"]
        plain = await api.search("long run pacing", now="2026-04-01")
        assert plain["order"] is None
        scores = [hit["score"] for hit in plain["hits"]]
        assert scores == sorted(scores, reverse=True)
