"""What an index takes on disk and what a server of it holds in memory, for `vask status` and
`/v1/status` (and per 10,000 notes, which is what a person planning a larger vault wants to know)."""

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


# What `vask serve` holds once idle after searching, fitted to the measured restarts at two sizes and
# two dimensions (docs/BENCHMARKS.md, "Memory"; docs/bench/sizes-1024.json): a fixed part (the
# libraries, Python) and, for each chunk, some bytes (keyword index, row data) and a quarter byte a
# dimension (the ANN index's 2-bit codes, which LanceDB holds once searched).
_SERVE_BASE_MIB = 200
_SERVE_BYTES_PER_CHUNK = 200
_SERVE_BYTES_PER_CHUNK_DIMENSION = 0.233


def serve_idle_mib(chunks: int, dimension: int) -> int:
    """About what `vask serve` of an index of `chunks` chunks of `dimension` holds when idle, in MiB."""
    return round(_SERVE_BASE_MIB + chunk_mib(chunks, dimension))


def chunk_mib(chunks: int, dimension: int) -> float:
    """What `chunks` chunks of `dimension` add to a serving process's memory, in MiB."""
    return chunks * (_SERVE_BYTES_PER_CHUNK + _SERVE_BYTES_PER_CHUNK_DIMENSION * dimension) / 2**20
