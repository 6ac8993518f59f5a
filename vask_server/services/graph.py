"""The link graph of the active index: which notes link to which, as the manifest records it.

One object for /v1/related and the search's graph boost, read once per index version: the plugin
asks for related notes on every note switch, and reading and parsing every note's links each time
took over a second at 10,000 notes, on the event loop (docs/BENCHMARKS.md).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator, Mapping

import numpy as np
import pyarrow as pa

from vask_server.adapters.store import Store
from vask_server.core.scope import Directory


class _Adjacency:
    """For each note number, the note numbers it points to: one sorted array and offsets into it
    (a few bytes a link, where a set of paths per note cost ~50 MB at 10,000 notes)."""

    def __init__(self, sources: np.ndarray, targets: np.ndarray, notes: int) -> None:
        order = np.argsort(sources, kind="stable")
        self._targets = targets[order]
        self._starts = np.searchsorted(sources[order], np.arange(notes + 1))

    def of(self, number: int) -> np.ndarray:
        return self._targets[self._starts[number] : self._starts[number + 1]]


class LinkGraph(Mapping[str, frozenset[str]]):
    """The notes of one index version and their links between each other (a link to a file that is
    not an indexed note, or to the note itself, is left out). As a mapping: path → the notes linked
    to or from it."""

    def __init__(
        self,
        paths: list[str],
        titles: list[str],
        sources: np.ndarray,
        targets: np.ndarray,
        directory: Directory,
    ) -> None:
        self._paths = paths
        self._titles = titles
        # What a [[Note]] or #tag in a question can name: read with the links, from the same rows.
        self.directory = directory
        self._numbers = {path: number for number, path in enumerate(paths)}
        self._out = _Adjacency(sources, targets, len(paths))
        self._in = _Adjacency(targets, sources, len(paths))

    @classmethod
    def from_rows(cls, rows: pa.Table) -> LinkGraph:
        """From the manifest's path, title, aliases, tags and links columns. Parses JSON: run it off the
        event loop."""
        paths: list[str] = rows["path"].to_pylist()
        numbers = {path: number for number, path in enumerate(paths)}
        sources: list[int] = []
        targets: list[int] = []
        for number, raw in enumerate(rows["links"].to_pylist()):
            # A target that is no note of the index (or unresolved) counts as the note itself: dropped.
            linked = {numbers.get(link.get("resolved"), number) for link in json.loads(raw or "[]")} - {number}
            sources.extend([number] * len(linked))
            targets.extend(sorted(linked))
        titles: list[str] = rows["title"].to_pylist()
        aliases: list[list[str] | None] = rows["aliases"].to_pylist()
        names = {
            path: [n for n in (title, *(also or ())) if n]
            for path, title, also in zip(paths, titles, aliases, strict=True)
            if title or also
        }
        tags = {tag for note_tags in rows["tags"].to_pylist() for tag in note_tags or ()}
        directory = Directory(notes=paths, tags=tags, names=names)
        return cls(paths, titles, np.array(sources, np.int32), np.array(targets, np.int32), directory)

    def title(self, path: str) -> str | None:
        number = self._numbers.get(path)
        return None if number is None else self._titles[number]

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
        return frozenset(self._paths[int(n)] for n in adjacency.of(number))

    def __getitem__(self, path: str) -> frozenset[str]:
        if path not in self._numbers:
            raise KeyError(path)
        return self.links_to(path) | self.linked_from(path)

    def __contains__(self, path: object) -> bool:
        return path in self._numbers

    def __iter__(self) -> Iterator[str]:
        return iter(self._paths)

    def __len__(self) -> int:
        return len(self._paths)


class LinkGraphs:
    """The link graph of a store's index, built when first asked for after a write changed it."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._graph: LinkGraph | None = None
        self._version: tuple[str, int] | None = None
        self._lock = asyncio.Lock()

    def _current(self, suffix: str) -> tuple[str, int]:
        # The index version a sync (of this process or of `vask index`) leaves, and this process's
        # writes: one may be under way, its sync not yet recorded.
        return self._store.read_meta().version(suffix), self._store.writes

    async def get(self, suffix: str) -> LinkGraph:
        async with self._lock:  # callers that arrive during a build wait for it, not build their own
            version = self._current(suffix)  # before reading: a write during the read makes it stale
            if self._graph is None or self._version != version:
                rows = await self._store.note_links(suffix)
                self._graph = await asyncio.to_thread(LinkGraph.from_rows, rows)
                self._version = version
            return self._graph
