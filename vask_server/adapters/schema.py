"""The chunk tables' schema: the columns of a passage's row, its vector's type, and the `hit` column
that holds what a search returns of a row in one JSON string (written by `hit_records`, read back by
`hit_rows`). The notes manifest's schema is `manifest.NOTE_SCHEMA`."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import date
from typing import Any

import numpy as np
import pyarrow as pa

# Columns a search reads besides the `hit` column's fields.
HIT_COLUMNS = ("hit", "text")

# Vectors are stored as 16-bit floats: half the disk and half of what compaction and the ANN build
# read, for a cosine that barely moves (docs/BENCHMARKS.md, "The vector index"). Read back as float32.
VECTOR_VALUE_TYPE = pa.float16()


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
            # When the passage was written (core/time/dates.py): the first and last day it covers, and
            # where that was read ("daily-note", "frontmatter:created", "heading", …, "file-time").
            pa.field("date", pa.date32()),
            pa.field("date_end", pa.date32()),
            pa.field("date_source", pa.string()),
            pa.field("modified", pa.date32()),  # the note's: frontmatter `modified`/`updated`, else the file's
            pa.field("page", pa.int32()),  # a PDF chunk's page (1-based); null for notes and canvases
            pa.field("hit", pa.string()),  # `HIT_FIELDS` as JSON: what a search reads (`hit_records`)
            pa.field("vector", pa.list_(VECTOR_VALUE_TYPE, dimension)),
        ]
    )


def text_schema() -> pa.Schema:
    """The keyword table of a first sync: the chunk rows without their vectors (see `add_text_rows`),
    with the file time and size of the note each row was read from (what a restarted sync compares)."""
    return pa.schema(
        [
            *(f for f in chunk_schema(1) if f.name != "vector"),
            pa.field("mtime_ns", pa.int64()),
            pa.field("size", pa.int64()),
        ]
    )


# What a hit carries besides its text, kept once more in the `hit` column as one JSON string: a search
# reads each column it names for every row it returns, a random read and decode per row and column,
# so one column is several times quicker to read than twelve. The separate columns stay, for filters
# and other readers.
HIT_FIELDS = (
    "id",
    "path",
    "title",
    "heading",
    "anchor",
    "line_start",
    "line_end",
    "tags",
    "date",
    "date_end",
    "date_source",
    "page",
)
_HIT_DATES = ("date", "date_end")


def hit_records(columns: Mapping[str, Sequence[Any]]) -> list[str]:
    """The `hit` column of chunk rows given as columns (lists by field name)."""
    fields = [columns[name] for name in HIT_FIELDS]
    records = []
    for values in zip(*fields, strict=True):
        record = dict(zip(HIT_FIELDS, values, strict=True))
        for name in _HIT_DATES:
            if record[name] is not None:
                record[name] = record[name].isoformat()
        records.append(json.dumps(record, ensure_ascii=False, separators=(",", ":")))
    return records


def hit_rows(result: pa.Table) -> list[dict[str, Any]]:
    """A search's rows, with the `hit` column opened into its fields."""
    rows = rows_with_vectors(result)
    for row in rows:
        record = json.loads(row.pop("hit"))
        for name in _HIT_DATES:
            if record[name] is not None:
                record[name] = date.fromisoformat(record[name])
        row.update(record)
    return rows


def rows_with_vectors(result: pa.Table) -> list[dict[str, Any]]:
    """Rows as dicts; a "vector" column becomes one float32 array a row."""
    if "vector" not in result.column_names:
        rows: list[dict[str, Any]] = result.to_pylist()
        return rows
    matrix = vector_matrix(result["vector"])
    rows = result.drop_columns(["vector"]).to_pylist()
    for row, vector in zip(rows, matrix, strict=True):
        row["vector"] = vector
    return rows


def vector_matrix(column: pa.ChunkedArray | pa.Array, dimension: int | None = None) -> np.ndarray:
    """A column of fixed-size float lists as one float32 matrix, a row per vector, straight from
    Arrow (as Python lists, 50 vectors of 384 floats took a few milliseconds)."""
    values = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    matrix = values.flatten().to_numpy(zero_copy_only=False).astype(np.float32, copy=False)
    width = dimension or (int(values.type.list_size) if len(values) else 0)
    shaped: np.ndarray = matrix.reshape(len(values), width)
    return shaped
