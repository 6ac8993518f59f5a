"""One index's tables, as one object: `chunks_<suffix>` (the passages, their vectors and keyword
text), `notes_<suffix>` (the manifest: a record per note) and, during a long first sync,
`text_<suffix>` (every note's keyword text before it is embedded). `Store.tables(record)` gives it;
what it shares with the folder's other indexes (the connection, the write lock, the ANN indexes) is
the store's `Database`.
"""

from __future__ import annotations

import contextlib
import logging
import warnings
from collections.abc import AsyncIterator, Collection, Iterable, Sequence
from dataclasses import asdict, dataclass
from datetime import timedelta
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from vask_server.adapters.ann_plan import AnnPlan
from vask_server.adapters.database import Database
from vask_server.adapters.lancedb_api import FTS, BTree, MatchQuery, lancedb
from vask_server.adapters.manifest import NOTE_SCHEMA, Manifest, NoteRecord, linking_to
from vask_server.adapters.meta import IndexRecord
from vask_server.adapters.schema import HIT_COLUMNS, chunk_schema, hit_rows, text_schema, vector_matrix
from vask_server.adapters.sql import sql_in
from vask_server.adapters.upkeep import TableUpkeep
from vask_server.core.hashkeys import HashKeys, hash_key, keys_of_hex_rows
from vask_server.errors import IndexBroken

log = logging.getLogger(__name__)

_IN_LIST_BATCH = 256
_SCAN_BATCH_ROWS = 65_536  # rows a batch when a column is read whole
_LINK_BATCH_ROWS = 8_192  # notes a batch when their links are read: a large vault's links are large
_KEYWORD_SEARCH = "keyword search"
_KEYWORD_HINT = "Run `vask index --full` to rebuild the keyword index."


@dataclass(frozen=True)
class SearchOptions:
    """What a vector search returns beyond each row's hit fields, and how a filtered one runs."""

    with_vectors: bool = False  # each row's vector
    # each row's kind, a passage ("chunk") or a note's record ("note"): for a caller that searches
    # unfiltered and drops what it does not want
    with_kind: bool = False
    # A filtered search may go through the ANN index too (for broad filters: dates, folders, tags),
    # probing more partitions, up to all, until `limit` rows pass the filter: on a large table a broad
    # range is much quicker so, and finds the same rows. Otherwise filtered searches are exact: the
    # B-tree on `path` makes one-note filters fast, where the index would probe every partition to
    # find their few rows.
    approximate_filter: bool = False


class IndexTables(TableUpkeep):
    """The tables of the index of one model (and dimension): every read and write of its notes."""

    def __init__(self, database: Database, index: IndexRecord) -> None:
        self.database = database
        self.suffix = index.suffix
        self.dimension = index.dimension
        self.chunks_name = f"chunks_{index.suffix}"
        self.notes_name = f"notes_{index.suffix}"
        self.text_name = f"text_{index.suffix}"

    async def chunks(self) -> lancedb.AsyncTable:
        return await self.database.table(self.chunks_name, chunk_schema(self.dimension))

    async def notes(self) -> lancedb.AsyncTable:
        return await self.database.table(self.notes_name, NOTE_SCHEMA)

    async def _text(self) -> lancedb.AsyncTable:
        return await self.database.table(self.text_name, text_schema())

    # -- the notes' records -----------------------------------------------------------------------

    async def manifest(self, paths: Collection[str] | None = None, *, with_links: bool = True) -> Manifest:
        """Note records by path: all of them, or those of `paths` (an edit's sync needs one row, and
        reading all of a large vault's is slow). `with_links=False`: records without their links
        (None), which are most of a row; `links_of` reads them for the few notes that need them."""
        table = await self.notes()
        columns = [name for name in NOTE_SCHEMA.names if with_links or name != "links"]
        if paths is None or len(paths) > 4 * _IN_LIST_BATCH:
            manifest = Manifest(await table.query().select(columns).to_arrow())
            return manifest if paths is None else manifest.only(paths)
        parts = await _note_rows(table, sorted(paths), columns)
        return Manifest(pa.concat_tables(parts)) if parts else Manifest.empty()

    async def links_of(self, paths: Sequence[str]) -> dict[str, str]:
        """The stored links (JSON) of these notes, by path."""
        found: dict[str, str] = {}
        for result in await _note_rows(await self.notes(), paths, ["path", "links"]):
            found.update(zip(result["path"].to_pylist(), result["links"].fill_null("").to_pylist(), strict=True))
        return found

    async def notes_linking_to(self, targets: Collection[str]) -> set[str]:
        """The notes (other than `targets`) whose stored links resolve to one of `targets`, read in
        batches of paths and links."""
        if not targets:
            return set()
        table = await self.notes()
        found: set[str] = set()
        stream = await table.query().select(["path", "links"]).to_batches(max_batch_length=_SCAN_BATCH_ROWS)
        async for batch in stream:
            found |= linking_to(batch["path"], batch["links"], targets)
        return found

    async def note_names(self) -> pa.Table:
        """Each note's path, title, aliases and tags: what the link graph and a question's scope name
        notes by."""
        table = await self.notes()
        return await table.query().select(["path", "title", "aliases", "tags"]).to_arrow()

    async def note_link_batches(self) -> AsyncIterator[pa.RecordBatch]:
        """Each note's path and links (JSON), in batches: a large vault's links, read whole, are large,
        and the link graph needs one batch at a time."""
        table = await self.notes()
        async for batch in await table.query().select(["path", "links"]).to_batches(max_batch_length=_LINK_BATCH_ROWS):
            yield batch

    async def note_statuses(self) -> tuple[int, dict[str, tuple[str, str]]]:
        """How many notes are indexed ("ok"), and the (status, reason) of every other one by path:
        what a status report needs. Only the few rows that are not "ok" are read: every path of a
        large vault is slow to read, and a status is asked at every start."""
        table = await self.notes()
        ok = int(await table.count_rows("status = 'ok'"))
        result = await table.query().where("status != 'ok'").select(["path", "status", "reason"]).to_arrow()
        columns = (result[name].to_pylist() for name in ("path", "status", "reason"))
        return ok, {path: (status, reason) for path, status, reason in zip(*columns, strict=True)}

    async def paths_with_passages(self) -> pa.Array:
        """The paths of the notes indexed with at least one passage: what a sample of passages, one a
        note, draws from."""
        table = await self.notes()
        result = await table.query().where("status = 'ok' AND chunk_count > 0").select(["path"]).to_arrow()
        return result["path"].combine_chunks()

    async def passages_of(self, paths: Sequence[str], columns: list[str]) -> pa.Table | None:
        """These columns of these notes' passages (rows of kind "chunk"), found through the path
        index; None for no paths."""
        table = await self.chunks()
        parts = []
        for start in range(0, len(paths), _IN_LIST_BATCH):
            where = f"kind = 'chunk' AND {sql_in('path', paths[start : start + _IN_LIST_BATCH])}"
            parts.append(await table.query().where(where).select(columns).to_arrow())
        return pa.concat_tables(parts) if parts else None

    async def note_aliases(self) -> dict[str, list[str]]:
        """Each note's aliases, by path (they are in its passages' keyword text)."""
        table = await (await self.notes()).query().select(["path", "aliases"]).to_arrow()
        aliases = table["aliases"].to_pylist()
        return {path: list(names or []) for path, names in zip(table["path"].to_pylist(), aliases, strict=True)}

    # -- the passages -----------------------------------------------------------------------------

    async def vectors_for_hashes(self, hashes: Iterable[str]) -> dict[str, np.ndarray]:
        """Stored vectors by content hash, from any note: what lets edits and moves embed nothing."""
        return await self._vectors_by("hash", sorted(set(hashes)))

    async def vectors_by_id(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The vectors of these chunk ids that exist, by id."""
        return await self._vectors_by("id", ids)

    async def _vectors_by(self, column: str, keys: Sequence[str]) -> dict[str, np.ndarray]:
        """Vectors of the rows whose `column` is one of `keys`, by that key (a key of several rows
        keeps the last one read: equal hashes have equal vectors)."""
        table = await self.chunks()
        found: dict[str, np.ndarray] = {}
        for start in range(0, len(keys), _IN_LIST_BATCH):
            batch = list(keys[start : start + _IN_LIST_BATCH])
            result = await table.query().where(sql_in(column, batch)).select([column, "vector"]).to_arrow()
            found.update(zip(result[column].to_pylist(), vector_matrix(result["vector"], self.dimension), strict=True))
        return found

    async def texts_for_ids(self, ids: Sequence[str]) -> dict[str, str]:
        """The text of each of these chunk ids that exists."""
        table = await self.chunks()
        found: dict[str, str] = {}
        for start in range(0, len(ids), _IN_LIST_BATCH):
            batch = list(ids[start : start + _IN_LIST_BATCH])
            result = await table.query().where(sql_in("id", batch)).select(["id", "text"]).to_arrow()
            found.update(zip(result["id"].to_pylist(), result["text"].to_pylist(), strict=True))
        return found

    async def chunk_keys(self) -> tuple[set[str], HashKeys]:
        """Every note path and every content hash that has rows: one column scan, so that a large
        sync can skip the lookups and deletes that would find nothing. Read in batches, each made
        unique in Arrow first: the two columns of a large index, read whole, raise the memory peak."""
        paths: set[str] = set()
        keys: list[np.ndarray] = []
        async for batch in self._column_batches(["path", "hash"]):
            paths.update(pc.unique(batch["path"]).to_pylist())
            keys.append(hash_keys_of(pc.unique(batch["hash"])))
        return paths, HashKeys(np.concatenate(keys) if keys else None)

    async def chunk_paths(self) -> set[str]:
        paths: set[str] = set()
        async for batch in self._column_batches(["path"]):
            paths.update(pc.unique(batch["path"]).to_pylist())
        return paths

    async def keyword_sources(self) -> AsyncIterator[pa.RecordBatch]:
        """Every row's id and what its keyword text is made of (path, title, heading, text), in
        batches: what cutting the keyword text anew reads instead of the notes."""
        async for batch in self._column_batches(["id", "path", "title", "heading", "text"]):
            yield batch

    async def _column_batches(self, columns: list[str]) -> AsyncIterator[pa.RecordBatch]:
        table = await self.chunks()
        async for batch in await table.query().select(columns).to_batches(max_batch_length=_SCAN_BATCH_ROWS):
            yield batch

    async def count_chunks(self) -> int:
        return int(await (await self.chunks()).count_rows())

    async def all_chunk_rows(self, columns: list[str], where: str | None = None) -> pa.Table:
        table = await self.chunks()
        query = table.query().select(columns)
        if where:
            query = query.where(where)
        return await query.to_arrow()

    # -- writes -----------------------------------------------------------------------------------

    def _writing(self) -> contextlib.AbstractAsyncContextManager[None]:
        return self.database.writing()

    async def write_notes(
        self,
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
            chunks = await self.chunks()
            for start in range(0, len(stale), _IN_LIST_BATCH):
                await chunks.delete(sql_in("path", stale[start : start + _IN_LIST_BATCH]))
            if chunk_rows is not None and chunk_rows.num_rows:
                await chunks.add(chunk_rows)
            if note_rows:
                notes = await self.notes()
                replaced = [asdict(r) for r in note_rows if existing is None or r.path in existing]
                added = [asdict(r) for r in note_rows if existing is not None and r.path not in existing]
                if replaced:
                    data = pa.Table.from_pylist(replaced, schema=NOTE_SCHEMA)
                    merge = notes.merge_insert("path").when_matched_update_all().when_not_matched_insert_all()
                    await merge.execute(data)
                if added:
                    await notes.add(pa.Table.from_pylist(added, schema=NOTE_SCHEMA))

    async def delete_notes(self, paths: Sequence[str]) -> None:
        async with self._writing():
            chunks = await self.chunks()
            notes = await self.notes()
            for start in range(0, len(paths), _IN_LIST_BATCH):
                batch = paths[start : start + _IN_LIST_BATCH]
                await chunks.delete(sql_in("path", batch))
                await notes.delete(sql_in("path", batch))

    async def set_search_text(self, ids: pa.Array, texts: pa.Array) -> None:
        """These rows' keyword text replaced, the rest of each row kept (its vector too). LanceDB
        writes the rows anew: the full-text and vector indexes cover them again once rebuilt (the
        sync's compaction and index builds)."""
        update = pa.table({"id": ids, "search_text": texts})
        async with self._writing():
            chunks = await self.chunks()
            await chunks.merge_insert("id").when_matched_update_all().execute(update)

    # -- the keyword table of a first sync ---------------------------------------------------------
    # A first sync with a slow model takes an hour; its notes' text goes into `text_<suffix>` first
    # (no vectors: a table of a fraction of the bytes, written in a minute) with a full-text index, so
    # that every note is found by keyword long before it is embedded. Dropped, with every version of
    # it, once the chunks table has its own full-text index. A restart finds it as it was (its
    # full-text index is written last: `Store.open`); each row keeps the file time and size of the
    # note it was read from, so that the restarted sync brings it in step with the vault
    # (keyword_first.refresh_keyword_table).

    async def start_text(self) -> None:
        """An empty keyword table (one a killed sync left is dropped: its notes may have changed)."""
        await self.drop_text()
        await self._text()

    async def add_text_rows(self, rows: pa.Table) -> None:
        async with self._writing():
            table = await self._text()
            await table.add(rows.drop_columns(["vector"]) if "vector" in rows.column_names else rows)

    async def finish_text(self) -> None:
        """Its full-text index: from now on searches find every note of the sync by keyword."""
        table = await self._text()
        if await table.count_rows():
            await table.create_index("search_text", config=FTS(with_position=False), replace=True)
            self.database.text_ready.add(self.text_name)

    def text_ready(self) -> bool:
        return self.text_name in self.database.text_ready

    async def text_notes(self) -> int:
        """How many notes a first sync's keyword table lets searches find (0 until it is searchable):
        its note-level records, or else its notes' paths."""
        if not self.text_ready():
            return 0
        table = await self._text()
        records = int(await table.count_rows("kind = 'note'"))
        if records:
            return records
        paths = await table.query().select(["path"]).to_arrow()
        return int(pc.count_distinct(paths["path"]).as_py())

    async def text_stamps(self) -> dict[str, tuple[int, int]]:
        """The notes the keyword table holds rows of, with the file time and size each was read at."""
        table = await self._text()
        stamps: dict[str, tuple[int, int]] = {}
        stream = await table.query().select(["path", "mtime_ns", "size"]).to_batches(max_batch_length=_SCAN_BATCH_ROWS)
        async for batch in stream:
            columns = (batch[name].to_pylist() for name in ("path", "mtime_ns", "size"))
            stamps.update((path, (mtime_ns, size)) for path, mtime_ns, size in zip(*columns, strict=True))
        return stamps

    async def delete_text_rows(self, paths: Sequence[str]) -> None:
        async with self._writing():
            table = await self._text()
            for start in range(0, len(paths), _IN_LIST_BATCH):
                await table.delete(sql_in("path", paths[start : start + _IN_LIST_BATCH]))

    async def purge_text(self) -> None:
        """Every version of the keyword table but the latest removed, with the files only they used:
        after rows of notes deleted or excluded went, no older version may still hold their text.
        (Only the sync writes this table, and it is not writing it now.)"""
        table = await self._text()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # "removes every version but the latest": the point
            await table.optimize(cleanup_older_than=timedelta(0), delete_unverified=True)

    async def drop_text(self) -> None:
        self.database.forget(self.text_name)
        if self.text_name in await self.database.table_names():
            await self.database.connection.drop_table(self.text_name)
            self.database.writes += 1

    # -- indexes ----------------------------------------------------------------------------------

    async def ensure_fts(self, *, rebuild: bool = False) -> None:
        """Creates the full-text and B-tree indexes a table lacks. `rebuild`: the full-text index is
        made again from the rows (`vask index --full`: what repairs one whose files are damaged)."""
        if self.chunks_name in self.database.fts_ready and not rebuild:
            return
        table = await self.chunks()
        indices = await table.list_indices()
        if await table.count_rows() == 0:
            return
        full_text = [index for index in indices if "search_text" in index.columns]
        if self.database.read_only:  # (the writer makes what is missing; a reader searches what there is)
            if full_text:
                self.database.fts_ready.add(self.chunks_name)
            return
        if rebuild:
            for index in full_text:
                await table.drop_index(index.name)
            self.database.problems.pop(_KEYWORD_SEARCH, None)
        if rebuild or not full_text:
            await table.create_index("search_text", config=FTS(with_position=False))
        # B-tree indexes on the columns every edit filters by (path: deletes, per-note searches;
        # hash: vector reuse): both are then index lookups, not scans of the table. Quick to build,
        # kept up to date by `compact`.
        for column in ("path", "hash"):
            if not any(index.columns == [column] for index in indices):
                await table.create_index(column, config=BTree())
        self.database.fts_ready.add(self.chunks_name)

    async def index_vectors_later(self) -> None:
        """Starts building, in the background and off the request path, the ANN index of a table that
        has `VECTOR_INDEX_MIN_ROWS` rows and none: one that a killed or failed build left missing (a
        sync that writes builds it before it ends, `index_vectors_now`); searches stay exact until it
        is ready. Builds it again when the table has outgrown it (`REBUILD_GROWTH`), or when it
        was built before `ann_plan` (its parameters unknown), while the old one keeps serving. A
        failed build is tried again after the next sync; rows written later are searched exactly beside
        it until a compaction makes it anew (`compact`)."""
        ann = self.database.ann
        if ann.building():
            return
        table = await self.chunks()
        plan = await ann.rebuild_plan(self.chunks_name, table)
        if plan is not None:
            ann.build_later(self.chunks_name, table, plan)

    async def missing_vector_index(self) -> AnnPlan | None:
        """The plan of the ANN index that a table large enough for one lacks; None when it has one or
        is too small (`VectorIndexes.missing`)."""
        return await self.database.ann.missing(self.chunks_name, await self.chunks())

    async def index_vectors_now(self, plan: AnnPlan) -> None:
        """Builds the ANN index `missing_vector_index` planned before returning: at the end of a first
        sync, or of the sync that grows a table past `VECTOR_INDEX_MIN_ROWS`: built in the background
        instead, a large table's searches would run exact meanwhile, slow and on top of the build's
        own memory peak. A rebuild, which the old index serves during, stays in the
        background (`index_vectors_later`). A failed build is logged, and tried again later."""
        await self.database.ann.build(self.chunks_name, await self.chunks(), plan)

    # -- searches ---------------------------------------------------------------------------------

    async def vector_search(
        self, vector: np.ndarray, limit: int, where: str | None = None, options: SearchOptions | None = None
    ) -> list[dict[str, Any]]:
        """The `limit` rows closest to `vector` (within `where`), each with its cosine as `score`."""
        options = options or SearchOptions()
        table = await self.chunks()
        query = table.query().nearest_to(vector.astype(np.float32)).distance_type("cosine").limit(limit)
        query = self.database.ann.probed(
            self.chunks_name, self.dimension, query, where, approximate_filter=options.approximate_filter
        )
        extra = [*(["vector"] if options.with_vectors else []), *(["kind"] if options.with_kind else [])]
        result = await query.select([*HIT_COLUMNS, "_distance", *extra]).to_arrow()
        rows = hit_rows(result)
        for row in rows:
            row["score"] = 1.0 - float(row.pop("_distance"))
        return rows

    async def text_search(
        self, text: str, limit: int, where: str | None = None, *, with_vectors: bool = False
    ) -> list[dict[str, Any]]:
        """BM25 matches of the query's words. The query is a MatchQuery: its text is only ever words,
        never query syntax (quotes, `AND`, `:`, `*`... are just characters), so nothing a user types
        is an error here. A failure is the index's, raised as IndexBroken and shown in the status."""
        try:
            await self.ensure_fts()
            if self.chunks_name not in self.database.fts_ready:
                return []  # an empty table: nothing to match
            result = await _matches(await self.chunks(), text, limit, where, with_vectors=with_vectors)
        except Exception as exc:
            raise self.database.broken(_KEYWORD_SEARCH, exc, _KEYWORD_HINT) from exc
        return self._scored(result)

    async def keyword_table_search(self, text: str, limit: int, where: str | None = None) -> list[dict[str, Any]]:
        """`text_search` in a first sync's keyword table (rows without vectors)."""
        try:
            result = await _matches(await self._text(), text, limit, where, with_vectors=False)
        except Exception as exc:
            raise self.database.broken(_KEYWORD_SEARCH, exc, _KEYWORD_HINT) from exc
        return self._scored(result)

    def _scored(self, result: pa.Table) -> list[dict[str, Any]]:
        self.database.problems.pop(_KEYWORD_SEARCH, None)
        rows = hit_rows(result)
        for row in rows:
            row["score"] = float(row.pop("_score"))
        return rows

    async def check_keyword_search(self) -> None:
        """One keyword query of one row, so that a status shows a broken keyword index before a
        search runs into it (recorded in `problems`, or cleared)."""
        with contextlib.suppress(IndexBroken):
            await self.text_search("vask", 1)


async def _matches(
    table: lancedb.AsyncTable, text: str, limit: int, where: str | None, *, with_vectors: bool
) -> pa.Table:
    # (its defaults are pydantic fields, which mypy reads as required arguments)
    words = MatchQuery(text, "search_text")  # type: ignore[call-arg]
    query = table.query().nearest_to_text(words).limit(limit)
    if where:
        query = query.where(where)
    columns = [*HIT_COLUMNS, "_score", *(["vector"] if with_vectors else [])]
    return await query.select(columns).to_arrow()


async def _note_rows(table: lancedb.AsyncTable, paths: Sequence[str], columns: list[str]) -> list[pa.Table]:
    """These columns of these notes' rows, asked for `_IN_LIST_BATCH` paths at a time."""
    parts = []
    for start in range(0, len(paths), _IN_LIST_BATCH):
        query = table.query().where(sql_in("path", paths[start : start + _IN_LIST_BATCH])).select(columns)
        parts.append(await query.to_arrow())
    return parts


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
