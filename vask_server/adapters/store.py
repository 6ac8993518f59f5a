"""An index folder: `index.json` (which index is active, which is being built) and a LanceDB
database holding each index's tables, one set per embedding model.

Each (model, dimension) pair gets its own tables, so vectors of different models never mix; an
index's tables are one object, `tables(record)` (adapters/tables.py). The store keeps what is about
the whole folder: the connection they share, `index.json`, the pause of background syncs, the
removal of old indexes, and the problems a user must act on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from pathlib import Path

from vask_server.adapters.ann_plan import VECTOR_INDEX_MIN_ROWS as VECTOR_INDEX_MIN_ROWS  # (scripts read it here)
from vask_server.adapters.database import Database
from vask_server.adapters.folders import ensure_index_dir
from vask_server.adapters.meta import IndexMeta, IndexRecord, read_meta, write_meta
from vask_server.adapters.migrations import migrate
from vask_server.adapters.tables import IndexTables

log = logging.getLogger(__name__)

UNDROPPED_TABLES = "undropped_tables"  # index.json: {table name: why it could not be removed}
_REMOVE_OLD_INDEX = "removing an old index"


class Store:
    def __init__(self, database: Database) -> None:
        self.database = database
        self.index_dir = database.index_dir
        self._paused: bool | None = None  # the pause this process set (`set_paused`); None: index.json's
        self._tables: dict[tuple[str, int], IndexTables] = {}

    @classmethod
    async def open(cls, index_dir: Path, *, read_only: bool = False) -> Store:
        """The index in `index_dir`, brought up to the current format first (`migrations.py`).
        `read_only`: as it stands, for a reader that must never write it (no folder made, no format
        brought up to date: every step so far only adds to index.json what a reader assumes anyway)."""
        if not read_only:
            ensure_index_dir(index_dir)
        database = await Database.connect(index_dir, read_only=read_only)
        if not read_only:
            await migrate(index_dir, database.connection)
        store = cls(database)
        await store._find_keyword_tables()
        return store

    @property
    def read_only(self) -> bool:
        """A reader beside the index's writer (`vask mcp`): nothing is written through it."""
        return self.database.read_only

    def tables(self, index: IndexRecord) -> IndexTables:
        """The tables of this index: what every read and write of its notes goes to (one object per
        index, whichever of its records names it)."""
        key = (index.suffix, index.dimension)
        if key not in self._tables:
            self._tables[key] = IndexTables(self.database, index)
        return self._tables[key]

    @contextlib.asynccontextmanager
    async def passing_reader(self, index: IndexRecord) -> AsyncIterator[IndexTables]:
        """This index's tables read through a connection of their own, closed after: for a large read
        that searches never repeat (the search calibration's sample), so that what LanceDB caches
        while it runs (pages of the path index, the files' metadata) is let go with it instead of
        staying for the life of the connection searches use."""
        database = await Database.connect(self.index_dir, read_only=True)
        try:
            yield IndexTables(database, index)
        finally:
            database.connection.close()  # type: ignore[no-untyped-call]

    @property
    def writes(self) -> int:
        """Goes up after every write of this process (`Database.writes`)."""
        return self.database.writes

    # -- index.json -------------------------------------------------------------------------------

    def read_meta(self) -> IndexMeta:
        return read_meta(self.index_dir)

    def write_meta(self, meta: IndexMeta) -> None:
        """Writes index.json; with the pause this process set, whatever `meta` says: a sync writes
        a copy it read before a long step (a table drop), and the pause set meanwhile must stay."""
        if self._paused is not None:
            meta.set_paused(self._paused)
        write_meta(self.index_dir, meta)

    @property
    def paused(self) -> bool:
        """The pause of background syncs: as this process set it, else as index.json says."""
        return self._paused if self._paused is not None else self.read_meta().paused

    def set_paused(self, paused: bool) -> None:
        """Sets the pause and writes it to index.json at once (kept over a restart). Only the process
        that holds the writer's lock calls it: `vask serve`, which `vask pause` asks through its API."""
        self._paused = paused
        self.write_meta(self.read_meta())

    # -- problems a user must act on --------------------------------------------------------------

    def problems(self) -> list[dict[str, str]]:
        """Failures of the index itself, each with `operation`, `message`, `hint` (and `at`): what
        `vask status` and `/v1/status` show. Old tables that could not be removed are kept in
        `index.json`, so every process sees them until a sync removes them."""
        found = [dict(problem) for problem in self.database.problems.values()]
        for name, reason in sorted(self.read_meta().extra.get(UNDROPPED_TABLES, {}).items()):
            hint = (
                f"The next sync tries again; or, with vask stopped, delete {self.index_dir / 'lancedb' / name}.lance."
            )
            found.append(
                {"operation": _REMOVE_OLD_INDEX, "message": f"could not remove {name}: {reason}", "hint": hint}
            )
        return found

    # -- the folder's tables ----------------------------------------------------------------------

    async def drop(self, suffix: str) -> dict[str, str]:
        """Removes the tables of an old index. Returns those still there afterwards, with why (a table
        that was already gone is not a failure)."""
        failed: dict[str, str] = {}
        self._tables = {key: tables for key, tables in self._tables.items() if key[0] != suffix}
        for name in (f"chunks_{suffix}", f"notes_{suffix}", f"text_{suffix}"):
            self.database.forget(name)
            try:
                await self.database.connection.drop_table(name)
            except Exception as exc:
                if name in await self.database.table_names():
                    log.warning("could not remove the old table %s: %s", name, exc)
                    failed[name] = (str(exc).splitlines() or [type(exc).__name__])[0][:300]
        self.database.writes += 1
        return failed

    async def _find_keyword_tables(self) -> None:
        """The keyword tables an earlier run finished, searchable again as they were before it ended.
        One of a vask that kept no file times, or one never finished, is not: the sync writes it anew."""
        database = self.database
        for name in await database.table_names():
            if not name.startswith("text_") or database.never_committed(name):
                continue
            try:
                table = await database.connection.open_table(name)
                finished = "mtime_ns" in (await table.schema()).names and any(
                    "search_text" in index.columns for index in await table.list_indices()
                )
            except Exception as exc:  # (a damaged one is written anew by the sync, as before)
                log.warning("could not open the keyword table %s (%s)", name, exc)
                continue
            if finished:
                database.keep(name, table)
                database.text_ready.add(name)

    async def forget_tables(self) -> None:
        """Reconnects, dropping open table handles and the database's caches of them: after a large
        sync they hold metadata of every version it wrote (`Database.reconnect`)."""
        await self.database.reconnect()

    async def wait_background(self) -> None:
        """Until a vector index being built is ready and old versions are pruned (for `vask index`,
        which exits afterwards)."""
        await self.database.ann.wait()
        if self.database.prune is not None:
            await asyncio.gather(self.database.prune, return_exceptions=True)
