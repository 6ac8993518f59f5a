"""The LanceDB connection of an index folder, and what every index's tables share through it: the
open table handles, the write lock and the count of writes, the ANN indexes, which tables' keyword
indexes are ready, and the failures a user must act on."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pyarrow as pa

from vask_server.adapters.ann_index import VectorIndexes
from vask_server.adapters.lancedb_api import lancedb
from vask_server.adapters.meta import now_iso
from vask_server.errors import IndexBroken, NotIndexed

log = logging.getLogger(__name__)

# A connection's table handles keep metadata of every version written through them, and each new
# version's is larger (it lists every fragment): over a large first build (thousands of writes to
# each table) that grows without bound, and every write gets slower. Reconnecting after this many
# writes bounds both.
_RECONNECT_AFTER_WRITES = 32


class Database:
    """One per store (adapters/store.py), shared by the `IndexTables` of each of its indexes."""

    def __init__(self, index_dir: Path, connection: lancedb.AsyncConnection, *, read_only: bool = False) -> None:
        self.index_dir = index_dir
        self.connection = connection
        # A reader beside the index's writer (`vask mcp`): it creates, repairs and indexes nothing,
        # and any write is a bug (`writing` refuses it).
        self.read_only = read_only
        self._on_disk = not read_only or (index_dir / "lancedb").is_dir()
        self._handles: dict[str, lancedb.AsyncTable] = {}
        self.fts_ready: set[str] = set()  # chunk tables whose full-text and B-tree indexes exist
        self.text_ready: set[str] = set()  # keyword tables of a first sync that are searchable
        self.ann = VectorIndexes()  # the chunk tables' ANN indexes, and a build in the background
        self.lock = asyncio.Lock()  # the write lock
        self.compacted_at = 0.0  # time.monotonic() of the last compaction
        self.prune: asyncio.Task[None] | None = None  # old versions pruned in the background
        # Goes up after every write of this process: with index.json's last_sync (whole seconds, and
        # the only sign of another process's writes), what tells a cache of stored data it is stale.
        self.writes = 0
        self._writes_on_connection = 0
        self.problems: dict[str, dict[str, str]] = {}  # by operation: the last failure, until it succeeds

    @classmethod
    async def connect(cls, index_dir: Path, *, read_only: bool = False) -> Database:
        folder = index_dir / "lancedb"
        # (connecting makes the folder: a reader of an index not built yet connects to nothing on disk)
        uri = str(folder) if folder.is_dir() or not read_only else "memory://"
        return cls(index_dir, await _connect(uri, read_only=read_only), read_only=read_only)

    async def table(self, name: str, schema: pa.Schema) -> lancedb.AsyncTable:
        """The table's handle: opened (an ANN index it has recorded), or created empty."""
        table = self._handles.get(name)
        if table is None:
            names = await self.table_names()
            if name in names and self.never_committed(name) and self.read_only:
                names.discard(name)  # (the writer removes it; a reader finds no table there yet)
            elif name in names and self.never_committed(name):
                # A run killed while it created the table leaves its folder without a first version:
                # listed, but no version to open, so every later sync would fail on it. It held nothing.
                log.warning("table %s was left half-created by an interrupted run; creating it again", name)
                shutil.rmtree(self._table_dir(name))
                names.discard(name)
            if name in names:
                table = await self.connection.open_table(name)
                if "vector" in schema.names:
                    await self.ann.read(name, table)
            elif self.read_only and not self._on_disk and (self.index_dir / "lancedb").is_dir():
                await self.reconnect()  # (built since this reader started: read from it now)
                return await self.table(name, schema)
            elif self.read_only:
                raise NotIndexed(
                    "The index is not built yet, or is being built anew.",
                    "Wait for `vask serve` to finish its sync (its status says how far it is), or run `vask index`.",
                )
            else:
                table = await self.connection.create_table(name, schema=schema, exist_ok=True)
            self._handles[name] = table
        return table

    def keep(self, name: str, table: lancedb.AsyncTable) -> None:
        """A handle opened without `table` (the keyword tables found at start: `Store.open`)."""
        self._handles[name] = table

    def _table_dir(self, name: str) -> Path:
        return self.index_dir / "lancedb" / f"{name}.lance"

    def never_committed(self, name: str) -> bool:
        """The table's folder holds no version manifest: it was never created completely."""
        versions = self._table_dir(name) / "_versions"
        return self._table_dir(name).is_dir() and not any(versions.glob("*.manifest"))

    async def table_names(self) -> set[str]:
        existing = await self.connection.list_tables()
        names = set(existing.tables) if hasattr(existing, "tables") else set(existing)
        return {str(name) for name in names}

    def forget(self, name: str) -> None:
        """What this process knows of a table about to be dropped."""
        self._handles.pop(name, None)
        self.fts_ready.discard(name)
        self.text_ready.discard(name)
        self.ann.forget(name)

    @contextlib.asynccontextmanager
    async def writing(self) -> AsyncIterator[None]:
        """The write lock; `writes` goes up as it is released, so that a read that overlapped the
        write is seen as stale too."""
        if self.read_only:
            raise RuntimeError("a read-only store was asked to write")
        async with self.lock:
            try:
                yield
            finally:
                self.writes += 1
                self._writes_on_connection += 1
                if self._writes_on_connection >= _RECONNECT_AFTER_WRITES:
                    await self.reconnect()

    async def reconnect(self) -> None:
        """Drops open table handles and the connection's caches of them: after a large sync they hold
        metadata of every version it wrote. Tables reopen on next use; operations in flight keep the
        handles they have."""
        self._handles.clear()
        self.connection = await _connect(str(self.index_dir / "lancedb"), read_only=self.read_only)
        self._on_disk = True
        self._writes_on_connection = 0

    def broken(self, operation: str, exc: Exception, hint: str) -> IndexBroken:
        """The failure of an operation on the index, logged and kept in `problems` until it succeeds."""
        detail = (str(exc).splitlines() or [type(exc).__name__])[0][:300]
        message = f"The {operation} of the index failed ({detail})"
        log.warning("%s. %s", message, hint)
        self.problems[operation] = {"operation": operation, "message": message, "hint": hint, "at": now_iso()}
        return IndexBroken(message, hint)


async def _connect(uri: str, *, read_only: bool) -> lancedb.AsyncConnection:
    """The database. A reader beside the writer sees each version the writer commits, at its next read
    (LanceDB's handles otherwise stay on the version they opened, and a long-lived reader, `vask mcp`,
    would answer from the index as it was when it started); the writer sees its own writes anyway."""
    if read_only:
        return await lancedb.connect_async(uri, read_consistency_interval=timedelta(0))
    return await lancedb.connect_async(uri)
