"""A first sync of a vault larger than a batch, through the fake Ollama held mid-way: the newest notes
are embedded first, every note is found by keyword before it is embedded, progress and time left are
told, and pausing stops the sync where it is until it is resumed."""

import asyncio
import contextlib
import os
import time
from pathlib import Path

import pytest

from vask_server.core.plan import SyncQueue, recent_first
from vask_server.core.progress import SyncProgress, describe_eta
from vask_server.core.question import Question
from vask_server.mcp import calls as mcp_calls
from vask_server.mcp.shapes import status_output
from vask_server.services.context import index_status, open_services
from vask_server.services.sync.freshness import measure

DAY = 86400
RARE = "quillwortian"


def make_vault(root: Path, notes: int = 150) -> list[str]:
    """`notes` notes with file times a day apart (note 0 the newest); the oldest holds a rare word.
    Returns their paths, newest first."""
    now = time.time()
    paths = []
    for n in range(notes):
        path = f"Notes/Note {n:03d}.md"
        body = f"# Topic {n}\n\nThoughts number {n} on gardening, tea and walking, noted on day {n}.\n"
        if n == notes - 1:
            body += f"\nA {RARE} meadow, seen once.\n"
        file = root / path
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(body)
        when = now - n * DAY
        os.utime(file, (when, when))
        paths.append(path)
    return paths


class Stamp:
    def __init__(self, mtime_ns: int) -> None:
        self.mtime_ns, self.size = mtime_ns, 1


def test_notes_are_taken_newest_first_with_the_named_ones_before_them() -> None:
    stamps = {"a.md": Stamp(1), "b.md": Stamp(3), "c.md": Stamp(2), "d.md": Stamp(3)}
    assert recent_first(stamps, stamps) == ["b.md", "d.md", "c.md", "a.md"]
    assert recent_first(stamps, stamps, first=["a.md", "zz.md"]) == ["a.md", "b.md", "d.md", "c.md"]
    queue = SyncQueue(["a", "b", "c", "d", "e"])
    assert queue.take(2) == ["a", "b"]
    assert queue.promote(["e", "a", "x"]) == 1  # (a is done, x is not in this sync)
    assert queue.take(2) == ["e", "c"] and queue.remaining() == ["d"] and len(queue) == 1


def test_time_left_follows_the_pace_in_bytes_and_leaves_out_the_pauses() -> None:
    progress = SyncProgress(notes_total=100, bytes_total=10_000, started=0.0)
    assert progress.eta_seconds() is None and progress.to_dict()["eta_seconds"] is None  # nothing measured yet
    progress.advance(10.0, notes=10, size=1_000, chunks=50, embedded=50)
    assert progress.eta_seconds() == pytest.approx(90.0)  # 9,000 bytes left at 100 bytes/s
    assert progress.chunks_total == 500 and progress.to_dict()["percent"] == 10.0
    assert progress.rate() == pytest.approx(5.0)
    progress.was_paused(100.0)  # a pause of 100 s, then the same pace again
    progress.advance(120.0, notes=10, size=1_000, chunks=50, embedded=50)
    assert progress.eta_seconds() == pytest.approx(80.0)
    assert describe_eta(30) == "less than a minute left"
    assert describe_eta(40 * 60) == "~40 min left"
    assert describe_eta(190 * 60) == "~3 h 10 min left"
    assert describe_eta(None) == ""


def _files_holding(folder: Path, word: str) -> list[str]:
    """The files under the index folder whose bytes hold `word`."""
    return [str(p) for p in folder.rglob("*") if p.is_file() and word.encode() in p.read_bytes()]


async def _until(condition, timeout: float = 30.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not await condition():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.05)


@contextlib.asynccontextmanager
async def _first_sync_held_after_its_first_batch(fake_ollama, tmp_path, settings_for):  # type: ignore[no-untyped-def]
    """A first sync of 150 notes held once its first batch (the 8 newest notes, one call) is embedded
    and its keyword table is searchable: yields (services, the sync's task, the notes newest first,
    the settings)."""
    vault = tmp_path / "vault"
    paths = make_vault(vault)
    fake = fake_ollama.fake
    fake.hold_from_call = 2
    settings = settings_for(vault, embed_batch_size=64)
    try:
        async with open_services(settings) as services:
            indexer, store = services.indexer, services.store
            # (the fake is fast: any pace counts as slow here)
            indexer.keyword_first_after_s, indexer.slow_model_chunks_per_s = 0.0, float("inf")
            sync = asyncio.create_task(indexer.sync())

            async def keyword_table_ready() -> bool:
                building = store.read_meta().building
                return building is not None and store.tables(building).text_ready()

            await _until(keyword_table_ready)
            yield services, sync, paths, settings
    finally:
        fake.released.set()
        fake.hold_from_call = None


async def test_a_held_first_sync_finds_new_notes_by_meaning_and_every_note_by_keyword(
    fake_ollama, tmp_path, settings_for
) -> None:
    async with _first_sync_held_after_its_first_batch(fake_ollama, tmp_path, settings_for) as held:
        services, sync, paths, settings = held
        indexer, store, fake = services.indexer, services.store, fake_ollama.fake
        progress = indexer.progress
        assert progress is not None and progress.notes_total == 150 and progress.notes_done == 8
        # the 8 newest notes are the ones embedded
        embedded = await store.tables(await indexer.target()).chunk_paths()
        assert embedded == set(paths[:8])
        # the newest note is found by meaning, the oldest (not embedded) by its rare word only
        today = __import__("datetime").date.today()
        newest = await services.searcher.search_question(
            Question("Topic 0 thoughts number 0", today=today, top_k=6, min_similarity=0.0)
        )
        assert newest.hits and newest.hits[0].path == paths[0] and not newest.hits[0].keyword_only
        assert newest.notice and "8 of 150 notes embedded" in newest.notice
        rare = await services.searcher.search_question(Question(RARE, today=today, top_k=6, min_similarity=0.0))
        assert [h.path for h in rare.hits][:1] == [paths[-1]] and rare.hits[0].keyword_only
        assert rare.hits[0].to_dict()["keyword_only"] is True
        fake.released.set()
        report = await asyncio.wait_for(sync, 60)
        assert report.changed == 150
        # done: the keyword table and every version of it are gone; the oldest note is embedded
        assert not list((settings.resolved_index_dir() / "lancedb").glob("text_*"))
        rare = await services.searcher.search_question(Question(RARE, today=today, top_k=6, min_similarity=0.0))
        assert rare.hits[0].path == paths[-1] and not rare.hits[0].keyword_only and rare.notice is None


async def test_the_status_of_a_held_first_sync_counts_what_searches_find(fake_ollama, tmp_path, settings_for) -> None:
    """Mid-way through a first sync the status says what is searchable: the notes embedded so far (and
    their chunks), and the others, found by keyword until they are embedded; not 0 notes, 0 chunks."""
    async with _first_sync_held_after_its_first_batch(fake_ollama, tmp_path, settings_for) as held:
        services, sync, _, settings = held
        indexer, store, fake = services.indexer, services.store, fake_ollama.fake
        status = await index_status(services, check=True)
        embedded = await store.tables(await indexer.target()).count_chunks()
        assert status["model"] is None and status["building"] is not None  # (not complete yet)
        assert (status["notes"], status["chunks"], status["keyword_only_notes"]) == (8, embedded, 142)
        # the agents' door says the same (the MCP index_status tool)
        told = await mcp_calls.status(services, await measure(settings, services.vault, store))
        text, shaped = status_output(told)
        assert (shaped.notes, shaped.keyword_only_notes) == (8, 142)
        assert "142 more by keyword until they are embedded" in text
        assert embedded >= 8
        fake.released.set()
        await asyncio.wait_for(sync, 60)
        status = await index_status(services)
        assert (status["notes"], status["keyword_only_notes"]) == (150, 0) and status["model"]


async def test_a_first_syncs_batches_grow_from_the_first_and_each_is_written_at_once(
    fake_ollama, tmp_path, settings_for
) -> None:
    """After the first 8 notes come 16, each batch written as soon as it is embedded: the 24 newest
    notes are searchable by meaning while the third batch waits for the model (with a whole batch of 64
    second, the 9th newest waited for all of it)."""
    vault = tmp_path / "vault"
    paths = make_vault(vault)
    fake = fake_ollama.fake
    fake.hold_from_call = 3  # (one call a batch at this batch size: the third batch waits)
    settings = settings_for(vault, embed_batch_size=64)
    try:
        async with open_services(settings) as services:
            indexer, store = services.indexer, services.store
            indexer.keyword_first_after_s, indexer.slow_model_chunks_per_s = 0.0, float("inf")
            sync = asyncio.create_task(indexer.sync())
            tables = store.tables(await indexer.target())

            async def second_batch_written() -> bool:
                # (a batch's passages are written before its notes' rows: both, or the count races them)
                return len(await tables.chunk_paths()) >= 24 and (await index_status(services))["notes"] >= 24

            await _until(second_batch_written)
            assert await tables.chunk_paths() == set(paths[:24])
            assert (await index_status(services))["notes"] == 24
            fake.released.set()
            assert (await asyncio.wait_for(sync, 60)).changed == 150
    finally:
        fake.released.set()
        fake.hold_from_call = None


async def test_a_paused_sync_stops_at_its_next_batch_and_goes_on_when_resumed(
    fake_ollama, tmp_path, settings_for
) -> None:
    vault = tmp_path / "vault"
    make_vault(vault)
    settings = settings_for(vault, embed_batch_size=64)
    async with open_services(settings) as services:
        indexer = services.indexer
        indexer.set_paused(True)
        sync = asyncio.create_task(indexer.sync(pausable=True))

        async def waiting_paused() -> bool:
            return indexer.progress is not None and indexer.progress.paused

        await _until(waiting_paused)
        await asyncio.sleep(0.3)
        assert indexer.progress is not None and indexer.progress.notes_done == 0 and not sync.done()
        assert services.store.read_meta().extra.get("paused") is True  # (what a restart reads)
        indexer.set_paused(False)
        report = await asyncio.wait_for(sync, 60)
        assert report.changed == 150 and "paused" not in services.store.read_meta().extra
        # `vask index` (not pausable) runs even when paused
        indexer.set_paused(True)
        (vault / "Notes" / "Note 000.md").write_text("# Topic 0\n\nRewritten.\n")
        report = await asyncio.wait_for(indexer.sync(), 60)
        assert report.changed == 1


async def test_a_fast_model_builds_no_keyword_table(fake_ollama, tmp_path, settings_for) -> None:
    vault = tmp_path / "vault"
    make_vault(vault)
    async with open_services(settings_for(vault, embed_batch_size=64)) as services:
        services.indexer.keyword_first_after_s = 0.0  # a long sync by this measure, but the model is fast
        created: list[str] = []
        tables = services.store.tables(await services.indexer.target())
        start_text = tables.start_text

        async def spy() -> None:
            created.append(tables.suffix)
            await start_text()

        tables.start_text = spy  # type: ignore[method-assign]
        report = await services.indexer.sync()
    assert report.changed == 150 and created == []


async def test_a_keyword_table_a_killed_sync_left_goes_with_the_next_whole_sync(
    fake_ollama, tmp_path, settings_for
) -> None:
    vault = tmp_path / "vault"
    make_vault(vault, notes=5)
    settings = settings_for(vault)
    async with open_services(settings) as services:
        await services.indexer.sync()
        tables = services.store.tables(services.searcher.active())
        # what a first sync killed mid-way leaves: the text of a note, outside the chunks table
        rows = await tables.all_chunk_rows(["id", "path", "hash", "text", "search_text"])
        await tables.start_text()
        await tables.add_text_rows(rows)
        assert list((settings.resolved_index_dir() / "lancedb").glob("text_*"))
        (vault / "Notes" / "Note 000.md").write_text("# Topic 0\n\nRewritten.\n")
        # an edit's sync does not look (it would cost every save a listing of the tables)
        await services.indexer.sync(["Notes/Note 000.md"])
        assert list((settings.resolved_index_dir() / "lancedb").glob("text_*"))
        (vault / "Notes" / "Note 001.md").write_text("# Topic 1\n\nRewritten too.\n")
        await services.indexer.sync()  # a whole sync, as every start's
    assert not list((settings.resolved_index_dir() / "lancedb").glob("text_*"))


async def test_a_paused_first_sync_keeps_its_keyword_table_over_a_restart(fake_ollama, tmp_path, settings_for) -> None:
    """The pause outlives a restart (index.json), and so does the keyword table: after the server
    starts again over the same index folder, the notes not yet embedded are still found by keyword,
    as the notice says, and the table follows what changed in the vault while it was down."""
    vault = tmp_path / "vault"
    paths = make_vault(vault)
    for path, words in ((paths[-2], "A xerophytic garden, seen twice."), (paths[-3], "A quagmirish private matter.")):
        when = (vault / path).stat().st_mtime  # (kept: old notes, not embedded before the restart)
        with (vault / path).open("a") as note:
            note.write(f"\n{words}\n")
        os.utime(vault / path, (when, when))
    fake = fake_ollama.fake
    fake.hold_from_call = 2
    settings = settings_for(vault, embed_batch_size=64)
    today = __import__("datetime").date.today()

    async def search(services, words: str):  # type: ignore[no-untyped-def]
        return await services.searcher.search_question(Question(words, today=today, top_k=6, min_similarity=0.0))

    try:
        async with open_services(settings) as services:
            indexer, store = services.indexer, services.store
            indexer.keyword_first_after_s, indexer.slow_model_chunks_per_s = 0.0, float("inf")
            sync = asyncio.create_task(indexer.sync(pausable=True))

            async def keyword_table_ready() -> bool:
                building = store.read_meta().building
                return building is not None and store.tables(building).text_ready()

            await _until(keyword_table_ready)
            indexer.set_paused(True)
            fake.released.set()  # the held batch ends, and the sync waits at the next: paused

            async def waiting_paused() -> bool:
                return indexer.progress is not None and indexer.progress.paused

            await _until(waiting_paused)
            sync.cancel()  # the server stops (a restart, a reboot)
            with pytest.raises(asyncio.CancelledError):
                await sync
        fake.hold_from_call = None
        index_dir = settings.resolved_index_dir()
        assert _files_holding(index_dir, "quagmirish")  # (in the keyword table, not embedded yet)
        # while it is down: a note goes, another comes, and one is excluded
        (vault / paths[-2]).unlink()
        (vault / "Notes" / "New.md").write_text("# New\n\nA zymurgical experiment with cider.\n")
        settings = settings_for(vault, embed_batch_size=64, exclude=(paths[-3],))

        async with open_services(settings) as services:  # a new store over the same folder
            indexer, store = services.indexer, services.store
            assert indexer.paused and store.read_meta().active is None
            rare = await search(services, RARE)
            assert [h.path for h in rare.hits][:1] == [paths[-1]] and rare.hits[0].keyword_only
            assert rare.notice and "found by keyword only" in rare.notice
            # the start-up sync, paused as the server's is: the table is brought in step first
            sync = asyncio.create_task(indexer.sync(pausable=True))

            async def waiting_paused_again() -> bool:
                return indexer.progress is not None and indexer.progress.paused

            await _until(waiting_paused_again)
            assert [h.path for h in (await search(services, "zymurgical")).hits][:1] == ["Notes/New.md"]
            assert not [h for h in (await search(services, "xerophytic")).hits if h.path == paths[-2]]
            assert not [h for h in (await search(services, "quagmirish")).hits if h.path == paths[-3]]
            assert _files_holding(index_dir, "quagmirish") == []  # no table version, no index file
            rare = await search(services, RARE)
            assert rare.hits[0].path == paths[-1] and rare.hits[0].keyword_only
            assert rare.notice and "the others are found by keyword only" in rare.notice
            indexer.set_paused(False)
            report = await asyncio.wait_for(sync, 60)
            assert report.changed == 149  # (150 notes: one gone, one new, one excluded)
            assert not list((settings.resolved_index_dir() / "lancedb").glob("text_*"))
            rare = await search(services, RARE)
            assert rare.hits[0].path == paths[-1] and not rare.hits[0].keyword_only and rare.notice is None
    finally:
        fake.released.set()
        fake.hold_from_call = None


async def test_without_a_keyword_table_the_notice_does_not_promise_keyword_matches(
    fake_ollama, tmp_path, settings_for
) -> None:
    vault = tmp_path / "vault"
    make_vault(vault)
    settings = settings_for(vault, embed_batch_size=64)
    async with open_services(settings) as services:
        indexer = services.indexer  # (a fast model by these measures: no keyword table is written)
        indexer.set_paused(True)
        sync = asyncio.create_task(indexer.sync(pausable=True))

        async def waiting_paused() -> bool:
            return indexer.progress is not None and indexer.progress.paused

        await _until(waiting_paused)
        today = __import__("datetime").date.today()
        found = await services.searcher.search_question(Question(RARE, today=today, top_k=6, min_similarity=0.0))
        assert found.hits == [] and found.notice and "the others are found once they are embedded" in found.notice
        indexer.set_paused(False)
        await asyncio.wait_for(sync, 60)
