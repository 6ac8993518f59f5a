"""The evaluation sets are data the figures in docs/EVALUATION.md rest on: a typo in a path would
turn a hit into a miss without any error."""

import json
from pathlib import Path
from typing import Any

from vask_server.core.metrics import parse_questions

ROOT = Path(__file__).resolve().parent.parent
SETS = sorted((ROOT / "tests" / "eval").glob("*.jsonl"))
TYPES = {"direct", "paraphrase", "table", "metaphor", "hub", "cross", "title", "spanish", "absent"}
TIME_TYPES = {"month", "relative", "range", "quarter-year", "day", "recent", "when"}


def test_every_set_parses_and_points_at_notes_that_exist():
    assert len(SETS) >= 8
    for path in SETS:
        questions = parse_questions(path.read_text("utf-8").splitlines(), path.name)
        assert questions, path.name
        for question in questions:
            timed = question.asked_at is not None
            assert question.type in TYPES | (TIME_TYPES if timed else set()), f"{path.name} {question.id}"
            if timed:  # a time question says when it is asked and the inclusive range it means
                assert question.range is not None and question.range[1] <= question.asked_at, question.id
            assert (question.type == "absent") == (not question.expected), f"{path.name} {question.id}"
            if question.page is not None:  # a page of one PDF
                assert question.page >= 1 and [p[-4:] for p in question.expected] == [".pdf"], question.id
            for expected in question.expected:
                assert (ROOT / "sample_vault" / expected).is_file(), f"{path.name} {question.id}: no note {expected}"


def test_ids_are_unique_across_all_sets():
    ids = [json.loads(line)["id"] for path in SETS for line in path.read_text("utf-8").splitlines() if line.strip()]
    duplicated = {i for i in ids if ids.count(i) > 1}
    assert not duplicated, f"ids used twice: {sorted(duplicated)}"


def test_a_set_is_its_own_split_and_its_records_name_it() -> None:
    """`vask eval --split NAME` picks a set by the name its file has, and the records in docs/eval/
    the docs are rendered from name the file they were run on: a rename that misses either leaves a
    figure whose set nobody can find."""
    splits = {"questions.jsonl": {"dev", "heldout"}, "questions-time.jsonl": {"dev", "heldout"}}
    for path in SETS:
        found = {json.loads(line)["split"] for line in path.read_text("utf-8").splitlines() if line.strip()}
        assert found == splits.get(path.name, {path.stem.removeprefix("questions-")}), path.name
    for path in sorted((ROOT / "tests" / "eval" / "connections").glob("*.jsonl")):
        found = {json.loads(line)["split"] for line in path.read_text("utf-8").splitlines() if line.strip()}
        assert found == {path.stem}, path.name
    records = [p for p in (ROOT / "docs" / "eval").rglob("*.json") if "questions" in load(p)]
    for record in records:
        questions = load(record)["questions"]
        if isinstance(questions, str):  # (a `vask eval` report; the connection scripts list their rows)
            assert (ROOT / questions.split(" ")[0]).is_file(), f"{record.name}: {questions}"
    named = {p.stem.removeprefix("questions-") for p in SETS} - {"questions", "time"}
    assert named <= {p.stem for p in (ROOT / "docs" / "eval").glob("*.json")}, "a set without its record"


def load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text("utf-8"))
    return data
