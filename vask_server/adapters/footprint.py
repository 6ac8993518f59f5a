"""What an index takes on disk, for `vask status` and `/v1/status` (and per 10,000 notes, which is what
a person planning a larger vault wants to know)."""

from __future__ import annotations

import os
from pathlib import Path

PER_NOTES = 10_000


def folder_bytes(folder: Path) -> int:
    """The bytes of every file below `folder` (0 when it does not exist)."""
    total = 0
    for root, _, files in os.walk(folder):
        for name in files:
            try:
                total += (Path(root) / name).stat().st_size
            except OSError:  # (a file a compaction removed meanwhile)
                continue
    return total


def per_notes(total: int, notes: int, per: int = PER_NOTES) -> int | None:
    """`total` scaled to `per` notes; None for an empty index."""
    return round(total * per / notes) if notes > 0 else None
