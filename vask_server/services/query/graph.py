"""The link graph of the active index: which notes link to which, as the manifest records it.

One object for /v1/related and the search's graph boost, read once per index version: the plugin
asks for related notes on every note switch, and reading and parsing every note's links each time
is slow on a large vault, and on the event loop (docs/BENCHMARKS.md, "Memory" and "Speed").
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Iterable, Iterator, Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from vask_server.adapters.manifest import resolved_links
from vask_server.adapters.memory import ReleaseWhenQuiet
from vask_server.adapters.meta import IndexRecord
from vask_server.adapters.store import Store
from vask_server.core.scope import Directory


class _Adjacency:
    """For each note number, the note numbers it points to: one sorted array and offsets into it
    (a few bytes a link, far less than a set of paths per note)."""

    def __init__(self, sources: np.ndarray, targets: np.ndarray, notes: int) -> None:
        order = np.argsort(sources, kind="stable")
        self._targets = targets[order]
        self._starts = np.searchsorted(sources[order], np.arange(notes + 1))

    def of(self, number: int) -> np.ndarray:
        return self._targets[self._starts[number] : self._starts[number + 1]]


class _Numbers:
    """Path → note number, by the paths' hashes: 16 bytes a note, far less than a dict of path
    strings."""

    def __init__(self, paths: pa.StringArray) -> None:
        self._paths = paths
        hashes = np.fromiter((hash(p) for p in paths.to_pylist()), np.int64, len(paths))
        self._order = np.argsort(hashes, kind="stable")
        self._hashes = hashes[self._order]

    def get(self, path: str) -> int | None:
        key = hash(path)
        at = int(np.searchsorted(self._hashes, key))
        while at < len(self._hashes) and self._hashes[at] == key:  # (equal hashes: compare the paths)
            number = int(self._order[at])
            if self._paths[number].as_py() == path:
                return number
            at += 1
        return None


class LinkGraph(Mapping[str, frozenset[str]]):
    """The notes of one index version and their links between each other (a link to a file that is
    not an indexed note, or to the note itself, is left out). As a mapping: path → the notes linked
    to or from it. Paths and titles stay in Arrow's columns, not Python strings."""

    def __init__(self, notes: pa.Table, sources: np.ndarray, targets: np.ndarray) -> None:
        self._notes = notes
        self._paths: pa.StringArray = notes["path"].combine_chunks()
        self._titles: pa.StringArray = notes["title"].combine_chunks()
        self._numbers = _Numbers(self._paths)
        self._out = _Adjacency(sources, targets, len(self._paths))
        self._in = _Adjacency(targets, sources, len(self._paths))

    @classmethod
    def from_batches(cls, notes: pa.Table, batches: Iterable[pa.RecordBatch]) -> LinkGraph:
        """From the manifest's path, title, aliases and tags columns (`notes`) and batches of its path
        and links columns. Run it off the event loop."""
        builder = _Builder(notes)
        for batch in batches:
            builder.add(batch)
        return builder.finish()

    @functools.cached_property
    def directory(self) -> Directory:
        """What a [[Note]] or #tag in a question can name, from the same rows: made when first asked
        for, as only questions that name something need it (docs/BENCHMARKS.md, "The related-notes
        pane"). Run it off the event loop."""
        tags = set(pc.unique(pc.list_flatten(self._notes["tags"])).to_pylist()) - {None}
        names = _Names(self._numbers, self._paths, self._titles, self._notes["aliases"].combine_chunks())
        directory = Directory(notes=self._paths.to_pylist(), tags=tags, names=names)
        # the names index made here too, in the caller's thread (slow on a large vault), not by the
        # first lookup, which is on the event loop
        _ = directory.by_name
        return directory

    def title(self, path: str) -> str | None:
        number = self._numbers.get(path)
        return None if number is None else self._titles[number].as_py()

    def links_to(self, path: str) -> frozenset[str]:
        """The notes `path` links to."""
        return self._paths_of(self._out, path)

    def linked_from(self, path: str) -> frozenset[str]:
        """The notes that link to `path`."""
        return self._paths_of(self._in, path)

    def link_count(self, path: str) -> int:
        """How many notes `path` links to."""
        number = self._numbers.get(path)
        return 0 if number is None else len(self._out.of(number))

    def _paths_of(self, adjacency: _Adjacency, path: str) -> frozenset[str]:
        number = self._numbers.get(path)
        if number is None:
            return frozenset()
        return frozenset(self._paths.take(adjacency.of(number)).to_pylist())

    def __getitem__(self, path: str) -> frozenset[str]:
        if path not in self:
            raise KeyError(path)
        return self.links_to(path) | self.linked_from(path)

    def __contains__(self, path: object) -> bool:
        return isinstance(path, str) and self._numbers.get(path) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self._paths.to_pylist())

    def __len__(self) -> int:
        return len(self._paths)


class _Names(Mapping[str, Sequence[str]]):
    """A note's title and aliases, read from the graph's columns when asked for (the directory asks
    once for each note, to index them by name) rather than kept as Python lists. It holds the
    columns, not the graph: the graph holds its directory, and a cycle would keep a replaced graph
    until a full garbage collection."""

    def __init__(self, numbers: _Numbers, paths: pa.StringArray, titles: pa.StringArray, aliases: pa.Array) -> None:
        self._numbers, self._paths, self._titles, self._aliases = numbers, paths, titles, aliases

    def __getitem__(self, path: str) -> Sequence[str]:
        number = self._numbers.get(path)
        if number is None:
            raise KeyError(path)
        title, aliases = self._titles[number].as_py(), self._aliases[number].as_py()
        return [name for name in (title, *(aliases or ())) if name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._paths.to_pylist())

    def __len__(self) -> int:
        return len(self._paths)


class _Builder:
    """A `LinkGraph` from the notes' names, then their links a batch at a time, each batch's links
    made note numbers before the next is read: reading a large vault's links whole and `json.loads`
    of every note's peaked about twice as high (docs/BENCHMARKS.md, "The related-notes pane"). Notes
    are numbered by their place in `notes`; a batch's paths are looked up there, so a note written
    between the two reads is left out until the next."""

    def __init__(self, notes: pa.Table) -> None:
        self._notes = notes.combine_chunks()
        self._paths = self._notes["path"].combine_chunks()
        self._pairs: list[np.ndarray] = []

    def _numbers(self, paths: pa.Array) -> np.ndarray:
        """Each path's note number; -1 for one that is no note here (or null)."""
        found = pc.index_in(paths.cast(self._paths.type), value_set=self._paths, memory_pool=pa.system_memory_pool())
        found = found.fill_null(-1)
        numbers: np.ndarray = found.to_numpy(zero_copy_only=False).astype(np.int64)
        return numbers

    def add(self, batch: pa.RecordBatch) -> None:
        rows, targets = resolved_links(batch.column("links"))
        sources = self._numbers(batch.column("path"))[rows]
        found = self._numbers(targets)
        kept = (sources >= 0) & (found >= 0) & (sources != found)  # (and no link to the note itself)
        self._pairs.append(np.unique(sources[kept] * max(len(self._paths), 1) + found[kept]))

    def finish(self) -> LinkGraph:
        notes_count = max(len(self._paths), 1)
        pairs = np.unique(np.concatenate(self._pairs)) if self._pairs else np.zeros(0, np.int64)  # each link once
        sources, targets = (pairs // notes_count).astype(np.int32), (pairs % notes_count).astype(np.int32)
        return LinkGraph(self._notes, sources, targets)


class LinkGraphs:
    """The link graph of a store's index, built when first asked for after a write changed it."""

    def __init__(self, store: Store, quiet: ReleaseWhenQuiet | None = None) -> None:
        self._store = store
        # what hands freed memory back once activity pauses (the searches' own, in the server)
        self._quiet = quiet
        self._graph: LinkGraph | None = None
        self._version: tuple[str, int] | None = None
        self._lock = asyncio.Lock()

    def _current(self, index: IndexRecord) -> tuple[str, int]:
        # The index version a sync (of this process or of `vask index`) leaves, and this process's
        # writes: one may be under way, its sync not yet recorded.
        return self._store.read_meta().version(index.suffix), self._store.writes

    async def get(self, index: IndexRecord) -> LinkGraph:
        async with self._lock:  # callers that arrive during a build wait for it, not build their own
            version = self._current(index)  # before reading: a write during the read makes it stale
            if self._graph is None or self._version != version:
                tables = self._store.tables(index)
                builder = _Builder(await tables.note_names())
                async for batch in tables.note_link_batches():
                    await asyncio.to_thread(builder.add, batch)
                self._graph = await asyncio.to_thread(builder.finish)
                if self._quiet is not None:  # what the read freed goes back once calls pause, as a search's
                    self._quiet.touch()
                self._version = version
            return self._graph
