"""Keeping a store's chunk and note tables in shape after syncs: compaction, which is held back on a
table with a vector index (LanceDB's optimize damages that index, below), the purge of what excluded
notes left in older versions, pruning the versions a large sync's compaction kept, and the full-text
index made anew while a compaction is held back. A mixin of `IndexTables` (adapters/tables.py): it
works on that index's tables, with the lock and vector indexes of their `Database`.

Each of these holds the upkeep lock (`VectorIndexes.upkeep`), which a vector index build holds too:
they run one at a time and never beside a build. LanceDB calls the purge's cleanup of unverified
files safe only with no write in progress, and a build's index files are such a write until it
commits; a compaction would drop the old index while its replacement is being built.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import warnings
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

from vask_server.adapters.database import Database
from vask_server.adapters.lancedb_api import FTS, lancedb

log = logging.getLogger(__name__)

# A compaction keeps the versions of its last seconds: searches in flight may still read them.
_KEEP_VERSIONS = timedelta(seconds=10)
# _OPTIMIZE_LOSES_ANN_ROWS: LanceDB's optimize also folds new rows into a table's IVF-RQ index, and
# on some tables loses rows of it while doing so ("partition index is 24 but the number of
# partitions is 15, skip loading it"), and recall against exact search falls with nothing changed.
# So a table's vector index is dropped before an optimize and built anew after it, and a table that
# has one is compacted only when this much has piled up: small fragments, or deleted rows (a share of
# those stored), which searches still step over (docs/BENCHMARKS.md, "Table upkeep").
_COMPACT_INDEXED_FRAGMENTS = 64
_COMPACT_INDEXED_DELETED_SHARE = 0.02
# Rows outside the full-text index are searched by a scan that adds to every keyword search; the
# optimize that would fold them in is held back on a table with a vector index, so from this many its
# full-text index is made anew instead, which costs a few seconds (docs/BENCHMARKS.md, "Table upkeep").
_KEYWORD_STALE_ROWS = 1_000
# After a large sync the versions a compaction kept hold about as much again as the index: they are
# pruned once no search can read them, before a vector index is built on the table (`prune_versions`).


class TableUpkeep:
    """What `IndexTables` brings: its tables, and the database they are in."""

    database: Database
    chunks_name: str

    async def chunks(self) -> lancedb.AsyncTable:
        raise NotImplementedError

    async def notes(self) -> lancedb.AsyncTable:
        raise NotImplementedError

    def _writing(self) -> contextlib.AbstractAsyncContextManager[None]:
        raise NotImplementedError

    @contextlib.asynccontextmanager
    async def _upkeep(self, what: str) -> AsyncIterator[None]:
        """The upkeep lock (taken before the write lock, never after it); waits for a vector index
        being built, and says so."""
        upkeep = self.database.ann.upkeep
        if upkeep.locked():
            log.info("%s waits for the vector index being built", what)
        async with upkeep:
            yield

    async def refresh_keyword_index(self) -> bool:
        """Makes the full-text index of a table with a vector index anew when `_KEYWORD_STALE_ROWS`
        rows or more are outside it (`compact` leaves such a table alone until a compaction is due).
        True when it did."""
        if self.chunks_name not in self.database.ann.built:
            return False
        table = await self.chunks()
        for index in await table.list_indices():
            if "search_text" in index.columns and (index.num_unindexed_rows or 0) >= _KEYWORD_STALE_ROWS:
                async with self._upkeep("making the keyword index anew"), self.database.lock:
                    await table.create_index("search_text", config=FTS(with_position=False), replace=True)
                return True
        return False

    async def prune_versions(self) -> None:
        """Removes the old versions the last compaction had to keep, once no search can still be
        reading them (`_KEEP_VERSIONS` after it). Not on a table with a vector index, which the
        optimize that prunes would damage (`_OPTIMIZE_LOSES_ANN_ROWS`): a sync prunes before it
        builds one; otherwise the next compaction prunes them. A failure is logged."""
        ann = self.database.ann
        wait = self.database.compacted_at + _KEEP_VERSIONS.total_seconds() + 1 - time.monotonic()
        if wait > 0:
            await asyncio.sleep(wait)
        async with self._upkeep("removing old versions"), self.database.lock:
            if self.chunks_name in ann.built or ann.building():
                return
            try:
                for table in (await self.chunks(), await self.notes()):
                    await table.optimize(cleanup_older_than=_KEEP_VERSIONS)
            except Exception as exc:  # the next compaction prunes them
                log.warning("removing old versions of the index failed (%s); the next sync tries again", exc)

    def prune_later(self) -> None:
        """`prune_versions` in the background."""
        database = self.database
        if database.prune is None or database.prune.done():
            database.prune = asyncio.create_task(self.prune_versions(), name="vask-prune")

    async def purge(self) -> None:
        """After excluded notes were deleted: rebuilds the full-text and vector indexes without them
        and drops every older version of both tables, so no version kept on disk still holds them.
        (Searches in flight on an older version may fail once; exclusions change rarely.) The vector
        index is dropped before the compaction (`_OPTIMIZE_LOSES_ANN_ROWS`), as `compact` drops it:
        the sync builds it again (`missing_vector_index`); searches are exact meanwhile. A vector
        index being built is waited for first (the module's docstring)."""
        ann = self.database.ann
        async with self._upkeep("removing excluded notes"), self._writing():
            chunks, notes = await self.chunks(), await self.notes()
            if await chunks.count_rows():
                indices = await chunks.list_indices()
                if any("search_text" in index.columns for index in indices):
                    await chunks.create_index("search_text", config=FTS(with_position=False), replace=True)
            if self.chunks_name in ann.built:
                await ann.drop(self.chunks_name, chunks)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # "removes every version but the latest": the point
                for table in (chunks, notes):
                    await table.optimize(cleanup_older_than=timedelta(0), delete_unverified=True)

    async def compact(self, *, keep: timedelta = _KEEP_VERSIONS) -> bool:
        """Merges small fragments, brings the keyword and B-tree indexes up to date and prunes old
        versions. A chunk table with a vector index is compacted only when enough has piled up
        (`_compaction_due`), with that index dropped first (`_OPTIMIZE_LOSES_ANN_ROWS`): the sync
        then builds it anew (`missing_vector_index`). True when it dropped one. A vector index being
        built is waited for first (the module's docstring)."""
        ann = self.database.ann
        async with self._upkeep("compacting"), self.database.lock:
            chunks, notes = await self.chunks(), await self.notes()
            await notes.optimize(cleanup_older_than=keep)
            dropped = False
            if self.chunks_name in ann.built:
                if not await self._compaction_due(chunks):
                    return False
                await ann.drop(self.chunks_name, chunks)
                dropped = True
            await chunks.optimize(cleanup_older_than=keep)
            self.database.compacted_at = time.monotonic()
            return dropped

    async def _compaction_due(self, table: lancedb.AsyncTable) -> bool:
        """Whether a chunk table with a vector index has piled up enough to be compacted (and its
        vector index built again): many small fragments (every sync's write adds some), or many
        deleted rows (an edited note's old passages), which searches still step over."""
        stats: Any = await table.stats()  # (a dict at run time, whatever its annotation says)
        fragments = stats["fragment_stats"]
        stored = int(fragments["lengths"]["mean"]) * int(fragments["num_fragments"])  # deleted rows included
        deleted = stored - int(stats["num_rows"])
        small = int(fragments["num_small_fragments"])
        return small >= _COMPACT_INDEXED_FRAGMENTS or deleted >= _COMPACT_INDEXED_DELETED_SHARE * max(1, stored)
