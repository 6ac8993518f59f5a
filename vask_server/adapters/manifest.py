"""The notes table as a sync reads it: kept in Arrow's columns, a row made into a `NoteRecord` only
when one is asked for, and without the links (JSON, most of a row) unless they are wanted.

As Python records, 100,000 notes held 247 MiB for as long as a sync ran, and every sync that found a
change read them all; in columns, without the links, 67 MiB (docs/BENCHMARKS.md). The scan's
comparison reads two integer columns.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

V = TypeVar("V")

# The notes table, one row a note: what `NoteRecord` holds.
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
    links: str | None  # JSON; None in a record read without it (`Store.manifest(with_links=False)`)
    chunk_count: int
    status: str
    reason: str
    indexed_at: str


@dataclass(frozen=True)
class Stamp:
    mtime_ns: int
    size: int


class _ByPath(Mapping[str, V]):
    """A mapping by note path over rows numbered in `_row`."""

    _row: dict[str, int]

    def __contains__(self, path: object) -> bool:
        return path in self._row

    def __iter__(self) -> Iterator[str]:
        return iter(self._row)

    def __len__(self) -> int:
        return len(self._row)


class Manifest(_ByPath[NoteRecord]):
    """Note records by path (the last row wins where a path has two: as a dict built row by row)."""

    def __init__(self, rows: pa.Table) -> None:
        self._rows = rows
        self._row = {path: number for number, path in enumerate(rows["path"].to_pylist())}
        self._mtime_ns = _integers(rows, "mtime_ns")
        self._size = _integers(rows, "size")
        self._chunk_count = _integers(rows, "chunk_count")

    @classmethod
    def empty(cls) -> Manifest:
        return cls(NOTE_SCHEMA.empty_table())

    def __getitem__(self, path: str) -> NoteRecord:
        row = self._rows.slice(self._row[path], 1).to_pylist()[0]
        return NoteRecord(**{"links": None, **row})

    def stamps(self) -> Mapping[str, Stamp]:
        """Each note's recorded time and size, what the scan is compared with, without its record."""
        return _Stamps(self)

    def stamp(self, path: str) -> Stamp:
        number = self._row[path]
        return Stamp(int(self._mtime_ns[number]), int(self._size[number]))

    def chunk_count(self, path: str) -> int:
        return int(self._chunk_count[self._row[path]])

    def only(self, paths: Collection[str]) -> Manifest:
        """The records of these paths alone."""
        numbers = sorted(self._row[p] for p in paths if p in self._row)
        return Manifest(self._rows.take(pa.array(numbers, pa.int64())))


def linking_to(
    paths: pa.Array | pa.ChunkedArray, links: pa.Array | pa.ChunkedArray, targets: Collection[str]
) -> set[str]:
    """Of these notes (paths, and their stored links as JSON), those other than `targets` whose links
    resolve to one of `targets`: found in the links as Arrow text, without reading any record."""
    if not targets or not len(paths):
        return set()
    text = links.fill_null("")
    hits = np.zeros(len(paths), dtype=bool)
    for target in targets:
        # (a resolved link is stored as its JSON string, quotes included)
        hits |= pc.match_substring(text, json.dumps(target, ensure_ascii=False)).to_numpy(zero_copy_only=False)
    found = pc.filter(paths, pa.array(hits)).to_pylist()
    return {path for path in found if path not in targets}


class _Stamps(_ByPath[Stamp]):
    def __init__(self, manifest: Manifest) -> None:
        self._manifest = manifest
        self._row = manifest._row

    def __getitem__(self, path: str) -> Stamp:
        return self._manifest.stamp(path)


def _integers(rows: pa.Table, column: str) -> np.ndarray:
    values: np.ndarray = rows[column].fill_null(0).to_numpy()
    return values.astype(np.int64, copy=False)
