"""The notes table as a sync reads it: kept in Arrow's columns, a row made into a `NoteRecord` only
when one is asked for, and without the links (JSON, most of a row) unless they are wanted.

As Python records, a large vault's notes held several times as much for as long as a sync ran, and
every sync that found a change read them all (docs/BENCHMARKS.md, "Memory"). The scan's comparison
reads two integer columns.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pa_json

V = TypeVar("V")

log = logging.getLogger(__name__)

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
    links: str | None  # JSON; None in a record read without it (`IndexTables.manifest(with_links=False)`)
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


# What a stored link's JSON is read as for the link graph: its resolved target only (the other fields
# are checked as JSON, not kept).
_RESOLVED = pa.schema([pa.field("l", pa.list_(pa.struct([pa.field("resolved", pa.string())])))])


def resolved_links(links: pa.Array | pa.ChunkedArray) -> tuple[np.ndarray, pa.Array]:
    """For each link these notes' stored links (JSON) hold, the row of the note it is in and its
    resolved target (null when it resolves to no note). Arrow's JSON reader parses them, one line
    `{"l": <links>}` a note, so no Python object is made per link. A batch it cannot read (a row that
    is no JSON) is read row by row, the bad rows skipped."""
    text = links.combine_chunks() if isinstance(links, pa.ChunkedArray) else links
    text = text.cast(pa.string()).fill_null("[]")
    # The lines and their parse, the large and short-lived allocations, in the C allocator's memory,
    # which the process hands back after large operations; Arrow's own pool keeps what it freed.
    pool = pa.system_memory_pool()
    lines = pc.binary_join_element_wise(pa.scalar('{"l":'), text, pa.scalar("}\n"), "", memory_pool=pool)
    start = int(np.frombuffer(lines.buffers()[1], dtype=np.int32)[lines.offset]) if len(lines) else 0
    size = int(pc.sum(pc.binary_length(lines, memory_pool=pool), memory_pool=pool).as_py() or 0)
    if not size:
        return np.zeros(0, np.int64), pa.array([], pa.string())
    try:
        table = pa_json.read_json(
            pa.BufferReader(lines.buffers()[2].slice(start, size)),
            read_options=pa_json.ReadOptions(block_size=size + 1, use_threads=False),
            parse_options=pa_json.ParseOptions(explicit_schema=_RESOLVED, unexpected_field_behavior="ignore"),
            memory_pool=pool,
        )
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):  # (its message may quote a note's links: not logged)
        log.warning("the stored links of %d notes are not all JSON; reading them note by note", len(text))
        return _resolved_links_one_by_one(text)
    column = table["l"].combine_chunks()
    if len(column) != len(text):  # (a line break inside a row: never written so, but not trusted)
        return _resolved_links_one_by_one(text)
    rows = pc.list_parent_indices(column).to_numpy(zero_copy_only=False).astype(np.int64)
    return rows, pc.list_flatten(column).field("resolved")


def _resolved_links_one_by_one(text: pa.Array) -> tuple[np.ndarray, pa.Array]:
    rows: list[int] = []
    targets: list[str | None] = []
    for row, raw in enumerate(text.to_pylist()):
        try:
            resolved = [link.get("resolved") if isinstance(link, dict) else None for link in json.loads(raw)]
        except (ValueError, TypeError):
            continue
        rows.extend([row] * len(resolved))
        targets.extend(t if isinstance(t, str) else None for t in resolved)
    return np.asarray(rows, np.int64), pa.array(targets, pa.string())
