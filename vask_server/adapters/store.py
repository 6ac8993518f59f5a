"""LanceDB on disk: a chunks table and a notes manifest per embedding model, with explicit schemas.

Each (model, dimension) pair gets its own pair of tables, so vectors of different models never mix;
`index.json` records which pair is active (complete) and which is being built. Writes are batched by
the caller; `compact` folds small fragments together and drops old versions so disk stays bounded.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import lancedb
import numpy as np
import pyarrow as pa
from lancedb.index import FTS

from vask_server.adapters.meta import IndexMeta, read_meta, write_meta

log = logging.getLogger(__name__)

_IN_LIST_BATCH = 256


def sql_string(value: str) -> str:
    """A SQL string literal with quotes escaped: paths come from the user's file names."""
    return "'" + value.replace("'", "''") + "'"


def sql_in(column: str, values: Sequence[str]) -> str:
    return f"{column} IN ({', '.join(sql_string(v) for v in values)})"


def table_suffix(model: str, dimension: int) -> str:
    slug = re.sub(r"[^a-z0-9]+", "_", model.lower()).strip("_") or "model"
    return f"{slug}_{dimension}"


def chunk_schema(dimension: int) -> pa.Schema:
    return pa.schema(
        [
            pa.field("id", pa.string(), nullable=False),
            pa.field("path", pa.string(), nullable=False),
            pa.field("folder", pa.string()),
            pa.field("title", pa.string()),
            pa.field("heading", pa.string()),
            pa.field("anchor", pa.string()),
            pa.field("line_start", pa.int32()),
            pa.field("line_end", pa.int32()),
            pa.field("ordinal", pa.int32()),
            pa.field("kind", pa.string()),  # "chunk" or "note" (a note-level summary record)
            pa.field("hash", pa.string(), nullable=False),
            pa.field("text", pa.string()),
            pa.field("search_text", pa.string()),  # title, aliases, heading path and text: for full-text
            pa.field("tags", pa.list_(pa.string())),
            pa.field("vector", pa.list_(pa.float32(), dimension)),
        ]
    )


NOTE_SCHEMA = pa.schema(
    [
        pa.field("path", pa.string(), nullable=False),
        pa.field("mtime_ns", pa.int64()),
        pa.field("size", pa.int64()),
        pa.field("content_hash", pa.string()),
        pa.field("title", pa.string()),
        pa.field("aliases", pa.list_(pa.string())),
        pa.field("tags", pa.list_(pa.string())),
        pa.field("links", pa.string()),  # JSON list of {target, resolved, heading, block, alias, embed}
        pa.field("chunk_count", pa.int32()),
        pa.field("status", pa.string()),  # "ok", "skipped" or "failed"
        pa.field("reason", pa.string()),
        pa.field("indexed_at", pa.string()),
    ]
)


@dataclass(frozen=True)
class NoteRecord:
    path: str
    mtime_ns: int
    size: int
    content_hash: str
    title: str
    aliases: list[str]
    tags: list[str]
    links: str
    chunk_count: int
    status: str
    reason: str
    indexed_at: str


class Store:
    def __init__(self, index_dir: Path, db: lancedb.AsyncConnection) -> None:
        self.index_dir = index_dir
        self._db = db
        self._tables: dict[str, lancedb.AsyncTable] = {}
        self._fts_ready: set[str] = set()
        self._lock = asyncio.Lock()

    @classmethod
    async def open(cls, index_dir: Path) -> Store:
        index_dir.mkdir(parents=True, exist_ok=True)
        db = await lancedb.connect_async(str(index_dir / "lancedb"))
        return cls(index_dir, db)

    # -- index.json -------------------------------------------------------------------------------

    def read_meta(self) -> IndexMeta:
        return read_meta(self.index_dir)

    def write_meta(self, meta: IndexMeta) -> None:
        write_meta(self.index_dir, meta)

    # -- tables -----------------------------------------------------------------------------------

    async def _table(self, name: str, schema: pa.Schema) -> lancedb.AsyncTable:
        table = self._tables.get(name)
        if table is None:
            existing = await self._db.list_tables()
            names = set(existing.tables) if hasattr(existing, "tables") else set(existing)
            if name in names:
                table = await self._db.open_table(name)
            else:
                table = await self._db.create_table(name, schema=schema, exist_ok=True)
            self._tables[name] = table
        return table

    async def chunks(self, suffix: str, dimension: int) -> lancedb.AsyncTable:
        return await self._table(f"chunks_{suffix}", chunk_schema(dimension))

    async def notes(self, suffix: str) -> lancedb.AsyncTable:
        return await self._table(f"notes_{suffix}", NOTE_SCHEMA)

    async def drop(self, suffix: str) -> None:
        for name in (f"chunks_{suffix}", f"notes_{suffix}"):
            self._tables.pop(name, None)
            self._fts_ready.discard(name)
            try:
                await self._db.drop_table(name)
            except Exception as exc:  # already gone is fine
                log.debug("drop %s: %s", name, exc)

    # -- reads ------------------------------------------------------------------------------------

    async def manifest(self, suffix: str) -> dict[str, NoteRecord]:
        table = await self.notes(suffix)
        rows = (await table.query().to_arrow()).to_pylist()
        return {row["path"]: NoteRecord(**row) for row in rows}

    async def vectors_for_hashes(self, suffix: str, dimension: int, hashes: Iterable[str]) -> dict[str, np.ndarray]:
        """Stored vectors by content hash, from any note: what lets edits and moves embed nothing."""
        table = await self.chunks(suffix, dimension)
        wanted = sorted(set(hashes))
        found: dict[str, np.ndarray] = {}
        for start in range(0, len(wanted), _IN_LIST_BATCH):
            batch = wanted[start : start + _IN_LIST_BATCH]
            result = await table.query().where(sql_in("hash", batch)).select(["hash", "vector"]).to_arrow()
            if result.num_rows == 0:
                continue
            vectors = result["vector"].combine_chunks().flatten().to_numpy(zero_copy_only=False)
            vectors = vectors.reshape(result.num_rows, dimension)
            for row, content_hash in enumerate(result["hash"].to_pylist()):
                found[content_hash] = vectors[row]
        return found

    async def chunk_paths(self, suffix: str, dimension: int) -> set[str]:
        table = await self.chunks(suffix, dimension)
        result = await table.query().select(["path"]).to_arrow()
        return set(result["path"].to_pylist())

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
    ) -> None:
        """Replaces everything stored for `paths`. The manifest is written last, so a crash in
        between leaves notes whose manifest still says "old": the next sync redoes them."""
        async with self._lock:
            chunks = await self.chunks(suffix, dimension)
            for start in range(0, len(paths), _IN_LIST_BATCH):
                await chunks.delete(sql_in("path", paths[start : start + _IN_LIST_BATCH]))
            if chunk_rows is not None and chunk_rows.num_rows:
                await chunks.add(chunk_rows)
            if note_rows:
                notes = await self.notes(suffix)
                data = pa.Table.from_pylist([asdict(r) for r in note_rows], schema=NOTE_SCHEMA)
                await notes.merge_insert("path").when_matched_update_all().when_not_matched_insert_all().execute(data)

    async def delete_notes(self, suffix: str, dimension: int, paths: Sequence[str]) -> None:
        async with self._lock:
            chunks = await self.chunks(suffix, dimension)
            notes = await self.notes(suffix)
            for start in range(0, len(paths), _IN_LIST_BATCH):
                batch = paths[start : start + _IN_LIST_BATCH]
                await chunks.delete(sql_in("path", batch))
                await notes.delete(sql_in("path", batch))

    async def ensure_fts(self, suffix: str, dimension: int) -> None:
        name = f"chunks_{suffix}"
        if name in self._fts_ready:
            return
        table = await self.chunks(suffix, dimension)
        indices = await table.list_indices()
        if not any("search_text" in index.columns for index in indices):
            if await table.count_rows() == 0:
                return
            await table.create_index("search_text", config=FTS(with_position=False))
        self._fts_ready.add(name)

    async def compact(self, suffix: str, dimension: int, *, keep: timedelta = timedelta(seconds=10)) -> None:
        """Merges small fragments, brings indexes up to date and prunes old versions."""
        async with self._lock:
            for table in (await self.chunks(suffix, dimension), await self.notes(suffix)):
                await table.optimize(cleanup_older_than=keep)

    # -- queries ----------------------------------------------------------------------------------

    async def vector_search(
        self, suffix: str, dimension: int, vector: np.ndarray, limit: int, where: str | None = None
    ) -> list[dict[str, Any]]:
        table = await self.chunks(suffix, dimension)
        query = table.query().nearest_to(vector.astype(np.float32)).distance_type("cosine").limit(limit)
        if where:
            query = query.where(where)
        result = await query.select([*_HIT_COLUMNS, "_distance"]).to_arrow()
        rows: list[dict[str, Any]] = result.to_pylist()
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
    ) -> list[dict[str, Any]]:
        await self.ensure_fts(suffix, dimension)
        if f"chunks_{suffix}" not in self._fts_ready:
            return []
        table = await self.chunks(suffix, dimension)
        query = table.query().nearest_to_text(text).limit(limit)
        if where:
            query = query.where(where)
        try:
            columns = [*_HIT_COLUMNS, "_score", *(["vector"] if with_vectors else [])]
            result = await query.select(columns).to_arrow()
        except Exception as exc:  # a query the FTS parser rejects is "no keyword hits", not a crash
            log.debug("full-text query %r failed: %s", text, exc)
            return []
        rows: list[dict[str, Any]] = result.to_pylist()
        for row in rows:
            row["score"] = float(row.pop("_score"))
        return rows


_HIT_COLUMNS = ["id", "path", "title", "heading", "anchor", "line_start", "line_end", "kind", "text", "tags"]


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
