"""LanceDB on disk: a chunks table and a notes manifest per embedding model, with explicit schemas.

Each (model, dimension) pair gets its own pair of tables, so vectors of different models never mix;
`index.json` records which pair is active (complete) and which is being built. Writes are batched by
the caller; `compact` folds small fragments together and drops old versions so disk stays bounded.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
import warnings
from collections.abc import AsyncIterator, Collection, Iterable, Sequence
from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from vask_server.adapters.ann_index import VectorIndexes
from vask_server.adapters.ann_plan import VECTOR_INDEX_MIN_ROWS as VECTOR_INDEX_MIN_ROWS  # (scripts read it here)
from vask_server.adapters.ann_plan import AnnPlan
from vask_server.adapters.folders import ensure_index_dir
from vask_server.adapters.lancedb_api import FTS, BTree, MatchQuery, lancedb
from vask_server.adapters.manifest import NOTE_SCHEMA, Manifest, NoteRecord, linking_to
from vask_server.adapters.meta import IndexMeta, read_meta, write_meta
from vask_server.adapters.migrations import migrate
from vask_server.adapters.schema import HIT_COLUMNS, chunk_schema, hit_rows, text_schema, vector_matrix
from vask_server.adapters.sql import sql_in
from vask_server.adapters.upkeep import TableUpkeep
from vask_server.core.hashkeys import HashKeys, hash_key, keys_of_hex_rows
from vask_server.errors import IndexBroken

log = logging.getLogger(__name__)

_IN_LIST_BATCH = 256
_SCAN_BATCH_ROWS = 65_536  # rows a batch when a column is read whole
_LINK_BATCH_ROWS = 8_192  # notes a batch when their links are read (a bounded share of a large vault's)
# A connection's table handles keep metadata of every version written through them, and each new
# version's is larger (it lists every fragment): over a large first build (thousands of writes to
# each table) that grows without bound, and every write gets slower. Reconnecting after this many
# writes bounds both.
_RECONNECT_AFTER_WRITES = 32
KEYWORD_SEARCH = "keyword search"
UNDROPPED_TABLES = "undropped_tables"  # index.json: {table name: why it could not be removed}
REMOVE_OLD_INDEX = "removing an old index"
_KEYWORD_HINT = "Run `vask index --full` to rebuild the keyword index."


class Store(TableUpkeep):
    def __init__(self, index_dir: Path, db: lancedb.AsyncConnection) -> None:
        self.index_dir = index_dir
        self._db = db
        self._tables: dict[str, lancedb.AsyncTable] = {}
        self._fts_ready: set[str] = set()
        self._text_ready: set[str] = set()  # suffixes whose keyword table is searchable
        self.ann = VectorIndexes()  # the chunk tables' ANN indexes, and a build in the background
        self._lock = asyncio.Lock()
        self._compacted_at = 0.0  # time.monotonic() of the last compaction
        self._prune: asyncio.Task[None] | None = None
        # Goes up after every write of this process: with index.json's last_sync (whole seconds, and
        # the only sign of another process's writes), what tells a cache of stored data it is stale.
        self.writes = 0
        self._writes_on_connection = 0
        self._problems: dict[str, dict[str, str]] = {}  # by operation: the last failure, until it succeeds
        self._paused: bool | None = None  # the pause this process set (`set_paused`); None: index.json's

    @classmethod
    async def open(cls, index_dir: Path) -> Store:
        """The index in `index_dir`, brought up to the current format first (`migrations.py`)."""
        ensure_index_dir(index_dir)
        db = await lancedb.connect_async(str(index_dir / "lancedb"))
        store = cls(index_dir, db)
        await migrate(store)
        await store._find_keyword_tables()
        return store

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
        found = [dict(problem) for problem in self._problems.values()]
        for name, reason in sorted(self.read_meta().extra.get(UNDROPPED_TABLES, {}).items()):
            hint = (
                f"The next sync tries again; or, with vask stopped, delete {self.index_dir / 'lancedb' / name}.lance."
            )
            found.append({"operation": REMOVE_OLD_INDEX, "message": f"could not remove {name}: {reason}", "hint": hint})
        return found

    def _broken(self, operation: str, exc: Exception, hint: str) -> IndexBroken:
        detail = (str(exc).splitlines() or [type(exc).__name__])[0][:300]
        message = f"The {operation} of the index failed ({detail})"
        log.warning("%s. %s", message, hint)
        self._problems[operation] = {"operation": operation, "message": message, "hint": hint, "at": now_iso()}
        return IndexBroken(message, hint)

    # -- tables -----------------------------------------------------------------------------------

    async def _table(self, name: str, schema: pa.Schema) -> lancedb.AsyncTable:
        table = self._tables.get(name)
        if table is None:
            existing = await self._db.list_tables()
            names = set(existing.tables) if hasattr(existing, "tables") else set(existing)
            if name in names and self._never_committed(name):
                # A run killed while it created the table leaves its folder without a first version:
                # listed, but no version to open, so every later sync would fail on it. It held nothing.
                log.warning("table %s was left half-created by an interrupted run; creating it again", name)
                shutil.rmtree(self._table_dir(name))
                names.discard(name)
            if name in names:
                table = await self._db.open_table(name)
                if "vector" in schema.names:
                    await self.ann.read(name, table)
            else:
                table = await self._db.create_table(name, schema=schema, exist_ok=True)
            self._tables[name] = table
        return table

    def _table_dir(self, name: str) -> Path:
        return self.index_dir / "lancedb" / f"{name}.lance"

    def _never_committed(self, name: str) -> bool:
        """The table's folder holds no version manifest: it was never created completely."""
        versions = self._table_dir(name) / "_versions"
        return self._table_dir(name).is_dir() and not any(versions.glob("*.manifest"))

    async def chunks(self, suffix: str, dimension: int) -> lancedb.AsyncTable:
        return await self._table(f"chunks_{suffix}", chunk_schema(dimension))

    async def notes(self, suffix: str) -> lancedb.AsyncTable:
        return await self._table(f"notes_{suffix}", NOTE_SCHEMA)

    async def drop(self, suffix: str) -> dict[str, str]:
        """Removes both tables of an index. Returns those still there afterwards, with why (a table
        that was already gone is not a failure)."""
        failed: dict[str, str] = {}
        self._text_ready.discard(suffix)
        for name in (f"chunks_{suffix}", f"notes_{suffix}", f"text_{suffix}"):
            self._tables.pop(name, None)
            self._fts_ready.discard(name)
            self.ann.forget(name)
            try:
                await self._db.drop_table(name)
            except Exception as exc:
                existing = await self._db.list_tables()
                if name in (set(existing.tables) if hasattr(existing, "tables") else set(existing)):
                    log.warning("could not remove the old table %s: %s", name, exc)
                    failed[name] = (str(exc).splitlines() or [type(exc).__name__])[0][:300]
        self.writes += 1
        return failed

    # -- reads ------------------------------------------------------------------------------------

    async def manifest(self, suffix: str, paths: Collection[str] | None = None, *, with_links: bool = True) -> Manifest:
        """Note records by path: all of them, or those of `paths` (an edit's sync needs one row, and
        reading them all is slow on a large vault). `with_links=False`: records without their links (None),
        which are most of a row; `links_of` reads them for the few notes that need them."""
        table = await self.notes(suffix)
        columns = [name for name in NOTE_SCHEMA.names if with_links or name != "links"]
        if paths is None or len(paths) > 4 * _IN_LIST_BATCH:
            manifest = Manifest(await table.query().select(columns).to_arrow())
            return manifest if paths is None else manifest.only(paths)
        parts = await self._note_rows(table, sorted(paths), columns)
        return Manifest(pa.concat_tables(parts)) if parts else Manifest.empty()

    async def links_of(self, suffix: str, paths: Sequence[str]) -> dict[str, str]:
        """The stored links (JSON) of these notes, by path."""
        found: dict[str, str] = {}
        for result in await self._note_rows(await self.notes(suffix), paths, ["path", "links"]):
            found.update(zip(result["path"].to_pylist(), result["links"].fill_null("").to_pylist(), strict=True))
        return found

    @staticmethod
    async def _note_rows(table: lancedb.AsyncTable, paths: Sequence[str], columns: list[str]) -> list[pa.Table]:
        """These columns of these notes' rows, asked for `_IN_LIST_BATCH` paths at a time."""
        parts = []
        for start in range(0, len(paths), _IN_LIST_BATCH):
            query = table.query().where(sql_in("path", paths[start : start + _IN_LIST_BATCH])).select(columns)
            parts.append(await query.to_arrow())
        return parts

    async def notes_linking_to(self, suffix: str, targets: Collection[str]) -> set[str]:
        """The notes (other than `targets`) whose stored links resolve to one of `targets`, read in
        batches of paths and links."""
        if not targets:
            return set()
        table = await self.notes(suffix)
        found: set[str] = set()
        stream = await table.query().select(["path", "links"]).to_batches(max_batch_length=_SCAN_BATCH_ROWS)
        async for batch in stream:
            found |= linking_to(batch["path"], batch["links"], targets)
        return found

    async def note_names(self, suffix: str) -> pa.Table:
        """Each note's path, title, aliases and tags: what the link graph and a question's scope name
        notes by."""
        table = await self.notes(suffix)
        return await table.query().select(["path", "title", "aliases", "tags"]).to_arrow()

    async def note_link_batches(self, suffix: str) -> AsyncIterator[pa.RecordBatch]:
        """Each note's path and links (JSON), in batches: a large vault's links are large as Arrow
        text, and the link graph needs one batch at a time."""
        table = await self.notes(suffix)
        async for batch in await table.query().select(["path", "links"]).to_batches(max_batch_length=_LINK_BATCH_ROWS):
            yield batch

    async def note_statuses(self, suffix: str) -> tuple[int, dict[str, tuple[str, str]]]:
        """How many notes are indexed ("ok"), and the (status, reason) of every other one by path:
        what a status report needs. Only the few rows that are not "ok" are read (reading every path
        of a large vault is slow, and it happens twice at every start)."""
        table = await self.notes(suffix)
        ok = int(await table.count_rows("status = 'ok'"))
        result = await table.query().where("status != 'ok'").select(["path", "status", "reason"]).to_arrow()
        columns = (result[name].to_pylist() for name in ("path", "status", "reason"))
        return ok, {path: (status, reason) for path, status, reason in zip(*columns, strict=True)}

    async def vectors_for_hashes(self, suffix: str, dimension: int, hashes: Iterable[str]) -> dict[str, np.ndarray]:
        """Stored vectors by content hash, from any note: what lets edits and moves embed nothing."""
        return await self._vectors_by(suffix, dimension, "hash", sorted(set(hashes)))

    async def _vectors_by(self, suffix: str, dimension: int, column: str, keys: Sequence[str]) -> dict[str, np.ndarray]:
        """Vectors of the rows whose `column` is one of `keys`, by that key (a key of several rows
        keeps the last one read: equal hashes have equal vectors)."""
        table = await self.chunks(suffix, dimension)
        found: dict[str, np.ndarray] = {}
        for start in range(0, len(keys), _IN_LIST_BATCH):
            batch = list(keys[start : start + _IN_LIST_BATCH])
            result = await table.query().where(sql_in(column, batch)).select([column, "vector"]).to_arrow()
            found.update(zip(result[column].to_pylist(), vector_matrix(result["vector"], dimension), strict=True))
        return found

    async def chunk_keys(self, suffix: str, dimension: int) -> tuple[set[str], HashKeys]:
        """Every note path and every content hash that has rows: one column scan, so that a large
        sync can skip the lookups and deletes that would find nothing. Read in batches, each made
        unique in Arrow first: reading the two columns whole peaks far higher (BENCHMARKS.md, "Memory")."""
        paths: set[str] = set()
        keys: list[np.ndarray] = []
        async for batch in self._column_batches(suffix, dimension, ["path", "hash"]):
            paths.update(pc.unique(batch["path"]).to_pylist())
            keys.append(hash_keys_of(pc.unique(batch["hash"])))
        return paths, HashKeys(np.concatenate(keys) if keys else None)

    async def chunk_paths(self, suffix: str, dimension: int) -> set[str]:
        paths: set[str] = set()
        async for batch in self._column_batches(suffix, dimension, ["path"]):
            paths.update(pc.unique(batch["path"]).to_pylist())
        return paths

    async def keyword_sources(self, suffix: str, dimension: int) -> AsyncIterator[pa.RecordBatch]:
        """Every row's id and what its keyword text is made of (path, title, heading, text), in
        batches: what cutting the keyword text anew reads instead of the notes."""
        async for batch in self._column_batches(suffix, dimension, ["id", "path", "title", "heading", "text"]):
            yield batch

    async def note_aliases(self, suffix: str) -> dict[str, list[str]]:
        """Each note's aliases, by path (they are in its passages' keyword text)."""
        table = await (await self.notes(suffix)).query().select(["path", "aliases"]).to_arrow()
        aliases = table["aliases"].to_pylist()
        return {path: list(names or []) for path, names in zip(table["path"].to_pylist(), aliases, strict=True)}

    async def set_search_text(self, suffix: str, dimension: int, ids: pa.Array, texts: pa.Array) -> None:
        """These rows' keyword text replaced, the rest of each row kept (its vector too). LanceDB
        writes the rows anew: the full-text and vector indexes cover them again once rebuilt (the
        sync's compaction and index builds)."""
        update = pa.table({"id": ids, "search_text": texts})
        async with self._writing():
            chunks = await self.chunks(suffix, dimension)
            await chunks.merge_insert("id").when_matched_update_all().execute(update)

    async def _column_batches(self, suffix: str, dimension: int, columns: list[str]) -> AsyncIterator[pa.RecordBatch]:
        table = await self.chunks(suffix, dimension)
        async for batch in await table.query().select(columns).to_batches(max_batch_length=_SCAN_BATCH_ROWS):
            yield batch

    async def vectors_by_id(self, suffix: str, dimension: int, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The vectors of these chunk ids that exist, by id."""
        return await self._vectors_by(suffix, dimension, "id", ids)

    async def vectors_for_ids(self, suffix: str, dimension: int, ids: Sequence[str]) -> np.ndarray:
        """The vectors of these chunk ids that exist, in the order given. (A sync between the caller's
        reading the ids and this can have replaced some: those are left out, not an error.)"""
        found = await self._vectors_by(suffix, dimension, "id", ids)
        rows = [found[i] for i in ids if i in found]
        return np.stack(rows) if rows else np.zeros((0, dimension), dtype=np.float32)

    async def texts_for_ids(self, suffix: str, dimension: int, ids: Sequence[str]) -> dict[str, str]:
        """The text of each of these chunk ids that exists."""
        table = await self.chunks(suffix, dimension)
        found: dict[str, str] = {}
        for start in range(0, len(ids), _IN_LIST_BATCH):
            batch = list(ids[start : start + _IN_LIST_BATCH])
            result = await table.query().where(sql_in("id", batch)).select(["id", "text"]).to_arrow()
            found.update(zip(result["id"].to_pylist(), result["text"].to_pylist(), strict=True))
        return found

    async def count_chunks(self, suffix: str, dimension: int) -> int:
        return int(await (await self.chunks(suffix, dimension)).count_rows())

    async def all_chunk_rows(
        self, suffix: str, dimension: int, columns: list[str], where: str | None = None
    ) -> pa.Table:
        table = await self.chunks(suffix, dimension)
        query = table.query().select(columns)
        if where:
            query = query.where(where)
        return await query.to_arrow()

    # -- writes -----------------------------------------------------------------------------------

    async def write_notes(
        self,
        suffix: str,
        dimension: int,
        paths: Sequence[str],
        chunk_rows: pa.Table | None,
        note_rows: Sequence[NoteRecord],
        *,
        existing: Collection[str] | None = None,
    ) -> None:
        """Replaces everything stored for `paths`. The manifest is written last, so a crash in
        between leaves notes whose manifest still says "old": the next sync redoes them.

        `existing`: the paths that may have rows already (in the manifest or the chunks table), when
        the caller knows; the others are only added, which spares a delete and a merge that would
        find nothing (most of the cost of a first build). None: any of `paths` may."""
        if any(record.links is None for record in note_rows):  # (a record read without them: see `manifest`)
            raise ValueError("a note record without its links would lose them")
        stale = list(paths) if existing is None else [p for p in paths if p in existing]
        async with self._writing():
            chunks = await self.chunks(suffix, dimension)
            for start in range(0, len(stale), _IN_LIST_BATCH):
                await chunks.delete(sql_in("path", stale[start : start + _IN_LIST_BATCH]))
            if chunk_rows is not None and chunk_rows.num_rows:
                await chunks.add(chunk_rows)
            if note_rows:
                notes = await self.notes(suffix)
                replaced = [asdict(r) for r in note_rows if existing is None or r.path in existing]
                added = [asdict(r) for r in note_rows if existing is not None and r.path not in existing]
                if replaced:
                    data = pa.Table.from_pylist(replaced, schema=NOTE_SCHEMA)
                    merge = notes.merge_insert("path").when_matched_update_all().when_not_matched_insert_all()
                    await merge.execute(data)
                if added:
                    await notes.add(pa.Table.from_pylist(added, schema=NOTE_SCHEMA))

    async def delete_notes(self, suffix: str, dimension: int, paths: Sequence[str]) -> None:
        async with self._writing():
            chunks = await self.chunks(suffix, dimension)
            notes = await self.notes(suffix)
            for start in range(0, len(paths), _IN_LIST_BATCH):
                batch = paths[start : start + _IN_LIST_BATCH]
                await chunks.delete(sql_in("path", batch))
                await notes.delete(sql_in("path", batch))

    @contextlib.asynccontextmanager
    async def _writing(self) -> AsyncIterator[None]:
        """The write lock; `writes` goes up as it is released, so that a read that overlapped the
        write is seen as stale too."""
        async with self._lock:
            try:
                yield
            finally:
                self.writes += 1
                self._writes_on_connection += 1
                if self._writes_on_connection >= _RECONNECT_AFTER_WRITES:
                    await self.forget_tables()

    # -- the keyword table of a first sync ---------------------------------------------------------
    # A first sync with a slow model takes an hour; its notes' text goes into `text_<suffix>` first
    # (no vectors: a table of ~1/3 the bytes, written in a minute) with a full-text index, so that
    # every note is found by keyword long before it is embedded. Dropped, with every version of it,
    # once the chunks table has its own full-text index. A restart finds it as it was (its full-text
    # index is written last: `_find_keyword_tables`); each row keeps the file time and size of the
    # note it was read from, so that the restarted sync brings it in step with the vault
    # (keyword_first.refresh_keyword_table).

    async def start_text(self, suffix: str) -> None:
        """An empty keyword table (one a killed sync left is dropped: its notes may have changed)."""
        await self.drop_text(suffix)
        await self._table(f"text_{suffix}", text_schema())

    async def add_text_rows(self, suffix: str, rows: pa.Table) -> None:
        async with self._writing():
            table = await self._table(f"text_{suffix}", text_schema())
            await table.add(rows.drop_columns(["vector"]) if "vector" in rows.column_names else rows)

    async def finish_text(self, suffix: str) -> None:
        """Its full-text index: from now on searches find every note of the sync by keyword."""
        table = await self._table(f"text_{suffix}", text_schema())
        if await table.count_rows():
            await table.create_index("search_text", config=FTS(with_position=False), replace=True)
            self._text_ready.add(suffix)

    def text_ready(self, suffix: str) -> bool:
        return suffix in self._text_ready

    async def text_stamps(self, suffix: str) -> dict[str, tuple[int, int]]:
        """The notes the keyword table holds rows of, with the file time and size each was read at."""
        table = await self._table(f"text_{suffix}", text_schema())
        stamps: dict[str, tuple[int, int]] = {}
        stream = await table.query().select(["path", "mtime_ns", "size"]).to_batches(max_batch_length=_SCAN_BATCH_ROWS)
        async for batch in stream:
            columns = (batch[name].to_pylist() for name in ("path", "mtime_ns", "size"))
            stamps.update((path, (mtime_ns, size)) for path, mtime_ns, size in zip(*columns, strict=True))
        return stamps

    async def delete_text_rows(self, suffix: str, paths: Sequence[str]) -> None:
        async with self._writing():
            table = await self._table(f"text_{suffix}", text_schema())
            for start in range(0, len(paths), _IN_LIST_BATCH):
                await table.delete(sql_in("path", paths[start : start + _IN_LIST_BATCH]))

    async def purge_text(self, suffix: str) -> None:
        """Every version of the keyword table but the latest removed, with the files only they used:
        after rows of notes deleted or excluded went, no older version may still hold their text.
        (Only the sync writes this table, and it is not writing it now.)"""
        table = await self._table(f"text_{suffix}", text_schema())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # "removes every version but the latest": the point
            await table.optimize(cleanup_older_than=timedelta(0), delete_unverified=True)

    async def drop_text(self, suffix: str) -> None:
        name = f"text_{suffix}"
        self._text_ready.discard(suffix)
        self._tables.pop(name, None)
        if name in await self._table_names():
            await self._db.drop_table(name)
            self.writes += 1

    async def _find_keyword_tables(self) -> None:
        """The keyword tables an earlier run finished, searchable again as they were before it ended.
        One of a vask that kept no file times, or one never finished, is not: the sync writes it anew."""
        for name in await self._table_names():
            if not name.startswith("text_") or self._never_committed(name):
                continue
            try:
                table = await self._db.open_table(name)
                finished = "mtime_ns" in (await table.schema()).names and any(
                    "search_text" in index.columns for index in await table.list_indices()
                )
            except Exception as exc:  # (a damaged one is written anew by the sync, as before)
                log.warning("could not open the keyword table %s (%s)", name, exc)
                continue
            if finished:
                self._tables[name] = table
                self._text_ready.add(name.removeprefix("text_"))

    async def _table_names(self) -> set[str]:
        existing = await self._db.list_tables()
        names = set(existing.tables) if hasattr(existing, "tables") else set(existing)
        return {str(name) for name in names}

    async def ensure_fts(self, suffix: str, dimension: int, *, rebuild: bool = False) -> None:
        """Creates the full-text and B-tree indexes a table lacks. `rebuild`: the full-text index is
        made again from the rows (`vask index --full`: what repairs one whose files are damaged)."""
        name = f"chunks_{suffix}"
        if name in self._fts_ready and not rebuild:
            return
        table = await self.chunks(suffix, dimension)
        indices = await table.list_indices()
        if await table.count_rows() == 0:
            return
        full_text = [index for index in indices if "search_text" in index.columns]
        if rebuild:
            for index in full_text:
                await table.drop_index(index.name)
            self._problems.pop(KEYWORD_SEARCH, None)
        if rebuild or not full_text:
            await table.create_index("search_text", config=FTS(with_position=False))
        # B-tree indexes on the columns every edit filters by (path: deletes, per-note searches;
        # hash: vector reuse): both are then index lookups, not scans of the table. Quick to build,
        # kept up to date by `compact`.
        for column in ("path", "hash"):
            if not any(index.columns == [column] for index in indices):
                await table.create_index(column, config=BTree())
        self._fts_ready.add(name)

    async def index_vectors_later(self, suffix: str, dimension: int) -> None:
        """Starts building, in the background and off the request path, the ANN index of a table that
        has `VECTOR_INDEX_MIN_ROWS` rows and none: one that a killed or failed build left missing (a
        sync that writes builds it before it ends, `index_vectors_now`); searches stay exact until it
        is ready. Builds it again when the table has outgrown it (`REBUILD_GROWTH`), or when it
        was built before `ann_plan` (its parameters unknown), while the old one keeps serving. A
        failed build is tried again after the next sync; rows written later are searched exactly beside
        it until a compaction makes it anew (`compact`)."""
        if self.ann.building():
            return
        name, table = f"chunks_{suffix}", await self.chunks(suffix, dimension)
        plan = await self.ann.rebuild_plan(name, table)
        if plan is not None:
            self.ann.build_later(name, table, plan)

    async def missing_vector_index(self, suffix: str, dimension: int) -> AnnPlan | None:
        """The plan of the ANN index that a table large enough for one lacks; None when it has one or
        is too small (`VectorIndexes.missing`)."""
        return await self.ann.missing(f"chunks_{suffix}", await self.chunks(suffix, dimension))

    async def index_vectors_now(self, suffix: str, dimension: int, plan: AnnPlan) -> None:
        """Builds the ANN index `missing_vector_index` planned before returning: at the end of a first
        sync, or of the sync that grows a table past `VECTOR_INDEX_MIN_ROWS`: built in the background
        instead, a large table's searches would run exact meanwhile, slow and on top of the build's
        own memory peak. A rebuild, which the old index serves during, stays in the
        background (`index_vectors_later`). A failed build is logged, and tried again later."""
        await self.ann.build(f"chunks_{suffix}", await self.chunks(suffix, dimension), plan)

    async def forget_tables(self) -> None:
        """Reconnects, dropping open table handles and the database's caches of them: after a large
        sync they hold metadata of every version it wrote (docs/BENCHMARKS.md, "Memory"). Tables
        reopen on next use; operations in flight keep the handles they have."""
        self._tables.clear()
        self._db = await lancedb.connect_async(str(self.index_dir / "lancedb"))
        self._writes_on_connection = 0

    async def wait_background(self) -> None:
        """Until a vector index being built is ready and old versions are pruned (for `vask index`,
        which exits afterwards)."""
        await self.ann.wait()
        if self._prune is not None:
            await asyncio.gather(self._prune, return_exceptions=True)

    # -- queries ----------------------------------------------------------------------------------

    async def vector_search(
        self,
        suffix: str,
        dimension: int,
        vector: np.ndarray,
        limit: int,
        where: str | None = None,
        *,
        with_vectors: bool = False,
        approximate_filter: bool = False,
        with_kind: bool = False,
    ) -> list[dict[str, Any]]:
        """`with_kind`: each row says whether it is a passage ("chunk") or a note's record ("note"), for
        a caller that searches unfiltered and drops what it does not want. `approximate_filter`: a
        filtered search may go through the ANN index too (for broad
        filters: dates, folders, tags), probing more partitions, up to all, until `limit` rows pass
        the filter: on a large table a broad range is much quicker so, and finds the same rows.
        Otherwise filtered searches are exact: the B-tree on `path` makes one-note filters
        fast, where the index would probe every partition to find their few rows."""
        table = await self.chunks(suffix, dimension)
        query = table.query().nearest_to(vector.astype(np.float32)).distance_type("cosine").limit(limit)
        query = self.ann.probed(f"chunks_{suffix}", dimension, query, where, approximate_filter=approximate_filter)
        extra = [*(["vector"] if with_vectors else []), *(["kind"] if with_kind else [])]
        result = await query.select([*HIT_COLUMNS, "_distance", *extra]).to_arrow()
        rows = hit_rows(result)
        for row in rows:
            row["score"] = 1.0 - float(row.pop("_distance"))
        return rows

    async def text_search(
        self,
        suffix: str,
        dimension: int,
        text: str,
        limit: int,
        where: str | None = None,
        *,
        with_vectors: bool = False,
        keyword_table: bool = False,
    ) -> list[dict[str, Any]]:
        """BM25 matches of the query's words. The query is a MatchQuery: its text is only ever words,
        never query syntax (quotes, `AND`, `:`, `*`... are just characters), so nothing a user types
        is an error here. A failure is the index's, raised as IndexBroken and shown in the status.
        `keyword_table`: searched in a first sync's keyword table (rows without vectors)."""
        try:
            if keyword_table:
                table = await self._table(f"text_{suffix}", text_schema())
                with_vectors = False
            else:
                await self.ensure_fts(suffix, dimension)
                if f"chunks_{suffix}" not in self._fts_ready:
                    return []  # an empty table: nothing to match
                table = await self.chunks(suffix, dimension)
            # (its defaults are pydantic fields, which mypy reads as required arguments)
            words = MatchQuery(text, "search_text")  # type: ignore[call-arg]
            query = table.query().nearest_to_text(words).limit(limit)
            if where:
                query = query.where(where)
            columns = [*HIT_COLUMNS, "_score", *(["vector"] if with_vectors else [])]
            result = await query.select(columns).to_arrow()
        except Exception as exc:
            raise self._broken(KEYWORD_SEARCH, exc, _KEYWORD_HINT) from exc
        self._problems.pop(KEYWORD_SEARCH, None)
        rows = hit_rows(result)
        for row in rows:
            row["score"] = float(row.pop("_score"))
        return rows

    async def check_keyword_search(self, suffix: str, dimension: int) -> None:
        """One keyword query of one row, so that a status shows a broken keyword index before a
        search runs into it (recorded in `problems`, or cleared)."""
        with contextlib.suppress(IndexBroken):
            await self.text_search(suffix, dimension, "vask", 1)


def hash_keys_of(hashes: pa.Array) -> np.ndarray:
    """The `HashKeys` keys of hex content hashes, read from Arrow's buffers without making a Python
    string of each."""
    hashes = hashes.cast(pa.string())
    if hashes.null_count == 0 and len(hashes):
        lengths = pc.binary_length(hashes)  # (bytes: every row the same, so they lie end to end)
        if pc.min(lengths).as_py() == pc.max(lengths).as_py() == _HASH_LENGTH:
            start = hashes.offset
            offsets = np.frombuffer(hashes.buffers()[1], dtype=np.int32)[start : start + len(hashes) + 1]
            data = np.frombuffer(hashes.buffers()[2], dtype=np.uint8)[offsets[0] : offsets[-1]]
            keys = keys_of_hex_rows(data.reshape(len(hashes), _HASH_LENGTH)[:, :16])
            if keys is not None:
                return keys
    return np.fromiter((hash_key(h) for h in hashes.to_pylist() if h is not None), dtype=np.uint64)


_HASH_LENGTH = 32  # hex digits of a chunk's content hash (core/chunk.py)


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
