"""scripts/bench.py: the folders it replaces are only those it made itself; its steps run; the pieces the
benchmarks share (scripts/benchkit.py) do what they say."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scripts import bench, benchkit
from scripts.bench_sizes import sizes_table
from vask_server.adapters.meta import IndexMeta, IndexRecord, write_meta


def _real_index(folder: Path) -> Path:
    """A folder as a vault's own index looks: index.json, tables."""
    (folder / "lancedb" / "chunks_x.lance").mkdir(parents=True)
    (folder / "lancedb" / "chunks_x.lance" / "data").write_text("rows")
    write_meta(folder, IndexMeta(active=IndexRecord("all-minilm", 384, "all_minilm_384_f16")))
    return folder


def _files(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*")}


def _index(vault: Path, index_dir: Path) -> None:
    bench.main(["index", "--vault", str(vault), "--index-dir", str(index_dir), "--model", "instant"])


@pytest.mark.parametrize("kind", ["a vask index", "other files"])
def test_index_refuses_a_folder_it_did_not_make_and_leaves_it_alone(small_vault, tmp_path, capsys, kind):
    folder = tmp_path / "mine"
    if kind == "a vask index":
        _real_index(folder)
    else:
        folder.mkdir()
        (folder / "notes.txt").write_text("keep me")
    before = _files(folder)
    with pytest.raises(SystemExit) as exited:
        _index(small_vault, folder)
    assert exited.value.code == 2
    assert _files(folder) == before
    message = capsys.readouterr().err
    assert str(folder) in message and "benchmark did not make" in message and "--index-dir" in message


def test_a_real_index_is_refused_by_every_step_that_writes_to_it(small_vault, tmp_path):
    folder = _real_index(tmp_path / "index")
    before = _files(folder)
    for step in ("restart", "query", "related", "edits", "memory"):
        with pytest.raises(SystemExit) as exited:
            bench.main(
                [step, "--vault", str(small_vault), "--index-dir", str(folder), "--ollama-host", "http://127.0.0.1:9"]
            )
        assert exited.value.code == 2, step
    assert _files(folder) == before


def test_a_new_or_empty_folder_is_used_marked_and_may_be_replaced_next_time(small_vault, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    for folder in (tmp_path / "new", empty):
        _index(small_vault, folder)
        assert (folder / benchkit.BENCH_MARKER).is_file() and (folder / "index.json").is_file()
        (folder / "stale").write_text("from the run before")
        _index(small_vault, folder)  # the benchmark's own index: replaced
        assert not (folder / "stale").exists() and (folder / benchkit.BENCH_MARKER).is_file()


def test_all_checks_its_index_folders_before_any_work(tmp_path):
    _real_index(tmp_path / "index-large")
    with pytest.raises(SystemExit) as exited:
        bench.main(["all", "--quick", "--work", str(tmp_path), "--no-shim", "--ollama-host", "http://127.0.0.1:9"])
    assert exited.value.code == 2
    assert not list(tmp_path.glob("vault-*"))  # no vault generated


def test_responsive_watches_a_first_sync_and_a_resync_of_every_note(tmp_path, fake_ollama):
    from scripts.synth_vault import generate

    vault, index_dir, out = tmp_path / "vault", tmp_path / "index", tmp_path / "responsive.json"
    generate(vault, 30, seed=3)
    argv = ["responsive", "--vault", str(vault), "--index-dir", str(index_dir), "--json", str(out)]
    bench.main(
        [*argv, "--ollama-host", fake_ollama.url, "--model", "fake-embed", "--queries", "5", "--work", str(tmp_path)]
    )
    record = json.loads(out.read_text())
    assert record["notes"] == 30 and record["chunks"] > 30
    for phase in ("first_sync", "resync"):  # (a sync this small may pass between two polls: no progress asserted)
        assert set(record[phase]["status"]["answers"]) == {"200"}, phase  # every status call answered
        assert record[phase]["status"]["latency"]["n"] >= 1, phase
    assert record["idle_search"]["answers"] == {"200": 5}
    # every note re-read (its time moved) and none embedded again (its text did not change)
    assert record["resync"]["touched"] == 30
    # (the sync the watcher starts on the touches may pass between two status polls, and only the
    # reindex's be seen: every report seen changed and embedded nothing)
    reports = record["resync"]["sync_reports"]
    assert reports and all(r["changed"] == 0 and r["chunks_embedded"] == 0 for r in reports), reports
    assert sum(record["resync"]["search"]["answers"].values()) >= 1


def test_progress_counts_a_step_whose_seconds_move_as_moving_and_a_stuck_count_as_still():
    from scripts.bench_responsive import Call, counts_or_step, progress_intervals

    def status(at: float, done: int, stage: str | None = None, seconds: float | None = None) -> Call:
        return Call(at, 0.0, 200, {"done": done, "total": 10, "stage": stage, "stage_seconds": seconds})

    calls = [status(0.5, 5), status(1.0, 10), *(status(1.0 + t, 10, "keyword index", t) for t in range(1, 9))]
    by_count = progress_intervals(calls, 0.0, 9.5)
    assert by_count["longest_s"] == 8.5 and by_count["longest_between"] == "10/10 → in step"
    by_step = progress_intervals(calls, 0.0, 9.5, counts_or_step)
    assert by_step["longest_s"] == 1.0 and by_step["over_1s"] == 0


def test_benchmarks_page_shows_the_sizes_table_of_its_record():
    """docs/BENCHMARKS.md's table of sizes is the one docs/bench/sizes.json renders to, row for row."""
    root = Path(__file__).resolve().parent.parent
    record = json.loads((root / "docs" / "bench" / "sizes.json").read_text("utf-8"))
    table = sizes_table(record)
    assert table.count("\n") >= 10
    assert table in (root / "docs" / "BENCHMARKS.md").read_text("utf-8")


async def test_the_hash_embed_server_gives_the_vectors_the_in_process_embedder_makes():
    """scripts.hash_ollama stands in for the stand-in's hash-embed in the large-vault benchmarks: the
    same vectors over HTTP, the model listed and shown as Ollama does, any other model missing."""
    import numpy as np
    from aiohttp.test_utils import TestClient, TestServer

    from scripts.hash_ollama import make_app

    texts = ["Fear of shipping: a note about [[Projects]].", "Ünïcode wörds and 2025-05-01"]
    async with TestClient(TestServer(make_app())) as client:
        tags = await (await client.get("/api/tags")).json()
        assert [m["name"] for m in tags["models"]] == ["hash-embed:latest", "hash-embed-1024:latest"]
        shown = await (await client.post("/api/show", json={"model": "hash-embed"})).json()
        assert shown["model_info"]["bert.embedding_length"] == 384
        shown = await (await client.post("/api/show", json={"model": "hash-embed-1024"})).json()
        assert shown["model_info"]["bert.embedding_length"] == 1024
        wide = await client.post("/api/embed", json={"model": "hash-embed-1024", "input": texts})
        wide_vectors = np.array((await wide.json())["embeddings"], dtype=np.float32)
        assert np.allclose(wide_vectors, await benchkit.LocalHashEmbedder(1024).embed(texts), atol=1e-7)
        answer = await client.post("/api/embed", json={"model": "hash-embed:latest", "input": texts})
        vectors = np.array((await answer.json())["embeddings"], dtype=np.float32)
        assert np.allclose(vectors, await benchkit.LocalHashEmbedder().embed(texts), atol=1e-7)
        assert (await (await client.get("/shim/stats")).json())["embed_inputs"] == 4
        missing = await client.post("/api/embed", json={"model": "all-minilm", "input": "x"})
        assert missing.status == 404 and "not found" in (await missing.json())["error"]


def test_a_vault_with_topics_clusters_and_the_default_vault_is_unchanged(tmp_path):
    """Notes of one topic share most of their content words: with hash-embed-1024's vectors, each note's
    nearest other note is far closer than in the default vault, where topic words are drawn per note
    (whose bytes the topics option leaves alone)."""
    from scripts.synth_vault import generate

    generate(tmp_path / "plain", 300, seed=3)
    generate(tmp_path / "again", 300, seed=3, topics=None)
    generate(tmp_path / "topics", 300, seed=3, topics=20)
    texts = {
        name: [p.read_text("utf-8") for p in sorted((tmp_path / name).rglob("*.md"))]
        for name in ("plain", "again", "topics")
    }
    assert texts["plain"] == texts["again"]
    embedder = benchkit.LocalHashEmbedder(1024)
    assert embedder.model == "hash-embed-1024" and benchkit.hash_model(384) == "hash-embed"

    def nearest(name: str) -> float:
        import numpy as np

        m = np.stack([embedder.vector(t[:1500]) for t in texts[name]])
        cosines = m @ m.T
        np.fill_diagonal(cosines, -1.0)
        return float(cosines.max(axis=1).mean())

    assert nearest("topics") > nearest("plain") + 0.1


def test_restart_times_ready_by_health_and_searches_short_and_long_questions(tmp_path, fake_ollama):
    """`restart` as a person meets it: ready is when /v1/health says nothing is pending (after the
    port answered), RSS is read from the vask process, and the short and long questions are asked."""
    from scripts.synth_vault import generate

    vault, index_dir, out = tmp_path / "vault", tmp_path / "index", tmp_path / "restart.json"
    generate(vault, 20, seed=3)
    model = ["--ollama-host", fake_ollama.url, "--model", "fake-embed"]
    bench.main(["index", "--vault", str(vault), "--index-dir", str(index_dir), *model])
    common = ["--vault", str(vault), "--index-dir", str(index_dir), "--json", str(out), "--work", str(tmp_path)]
    bench.main(["restart", *common, *model, "--launcher", "python", "--runs", "1", "--short", "4", "--long", "2"])
    record = json.loads(out.read_text())
    run = record["runs"][0]
    assert 0 < run["listening_s"] <= run["ready_s"]
    assert run["searches"] == 6 and run["short"]["n"] == 3 and run["long"]["n"] == 2  # (the first short one alone)
    assert run["notes"] == 20 and run["idle_rss_mib"] > 20  # the vask process's own, not uv's or a shell's
    assert record["launcher"] == "python" and record["checkout_commit"]


def test_questions_of_a_vault_are_four_words_as_typed_and_paragraphs_as_pasted(tmp_path):
    from scripts.synth_vault import generate

    generate(tmp_path / "vault", 30, seed=3)
    shorts, longs = benchkit.vault_questions(tmp_path / "vault", 10, 5)
    assert (shorts, longs) == benchkit.vault_questions(tmp_path / "vault", 10, 5)  # the same for the same seed
    assert len(shorts) == 10 and all(len(q.split()) == 4 and q == q.lower() and q.isascii() for q in shorts)
    assert len(longs) == 5 and all(40 <= len(p.split()) <= 120 for p in longs)
