"""Many writes through one Store: it reconnects every few writes (bounding what the connection's
table handles keep), and nothing written is lost by that, nor are handles in use broken."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import numpy as np
import pytest

from tests.test_store_ann import DIM, INDEX, SUFFIX, _rows
from vask_server.adapters import database as database_module
from vask_server.adapters import memory as memory_module
from vask_server.adapters.manifest import NoteRecord
from vask_server.adapters.store import Store


def _record(path: str, chunks: int) -> NoteRecord:
    return NoteRecord(path, 1, 10, "h", path, [], [], "[]", chunks, "ok", "", "2026-12-02T00:00:00+00:00")


async def test_writes_survive_the_periodic_reconnect(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(database_module, "_RECONNECT_AFTER_WRITES", 3)
    rng = np.random.default_rng(4)
    centres = rng.standard_normal((4, DIM))
    store = await Store.open(tmp_path)
    early = await store.tables(INDEX).chunks()  # a handle taken before any reconnect
    connections = {id(store.database.connection)}
    for batch in range(10):
        rows = _rows(batch * 20, 20, rng, centres)  # one note of 20 chunks a batch
        path = f"note{batch}.md"
        await store.tables(INDEX).write_notes([path], rows, [_record(path, 20)], existing=set())
        connections.add(id(store.database.connection))
    assert len(connections) == 4  # 10 writes, a new connection after every 3
    assert await store.tables(INDEX).count_chunks() == 200
    assert sorted(await store.tables(INDEX).manifest()) == sorted(f"note{n}.md" for n in range(10))
    # A handle in use when the store reconnected keeps answering, from the version it last saw (the
    # 3 writes made through it): LanceDB handles do not look for newer versions on their own.
    assert await early.count_rows() == 60
    await store.tables(INDEX).delete_notes(["note3.md"])
    assert await store.tables(INDEX).count_chunks() == 180


def test_the_process_memory_policy_caps_lances_read_ahead_and_the_arenas_unless_the_user_set_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    arenas: list[int] = []
    monkeypatch.setattr(memory_module, "limit_malloc_arenas", lambda arenas_=2: arenas.append(arenas_))
    monkeypatch.delenv("LANCE_DEFAULT_IO_BUFFER_SIZE", raising=False)
    monkeypatch.delenv("LANCE_SHUFFLE_BATCH_BYTES", raising=False)
    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    memory_module.set_process_memory_policy()
    assert os.environ["LANCE_DEFAULT_IO_BUFFER_SIZE"] == str(16 * 1024 * 1024) and arenas == [2]
    assert os.environ["LANCE_SHUFFLE_BATCH_BYTES"] == str(16 * 1024 * 1024)
    monkeypatch.setenv("LANCE_DEFAULT_IO_BUFFER_SIZE", "999999")
    monkeypatch.setenv("LANCE_SHUFFLE_BATCH_BYTES", "777777")
    monkeypatch.setenv("MALLOC_ARENA_MAX", "8")
    memory_module.set_process_memory_policy()
    assert os.environ["LANCE_DEFAULT_IO_BUFFER_SIZE"] == "999999" and arenas == [2]  # the user's own stay
    assert os.environ["LANCE_SHUFFLE_BATCH_BYTES"] == "777777"


def test_the_commands_that_open_the_index_set_the_policy_and_token_does_not(monkeypatch, tmp_path: Path) -> None:
    from vask_server.cli import command as cli

    set_calls: list[str] = []
    monkeypatch.setattr(memory_module, "set_process_memory_policy", lambda: set_calls.append("set"))
    cli.main(["token", "--vault", str(tmp_path), "--index-dir", str(tmp_path / "index")])
    assert set_calls == []
    cli.main(["status", "--vault", str(tmp_path), "--index-dir", str(tmp_path / "index")])
    assert set_calls == ["set"]


async def test_a_table_left_half_created_by_a_killed_run_is_created_again(tmp_path: Path) -> None:
    """kill -9 while LanceDB created a table leaves its folder without a first version: listed, but
    impossible to open ("was not found"), which made every later sync fail. It held nothing."""
    store = await Store.open(tmp_path)
    half = tmp_path / "lancedb" / f"chunks_{SUFFIX}.lance" / "_versions"
    half.mkdir(parents=True)
    table = await store.tables(INDEX).chunks()
    rng = np.random.default_rng(6)
    await store.tables(INDEX).write_notes(
        ["a.md"], _rows(0, 20, rng, rng.standard_normal((2, DIM))), [_record("a.md", 20)]
    )
    assert await table.count_rows() == 20
    # A complete table is never taken for one: a later process opens it with its rows.
    again = await Store.open(tmp_path)
    assert await again.tables(INDEX).count_chunks() == 20


async def test_memory_is_released_once_activity_pauses_not_at_every_touch(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[float] = []
    monkeypatch.setattr(memory_module, "release_memory", lambda: calls.append(time.monotonic()))
    quiet = memory_module.ReleaseWhenQuiet(after=0.1)
    for _ in range(5):  # a burst of searches
        quiet.touch()
        await asyncio.sleep(0.02)
    assert calls == []  # not while they go on
    await asyncio.sleep(0.3)
    assert len(calls) == 1  # once, after the pause
    quiet.touch()
    await asyncio.sleep(0.3)
    assert len(calls) == 2


async def test_old_versions_a_large_sync_kept_are_pruned_once_no_search_can_read_them(
    fake_ollama, small_vault, settings_for, monkeypatch
):
    """A compaction keeps its last seconds' versions (searches in flight read them); after a large sync
    they hold as much again as the index, so they are pruned once that time has passed."""
    from datetime import timedelta

    import vask_server.adapters.upkeep as upkeep_module
    from vask_server.services.context import open_services

    monkeypatch.setattr(upkeep_module, "_KEEP_VERSIONS", timedelta(seconds=0.2))
    settings = settings_for(small_vault)
    async with open_services(settings) as services:
        for n in range(3):  # versions: each sync writes some
            (small_vault / f"Extra {n}.md").write_text(f"# Extra {n}\n\nMore words, number {n}.\n")
            await services.indexer.sync()
        tables = services.store.tables(services.searcher.active())
        await tables.compact(keep=timedelta(hours=1))  # every version kept
        versions = settings.resolved_index_dir() / "lancedb" / f"{tables.chunks_name}.lance" / "_versions"
        before = len(list(versions.glob("*.manifest")))
        tables.prune_later()
        await services.store.wait_background()
        after = len(list(versions.glob("*.manifest")))
    assert before > 3 and after == 1
