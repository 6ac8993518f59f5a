"""What a sync writes of the notes it read: their chunk rows (with vectors), the keyword table's
rows (without), and their manifest records."""

from __future__ import annotations

import json
import posixpath
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from datetime import date

import numpy as np
import pyarrow as pa

from vask_server.adapters.manifest import NoteRecord
from vask_server.adapters.schema import chunk_schema, hit_records, text_schema
from vask_server.adapters.vault import FileStat
from vask_server.core.cjk import keyword_text
from vask_server.core.filetypes import display_name
from vask_server.core.models import Chunk, Note
from vask_server.core.time.dates import DateSpan


@dataclass
class Prepared:
    """A note read, parsed, chunked and dated for a sync (or why it was not)."""

    path: str
    stamp: FileStat
    note: Note | None = None
    chunks: list[Chunk] = field(default_factory=list)
    dates: list[DateSpan] = field(default_factory=list)  # one per chunk
    modified: date | None = None
    content_hash: str = ""
    was_indexed: bool = False  # (for a note that opted out: it has rows to remove)
    kept: NoteRecord | None = None  # (for a note only touched: its record, whose rows stay)
    status: str = "ok"
    reason: str = ""
    warnings: list[str] = field(default_factory=list)


def note_record_of(item: Prepared, indexed_at: str) -> NoteRecord:
    note = item.note
    links = [asdict(link) for link in note.links] if note else []
    return NoteRecord(
        path=item.path,
        mtime_ns=item.stamp.mtime_ns,
        size=item.stamp.size,
        content_hash=item.content_hash,
        title=note.title if note else display_name(item.path),
        aliases=list(note.aliases) if note else [],
        tags=list(note.tags) if note else [],
        links=json.dumps(links, ensure_ascii=False),
        chunk_count=len(item.chunks),
        status=item.status,
        reason=item.reason,
        indexed_at=indexed_at,
    )


def chunk_rows(prepared: list[Prepared], vectors: dict[str, np.ndarray], dimension: int, terms: str) -> pa.Table | None:
    schema = chunk_schema(dimension)
    columns, hashes = _chunk_columns(prepared, terms)
    if not hashes:
        return None
    value_type = schema.field("vector").type.value_type
    matrix = np.stack([np.asarray(vectors[h]) for h in hashes]).astype(value_type.to_pandas_dtype())
    arrays = [pa.array(columns[name], type=schema.field(name).type) for name in schema.names if name != "vector"]
    vector_array = pa.FixedSizeListArray.from_arrays(pa.array(matrix.reshape(-1), value_type), dimension)
    return pa.Table.from_arrays([*arrays, vector_array], schema=schema)


def text_rows(prepared: list[Prepared], terms: str) -> pa.Table | None:
    """The rows of the keyword table: chunk rows without vectors."""
    schema = text_schema()
    columns, hashes = _chunk_columns(prepared, terms)
    if not hashes:
        return None
    return pa.Table.from_arrays([pa.array(columns[n], type=schema.field(n).type) for n in schema.names], schema=schema)


def search_text(title: str, aliases: str, heading: str, text: str, terms: str) -> str:
    """A passage's keyword text: its note's title and aliases (space-separated), its heading path and
    its text, cut as the index cuts (core/cjk.py). Made from what its row stores, so a change of the
    cutting remakes it without the note (services/sync/recut.py)."""
    return keyword_text(f"{title} {aliases}\n{heading}\n{text}", terms)


def _chunk_columns(prepared: list[Prepared], terms: str) -> tuple[dict[str, list[object]], list[str]]:
    columns: dict[str, list[object]] = defaultdict(list)
    hashes: list[str] = []
    for item in prepared:
        note = item.note
        if note is None:
            continue
        folder = posixpath.dirname(item.path)
        aliases = " ".join(note.aliases)
        tags = list(note.tags)
        for chunk, span in zip(item.chunks, item.dates, strict=True):
            columns["id"].append(chunk.id)
            columns["path"].append(chunk.path)
            columns["folder"].append(folder)
            columns["title"].append(chunk.title)
            columns["heading"].append(chunk.heading)
            columns["anchor"].append(chunk.anchor)
            columns["line_start"].append(chunk.line_start)
            columns["line_end"].append(chunk.line_end)
            columns["ordinal"].append(chunk.ordinal)
            columns["kind"].append(chunk.kind)
            columns["hash"].append(chunk.hash)
            columns["text"].append(chunk.text)
            columns["search_text"].append(search_text(chunk.title, aliases, chunk.heading, chunk.text, terms))
            columns["tags"].append(tags)
            columns["date"].append(span.start)
            columns["date_end"].append(span.end)
            columns["date_source"].append(span.source)
            columns["modified"].append(item.modified)
            columns["page"].append(chunk.page)
            columns["mtime_ns"].append(item.stamp.mtime_ns)  # (the keyword table's: `text_schema`)
            columns["size"].append(item.stamp.size)
            hashes.append(chunk.hash)
    if hashes:
        columns["hit"].extend(hit_records(columns))
    return columns, hashes
