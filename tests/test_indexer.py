"""The pipeline against a real LanceDB on disk and the fake Ollama over HTTP, counting embeddings."""

import json
import os
from dataclasses import replace
from datetime import datetime
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import vask_server.adapters.ann_plan as ann_module
import vask_server.services.sync.indexer as indexer_module
import vask_server.services.sync.reading as reading_module
from tests.fake_ollama import embed_text
from vask_server.adapters.footprint import chunk_mib, serve_idle_mib
from vask_server.adapters.lancedb_api import lancedb
from vask_server.errors import ModelMissing, OllamaUnavailable
from vask_server.services.context import index_status, open_services

NOON = datetime(2026, 6, 1, 12, 0).timestamp()  # a file time whose day a few seconds do not change


async def sync(settings):
    async with open_services(settings) as services:
        return await services.indexer.sync()


async def test_second_run_embeds_nothing(fake_ollama, small_vault, settings_for):
    settings = settings_for(small_vault)
    first = await sync(settings)
    assert first.changed == 3 and first.chunks_embedded > 10
    fake_ollama.fake.reset_counters()
    second = await sync(settings)
    assert second.changed == 0 and second.unchanged == 3
    # the scan matches the last complete sync: the model is not asked anything, not even its dimension
    assert second.chunks_embedded == 0
    assert fake_ollama.fake.embedded_texts == []


async def test_editing_one_section_embeds_one_chunk(fake_ollama, small_vault, settings_for):
    settings = settings_for(small_vault)
    await sync(settings)
    plan = small_vault / "Projects" / "Plan.md"
    plan.write_text(plan.read_text().replace("milestone 7,", "milestone seven (moved to May),"))
    fake_ollama.fake.reset_counters()
    report = await sync(settings)
    assert report.changed == 1
    assert report.chunks_embedded == 1
    embedded = [t for t in fake_ollama.fake.embedded_texts if t != "dimension probe"]
    assert len(embedded) == 1 and "moved to May" in embedded[0] and embedded[0].startswith("Plan > Section 7")


async def test_touch_without_change_and_move_embed_nothing(fake_ollama, small_vault, settings_for):
    settings = settings_for(small_vault)
    note = small_vault / "Sourdough.md"
    os.utime(note, (NOON, NOON))  # (so that 5 s later is the same day)
    await sync(settings)
    os.utime(note, (NOON + 5, NOON + 5))
    fake_ollama.fake.reset_counters()
    touched = await sync(settings)
    assert touched.touched == 1 and touched.changed == 0 and touched.chunks_embedded == 0

    (small_vault / "Archive").mkdir()
    note.rename(small_vault / "Archive" / "Sourdough.md")
    moved = await sync(settings)
    assert moved.changed == 1 and moved.deleted == 1
    assert moved.chunks_embedded == 0 and moved.chunks_reused >= 1
    async with open_services(settings) as services:
        status = await index_status(services)
        paths = set((await services.store.tables(services.searcher.active()).manifest()).keys())
    assert "Archive/Sourdough.md" in paths and "Sourdough.md" not in paths
    assert status["notes"] == 3


async def test_deleted_note_rows_disappear(fake_ollama, small_vault, settings_for):
    settings = settings_for(small_vault)
    await sync(settings)
    (small_vault / "Running.md").unlink()
    report = await sync(settings)
    assert report.deleted == 1 and report.chunks_removed >= 1
    async with open_services(settings) as services:
        active = services.store.read_meta().active
        rows = await services.store.tables(active).all_chunk_rows(["path"])
    assert "Running.md" not in set(rows["path"].to_pylist())
    assert {"Sourdough.md", "Projects/Plan.md"} <= set(rows["path"].to_pylist())


async def test_bad_files_are_reported_once_and_nothing_crashes(fake_ollama, small_vault, settings_for):
    (small_vault / "broken yaml.md").write_text("---\ntitle: a: b: c\ntags: [x\n---\nBody still indexed.\n")
    (small_vault / "binary.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00binary")
    (small_vault / "latin1.md").write_bytes("Caf\xe9 notes about espresso".encode("latin-1"))
    (small_vault / "huge.md").write_text("word " * 1_100_000)  # 5.5 MB
    (small_vault / "empty.md").write_text("")
    (small_vault / "headings.md").write_text("".join(f"## H{i}\nline {i}\n" for i in range(2000)))
    report = await sync(settings_for(small_vault))
    problems = [p for p, _ in report.failed + report.skipped]
    assert sorted(problems) == ["binary.md", "huge.md"]
    reasons = dict(report.failed + report.skipped)
    assert "binary" in reasons["binary.md"] and "too large" in reasons["huge.md"]
    warned = "\n".join(report.warnings)
    assert warned.count("broken yaml.md") == 1 and warned.count("latin1.md") == 1
    assert report.changed == 9
    # the problems are remembered, not re-read on the next run
    again = await sync(settings_for(small_vault))
    assert again.changed == 0
    async with open_services(settings_for(small_vault)) as services:
        status = await index_status(services)
    assert [f["path"] for f in status["skipped"]] == ["binary.md", "huge.md"]
    assert status["notes"] == 7  # 3 originals + broken yaml, latin1, empty, headings


async def test_missing_model_says_how_to_pull_it(fake_ollama, small_vault, settings_for):
    with pytest.raises(ModelMissing) as caught:
        await sync(settings_for(small_vault, embed_model="nomic-embed-text"))
    assert "ollama pull nomic-embed-text" in caught.value.hint


async def test_ollama_down_names_the_host(small_vault, settings_for):
    settings = settings_for(small_vault, ollama_host="http://127.0.0.1:9", ollama_retries=1)
    with pytest.raises(OllamaUnavailable) as caught:
        await sync(settings)
    assert "http://127.0.0.1:9" in caught.value.message
    assert "ollama serve" in caught.value.hint


async def test_transient_failures_are_retried(fake_ollama, small_vault, settings_for):
    fake_ollama.fake.fail_next = 2
    report = await sync(settings_for(small_vault, ollama_retries=3))
    assert report.chunks_embedded > 0 and fake_ollama.fake.fail_next == 0


async def test_a_new_model_builds_a_separate_index_and_replaces_the_old_when_complete(
    fake_ollama, small_vault, settings_for
):
    fake_ollama.fake.embed_models["other-embed"] = 48
    await sync(settings_for(small_vault))
    fake_ollama.fake.reset_counters()
    report = await sync(settings_for(small_vault, embed_model="other-embed"))
    assert report.dimension == 48 and report.changed == 3
    async with open_services(settings_for(small_vault, embed_model="other-embed")) as services:
        meta = services.store.read_meta()
        tables = (await services.store.database.connection.list_tables()).tables
    assert meta.active.model == "other-embed" and meta.active.dimension == 48 and meta.building is None
    assert sorted(tables) == ["chunks_other_embed_48_f16_d1_p1_h1", "notes_other_embed_48_f16_d1_p1_h1"]


def test_index_dir_defaults_outside_the_vault(tmp_path: Path):
    from vask_server.config import default_index_dir

    vault = tmp_path / "My Vault"
    vault.mkdir()
    index = default_index_dir(vault, env={"XDG_DATA_HOME": str(tmp_path / "data")})
    assert index.parent == tmp_path / "data" / "vask" / "indexes"
    assert index.name.startswith("My-Vault-")
    assert vault not in index.parents
    assert default_index_dir(tmp_path / "other", env={"XDG_DATA_HOME": str(tmp_path / "data")}) != index


async def test_vectors_are_stored_as_float16_and_read_back_close_to_what_was_embedded(
    fake_ollama, small_vault, settings_for
):
    await sync(settings_for(small_vault))
    async with open_services(settings_for(small_vault)) as services:
        tables = services.store.tables(services.searcher.active())
        table = await tables.chunks()
        assert (await table.schema()).field("vector").type.value_type == pa.float16()
        rows = await tables.all_chunk_rows(["id", "hash"])
        by_id = await tables.vectors_by_id(rows["id"].to_pylist())
        stored = np.stack([by_id[i] for i in rows["id"].to_pylist()])
    assert stored.dtype == np.float32 and stored.shape[0] == rows.num_rows
    texts = [t for t in fake_ollama.fake.embedded_texts if t != "dimension probe"]
    exact = np.asarray([embed_text(t) for t in texts], dtype=np.float32)
    # every stored vector is within float16 rounding of one the model returned
    closest = (stored @ exact.T).max(axis=1)
    assert closest.min() > 0.999


async def test_a_parser_bug_costs_a_note_its_structure_not_its_text(
    fake_ollama, small_vault, settings_for, monkeypatch
):
    real_parse = reading_module.parse_note

    def parse_or_break(path, text, resolver=None):
        if path == "Sourdough.md":
            raise ValueError("a parser bug")
        return real_parse(path, text, resolver)

    monkeypatch.setattr(reading_module, "parse_note", parse_or_break)
    settings = settings_for(small_vault)
    report = await sync(settings)
    assert report.failed == [] and report.skipped == []
    warned = [w for w in report.warnings if w.startswith("Sourdough.md:")]
    assert len(warned) == 1 and "a parser bug" in warned[0] and "plain text" in warned[0]
    async with open_services(settings) as services:
        status = await index_status(services)
        result = await services.searcher.search("sourdough starter", top_k=3, min_similarity=0.0)
    assert status["notes"] == 3 and status["failed"] == []
    assert result.hits and result.hits[0].path == "Sourdough.md"


async def test_an_old_index_that_cannot_be_removed_is_reported_and_removed_later(
    fake_ollama, small_vault, settings_for, monkeypatch, caplog
):
    fake_ollama.fake.embed_models["other-embed"] = 48
    await sync(settings_for(small_vault))
    new = settings_for(small_vault, embed_model="other-embed")

    async def refuse(self, name, *args, **kwargs):  # type: ignore[no-untyped-def]
        raise OSError(f"Permission denied: {name}")

    monkeypatch.setattr(lancedb.AsyncConnection, "drop_table", refuse)
    report = await sync(new)
    old_tables = ["chunks_fake_embed_96_f16_d1_p1_h1", "notes_fake_embed_96_f16_d1_p1_h1"]
    for name in old_tables:
        assert any(name in w and "Permission denied" in w and "next sync" in w for w in report.warnings), name
        assert any(r.levelname == "WARNING" and name in r.getMessage() for r in caplog.records)
    async with open_services(new) as services:
        status = await index_status(services)
    assert sorted(p["message"].split(":")[0] for p in status["store_errors"]) == [
        f"could not remove {n}" for n in old_tables
    ]
    assert all(p["operation"] == "removing an old index" and ".lance" in p["hint"] for p in status["store_errors"])

    monkeypatch.undo()
    again = await sync(new)  # nothing changed in the vault: the leftovers are still tried again
    assert again.changed == 0 and again.warnings == []
    async with open_services(new) as services:
        status = await index_status(services)
        tables = (await services.store.database.connection.list_tables()).tables
    assert status["store_errors"] == [] and sorted(tables) == [
        "chunks_other_embed_48_f16_d1_p1_h1",
        "notes_other_embed_48_f16_d1_p1_h1",
    ]


def _many_notes(root: Path, count: int) -> Path:
    root.mkdir()
    for n in range(count):
        (root / f"Note {n:02}.md").write_text(
            f"# Note {n}\n\nThe {n}th note is about subject {n * 7} and nothing else.\n"
        )
        os.utime(root / f"Note {n:02}.md", (NOON, NOON))
    return root


async def test_a_large_sync_writes_in_few_appends_and_keeps_what_was_embedded_when_the_model_fails(
    fake_ollama, tmp_path, settings_for, monkeypatch
):
    """Batches are embedded a few notes at a time but written together (each append is a table
    version to keep and compact); a failure halfway loses none of what was embedded before it."""
    monkeypatch.setattr(indexer_module, "_NOTES_PER_BATCH", 2)
    monkeypatch.setattr(indexer_module, "_ROWS_PER_WRITE", 10)
    vault = _many_notes(tmp_path / "vault", 30)
    async with open_services(settings_for(vault)) as services:
        writes: list[int] = []
        tables = services.store.tables(await services.indexer.target())
        real_write = tables.write_notes

        async def counted(paths, *args, **kwargs):
            writes.append(len(paths))
            return await real_write(paths, *args, **kwargs)

        monkeypatch.setattr(tables, "write_notes", counted)
        report = await services.indexer.sync()
        assert report.changed == 30 and not report.failed
        assert sum(writes) == 30 and 2 <= len(writes) < 15  # 15 batches of 2 notes, in fewer appends
        status = await index_status(services)
        assert status["notes"] == 30
        chunks = status["chunks"]

    # Every note edited; the model goes away after three batches.
    for n in range(30):
        (vault / f"Note {n:02}.md").write_text(f"# Note {n}\n\nNow note {n} is about topic {n * 11} instead.\n")
    monkeypatch.setattr(indexer_module, "_ROWS_PER_WRITE", 1_000)  # nothing would be written before the end
    async with open_services(settings_for(vault)) as services:
        await services.indexer.embedder.dimension()  # (its probe is not one of the batches counted)
        real_embed = services.indexer.embedder.embed
        calls: list[int] = []

        async def failing(texts):
            calls.append(len(texts))
            if len(calls) > 3:
                raise OllamaUnavailable("Ollama went away", "Start it again.")
            return await real_embed(texts)

        monkeypatch.setattr(services.indexer.embedder, "embed", failing)
        with pytest.raises(OllamaUnavailable):
            await services.indexer.sync()
        kept = await services.store.tables(services.searcher.active()).manifest()
        current = [p for p, r in kept.items() if r.mtime_ns == (vault / p).stat().st_mtime_ns]
        assert len(current) == 6  # the three batches (of two notes) embedded before the failure
        embedded_before = sum(calls[:3])

        monkeypatch.setattr(services.indexer.embedder, "embed", real_embed)
        fake_ollama.fake.reset_counters()
        report = await services.indexer.sync()
        # the three batches embedded before the failure were written: only the other notes' chunks now
        assert report.chunks_embedded == chunks - embedded_before, (report.summary(), calls)
        assert fake_ollama.fake.embed_inputs == chunks - embedded_before
        assert (await index_status(services))["notes"] == 30


async def test_notes_whose_time_changed_but_not_their_text_keep_their_rows(fake_ollama, tmp_path, settings_for):
    """A checkout or a sync tool touches every file: the notes are read to see that their text is
    the same, and only their times are recorded; no chunk row is deleted or written (rewriting them
    all left every index behind the table, and searches took seconds). A time moved to another day
    is a change: the rows record the day."""
    vault = _many_notes(tmp_path / "vault", 12)
    linking = vault / "Note 05.md"  # (a note with links: the record written back keeps them)
    linking.write_text(linking.read_text() + "\nSee [[Note 06]] and [[Note 07#Note 7]].\n")
    os.utime(linking, (NOON, NOON))
    async with open_services(settings_for(vault)) as services:
        await services.indexer.sync()
        tables = services.store.tables(services.searcher.active())
        before = await tables.manifest()
        assert "Note 06.md" in (before["Note 05.md"].links or "")
        chunks = await tables.chunks()
        version = await chunks.version()
        for n in range(12):
            path = vault / f"Note {n:02}.md"
            stat = path.stat()
            os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
        fake_ollama.fake.reset_counters()
        report = await services.indexer.sync()
        assert (report.touched, report.changed, report.chunks_embedded) == (12, 0, 0), report.summary()
        assert "12 touched" in report.summary()
        chunks = await tables.chunks()
        assert await chunks.version() == version  # not one row deleted or added
        kept = await tables.manifest()
        assert all(
            kept[f"Note {n:02}.md"].mtime_ns == (vault / f"Note {n:02}.md").stat().st_mtime_ns for n in range(12)
        )
        assert all(kept[p] == replace(before[p], mtime_ns=kept[p].mtime_ns) for p in before)  # all else as it was
        assert (await services.indexer.sync()).touched == 0  # recorded: the next sync has nothing to do

        # Another day: the note's rows are written again, with the day; its text needs no embedding.
        path = vault / "Note 03.md"
        os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns - 3 * 86_400 * 1_000_000_000))
        edited = vault / "Note 04.md"
        edited.write_text("# Note 4\n\nNote 4 now says something new.\n")
        report = await services.indexer.sync()
        assert (report.touched, report.changed) == (0, 2), report.summary()
        assert report.chunks_embedded >= 1 and fake_ollama.fake.embed_inputs >= 1
        hits = await tables.all_chunk_rows(["path", "modified"], where="path = 'Note 03.md'")
        days = {str(d) for d in hits["modified"].to_pylist()}
        assert days == {str(datetime.fromtimestamp(path.stat().st_mtime_ns / 1e9).date())}


async def test_a_sync_says_what_it_does_once_its_notes_are_read(fake_ollama, tmp_path, settings_for):
    """After the last note no count moves (at 100,000 notes the compaction and the keyword index took
    ~35 s): the sync names each of those steps, and says when they are over, for the status bar."""
    vault = _many_notes(tmp_path / "vault", 3)
    async with open_services(settings_for(vault)) as services:
        stages: list[str | None] = []
        progress: list[tuple[int, int]] = []
        await services.indexer.sync(progress=lambda d, t: progress.append((d, t)), stage=stages.append)
        assert progress[-1] == (3, 3)
        assert stages == ["compacting", "keyword index", None]
        stages.clear()
        await services.indexer.sync(stage=stages.append)  # nothing changed: no step to name
        assert stages == []


async def test_a_sync_that_makes_a_table_large_enough_builds_its_vector_index_before_it_ends(
    fake_ollama, tmp_path, settings_for, monkeypatch
):
    """Built in the background after a 100,000-note first sync, searches ran exact meanwhile (~1 s and
    ~100 MiB each): the sync that makes the table large enough builds the index as a step of its own,
    so the first search already has it. Later syncs leave a built index to the background rebuild."""
    monkeypatch.setattr(ann_module, "VECTOR_INDEX_MIN_ROWS", 200)
    monkeypatch.setattr(ann_module, "_ANN_ROWS_PER_PARTITION", 100)
    vault = _many_notes(tmp_path / "vault", 100)  # a chunk and a note record each: 200 rows
    async with open_services(settings_for(vault)) as services:
        stages: list[str | None] = []
        await services.indexer.sync(stage=stages.append)
        assert stages == ["compacting", "keyword index", "vector index", None]
        tables = services.store.tables(await services.indexer.target())
        table = await tables.chunks()
        assert [i.name for i in await table.list_indices() if "vector" in i.columns] == [
            ann_module.ann_plan(200).index_name
        ]
        assert services.store.database.ann.task is None  # built by the sync itself, not in the background
        hits = await tables.vector_search(np.ones(tables.dimension, np.float32), 5)
        assert len(hits) == 5

        stages.clear()
        (vault / "Note 01.md").write_text("# Note 1\n\nNow about something else entirely.\n")
        await services.indexer.sync(stage=stages.append)
        assert "vector index" not in stages


async def test_a_note_that_opts_out_of_a_table_with_a_vector_index_leaves_it_rebuilt_without_it(
    fake_ollama, tmp_path, settings_for, monkeypatch
):
    """The purge drops the vector index before its compaction; the same sync builds it again."""
    monkeypatch.setattr(ann_module, "VECTOR_INDEX_MIN_ROWS", 200)
    monkeypatch.setattr(ann_module, "_ANN_ROWS_PER_PARTITION", 100)
    vault = _many_notes(tmp_path / "vault", 110)
    async with open_services(settings_for(vault)) as services:
        await services.indexer.sync()
        (vault / "Note 05.md").write_text("---\nvask: exclude\n---\n# Note 5\n\nPrivate now.\n")
        stages: list[str | None] = []
        await services.indexer.sync(stage=stages.append)
        assert "removing excluded notes" in stages and "vector index" in stages
        tables = services.store.tables(await services.indexer.target())
        table = await tables.chunks()
        assert [i.name for i in await table.list_indices() if "vector" in i.columns]
        assert "Note 05.md" not in await tables.chunk_paths()


async def test_a_large_sync_prunes_the_versions_its_compaction_kept_before_it_builds_the_vector_index(
    fake_ollama, tmp_path, settings_for, monkeypatch
):
    """The pruning is an optimize, which would damage a vector index built before it."""
    from datetime import timedelta

    import vask_server.adapters.upkeep as upkeep_module
    import vask_server.services.sync.indexer as indexer_module

    monkeypatch.setattr(ann_module, "VECTOR_INDEX_MIN_ROWS", 200)
    monkeypatch.setattr(ann_module, "_ANN_ROWS_PER_PARTITION", 100)
    monkeypatch.setattr(indexer_module, "_PRUNE_AFTER_NOTES", 100)
    monkeypatch.setattr(upkeep_module, "_KEEP_VERSIONS", timedelta(seconds=0.2))
    vault = _many_notes(tmp_path / "vault", 100)
    optimized_with_index: list[bool] = []
    async with open_services(settings_for(vault)) as services:
        tables = services.store.tables(await services.indexer.target())
        real_prune = tables.prune_versions

        async def watched() -> None:
            table = await tables.chunks()
            optimized_with_index.append(any("vector" in i.columns for i in await table.list_indices()))
            await real_prune()

        monkeypatch.setattr(tables, "prune_versions", watched)
        await services.indexer.sync()
        table = await tables.chunks()
        assert [i.name for i in await table.list_indices() if "vector" in i.columns] == [
            ann_module.ann_plan(200).index_name
        ]
    assert optimized_with_index == [False]
    versions = settings_for(vault).resolved_index_dir() / "lancedb" / f"{tables.chunks_name}.lance" / "_versions"
    # pruned down to the compaction's, then the keyword and B-tree indexes' and the vector index's own
    assert len(list(versions.glob("*.manifest"))) <= 6


async def test_the_status_says_what_the_index_takes_on_disk_and_per_10000_notes(fake_ollama, small_vault, settings_for):
    settings = settings_for(small_vault)
    async with open_services(settings) as services:
        await services.indexer.sync()
        status = await index_status(services, disk=True)  # (as `vask status` and /v1/status ask)
        assert (await index_status(services))["disk_bytes"] is None  # (the count after each sync does not walk)
    on_disk = sum(p.stat().st_size for p in (settings.resolved_index_dir() / "lancedb").rglob("*") if p.is_file())
    assert status["disk_bytes"] == on_disk > 0
    assert status["disk_bytes_per_10000_notes"] == round(on_disk * 10_000 / status["notes"])

    # the memory a server of it holds, from the fit to the benchmarks: this index's chunks, and as
    # many per 10,000 notes as this vault's notes have
    chunks_per_10000 = round(status["chunks"] * 10_000 / status["notes"])
    assert status["serve_memory_mib"] == serve_idle_mib(status["chunks"], status["dimension"])
    assert status["serve_memory_mib_per_10000_notes"] == round(chunk_mib(chunks_per_10000, status["dimension"]))


def test_the_memory_estimate_fits_every_measured_restart_of_the_benchmarks():
    """The fit in adapters/footprint.py against the record it was fitted to: refit it when the
    benchmarks are measured again and this fails."""
    record = json.loads((Path(__file__).parents[1] / "docs" / "bench" / "sizes-1024.json").read_text())
    for size in record["sizes"].values():
        measured = size["restart"]["idle_rss_mib"]
        estimate = serve_idle_mib(size["query"]["chunks"], size["dimension"])
        assert abs(estimate - measured) <= 0.05 * measured, (size["dimension"], size["query"]["chunks"], estimate)
