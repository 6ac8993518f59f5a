"""A restart with nothing changed: the vault is confirmed current before anything else takes the cores,
nothing is read twice, and what the warm-up read and freed goes back at once."""

from __future__ import annotations

import asyncio
from typing import Any

from tests.web_helpers import running_app
from vask_server.services.query.search import Searcher
from vask_server.services.sync import live as live_module
from vask_server.services.sync.indexer import Indexer

WAIT = 60.0  # a guard against hanging, not a measure of speed


async def _warmed(api: Any) -> None:
    async def done() -> None:
        while api.live._warm is None or not api.live._warm.done():
            await asyncio.sleep(0.02)

    await asyncio.wait_for(done(), WAIT)


async def test_a_restart_confirms_the_vault_first_then_warms_and_reads_the_counts_once(
    small_vault, settings_for, monkeypatch
):
    settings = settings_for(small_vault)
    async with running_app(settings) as api:  # the first sync builds the index
        notes = (await (await api.get("/v1/status")).json())["notes"]
    order: list[str] = []
    real_sync, real_warm, real_status = Indexer.sync, Searcher.warm, live_module.index_status

    async def sync(self: Indexer, *args: Any, **kwargs: Any) -> Any:
        order.append("sync")
        try:
            return await real_sync(self, *args, **kwargs)
        finally:
            order.append("synced")

    async def warm(self: Searcher) -> None:
        order.append("warm")
        await real_warm(self)

    reads: list[int] = []

    async def status(services: Any, **kwargs: Any) -> dict[str, Any]:
        reads.append(1)
        return await real_status(services, **kwargs)

    monkeypatch.setattr(Indexer, "sync", sync)
    monkeypatch.setattr(Searcher, "warm", warm)
    monkeypatch.setattr(live_module, "index_status", status)
    async with running_app(settings) as api:
        await _warmed(api)
        # the start-up sync first: the warm-up (calibration, the tables' indexes) waits for its end
        assert order == ["sync", "synced", "warm"]
        # the counts read beside the sync still hold: it found every note as it was and wrote nothing
        assert len(reads) == 1
        body = await (await api.get("/v1/status")).json()
        assert body["notes"] == notes and body["pending"] == 0 and body["state"] == "idle"
        # a sync that does write has the counts read again
        (small_vault / "New note.md").write_text("# New note\n\nA note written after the restart.\n")
        syncs = api.live.syncs
        api.live.request(["New note.md"])
        await asyncio.wait_for(_until(lambda: api.live.syncs > syncs and not api.live.pending), WAIT)
        assert len(reads) == 2
        assert (await (await api.get("/v1/status")).json())["notes"] == notes + 1


async def _until(condition: Any) -> None:
    while not condition():
        await asyncio.sleep(0.02)


async def test_the_warm_up_hands_what_it_freed_back_when_it_ends(small_vault, settings_for, monkeypatch):
    from vask_server.adapters import memory

    settings = settings_for(small_vault)
    async with running_app(settings):
        pass
    released: list[int] = []
    monkeypatch.setattr(memory, "release_memory", lambda: released.append(1))
    async with running_app(settings) as api:
        await _warmed(api)
        # at once, not once searches have paused for a while: the idle server sits at what it keeps
        assert released == [1]


async def test_the_warm_up_drops_the_databases_caches_of_its_reads_before_loading_the_search_indexes(
    small_vault, settings_for, monkeypatch
):
    """What the start-up check and the calibration read stays in LanceDB's caches as long as the
    connection does; the warm-up reconnects after them, so an idle server holds the search indexes'."""
    from vask_server.adapters.store import Store
    from vask_server.adapters.tables import IndexTables
    from vask_server.services.query.calibrator import Calibrator

    settings = settings_for(small_vault)
    async with running_app(settings):
        pass
    steps: list[str] = []
    real_calibration, real_forget, real_vector = Calibrator.for_index, Store.forget_tables, IndexTables.vector_search

    async def calibration(self: Calibrator, *args: Any, **kwargs: Any) -> Any:
        steps.append("calibration")
        return await real_calibration(self, *args, **kwargs)

    async def forget(self: Store) -> None:
        steps.append("reconnect")
        await real_forget(self)

    async def vector(self: IndexTables, *args: Any, **kwargs: Any) -> Any:
        steps.append("vector index")
        return await real_vector(self, *args, **kwargs)

    monkeypatch.setattr(Calibrator, "for_index", calibration)
    monkeypatch.setattr(Store, "forget_tables", forget)
    monkeypatch.setattr(IndexTables, "vector_search", vector)
    async with running_app(settings) as api:
        await _warmed(api)
        assert steps[:3] == ["calibration", "reconnect", "vector index"]
        assert (await api.search("sourdough starter"))["hits"]  # searches read the tables anew
