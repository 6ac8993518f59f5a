"""Ordinary questions that name a note are not read as "what connects to [[X]]?": the note a question
is about stays in its answer. A question asks for connections only when it asks for things ("what",
"which notes", "anything") related to the seed; a seed that plays a role ("what can [[X]] help with?")
is read as written, and one that may hold the answer ("what could help with [[X]]?") keeps its own best
passages first; "this" with no note open is read as written, with a notice, never an error. Checked
on the question reading alone, on the sets of ordinary questions naming a note (tests/eval/named/:
two written blind, one with a relation's words used in ordinary ways), through /v1/search, /v1/ask
and the command line."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from tests.conftest import SAMPLE_VAULT
from tests.web_helpers import running_app
from vask_server.cli.command import main
from vask_server.core.connect import find_connection
from vask_server.core.parse import parse_note
from vask_server.core.question import Question, understand
from vask_server.core.scope import Directory

TODAY = date(2026, 3, 30)
NAMED = Path(__file__).parent / "eval" / "named"
ERGONOMICS = "02 Areas/Health/Ergonomics.md"
PIZZA = "02 Areas/Cooking/Pizza Place.md"


def _asked(text: str, open_note: str | None = None) -> Question:
    return Question(text, today=TODAY, top_k=6, min_similarity=0.0, open_note=open_note)


def sample_directory() -> Directory:
    """sample_vault's notes, titles and aliases, as the index's directory holds them."""
    notes, names = [], {}
    for file in sorted(SAMPLE_VAULT.rglob("*.md")):
        path = file.relative_to(SAMPLE_VAULT).as_posix()
        note = parse_note(path, file.read_text("utf-8"))
        notes.append(path)
        names[path] = tuple(n for n in (note.title, *note.aliases) if n)
    return Directory(notes, [], names)


# -- the reading ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "question",
    [
        # the reproductions
        "How does [[Ergonomics]] help with back pain?",
        "Do I like [[Pizza Place]]?",
        "Does this approach help with procrastination?",
        # a relation between two named notes, or whether one holds: both are what it is about
        "Is [[Deep Work]] related to [[Shape Up]]?",
        "How does [[Deep Work]] relate to [[Shape Up]]?",
        "Was [[Deep Work]] similar to [[Shape Up]]?",
        "Could [[Weeknight dal]] help with my iron levels?",
        "Is there any way [[Deep Work]] relates to [[Shape Up]]?",
        "Why is this project similar to [[Shape Up]]?",
        "What did I write about how [[Deep Work]] relates to [[Shape Up]]?",
        # a seed that plays the role is what the question is about
        "What can [[Ergonomics]] help with?",
        "What does [[Shape Up]] build on?",
        "Where could this book help?",
    ],
)
def test_a_phrase_alone_makes_no_connection_question(question: str) -> None:
    assert find_connection(question) is None


def test_the_named_note_of_an_ordinary_question_is_its_scope() -> None:
    directory = Directory([ERGONOMICS, PIZZA, "Home.md"], [])
    for question, note in (
        ("How does [[Ergonomics]] help with back pain?", ERGONOMICS),
        ("Do I like [[Pizza Place]]?", PIZZA),
    ):
        for open_note in (None, "Home.md"):
            read = understand(_asked(question, open_note=open_note), directory)
            assert read.connection is None and read.seed is None
            assert read.scope is not None and read.scope.notes == (note,)


@pytest.mark.parametrize(
    ("question", "seed", "keeps"),
    [
        ("What could help with [[Ergonomics]]?", "Ergonomics", True),  # Ergonomics itself may hold the answer
        ("Which notes could help me cook [[Weeknight dal]] better?", "Weeknight dal", True),
        ("Anything that illustrates [[Sherlocking]] in practice?", "Sherlocking", True),
        ("What else could help with [[Ergonomics]]?", "Ergonomics", False),  # others asked for
        ("Which other notes could help with [[Ergonomics]]?", "Ergonomics", False),
        ("What relates to [[Ergonomics]]?", "Ergonomics", False),  # likeness: other notes
        ("Anything similar to [[Ergonomics]]?", "Ergonomics", False),
        ("Do I have anything like [[Pizza Place]]?", "Pizza Place", False),
        ("what does [[Born to Run]] remind me of?", "Born to Run", False),
        ("Is there anything related to [[Deep Work]]?", "Deep Work", False),
        ("Do any of my notes relate to [[Deep Work]]?", "Deep Work", False),
        ("related to [[Deep Work]]", "Deep Work", False),  # the relation alone asks for what it relates
        ("Which notes could help with the note I have open?", None, False),  # (the open note is in view)
        ("Where else in my notes could this book help?", None, False),
        ("哪些笔记与[[读书笔记 - 活着]]相关？", "读书笔记 - 活着", False),
        ("和[[家庭相册数字化]]有关的想法", "家庭相册数字化", False),
    ],
)
def test_a_connection_question_asks_for_things_and_keeps_a_seed_that_may_answer_it(
    question: str, seed: str | None, keeps: bool
) -> None:
    found = find_connection(question)
    assert found is not None and found.seed_name == seed
    assert found.keeps_seed is keeps


@pytest.mark.parametrize(
    "question", ["[[读书笔记 - 活着]]和[[家庭相册数字化]]相关吗？", "为什么[[家庭相册数字化]]和这篇笔记有关"]
)
def test_chinese_whether_and_why_ask_no_connection(question: str) -> None:
    assert find_connection(question) is None


def test_this_note_without_a_note_open_reads_the_question_as_written_with_a_notice() -> None:
    read = understand(_asked("What relates to this project?"), Directory(["Home.md"], []))
    assert read.connection is None and read.seed is None
    assert read.text == "What relates to this project?"
    assert read.notice is not None and "“relates to this project”" in read.notice and "[[Note name]]" in read.notice
    opened = understand(_asked("What relates to this project?", open_note="Home.md"))
    assert opened.seed == "Home.md" and opened.notice is None


# -- the blind set of ordinary questions naming a note ----------------------------------------------------


def _named_set(name: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in (NAMED / name).read_text("utf-8").splitlines() if line.strip()]


# the two blind sets, and questions that use a relation's words in ordinary ways (not blind)
@pytest.mark.parametrize(
    ("name", "size"),
    [("named-notes-sample.jsonl", 150), ("named-notes-hub.jsonl", 150), ("named-phrases-sample.jsonl", 40)],
)
def test_no_ordinary_question_of_the_named_sets_is_read_to_drop_the_note_it_names(name: str, size: int) -> None:
    questions = _named_set(name)
    assert len(questions) >= size
    dropped = []
    for q in questions:
        found = find_connection(str(q["question"]))
        if found is not None and found.seed_mention in q["named"] and not found.keeps_seed:
            dropped.append(q["id"])
    assert dropped == []


def test_no_ordinary_question_about_sample_vault_makes_its_note_a_seed_left_out() -> None:
    """As the server reads them, with no note open and with another note open."""
    directory = sample_directory()
    questions = _named_set("named-notes-sample.jsonl") + _named_set("named-phrases-sample.jsonl")
    dropped = []
    for q in questions:
        for open_note in (None, "Home.md"):
            read = understand(_asked(str(q["question"]), open_note=open_note), directory)
            assert not read.unmatched, (q["id"], read.unmatched)  # every note it names is in the vault
            keeps = read.connection is not None and read.connection.keeps_seed
            if read.seed is not None and read.seed in q["expected"] and not keeps:
                dropped.append((q["id"], open_note))
    assert dropped == []


# -- through the server and the command line --------------------------------------------------------------


def _add_notes(vault: Path) -> None:
    (vault / ERGONOMICS).write_text(
        "# Ergonomics\n\nBack pain eased once the monitor sat at eye level and the chair supported my lower back.\n\n"
        "## Breaks\n\nStanding up every 30 minutes helps with back pain more than any chair.\n",
        "utf-8",
    )
    (vault / PIZZA).write_text(
        "# Pizza Place\n\nThe pizza place on Mill Road: I like the thin crust margherita, not the pepperoni.\n",
        "utf-8",
    )


async def test_ordinary_questions_keep_their_note_through_the_api(fake_ollama, vault, settings_for):
    _add_notes(vault)
    async with running_app(settings_for(vault)) as api:
        for question, note in (
            ("How does [[Ergonomics]] help with back pain?", ERGONOMICS),
            ("Do I like [[Pizza Place]]?", PIZZA),
        ):
            result = await api.search(question)
            assert result["connection"] is None and result["mode"] != "connections"
            assert result["scope"]["notes"] == [note]
            assert result["hits"] and {hit["path"] for hit in result["hits"]} == {note}
        # "this" with no note open: a plain question, answered, never a 400
        plain = await api.search("Does this approach help with procrastination?")
        assert plain["connection"] is None and "notice" not in plain
        events = await api.ask_events({"question": "Does this approach help with procrastination?"})
        assert events[0]["type"] == "sources" and events[0]["connection"] is None
        assert events[-1]["type"] == "done"
        # a connection question about "this" with no note open: read as written, and told so
        events = await api.ask_events({"question": "Which notes relate to this project?"})
        assert events[0]["type"] == "sources" and events[0]["connection"] is None
        assert "no note was open" in events[0]["notice"] and events[-1]["type"] == "done"


async def test_a_seed_that_may_hold_the_answer_keeps_its_best_passages_first(fake_ollama, vault, settings_for):
    _add_notes(vault)
    async with running_app(settings_for(vault)) as api:
        result = await api.search("What could help with [[Ergonomics]]?", top_k=6)
        assert result["mode"] == "connections" and result["connection"]["seed"] == ERGONOMICS
        own = [hit for hit in result["hits"] if hit["linked"] == "seed"]
        assert own and all(hit["path"] == ERGONOMICS for hit in own)
        assert result["hits"][: len(own)] == own  # first, then the connections, the seed not among them
        others = result["hits"][len(own) :]
        assert others and all(hit["path"] != ERGONOMICS for hit in others) and len(others) <= 6
        # "what else": only the other notes
        other = await api.search("What else could help with [[Ergonomics]]?", top_k=6)
        assert other["hits"] and all(hit["path"] != ERGONOMICS for hit in other["hits"])
        # an answer is told which sources are the note's own
        fake_ollama.fake.chat_requests.clear()
        events = await api.ask_events({"question": "What could help with [[Ergonomics]]?"})
        assert events[0]["sources"][0]["path"] == ERGONOMICS and events[0]["sources"][0]["linked"] == "seed"
        system = fake_ollama.fake.chat_requests[-1]["messages"][0]["content"]
        assert "(the note asked about itself)" in system and "are [Ergonomics]'s own passages" in system


def test_ordinary_questions_on_the_command_line(cli_env, vault, capsys):
    _add_notes(vault)
    assert main(["index", "--vault", str(vault), "--quiet"]) == 0
    capsys.readouterr()
    code = main(["search", "--vault", str(vault), "How does [[Ergonomics]] help with back pain?"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "Within [[Ergonomics]]" in out and "Notes connected to" not in out and "[[02 Areas/Health/Ergonomics#" in out
    # "this" with no --note: exit 0, a plain search (before: exit 2)
    code = main(["search", "--vault", str(vault), "Does this approach help with procrastination?"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "Notes connected to" not in out
    # a connection question about "this" with no --note: read as written, and a line on stderr says so
    code = main(["ask", "--vault", str(vault), "Which notes relate to this project?"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "note: “relate to this project” would ask what connects to the note you have open" in err
    assert "--note PATH" in err and "Notes connected to" not in err
    # a seed kept: its own passages first, apart from the connections
    code = main(["search", "--vault", str(vault), "What could help with [[Ergonomics]]?"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out.index("In [[Ergonomics]] itself:") < out.index("Not linked yet:")
    assert "--no-connect asks it as written" in err
