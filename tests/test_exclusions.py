"""Notes a user keeps out: absent from search, answers and related notes, and from every table at every
version LanceDB keeps on disk, after one sync; and the rules come from VASK_EXCLUDE, Obsidian's
Excluded files (read anew while the server runs) and the note's own frontmatter."""

import asyncio
import json
import os
from dataclasses import replace
from datetime import date
from pathlib import Path

import pytest

from tests.web_helpers import running_app
from vask_server.adapters.vault import Vault
from vask_server.core.plan import IndexOptions
from vask_server.core.question import Question
from vask_server.errors import ScopeNotFound
from vask_server.services.context import index_status, open_services
from vask_server.services.query.exclusions import CurrentExclusions

MARKERS = {
    "Private/Therapy.md": "zqxtherapyword",
    "Journal/Salary talk.md": "zqxsalaryword",
    "Health/Results.md": "zqxhealthword",
}


def _write_private_notes(vault: Path) -> None:
    for path, marker in MARKERS.items():
        note = vault / path
        note.parent.mkdir(parents=True, exist_ok=True)
        front = "---\nvask: exclude\n---\n" if path.startswith("Health/") else ""
        note.write_text(f"{front}# {note.stem}\n\nOnly for me: {marker} and how I felt about it.\n", "utf-8")
    (vault / "Links to private.md").write_text("# Index\n\nSee [[Therapy]] and [[Salary talk]].\n", "utf-8")


async def _traces(services, markers) -> list[str]:
    """Every row of every table at every version still kept, searched for the markers and the paths."""
    found = []
    names = (await services.store.database.connection.list_tables()).tables
    for name in names:
        table = await services.store.database.connection.open_table(name)
        for version in await table.list_versions():
            number = version["version"] if isinstance(version, dict) else version.version
            await table.checkout(number)
            rows = (await table.query().to_arrow()).drop_columns(
                [c for c in ("vector",) if c in (await table.schema()).names]
            )
            dump = json.dumps(rows.to_pylist(), default=str)
            found.extend(f"{name}@{number}: {m}" for m in markers if m in dump)
        await table.checkout_latest()
    return found


def _files_holding(folder: Path, markers) -> list[str]:
    """Every file of the index on disk (data, deletion files, full-text and vector index files,
    manifests), searched byte for byte."""
    found = []
    for path in folder.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            found.extend(f"{path.relative_to(folder)}: {m}" for m in markers if m.encode() in data)
    return found


async def test_excluded_notes_leave_no_trace_in_any_table_version_after_one_sync(
    fake_ollama, vault, settings_for, caplog
):
    caplog.set_level("DEBUG")
    _write_private_notes(vault)
    settings = settings_for(vault)
    async with open_services(settings) as services:
        await services.indexer.sync()
        # indexed as anything else first (the Health note opts out on its own, so it never is)
        assert len(await _traces(services, ["zqxtherapyword", "zqxsalaryword"])) >= 2
        assert await _traces(services, ["zqxhealthword"]) == []
    (vault / ".obsidian" / "app.json").write_text(json.dumps({"userIgnoreFilters": ["Journal/"]}), "utf-8")
    excluding = settings_for(vault, exclude=("Private/**",))
    async with open_services(excluding) as services:
        report = await services.indexer.sync()
        assert report.excluded == {
            "VASK_EXCLUDE Private/**": 1,
            "Obsidian excluded files Journal/": 1,
            "frontmatter vask: exclude": 1,
        }
        secrets = [*MARKERS.values(), *MARKERS]
        assert await _traces(services, secrets) == []
        # (the note that links to them still says "See Therapy and Salary talk": its own words)
        assert _files_holding(settings.resolved_index_dir(), secrets) == []
        for marker in MARKERS.values():
            result = await services.searcher.search(marker, top_k=10, min_similarity=0.0)
            assert all(hit.path not in MARKERS for hit in result.hits)
        status = await index_status(services)
        assert status["excluded"] == report.excluded
        assert not any(path in json.dumps(status) for path in MARKERS)  # counts by rule, never names
        # a question naming an excluded note hears that no such note is indexed, and no closest
        # name gives it away
        with pytest.raises(ScopeNotFound) as unmatched:
            asked = Question("how did [[Therapy]] go?", today=date(2026, 4, 1), top_k=6, min_similarity=0.0)
            await services.searcher.understand(asked)
        assert not any("Therapy" in name or "Salary" in name for name in unmatched.value.closest)
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert not any(secret in logged for secret in [*MARKERS.values(), *MARKERS])


async def test_excluded_notes_reach_no_answer_source_or_related_note(fake_ollama, vault, settings_for):
    _write_private_notes(vault)
    async with running_app(settings_for(vault, exclude=("Private/**", "Journal/**"))) as api:
        events = await api.ask_events({"question": "what did I write about therapy, and how I felt about it?"})
        sources = [s["path"] for e in events for s in e.get("sources", [])]
        assert not set(sources) & set(MARKERS)
        for request in [*fake_ollama.fake.chat_requests, {"input": fake_ollama.fake.embedded_texts}]:
            assert not any(marker in json.dumps(request) for marker in MARKERS.values())
        related = await (await api.get("/v1/related?path=Links%20to%20private.md")).json()
        assert related["related"] and not {r["path"] for r in related["related"]} & set(MARKERS)


async def test_obsidians_excluded_files_change_takes_effect_while_serving(fake_ollama, vault, settings_for):
    _write_private_notes(vault)
    async with running_app(settings_for(vault), watch=True) as api:
        before = await api.search("zqxtherapyword", top_k=5, min_similarity=0.0)
        assert any(h["path"] == "Private/Therapy.md" for h in before["hits"])
        syncs = api.live.syncs
        (vault / ".obsidian" / "app.json").write_text(json.dumps({"userIgnoreFilters": ["Private/"]}), "utf-8")
        for _ in range(100):
            if api.live.syncs > syncs and api.live.state == "idle":
                break
            await asyncio.sleep(0.1)
        after = await api.search("zqxtherapyword", top_k=5, min_similarity=0.0)
        assert all(h["path"] != "Private/Therapy.md" for h in after["hits"])
        status = await (await api.get("/v1/status")).json()
        assert status["excluded"] == {"Obsidian excluded files Private/": 1, "frontmatter vask: exclude": 1}


async def test_a_rule_added_while_the_server_was_stopped_holds_before_the_sync_reaches_it(
    fake_ollama, vault, settings_for
):
    """Indexing paused (kept over a restart), VASK_EXCLUDE given a new pattern, the server started again:
    its sync waits, the index still holds the notes, and yet no search, answer, connection question or
    related-notes list shows them, cites them or reads them as a seed."""
    _write_private_notes(vault)
    settings = settings_for(vault)
    async with running_app(settings) as api:
        found = await api.search("zqxtherapyword", top_k=5, min_similarity=0.0)
        assert "Private/Therapy.md" in {h["path"] for h in found["hits"]}  # (held, and found, before the rule)
        assert (await api.post("/v1/index/pause")).status == 200
    kept_out = {"Private/Therapy.md", "Journal/Salary talk.md"}
    async with running_app(replace(settings, exclude=("Private/**", "Journal/**")), wait=False) as api:
        status = await (await api.get("/v1/status")).json()
        assert status["paused"] is True and status["notes"] >= len(MARKERS)  # (still in the index)
        for words in ("zqxtherapyword", "zqxsalaryword", "Only for me: how I felt about it"):
            found = await api.search(words, top_k=10, min_similarity=0.0)
            assert not {h["path"] for h in found["hits"]} & kept_out, words
        events = await api.ask_events({"question": "what did I write about zqxtherapyword, and how I felt?"})
        assert not {s["path"] for e in events for s in e.get("sources", [])} & kept_out
        related = await (await api.get("/v1/related?path=Links%20to%20private.md")).json()
        assert not {r["path"] for r in related["related"]} & kept_out
        connected = await api.search("what connects to [[Links to private]]?", top_k=10, min_similarity=0.0)
        assert not {h["path"] for h in connected["hits"]} & kept_out
        seeded = await (await api.get("/v1/related?path=Private/Therapy.md")).json()
        assert "related" not in seeded and "Therapy" not in json.dumps(seeded["error"]["hint"])


async def test_a_note_that_opts_out_while_indexing_is_paused_is_found_no_more(fake_ollama, vault, settings_for):
    """`vask: exclude` written into a note while no server ran, indexing paused (kept over the restart):
    the restart's sync waits on the pause, and yet the note's rows are gone at once, before anything
    is embedded; the same for a note that opts out while the paused server watches."""
    _write_private_notes(vault)
    settings = settings_for(vault)
    async with running_app(settings) as api:
        assert (await api.post("/v1/index/pause")).status == 200
    therapy = vault / "Private/Therapy.md"
    therapy.write_text("---\nvask: exclude\n---\n" + therapy.read_text("utf-8"), "utf-8")
    async with running_app(settings, watch=True, wait=False) as api:
        for _ in range(100):  # (the restart's sync plans, then waits on the pause)
            found = await api.search("zqxtherapyword", top_k=5, min_similarity=0.0)
            if "Private/Therapy.md" not in {h["path"] for h in found["hits"]}:
                break
            await asyncio.sleep(0.1)
        assert "Private/Therapy.md" not in {h["path"] for h in found["hits"]}
        assert (await (await api.get("/v1/status")).json())["paused"] is True
        salary = vault / "Journal/Salary talk.md"
        salary.write_text("---\nVask: private\n---\n" + salary.read_text("utf-8"), "utf-8")
        for _ in range(100):  # (the watcher's sync of the edited note, paused as well)
            found = await api.search("zqxsalaryword", top_k=5, min_similarity=0.0)
            if "Journal/Salary talk.md" not in {h["path"] for h in found["hits"]}:
                break
            await asyncio.sleep(0.1)
        assert "Journal/Salary talk.md" not in {h["path"] for h in found["hits"]}
        assert (await (await api.get("/v1/status")).json())["paused"] is True


async def test_a_note_that_opts_out_and_that_the_parser_chokes_on_is_logged_only_as_a_count(
    fake_ollama, vault, settings_for, caplog, monkeypatch
):
    """The opt-out is read from the raw text before anything about the note is logged: a parser
    failure on a private note must not put its path (or its text) in the log."""
    from vask_server.services.sync import reading as reading_module

    caplog.set_level("DEBUG")
    private = vault / "Health" / "Diagnosis zqxdiag.md"
    private.parent.mkdir(parents=True, exist_ok=True)
    private.write_text("---\nvask: exclude\n---\n# Diagnosis\n\nzqxdiagword\n", "utf-8")
    real_parse = reading_module.parse_note

    def choking(path, text, resolver):
        if "zqxdiag" in path:
            raise ValueError(f"parser bug on {path}: {text[:40]}")
        return real_parse(path, text, resolver)

    monkeypatch.setattr(reading_module, "parse_note", choking)
    async with open_services(settings_for(vault)) as services:
        report = await services.indexer.sync()
        assert report.excluded == {"frontmatter vask: exclude": 1}
        assert await _traces(services, ["zqxdiag"]) == []
    assert "zqxdiag" not in caplog.text  # (messages and tracebacks, as a log handler writes them)
    assert not any("zqxdiag" in entry for entry in [*map(str, report.failed), *report.warnings])


def test_the_current_rules_follow_obsidians_excluded_files_as_they_change(tmp_path: Path) -> None:
    """services/query/exclusions.py re-reads `.obsidian/app.json` when it changes, and only then."""
    (tmp_path / ".obsidian").mkdir()
    app = tmp_path / ".obsidian" / "app.json"
    rules = CurrentExclusions(Vault(tmp_path), IndexOptions(exclude=("Drafts/**",), obsidian_excluded=True))
    assert rules.keeps_out("Drafts/a.md") and not rules.keeps_out("Private/a.md")
    app.write_text(json.dumps({"userIgnoreFilters": ["Private/"]}), "utf-8")
    assert rules.keeps_out("Private/a.md") and rules.keeps_out("Drafts/a.md")
    first = rules._excluder
    assert rules.keeps_out("Private/b.md") and rules._excluder is first  # (unchanged: not parsed again)
    app.write_text(json.dumps({"userIgnoreFilters": ["Health/"]}), "utf-8")
    os.utime(app, ns=(app.stat().st_atime_ns, app.stat().st_mtime_ns + 1_000_000))
    assert rules.keeps_out("Health/x.md") and not rules.keeps_out("Private/a.md")
    app.unlink()
    assert not rules.keeps_out("Health/x.md") and rules.keeps_out("Drafts/a.md")


async def test_a_search_takes_the_current_rules_once_a_list_not_once_a_row(
    fake_ollama, vault, settings_for, monkeypatch
):
    """The rules are taken (a stat of Obsidian's settings) for each list a search filters, not for each of
    its dozens of rows; what they keep out stays out."""
    _write_private_notes(vault)
    taken = 0
    stamp = CurrentExclusions._app_settings_stamp

    def counted(self: CurrentExclusions) -> tuple[int, int] | None:
        nonlocal taken
        taken += 1
        return stamp(self)

    monkeypatch.setattr(CurrentExclusions, "_app_settings_stamp", counted)
    async with running_app(settings_for(vault, exclude=("Private/**",))) as api:
        taken = 0
        found = await api.search("how I felt about it", top_k=20, min_similarity=0.0)
        paths = {h["path"] for h in found["hits"]}
        assert len(paths) >= 10 and "Private/Therapy.md" not in paths
        assert 1 <= taken <= 3  # (the vector list and the keyword list; a row each would be dozens)
