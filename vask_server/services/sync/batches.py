"""A sync's batches of notes, from read to written: their vectors, reused (from the store, or from
batches embedded but not yet written) or else embedded, and their rows and note records, gathered
in `Pending` until the indexer writes them in one append.

A batch's chunks are written before its manifest rows: a crash leaves notes that the next sync
redoes, never a note marked indexed without its vectors.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

import numpy as np
import pyarrow as pa

from vask_server.adapters.manifest import NoteRecord
from vask_server.adapters.meta import now_iso
from vask_server.adapters.ollama import Embedder
from vask_server.adapters.tables import IndexTables
from vask_server.core.hashkeys import HashKeys
from vask_server.core.plan import chunks_to_embed
from vask_server.services.sync.rows import Prepared, chunk_rows, note_record_of
from vask_server.services.sync.sync_report import SyncReport


@dataclass
class Pending:
    """Batches embedded but not yet written: written together once `due`."""

    started: float = field(default_factory=time.monotonic)
    paths: list[str] = field(default_factory=list)
    rows: list[pa.Table] = field(default_factory=list)
    records: list[NoteRecord] = field(default_factory=list)
    opted_out: list[str] = field(default_factory=list)  # notes that opted out and have rows to remove
    vectors: dict[str, np.ndarray] = field(default_factory=dict)  # by hash: what later batches can reuse

    @property
    def row_count(self) -> int:
        return sum(table.num_rows for table in self.rows)

    def due(self, rows: int, seconds: float) -> bool:
        """It holds `rows` rows, or its first batch is `seconds` old."""
        return self.row_count >= rows or time.monotonic() - self.started >= seconds


@dataclass
class Present:
    """What the chunks table (and manifest) held when a large sync started, plus what it wrote."""

    paths: set[str]
    hashes: HashKeys


async def embed_batch(
    tables: IndexTables,
    embedder: Embedder,
    prepared: list[Prepared],
    report: SyncReport,
    present: Present | None,
    pending: Pending,
    keyword_terms: str,
) -> float:
    """Embeds what a batch needs (reusing stored vectors, and those of batches not yet written)
    and adds its rows and note records to `pending`. Returns the seconds spent waiting for the model."""
    all_chunks = [chunk for item in prepared for chunk in item.chunks]
    all_hashes = {c.hash for c in all_chunks}
    known = {h: pending.vectors[h] for h in all_hashes if h in pending.vectors}
    # (with `present`: the others have no stored vector, no need to ask)
    wanted = all_hashes - known.keys()
    hashes = present.hashes.maybe_present(wanted) if present is not None else wanted
    known.update(await tables.vectors_for_hashes(hashes))
    to_embed = chunks_to_embed(all_chunks, known)
    waited = 0.0
    if to_embed:
        asked = time.perf_counter()
        vectors = await embedder.embed([c.embed_text for c in to_embed])
        waited = time.perf_counter() - asked
        for chunk, vector in zip(to_embed, vectors, strict=True):
            known[chunk.hash] = vector
    report.chunks_embedded += len(to_embed)
    report.chunks_reused += len(all_chunks) - len(to_embed)

    indexed_at = now_iso()
    pending.opted_out.extend(item.path for item in prepared if item.status == "excluded" and item.was_indexed)
    for item in prepared:
        if item.status == "excluded":
            report.excluded[item.reason] = report.excluded.get(item.reason, 0) + 1
            continue
        if item.kept is not None:
            report.touched += 1
            pending.records.append(replace(item.kept, mtime_ns=item.stamp.mtime_ns, size=item.stamp.size))
            continue
        report.changed += 1
        report.warnings.extend(item.warnings)
        if item.status == "failed":
            report.failed.append((item.path, item.reason))
        elif item.status == "skipped":
            report.skipped.append((item.path, item.reason))
        pending.records.append(note_record_of(item, indexed_at))
    rows = chunk_rows(prepared, known, tables.dimension, keyword_terms)
    if rows is not None:
        pending.rows.append(rows)
    pending.paths.extend(item.path for item in prepared if item.kept is None)  # (touched ones keep their rows)
    pending.vectors.update(known)
    return waited


async def write_pending(tables: IndexTables, pending: Pending, present: Present | None) -> bool:
    """Writes what `pending` gathered. Returns whether it removed the rows of notes that have just
    opted out (no kept version of the tables may hold them: the sync purges them)."""
    unread = [record.path for record in pending.records if record.links is None]
    if unread:  # touched notes' records, read without their links: they are written back whole
        links = await tables.links_of(unread)
        pending.records = [replace(r, links=links.get(r.path, "[]")) if r.links is None else r for r in pending.records]
    rows = pa.concat_tables(pending.rows) if pending.rows else None
    await tables.write_notes(pending.paths, rows, pending.records, existing=None if present is None else present.paths)
    if pending.opted_out:  # notes that have just opted out: their rows go, and no kept version may hold them
        await tables.delete_notes(pending.opted_out)
    if present is not None:
        present.paths.update(pending.paths)
        present.hashes.add(pending.vectors)
    return bool(pending.opted_out)
