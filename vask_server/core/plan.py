"""What a sync must do: which files changed or went away, and which chunks need new vectors."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Protocol

from vask_server.core.chunk import ChunkOptions
from vask_server.core.filetypes import ALL_TYPES
from vask_server.core.models import Chunk
from vask_server.core.time.dates import DateOptions

CHUNKER_VERSION = 3  # bump when chunks come out differently: every note is re-chunked


@dataclass(frozen=True)
class IndexOptions:
    chunking: ChunkOptions = field(default_factory=ChunkOptions)
    max_note_bytes: int = 2_000_000
    note_records: bool = True  # one extra record per note: title, aliases, tags, headings, opening
    dates: DateOptions = field(default_factory=DateOptions)  # how notes are dated (the vault's own settings)
    # What is never indexed (core/exclude.py). Not in the fingerprint: a change of the rules adds or
    # removes notes, it does not change how the others are chunked.
    exclude: tuple[str, ...] = ()
    obsidian_excluded: bool = True
    # Which types of file are indexed (core/filetypes.py), and the limits on a PDF. Not in the
    # fingerprint either: turning a type off removes its files, it does not change the others.
    file_types: tuple[str, ...] = ALL_TYPES
    max_pdf_bytes: int = 50_000_000
    pdf_timeout: float = 30.0
    # How the keyword column is cut into terms (core/cjk.py): "simple", "cjk", or "auto" until the
    # indexer has chosen for the vault. Not in the fingerprint: a change cuts the stored rows' keyword
    # text anew (services/sync/recut.py), it reads and chunks no note again.
    keyword_terms: str = "simple"

    def fingerprint(self) -> str:
        """Changes whenever chunks, or their dates, would come out differently: then every note is
        re-chunked."""
        return json.dumps(
            {
                "v": CHUNKER_VERSION,
                "note_records": self.note_records,
                **asdict(self.chunking),
                "dates": self.dates.fingerprint(),
            },
            sort_keys=True,
        )


class Stamped(Protocol):
    @property
    def mtime_ns(self) -> int: ...

    @property
    def size(self) -> int: ...


@dataclass(frozen=True)
class ScanPlan:
    changed: list[str]  # new or modified (mtime or size differ): these are read and re-chunked
    deleted: list[str]  # in the index, no longer on disk
    unchanged: int  # not even opened


def plan_scan(on_disk: Mapping[str, Stamped], indexed: Mapping[str, Stamped], *, force: bool = False) -> ScanPlan:
    changed = sorted(
        path
        for path, stamp in on_disk.items()
        if force or (known := indexed.get(path)) is None or known.mtime_ns != stamp.mtime_ns or known.size != stamp.size
    )
    deleted = sorted(path for path in indexed if path not in on_disk)
    return ScanPlan(changed=changed, deleted=deleted, unchanged=len(on_disk) - len(changed))


def chunks_to_embed(chunks: Iterable[Chunk], known_hashes: Iterable[str]) -> list[Chunk]:
    """One chunk per content hash that has no vector yet: equal text is embedded once."""
    known = set(known_hashes)
    out: list[Chunk] = []
    for chunk in chunks:
        if chunk.hash not in known:
            known.add(chunk.hash)
            out.append(chunk)
    return out


def recent_first(paths: Iterable[str], stamps: Mapping[str, Stamped], first: Iterable[str] = ()) -> list[str]:
    """The order a sync takes its notes in: those named in `first` (the notes the person has open
    or opened last), then the most recently modified. On a first sync of a large vault this is what
    makes this week's notes searchable in the first minute rather than after the whole vault."""
    todo = list(paths)
    wanted = set(todo)
    head = [path for path in dict.fromkeys(first) if path in wanted]
    placed = set(head)
    rest = sorted((p for p in todo if p not in placed), key=lambda p: (-_mtime(stamps.get(p)), p))
    return head + rest


class SyncQueue:
    """The notes a sync has yet to take, in order; notes can be moved to the front while it runs
    (the plugin names the notes the person opens)."""

    def __init__(self, paths: Iterable[str]) -> None:
        self._order = list(paths)
        self._taken = 0

    def __len__(self) -> int:
        return len(self._order) - self._taken

    def remaining(self) -> list[str]:
        return self._order[self._taken :]

    def promote(self, paths: Iterable[str]) -> int:
        """Moves those of `paths` still waiting to the front, in the order given; returns how many."""
        waiting = self.remaining()
        present = set(waiting)
        front = [path for path in dict.fromkeys(paths) if path in present]
        if front:
            moved = set(front)
            self._order[self._taken :] = front + [path for path in waiting if path not in moved]
        return len(front)

    def take(self, count: int) -> list[str]:
        batch = self._order[self._taken : self._taken + count]
        self._taken += len(batch)
        return batch


def _mtime(stamp: Stamped | None) -> int:
    return stamp.mtime_ns if stamp is not None else 0
