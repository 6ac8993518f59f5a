"""A long first sync makes every note searchable by keyword before it is embedded.

With a laptop's model a large vault's first sync takes an hour, and its notes would be unsearchable
meanwhile. So once the sync's first (small) batch has measured the model's pace, a sync that will
take long writes every note's text to the store's keyword table, beside the embedding; searches
read that table by keyword until the chunks table has its own keyword index (adapters/tables.py).
The table outlives a restart (a first sync paused, the computer shut down): the sync that takes up
where it stopped keeps it, brought in step with the vault, instead of leaving the notes not yet
embedded unfound until it is written again.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

import pyarrow as pa

from vask_server.adapters.manifest import Manifest
from vask_server.adapters.tables import IndexTables
from vask_server.adapters.vault import FileStat
from vask_server.core.filetypes import CANVAS, MARKDOWN, file_type
from vask_server.core.links import LinkResolver
from vask_server.core.plan import recent_first
from vask_server.core.progress import SyncProgress
from vask_server.services.sync.reading import NoteReader
from vask_server.services.sync.rows import text_rows

log = logging.getLogger(__name__)

# A first sync's first batch is this small: it measures the model's pace within seconds.
FIRST_BATCH_NOTES = 8
# A first sync expected to take longer than this writes the keyword table. A quicker one does not:
# it would only add the reading of every note twice.
KEYWORD_FIRST_AFTER_S = 60.0
# ... and only with a model slower than this (chunks a second: a CPU's pace, not a GPU's), for which
# reading every note once more costs little beside the embedding; a fast model's first sync is quick
# enough without it, and would only be slowed by it.
SLOW_MODEL_CHUNKS_PER_S = 150.0


def long_first_sync(
    progress: SyncProgress, embed_seconds: float, *, after_s: float, slow_chunks_per_s: float
) -> float | None:
    """After the first batch: the seconds the rest will take, when that is longer than `after_s`
    with a model slower than `slow_chunks_per_s` (the chunks embedded in `embed_seconds` spent
    waiting for it); None when the keyword table is not worth writing."""
    seconds_left = progress.eta_seconds(min_measured_s=0.0)
    if seconds_left is None or seconds_left < after_s:
        return None
    if progress.chunks_embedded > slow_chunks_per_s * embed_seconds:
        return None
    return seconds_left


def start_keyword_table(
    tables: IndexTables,
    reader: NoteReader,
    on_disk: dict[str, FileStat],
    resolver: LinkResolver,
    *,
    seconds_left: float,
    notes_per_batch: int,
    rows_per_write: int,
    left_to_embed: Callable[[], int],
) -> asyncio.Task[None]:
    """Writes the keyword table in the background, beside the embedding. Every note, those embedded
    already too: until the end, keyword searches read this table alone. Markdown and canvases: a PDF
    is read by the sync's one PDF worker, not to be shared."""
    paths = recent_first((p for p in on_disk if file_type(p) in (MARKDOWN, CANVAS, None)), on_disk)
    log.info("the first sync will take ~%d min: every note is searchable by keyword first", seconds_left // 60)
    writing = _write_keyword_table(
        tables, reader, paths, on_disk, resolver, notes_per_batch, rows_per_write, left_to_embed
    )
    return asyncio.create_task(writing, name="vask-keywords")


async def _write_keyword_table(
    tables: IndexTables,
    reader: NoteReader,
    paths: list[str],
    on_disk: dict[str, FileStat],
    resolver: LinkResolver,
    notes_per_batch: int,
    rows_per_write: int,
    left_to_embed: Callable[[], int],
) -> None:
    started = time.perf_counter()
    try:
        await tables.start_text()
        await _write_rows(tables, reader, paths, on_disk, resolver, notes_per_batch, rows_per_write)
        await tables.finish_text()
        log.info(
            "every note is searchable by keyword (%d notes in %.1f s); %d are still to be embedded",
            len(paths),
            time.perf_counter() - started,
            left_to_embed(),
        )
    except asyncio.CancelledError:
        raise
    except Exception:  # keyword search then waits for the sync's end, as it did without this
        log.exception("writing the keyword table failed")


async def refresh_keyword_table(
    tables: IndexTables,
    reader: NoteReader,
    on_disk: dict[str, FileStat],
    resolver: LinkResolver,
    *,
    recut: bool,
    notes_per_batch: int,
    rows_per_write: int,
) -> None:
    """The keyword table an earlier run of this first sync finished (a restart finds it searchable:
    adapters/store.py), brought in step with the vault before the sync embeds anything or waits on a
    pause: the rows of notes deleted or excluded since go (no text of theirs may stay), and the notes
    changed or added since are read again (`recut`: all of them, their text now cut another way)."""
    started = time.perf_counter()
    stamps = await tables.text_stamps()
    paths = [path for path in on_disk if file_type(path) in (MARKDOWN, CANVAS, None)]
    redo = [p for p in paths if recut or stamps.get(p) != (on_disk[p].mtime_ns, on_disk[p].size)]
    wanted = set(paths)
    stale = sorted({p for p in stamps if p not in wanted} | {p for p in redo if p in stamps})
    if stale:
        await tables.delete_text_rows(stale)
    await _write_rows(tables, reader, recent_first(redo, on_disk), on_disk, resolver, notes_per_batch, rows_per_write)
    if stale or redo:
        await tables.finish_text()  # (its full-text index made again, over the rows as they are now)
    if stale:  # (a note excluded meanwhile: no older version of the table may keep its text)
        await tables.purge_text()
    log.info(
        "the keyword table of the first sync is kept: %d notes read again, %d notes' rows removed (%.1f s)",
        len(redo),
        len(stale),
        time.perf_counter() - started,
    )


async def _write_rows(
    tables: IndexTables,
    reader: NoteReader,
    paths: list[str],
    on_disk: dict[str, FileStat],
    resolver: LinkResolver,
    notes_per_batch: int,
    rows_per_write: int,
) -> None:
    """These notes read, cut into rows and added to the keyword table, a batch at a time."""
    empty = Manifest.empty()
    rows: list[pa.Table] = []
    for start in range(0, len(paths), notes_per_batch):
        prepared = await asyncio.to_thread(
            reader.prepare, paths[start : start + notes_per_batch], on_disk, empty, resolver
        )
        table = text_rows(prepared, reader.options.keyword_terms)
        if table is not None:
            rows.append(table)
        if sum(t.num_rows for t in rows) >= rows_per_write:
            await tables.add_text_rows(pa.concat_tables(rows))
            rows = []
    if rows:
        await tables.add_text_rows(pa.concat_tables(rows))
