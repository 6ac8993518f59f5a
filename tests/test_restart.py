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


async def test_a_note_reindexed_while_the_warm_up_runs_is_found_by_its_new_words(fake_ollama, vault, settings_for):
    """The warm-up after the start-up sync runs beside the syncs that follow: a note changed and
    reindexed at once is found by its new words (a warm-up that reconnected to the database left the
    searches on a version of the table without the note)."""
    for _ in range(5):  # (the warm-up and the reindex overlap differently each time)
        async with running_app(settings_for(vault)) as api:
            note = vault / "Daily" / "2026-03-14.md"
            note.write_text(note.read_text() + "\nAdded a note about quokkas.\n")
            syncs = api.live.syncs
            assert (await api.post("/v1/reindex", {"paths": ["Daily/2026-03-14.md"]})).status == 202
            while api.live.syncs == syncs:
                await asyncio.sleep(0.01)
            await api.live.wait_idle()
            hits = (await api.search("quokkas", top_k=3, mode="hybrid"))["hits"]
            assert hits and hits[0]["path"] == "Daily/2026-03-14.md" and "quokkas" in hits[0]["text"]
            note.write_text(note.read_text().replace("\nAdded a note about quokkas.\n", ""))
