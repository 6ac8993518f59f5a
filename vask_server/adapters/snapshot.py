"""A record of what the vault looked like after the last complete sync.

Lets `vask index` answer "nothing changed" from a directory scan alone, without opening the
database or asking Ollama. It is deleted before any write and written only after a sync completes,
so its presence means the index matched exactly these files.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vask_server.adapters.atomic import write_atomic
from vask_server.adapters.meta import IndexMeta, table_suffix
from vask_server.adapters.vault import FileStat

SNAPSHOT_FILE = "scan-snapshot.json"


def _path(index_dir: Path) -> Path:
    return index_dir / SNAPSHOT_FILE


def scan_digest(notes: Mapping[str, FileStat]) -> str:
    """One digest of every note's path, modification time and size. The snapshot is only compared
    for equality, so this is all it keeps: a restart compares one string instead of parsing and
    comparing an entry a note (docs/BENCHMARKS.md, "Speed"), and no note's name, not even that of one
    that opted out (`vask: exclude`), is written down."""
    digest = hashlib.sha256()
    for path in sorted(notes):
        stat = notes[path]
        digest.update(f"{path}\0{stat.mtime_ns}\0{stat.size}\n".encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


@dataclass(frozen=True)
class ScanSeen:
    """What a snapshot keeps of a scan: taken when the sync has read it, saved once the sync is done."""

    notes: int
    digest: str

    @classmethod
    def of(cls, notes: Mapping[str, FileStat]) -> ScanSeen:
        return cls(len(notes), scan_digest(notes))


def save_snapshot(index_dir: Path, model: str, fingerprint: str, seen: ScanSeen) -> None:
    data = {"model": model, "fingerprint": fingerprint, "notes": seen.notes, "digest": seen.digest}
    write_atomic(_path(index_dir), json.dumps(data))


def clear_snapshot(index_dir: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        _path(index_dir).unlink()


def matches_snapshot(index_dir: Path, model: str, fingerprint: str, notes: Mapping[str, FileStat]) -> bool:
    try:
        data: dict[str, Any] = json.loads(_path(index_dir).read_text("utf-8"))
    except (OSError, ValueError):
        return False
    return bool(
        data.get("model") == model
        and data.get("fingerprint") == fingerprint
        and data.get("notes") == len(notes)
        and data.get("digest") == scan_digest(notes)
    )


def index_is_current(
    index_dir: Path,
    meta: IndexMeta,
    model: str,
    fingerprint: str,
    notes: Mapping[str, FileStat],
    document_prompt: str | None = None,
) -> bool:
    """The active index is complete, built with this model (and document instruction: None, its
    card's), these chunking options and today's vector format, and every note is exactly as the last
    complete sync saw it: a full sync would find nothing to do. Needs neither the database nor the
    model (`vask index` and the server's start-up sync both ask)."""
    active = meta.active
    return bool(
        active
        and not meta.building
        and active.model == model
        and active.suffix == table_suffix(model, active.dimension, document_prompt)
        and meta.extra.get("chunking") == fingerprint
        and matches_snapshot(index_dir, model, fingerprint, notes)
    )
