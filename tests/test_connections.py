"""Questions about what connects to a note: the words that make one (and those that do not), the
seed found from [[Note]] or the open note, its connections linked and not, within the question's
time and scope, through /v1/search, /v1/ask, the command line and the related-notes pane."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from tests.web_helpers import running_app
from vask_server.cli.command import main
from vask_server.core.connect import find_connection
from vask_server.core.question import Question, understand
from vask_server.core.scope import Directory

SEED = "01 Projects/Launch Tidepool app.md"


@pytest.mark.parametrize(
    ("question", "seed", "left"),
    [
        (
            "Which ideas from the last three months connect to [[Launch Tidepool app]]?",
            "Launch Tidepool app",
            "Which ideas from the last three months?",
        ),
        ("what is related to [[Shape Up|the book]]", "Shape Up", "what is"),
        ("notes relevant to [[Tidepool API design#Auth]]?", "Tidepool API design", "notes?"),
        ("What builds on [[Deep Work]]?", "Deep Work", "What?"),
        ("what does [[Born to Run]] remind me of?", "Born to Run", "what?"),
        ("anything similar to my [[Weeknight dal]]", "Weeknight dal", "anything"),
        ("what could help with [[Half marathon sub-1h45]]?", "Half marathon sub-1h45", "what?"),
        ("¿Qué notas se relacionan con [[Diario en español]]?", "Diario en español", "¿Qué notas?"),
        ("¿qué se parece a [[Salt Fat Acid Heat]]?", "Salt Fat Acid Heat", "¿qué?"),
        ("what relates to this note?", None, "what?"),
        ("Anything from February that connects to this project?", None, "Anything from February that?"),
        ("what does this remind me of?", None, "what?"),
        ("What does the note I have open remind me of?", None, "What?"),
        ("Which ideas relate to this talk?", None, "Which ideas?"),  # any thing, not a time, ends the clause
        ("What else relates to this setup?", None, "What else?"),
        ("What's related to the plugin note I have open?", None, "What's?"),
        ("¿Qué notas están relacionadas con esta nota?", None, "¿Qué notas están?"),
        ("What's related to the showcase I have open?", None, "What's?"),  # any thing open but the vault
        ("Which notes are related to the snippet I have open?", None, "Which notes are?"),
        ("Anything similar to this old project?", None, "Anything?"),
        ("What else is about the same ideas as the note I'm reading?", None, "What else?"),
        ("Anything that illustrates [[Sherlocking]] in practice?", "Sherlocking", "Anything that in practice?"),
        ("Where have I applied ideas from [[Deep Work]]?", "Deep Work", "Where have I?"),
        ("Where have I used the idea in the article I have open?", None, "Where have I?"),
        ("what connects to the note I'm in?", None, "what?"),
        ("Which plugins are examples of [[Sherlocking]]?", "Sherlocking", "Which plugins are?"),
        ("What could I use instead of [[Readwise]]?", "Readwise", "What could I use?"),
        ("alternatives to [[Readwise]] for highlights", "Readwise", "for highlights"),
        ("Which notes could help me cook [[Weeknight dal]] better?", "Weeknight dal", "Which notes better?"),
    ],
)
def test_a_connection_phrase_makes_the_note_after_it_the_seed(question, seed, left):
    found = find_connection(question)
    assert found is not None
    assert found.seed_name == seed and found.open_note == (seed is None)
    assert found.text == left


@pytest.mark.parametrize(
    "question",
    [
        "In [[Launch Tidepool app]], what did we decide about pricing?",
        "according to [[Deep Work]], how long should a session be?",
        "how does sleep relate to running?",  # no note named
        "what relates to this quarter?",  # "this" names no note here
        "what connects to this March?",
        "anything related to this summer?",
        "what did I write about this in [[Shape Up]]?",
        "summarize [[Launch Tidepool app]]",
        "how do I apply the ideas in [[Shape Up]]?",  # the book's own ideas: a scope
        "What are the main ideas from [[Deep Work]]?",
        "which notes relate to the vault I have open?",  # the vault is no note
        "what relates to this last quarter?",
        "which notes relate to the team I'm on?",  # with "on" and "in" only a note, page or file is open
        "anything relevant to the course I'm in?",
        "what relates to the files I have open?",
        "tips for applying the ideas in [[Shape Up]]",
        "using the methods in [[Shape Up]], how should I plan the cycle?",
        "how do I illustrate this?",  # these phrases name a note only as [[Note]]
        "is there an example of this?",
        "what should I do instead of this?",
        "how did I illustrate [[Launch Tidepool app]] in the deck?",
        "who could help me in [[Launch Tidepool app]]?",
    ],
)
def test_other_mentions_stay_a_scope(question):
    assert find_connection(question) is None


def _asked(text: str, **fields: Any) -> Question:
    return Question(text, today=date(2026, 3, 30), top_k=6, min_similarity=0.0, **fields)


def test_the_seed_is_resolved_and_leaves_the_scope_while_time_and_other_mentions_stay():
    directory = Directory([SEED, "Daily/2026-03-01.md", "03 Resources/Books/Shape Up.md"], ["tidepool"])
    understood = understand(
        _asked("In [[Shape Up]], what from the last three months connects to [[Launch Tidepool app]]?"), directory
    )
    assert understood.seed == SEED
    assert understood.scope is not None and understood.scope.notes == ("03 Resources/Books/Shape Up.md",)
    assert understood.time_range is not None and understood.time_range.start == date(2025, 12, 30)
    # "this note" is the note the caller says is open; without one, no seed (the caller says so)
    open_note = understand(_asked("what relates to this note?", open_note="Daily/2026-03-01.md"), directory)
    assert open_note.seed == "Daily/2026-03-01.md"
    assert understand(_asked("what relates to this note?"), directory).seed is None
    # read without the connection: [[X]] is a scope again (the chip's "search as asked")
    plain = understand(_asked("what connects to [[Launch Tidepool app]]?", connect=False), directory)
    assert plain.seed is None and plain.scope is not None and plain.scope.notes == (SEED,)


async def test_connections_are_other_notes_linked_or_not_each_with_the_passage_that_connects(
    fake_ollama, vault, settings_for
):
    async with running_app(settings_for(vault)) as api:
        result = await api.search("what connects to [[Launch Tidepool app]]?", top_k=10)
        assert result["mode"] == "connections"
        assert result["connection"] == {"seed": SEED, "title": "Launch Tidepool app", "words": "connects to"}
        paths = [hit["path"] for hit in result["hits"]]
        assert paths and SEED not in paths and len(paths) == len(set(paths))  # one passage a note
        linked = {hit["path"]: hit["linked"] for hit in result["hits"]}
        # the graph's word for each: the seed links to Tidepool beta feedback, the 14 March note links to it
        assert linked.get("01 Projects/Tidepool beta feedback.md") in ("links to", "both")
        assert linked.get("Daily/2026-03-14.md") == "linked from"
        unlinked = [p for p, how in linked.items() if how == "unlinked"]
        assert len(unlinked) >= 10 // 3  # room is kept for connections not linked yet
        assert all(hit["near"] is not None for hit in result["hits"])
        scores = [hit["score"] for hit in result["hits"]]
        assert scores == sorted(scores, reverse=True)


async def test_time_and_scope_apply_to_the_connected_notes_never_to_the_seed(fake_ollama, vault, settings_for):
    async with running_app(settings_for(vault)) as api:
        result = await api.search(
            "Which ideas from the last three months connect to [[Launch Tidepool app]]?", now="2026-03-30", top_k=10
        )
        assert result["time_range"]["from"] == "2025-12-30" and result["connection"]["seed"] == SEED
        assert result["hits"]
        for hit in result["hits"]:
            assert hit["date_end"] >= "2025-12-30" and hit["date"] <= "2026-03-30", hit
        daily = await api.search("what in path:Daily connects to [[Launch Tidepool app]]?", top_k=10)
        assert daily["hits"] and all(hit["path"].startswith("Daily/") for hit in daily["hits"])


async def test_this_note_is_the_open_note_and_without_one_the_question_is_read_as_written(
    fake_ollama, vault, settings_for
):
    async with running_app(settings_for(vault)) as api:
        for field in ("open_note", "current_note"):
            result = await api.search("what relates to this project?", **{field: SEED})
            assert result["connection"]["seed"] == SEED and SEED not in [h["path"] for h in result["hits"]]
        # no note open: no error, the question as written, and a notice that says so and how to ask
        alone = await api.search("what relates to this project?")
        assert alone["connection"] is None and alone["mode"] != "connections"
        assert "no note was open" in alone["notice"] and "“relates to this project”" in alone["notice"]
        assert "[[Note name]]" in alone["notice"]
        # the chip's "search as asked": no seed, [[X]] a scope again
        plain = await api.search("what connects to [[Launch Tidepool app]]?", connect=False)
        assert plain["connection"] is None and all(hit["path"] == SEED for hit in plain["hits"])
        unknown = await api.post("/v1/search", {"query": "what connects to [[No such note]]?"})
        assert unknown.status == 400 and (await unknown.json())["error"]["code"] == "scope_not_found"


async def test_an_answer_about_connections_tells_the_model_and_keeps_the_seed_out_of_the_sources(
    fake_ollama, vault, settings_for
):
    async with running_app(settings_for(vault)) as api:
        fake_ollama.fake.chat_requests.clear()
        events = await api.ask_events(
            {"question": "Which of my notes could help with this project?", "current_note": SEED, "open_note": SEED}
        )
        sources = events[0]
        assert sources["type"] == "sources" and sources["connection"]["seed"] == SEED
        assert sources["sources"] and all(s["path"] != SEED for s in sources["sources"])
        assert {s["linked"] for s in sources["sources"]} <= {"links to", "linked from", "both", "unlinked"}
        assert events[-1]["type"] == "done"
        system = fake_ollama.fake.chat_requests[-1]["messages"][0]["content"]
        assert "connect to the note [Launch Tidepool app]" in system
        assert "(connection: not linked yet" in system and "(connection: already linked" in system


def test_the_command_line_lists_connections_not_linked_yet_and_linked_apart(cli_env, vault, capsys):
    assert main(["index", "--vault", str(vault), "--quiet"]) == 0
    capsys.readouterr()
    code = main(["search", "--vault", str(vault), "what relates to this note?", "--note", SEED])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "Notes connected to [[Launch Tidepool app]]" in out
    assert "Not linked yet:" in out and "Already linked:" in out
    assert out.index("Not linked yet:") < out.index("Already linked:")
    assert "--no-connect asks it as written" in err


async def test_the_related_pane_is_the_same_mechanism(fake_ollama, vault, settings_for):
    async with running_app(settings_for(vault)) as api:
        related = (await (await api.get("/v1/related", params={"path": SEED, "top_k": "10"})).json())["related"]
        asked = await api.search("what connects to [[Launch Tidepool app]]?", top_k=10)
        assert [r["path"] for r in related] == [h["path"] for h in asked["hits"]]
        assert [r["linked"] for r in related] == [h["linked"] != "unlinked" for h in asked["hits"]]


def test_linked_notes_come_first_with_a_third_of_the_places_kept_for_notes_not_linked_and_lists_left_out():
    from vask_server.core.models import Hit
    from vask_server.services.query import connections
    from vask_server.services.query.connections import Connected

    class Graph:  # how many notes each links to
        def link_count(self, path: str) -> int:
            return 2_000 if path == "All notes.md" else 3

    def note(path: str, score: float, linked: str) -> Connected:
        hit = Hit(path, path, path, "", "", 1, 1, score, "")
        return Connected(path, path, score, linked, hit, "")

    # 12 linked notes, all further than the unlinked ones: still 7 of 10 places are theirs
    linked = [note(f"L{i:02}.md", 0.5 - i / 100, "links to") for i in range(12)]
    unlinked = [note("All notes.md", 0.95, "unlinked")] + [
        note(f"U{i}.md", 0.9 - i / 100, "unlinked") for i in range(5)
    ]
    chosen = connections._choose(sorted(linked + unlinked, key=lambda c: -c.score), 10, Graph())  # type: ignore[arg-type]
    assert [c.path for c in chosen] == ["U0.md", "U1.md", "U2.md", *(f"L{i:02}.md" for i in range(7))]
    # few linked notes: the other places go to notes not linked yet
    chosen = connections._choose(sorted(linked[:2] + unlinked, key=lambda c: -c.score), 10, Graph())  # type: ignore[arg-type]
    assert sorted(c.path for c in chosen) == ["L00.md", "L01.md", "U0.md", "U1.md", "U2.md", "U3.md", "U4.md"]
