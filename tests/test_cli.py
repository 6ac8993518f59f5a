"""`vask` end to end, in-process, against sample_vault copies and the fake Ollama."""

import json
import re
from pathlib import Path

import pytest

from tests.fake_ollama import CHAT_MODEL
from vask_server.cli.command import main


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_index_prints_a_summary_and_the_second_run_embeds_nothing(cli_env, vault, capsys, fake_ollama):
    code, out, _ = run(capsys, "index", "--vault", str(vault))
    assert code == 0
    summary = re.search(r"(\d+) notes scanned, (\d+) changed.*chunks: (\d+) embedded", out)
    assert summary and int(summary.group(1)) >= 40 and int(summary.group(3)) > 40
    assert "invalid YAML" in out  # sample_vault has a note with broken frontmatter
    fake_ollama.fake.reset_counters()
    code, out, _ = run(capsys, "index", "--vault", str(vault))
    assert code == 0 and ", 0 changed" in out and "0 embedded" in out
    assert fake_ollama.fake.embed_calls == 0  # the fast path does not even ask the model


def test_index_keeps_the_search_calibration_so_the_next_start_measures_nothing(cli_env, vault, capsys, fake_ollama):
    """`vask index` measures the search calibration at its end and keeps it: the server started next
    (here a search in a new process) reads it, and asks the model only for the question itself."""
    from vask_server.adapters.calibration import CALIBRATION_FILE

    run(capsys, "index", "--vault", str(vault), "--quiet")
    kept = json.loads((cli_env / CALIBRATION_FILE).read_text("utf-8"))
    assert kept["kind"] == "questions" and kept["pair_std"] > 0
    fake_ollama.fake.reset_counters()
    code, out, _ = run(capsys, "search", "--vault", str(vault), "sourdough starter feeding", "--json")
    assert code == 0 and json.loads(out)["hits"]
    assert fake_ollama.fake.embed_calls == 1  # the question alone: no calibration probes


def test_search_json_shape(cli_env, vault, capsys):
    run(capsys, "index", "--vault", str(vault), "--quiet")
    code, out, _ = run(capsys, "search", "--vault", str(vault), "sourdough starter feeding", "--json")
    assert code == 0
    hits = json.loads(out)["hits"]
    assert hits, "expected at least one hit"
    scores = [h["score"] for h in hits]
    assert scores == sorted(scores, reverse=True)
    for hit in hits:
        assert {"path", "title", "heading", "line_start", "line_end", "score", "text"} <= set(hit)
        assert hit["path"].endswith(".md") and "\\" not in hit["path"]
        assert (vault / hit["path"]).is_file()
        assert 1 <= hit["line_start"] <= hit["line_end"]


def test_the_decline_factor_is_a_setting_that_search_and_eval_obey(cli_env, vault, capsys, tmp_path):
    run(capsys, "index", "--vault", str(vault), "--quiet")
    query = "how should the bread culture be fed"
    code, out, _ = run(capsys, "search", "--vault", str(vault), query, "--json")
    assert code == 0 and json.loads(out)["hits"]
    # a factor no topic reaches: every search declines, in either mode, and says so
    for mode in ("hybrid", "vector"):
        code, out, _ = run(capsys, "search", "--vault", str(vault), query, "--mode", mode, "--decline-sigmas", "5")
        assert code == 0 and out.startswith("Nothing in your notes comes close enough")
    questions = tmp_path / "q.jsonl"
    questions.write_text(
        '{"id": "s1", "question": "How should the bread culture be fed?", '
        '"expected": ["02 Areas/Cooking/Sourdough starter log.md"], "type": "paraphrase"}\n'
    )
    args = ("eval", str(questions), "--vault", str(vault), "--json", "--configs", "hybrid,hybrid-question-decline")
    code, out, _ = run(capsys, *args, "--decline-sigmas", "5")
    hybrid, previous_rule = json.loads(out)["reports"]
    assert hybrid["settings"]["retrieval"]["decline_sigmas"] == 5.0 and hybrid["overall"]["answerable_declined"] == 1
    # the previous rule keeps its own factor
    assert previous_rule["settings"]["retrieval"]["decline_sigmas"] == 0.7
    code, _, err = run(capsys, "search", "--vault", str(vault), query, "--decline-sigmas", "9")
    assert code == 2 and "--decline-sigmas '9' is not valid: it must be between -3 and 5" in err


def test_ask_streams_an_answer_with_sources_that_open_real_notes(cli_env, vault, capsys, fake_ollama):
    run(capsys, "index", "--vault", str(vault), "--quiet")
    code, out, _ = run(capsys, "--vault", str(vault), "How do I feed my sourdough starter?")
    assert code == 0, out
    answer, _, sources = out.partition("Sources:")
    assert answer.strip() and sources
    links = re.findall(r"\[\[([^\]]+)\]\]", sources)
    assert links
    for link in links:
        path = link.split("#")[0] + ".md"
        assert (vault / path).is_file(), link
    request = fake_ollama.fake.chat_requests[-1]
    system = request["messages"][0]["content"]
    assert "only the user's own notes" in system and "Add no outside knowledge" in system


def test_ask_declines_without_calling_the_model_when_nothing_is_close(cli_env, vault, capsys, fake_ollama):
    run(capsys, "index", "--vault", str(vault), "--quiet")
    code, out, _ = run(capsys, "ask", "--vault", str(vault), "--min-similarity", "0.99", "zebra quantum")
    assert code == 0
    assert "don't contain" in out
    assert fake_ollama.fake.chat_calls == 0


def test_status_json(cli_env, vault, capsys):
    run(capsys, "index", "--vault", str(vault), "--quiet")
    code, out, _ = run(capsys, "status", "--vault", str(vault), "--json")
    status = json.loads(out)
    assert code == 0
    assert status["notes"] >= 40 and status["chunks"] >= status["notes"]
    assert status["model"] == "fake-embed" and status["dimension"] == 96
    assert isinstance(status["failed"], list)
    assert status["servers"]["embed"]["provider"] == "ollama" and "api_key" not in status["servers"]
    code, out, _ = run(capsys, "status", "--vault", str(vault))
    assert code == 0 and "servers:    embeddings ollama at http://127.0.0.1:" in out and "answers the same" in out
    per = status["disk_bytes_per_10000_notes"] / 2**20
    assert f"disk:       {status['disk_bytes'] / 2**20:,.1f} MiB ({per:,.0f} MiB per 10,000 notes at this rate)" in out
    more = status["serve_memory_mib_per_10000_notes"]
    assert status["serve_memory_mib"] >= 200 and more > 0
    assert f"memory:     vask serve idles at about {status['serve_memory_mib']:,} MiB, +{more:,} MiB per 10,000" in out


def test_errors_are_clear_and_exit_nonzero(cli_env, tmp_path, capsys, monkeypatch):
    code, _, err = run(capsys, "index", "--vault", str(tmp_path / "nope"))
    assert code == 2 and "does not exist" in err
    (tmp_path / "v").mkdir()
    (tmp_path / "v" / "a.md").write_text("hello")
    monkeypatch.setenv("VASK_EMBED_MODEL", "mxbai-embed-large")
    code, _, err = run(capsys, "index", "--vault", str(tmp_path / "v"))
    assert code == 2 and "ollama pull mxbai-embed-large" in err
    code, _, err = run(capsys, "search", "--vault", str(tmp_path / "v"), "x")
    assert code == 2 and "vask index" in err


def test_token_is_created_private_and_stable(cli_env, vault, capsys):
    code, first, _ = run(capsys, "token", "--vault", str(vault))
    _, second, _ = run(capsys, "token", "--vault", str(vault))
    assert code == 0 and first == second and len(first.strip()) >= 32
    token_file = Path(cli_env) / "token"
    assert token_file.stat().st_mode & 0o777 == 0o600


def test_eval_answers_counts_what_the_user_reads(cli_env, fake_ollama, vault, capsys, tmp_path):
    questions = tmp_path / "q.jsonl"
    questions.write_text(
        '{"id": "s1", "question": "How do I feed my sourdough starter?", '
        '"expected": ["02 Areas/Cooking/Sourdough starter log.md"], "type": "direct"}\n'
        '{"id": "s2", "question": "zebra quantum chromodynamics", "expected": [], "type": "absent"}\n'
    )
    run(capsys, "index", "--vault", str(vault), "--quiet")
    # without --answers, no chat call and no answer figures
    fake_ollama.fake.reset_counters()
    code, out, _ = run(capsys, "eval", str(questions), "--vault", str(vault), "--json")
    assert code == 0 and fake_ollama.fake.chat_calls == 0
    assert "answers" not in json.loads(out)["reports"][0]["overall"]

    # a model that answers everything from the starter log: right for s1, made up for s2
    fake_ollama.fake.chat_reply = "Feed it at 1:5:5 the night before [Sourdough starter log]."
    code, out, _ = run(capsys, "eval", str(questions), "--vault", str(vault), "--answers", "--json")
    assert code == 0 and fake_ollama.fake.chat_calls == 2
    (hybrid,) = json.loads(out)["reports"]
    assert hybrid["settings"]["chat_model"] == CHAT_MODEL
    answers = hybrid["overall"]["answers"]
    assert answers == {"absent_declined": 0, "answerable_declined": 0, "answerable_citing_expected": 1}
    (failure,) = hybrid["failures"]
    assert failure["id"] == "s2" and failure["answer"] == fake_ollama.fake.chat_reply

    # a model that says "not in your notes" to everything: the absent question is declined, the
    # answerable one lost
    fake_ollama.fake.chat_reply = "Your notes don’t say."
    code, out, _ = run(capsys, "eval", str(questions), "--vault", str(vault), "--answers")
    assert code == 0
    assert 'answers by fake-chat: "not in your notes" from the search or the model' in out
    assert re.search(r"^hybrid +1/1 +1/1 +0/1 *$", out, re.M)
    assert "s1 [direct] answer says not in notes" in out and "answer   'Your notes don’t say.'" in out
    assert "s2 [absent]" not in out

    # a missing chat model stops the run before anything is asked, and says what to do
    code, _, err = run(capsys, "eval", str(questions), "--vault", str(vault), "--answers", "--chat-model", "nope")
    assert code == 2 and "'nope' is not available" in err and "ollama pull nope" in err


def test_eval_runs_configurations_side_by_side(cli_env, vault, capsys, tmp_path):
    questions = tmp_path / "q.jsonl"
    questions.write_text(
        '{"id": "s1", "question": "How do I feed my sourdough starter?", '
        '"expected": ["02 Areas/Cooking/Sourdough starter log.md"], "type": "direct", "split": "dev"}\n'
        '{"id": "s2", "question": "zebra quantum chromodynamics", "expected": [], '
        '"type": "absent", "split": "heldout"}\n'
    )
    run(capsys, "index", "--vault", str(vault), "--quiet")
    code, out, _ = run(capsys, "eval", str(questions), "--vault", str(vault), "--compare", "--json")
    assert code == 0
    reports = {r["config"]: r for r in json.loads(out)["reports"]}
    assert list(reports) == [
        "baseline",
        "vector",
        "hybrid",
        "hybrid-depth10",
        "hybrid-raw-cosines",
        "hybrid-rrf",
        "hybrid+graph",
        "hybrid-question-decline",
    ]
    assert reports["baseline"]["settings"]["seed_index"] is True
    assert reports["hybrid-raw-cosines"]["settings"]["retrieval"]["cosines"] == "raw"
    # what `vask ask` does: the user's top-k, two passages of a note at most; depth10 is labelled apart
    assert reports["hybrid"]["settings"]["top_k"] == 6 and reports["hybrid"]["settings"]["retrieval"]["per_note"] == 2
    assert reports["hybrid-depth10"]["settings"]["top_k"] == 10
    assert reports["hybrid-depth10"]["settings"]["retrieval"]["per_note"] == 1
    for rep in reports.values():
        overall = rep["overall"]
        assert overall["count"] == 1 and overall["absent"] == 1
        assert 0.0 <= overall["hit@1"] <= overall["hit@6"] <= 1.0
        assert set(rep["by_split"]) == {"dev", "heldout"}
    assert reports["hybrid"]["overall"]["hit@1"] == 1.0
    code, out, _ = run(capsys, "eval", str(questions), "--vault", str(vault))
    assert code == 0 and "hybrid" in out and "failures (hybrid)" in out
    code, _, err = run(capsys, "eval", str(questions), "--vault", str(vault), "--configs", "nope")
    assert code == 2 and "Unknown eval config" in err


def _words(out: str) -> dict[str, str]:
    """`  failed  path: reason` and `  skipped path: reason` lines, as {path: word}."""
    return {m.group(2): m.group(1) for m in re.finditer(r"^  (failed|skipped) +(.+?): ", out, re.MULTILINE)}


def test_a_problem_file_has_the_same_word_in_index_and_status(cli_env, small_vault, tmp_path, capsys, monkeypatch):
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.md").write_text("outside the vault")
    (small_vault / "secret.md").symlink_to(tmp_path / "outside" / "secret.md")  # left out on purpose
    (small_vault / "binary.md").write_bytes(b"\x00\x01\x02")  # left out on purpose
    (small_vault / "locked.md").write_text("nobody may read this")  # could not be read
    real_open = Path.open

    def locked_open(self: Path, *args, **kwargs):  # type: ignore[no-untyped-def]
        if self.name == "locked.md":
            raise PermissionError(13, "Permission denied")  # (as root, chmod 000 would not stop us)
        return real_open(self, *args, **kwargs)

    monkeypatch.setattr(Path, "open", locked_open)
    expected = {"secret.md": "skipped", "binary.md": "skipped", "locked.md": "failed"}
    _, indexed, _ = run(capsys, "index", "--vault", str(small_vault), "--quiet")
    assert _words(indexed) == expected and "1 failed, 2 skipped" in indexed
    _, again, _ = run(capsys, "index", "--vault", str(small_vault), "--quiet")  # nothing changed: the fast path
    assert _words(again) == {"secret.md": "skipped"}  # (notes read before are not read again)
    _, status, _ = run(capsys, "status", "--vault", str(small_vault))
    assert _words(status) == expected
    _, out, _ = run(capsys, "status", "--vault", str(small_vault), "--json")
    listed = json.loads(out)
    assert {item["path"]: word for word in ("failed", "skipped") for item in listed[word]} == expected


def test_status_shows_a_broken_keyword_index_and_index_full_repairs_it(cli_env, small_vault, capsys):
    import asyncio

    from tests.web_helpers import break_keyword_index

    run(capsys, "index", "--vault", str(small_vault), "--quiet")
    asyncio.run(break_keyword_index(cli_env))
    _, out, _ = run(capsys, "status", "--vault", str(small_vault))
    assert "  error   The keyword search of the index failed" in out and "vask index --full" in out
    _, out, _ = run(capsys, "status", "--vault", str(small_vault), "--json")
    assert [p["operation"] for p in json.loads(out)["store_errors"]] == ["keyword search"]
    run(capsys, "index", "--vault", str(small_vault), "--quiet", "--full")
    _, out, _ = run(capsys, "status", "--vault", str(small_vault), "--json")
    assert json.loads(out)["store_errors"] == []


def test_a_question_about_a_day_the_calendar_lacks_is_answered_with_a_notice(cli_env, vault, capsys):
    run(capsys, "index", "--vault", str(vault), "--quiet")
    for question, notice in (
        ("what did I write on 29 February this year?", "2025 has no 29 February: read as 28 February 2025."),
        ("what did I write on 31 April?", "There is no 31 April: read as 30 April 2024."),
    ):
        code, out, err = run(capsys, "search", "--vault", str(vault), "--now", "2025-03-10", question)
        assert code == 0, err
        assert notice in out
        code, out, _ = run(capsys, "search", "--vault", str(vault), "--now", "2025-03-10", question, "--json")
        assert code == 0 and json.loads(out)["time_range"]["notice"] == notice


@pytest.mark.parametrize(
    ("argv", "command"),
    [
        (["status", "of", "my", "tax", "return?"], "ask"),
        (["status"], "status"),
        (["status", "--json"], "status"),
        (["--vault", "V", "status"], "status"),
        (["index", "cards", "from", "the", "library?"], "ask"),
        (["index", "--full"], "index"),
        (["serve", "--port", "8000"], "serve"),
        (["serve", "the", "guests", "what?"], "ask"),
        (["pause"], "pause"),
        (["--vault", "V", "resume"], "resume"),
        (["pause", "the", "podcast", "when?"], "ask"),
        (["token"], "token"),
        (["token", "add", "phone"], "token"),
        (["token", "of", "thanks", "ideas"], "ask"),
        (["eval", "questions.jsonl", "--split", "dev"], "eval"),
        (["eval", "of", "my", "sprint"], "ask"),
        (["search", "tax", "return"], "search"),
        (["ask", "status", "of", "my", "tax", "return?"], "ask"),
        (["--", "status"], "ask"),
        (["what", "is", "x"], "ask"),
    ],
)
def test_a_command_name_starts_a_command_only_when_the_words_after_it_are_that_commands(argv, command):
    """The documented rule: `index`, `status`, `serve`, `doctor`, `pause`, `resume` take no words; `token`
    takes add/list/revoke and a name; `eval` one file; more words than that are a question."""
    from vask_server.cli.command import build_parser, normalise_argv

    normalised = normalise_argv(argv)
    assert build_parser().parse_args(normalised).command == command


def test_an_unexpected_failure_is_reported_as_a_bug_with_its_own_exit_code(cli_env, vault, capsys, monkeypatch):
    import vask_server.cli.command as cli_module
    import vask_server.cli.index as index_cli

    async def broken(args, services):
        raise RuntimeError("something inside broke")

    run(capsys, "index", "--vault", str(vault), "--quiet")
    monkeypatch.setattr(index_cli, "status", broken)
    code, _, err = run(capsys, "status", "--vault", str(vault))
    assert code == cli_module.INTERNAL_ERROR == 70
    assert "error: vask failed unexpectedly (RuntimeError: something inside broke)" in err
    assert "hint: This is a bug in vask" in err and "Traceback" not in err
