"""The ANN indexes of the chunk tables: which table has one and with how many partitions, building
one (in a sync, or in the background while the old one serves), and the probes a search sets.
What to build is `ann_plan.py`'s; this module only carries it out."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any

from vask_server.adapters import ann_plan as plans
from vask_server.adapters.ann_plan import UNKNOWN_INDEX_PROBES, AnnPlan, ann_nprobes, ann_partitions_of, ann_refine
from vask_server.adapters.lancedb_api import IvfRq, lancedb
from vask_server.adapters.memory import release_memory

log = logging.getLogger(__name__)


class VectorIndexes:
    """One per store. `built`: the chunk tables (by name) that have an ANN index on `vector`, with
    the partitions it was built with (None: not known, an index from before `ann_plan`). `task`: a
    build running in the background, at most one at a time. `upkeep`: the store's lock for the work
    that rewrites or cleans a table's files (upkeep.py); a build holds it from start to end, so that
    no compaction or purge runs beside it (LanceDB's cleanup of unverified files is safe only with no
    write in progress, and a compaction would drop the index being replaced)."""

    def __init__(self) -> None:
        self.built: dict[str, int | None] = {}
        self.task: asyncio.Task[None] | None = None
        self.upkeep = asyncio.Lock()

    def building(self) -> bool:
        return self.task is not None and not self.task.done()

    def forget(self, name: str) -> None:
        self.built.pop(name, None)

    async def read(self, name: str, table: lancedb.AsyncTable) -> list[str]:
        """Records the table's ANN index (its partitions), if it has one; returns the names of all
        its indexes on `vector` (two while a rebuild is being swapped in)."""
        names = [index.name for index in await table.list_indices() if "vector" in index.columns]
        self.built.pop(name, None)
        if names:
            known = [p for p in map(ann_partitions_of, names) if p is not None]
            self.built[name] = max(known) if len(known) == len(names) else None
        return names

    async def rebuild_plan(self, name: str, table: lancedb.AsyncTable) -> AnnPlan | None:
        """The plan of an index to build in the background: the table has `VECTOR_INDEX_MIN_ROWS` rows
        and no index, or has outgrown its index (`REBUILD_GROWTH`), or holds
        `REBUILD_UNINDEXED_ROWS` rows written since it was built, or its index's parameters are
        unknown. None when a build is running already, or none is needed."""
        if self.building():
            return None
        rows = await table.count_rows()
        if rows < plans.VECTOR_INDEX_MIN_ROWS:
            return None
        plan = plans.ann_plan(rows)
        if name in self.built:
            built = self.built[name]
            if built is not None and plan.partitions < built * plans.REBUILD_GROWTH:
                unindexed = max(
                    (i.num_unindexed_rows or 0 for i in await table.list_indices() if "vector" in i.columns), default=0
                )
                if unindexed < plans.REBUILD_UNINDEXED_ROWS:
                    return None
        return plan

    def build_later(self, name: str, table: lancedb.AsyncTable, plan: AnnPlan) -> None:
        self.task = asyncio.create_task(self.build(name, table, plan), name="vask-ann-index")

    async def missing(self, name: str, table: lancedb.AsyncTable) -> AnnPlan | None:
        """The plan of the index a table large enough for one lacks; None when it has one or is too
        small. A build under way in the background is waited for first, so that the index is never
        built twice at once."""
        if self.building():
            assert self.task is not None
            await asyncio.shield(self.task)  # (it logs its own failure)
        if name in self.built:
            return None
        rows = await table.count_rows()
        return plans.ann_plan(rows) if rows >= plans.VECTOR_INDEX_MIN_ROWS else None

    async def create(self, name: str, table: lancedb.AsyncTable, plan: AnnPlan) -> None:
        """The ANN index as `plan` says, and the one it replaces dropped (searches in flight keep their
        version). Raises what LanceDB raises."""
        # RaBitQ at 2 bits a dimension: against the 8-bit scalar codes, a quarter of the memory to hold
        # and to scan, and a lower peak to build (docs/BENCHMARKS.md, "The vector index").
        config = IvfRq(distance_type="cosine", num_partitions=plan.partitions, num_bits=2)
        await table.create_index("vector", config=config, name=plan.index_name, replace=True)
        for old in await self.read(name, table):
            if old != plan.index_name:
                await table.drop_index(old)
        self.built[name] = plan.partitions

    async def drop(self, name: str, table: lancedb.AsyncTable) -> None:
        """Drops the table's vector indexes: searches are exact until one is built again."""
        for index in await self.read(name, table):
            await table.drop_index(index)
        self.forget(name)

    async def build(self, name: str, table: lancedb.AsyncTable, plan: AnnPlan) -> None:
        """`create` under the `upkeep` lock (a compaction or purge asked for meanwhile waits for it),
        with a failure logged (searches stay as they were; the next sync tries again)."""
        async with self.upkeep:
            started = time.perf_counter()
            try:
                await self.create(name, table, plan)
            except Exception as exc:  # e.g. the table changed under it: the next sync tries again
                log.warning("building the vector index of %s failed (%s); searches stay as they were", name, exc)
                with contextlib.suppress(Exception):
                    await self.read(name, table)
                return
        release_memory()
        log.info(
            "vector index of %s ready in %.1f s (%d partitions, %d probed)",
            name,
            time.perf_counter() - started,
            plan.partitions,
            plan.nprobes,
        )

    async def wait(self) -> None:
        if self.task is not None:
            await asyncio.gather(self.task, return_exceptions=True)

    def probed(self, name: str, dimension: int, query: Any, where: str | None, *, approximate_filter: bool) -> Any:
        """A vector query set to go through the table's index, if it has one, or exact. A filtered
        search is exact unless `approximate_filter` (see `SearchOptions`, adapters/tables.py)."""
        if name in self.built and (not where or approximate_filter):
            partitions = self.built[name]
            nprobes = ann_nprobes(partitions) if partitions is not None else UNKNOWN_INDEX_PROBES
            widened = query.where(where).maximum_nprobes(0).minimum_nprobes(nprobes) if where else None
            return (widened or query.nprobes(nprobes)).refine_factor(ann_refine(partitions, dimension))
        if where:
            return query.where(where).bypass_vector_index()
        return query
