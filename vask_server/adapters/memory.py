"""The process's memory policy: how the C allocator and Lance hold memory, set once at process start by
the commands that read or write the index (`set_process_memory_policy`), and handing freed memory
back to the system after large operations and after a pause in searches."""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import os

import pyarrow as pa


def _glibc_call(name: str, *args: int) -> None:
    """Calls a glibc malloc tuning function; a no-op where glibc is not the C library."""
    try:
        function = getattr(ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6"), name)
    except (OSError, AttributeError):
        return
    function(*args)


def release_memory() -> None:
    """Hands memory freed by large operations back to the OS. glibc keeps freed heap for reuse, so
    after a large first build (compaction, full-text and vector indexes) the process would
    otherwise stay near its peak long after."""
    pa.default_memory_pool().release_unused()
    _glibc_call("malloc_trim", 0)


class ReleaseWhenQuiet:
    """Calls `release_memory` once activity has stopped for `after` seconds: searches free memory
    that the allocator would otherwise keep (docs/BENCHMARKS.md, "Memory")."""

    def __init__(self, after: float = 5.0) -> None:
        self._after = after
        self._timer: asyncio.TimerHandle | None = None
        self._release: asyncio.Future[None] | None = None

    def touch(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = asyncio.get_running_loop().call_later(self._after, self._fire)

    def _fire(self) -> None:
        self._timer = None
        if self._release is None or self._release.done():  # (in a thread: trimming a large heap takes ms)
            self._release = asyncio.ensure_future(asyncio.to_thread(release_memory))


def limit_malloc_arenas(arenas: int = 2) -> None:
    """The database's worker threads each get a glibc heap arena by default (8 per core), and each
    arena keeps its own freed memory: with two, a build peaks lower and the server sits lower after
    searching, at the same speed (docs/BENCHMARKS.md, "Memory"). Called before those threads start."""
    _glibc_call("mallopt", _M_ARENA_MAX, arenas)


_M_ARENA_MAX = -8  # from glibc's malloc.h

# Lance's default read-ahead of a scan is sized for cloud object stores. On a local disk this much
# reads as fast, and the index builds peak lower with it (docs/BENCHMARKS.md, "Memory").
READ_AHEAD_BYTES = 16 * 1024 * 1024


def limit_read_ahead() -> None:
    """Caps Lance's scan read-ahead (`LANCE_DEFAULT_IO_BUFFER_SIZE`) unless the user set it. Lance
    reads the variable once, at its first scan: this runs before any."""
    os.environ.setdefault("LANCE_DEFAULT_IO_BUFFER_SIZE", str(READ_AHEAD_BYTES))


# The vector index build sorts the vectors into partitions in batches of this many bytes, each held
# several times over while sorted: smaller than Lance's default, the build peaks lower at the same
# speed and recall (docs/BENCHMARKS.md, "Memory").
SHUFFLE_BATCH_BYTES = 16 * 1024 * 1024


def limit_index_build() -> None:
    """Caps the vector index build's sort batches (`LANCE_SHUFFLE_BATCH_BYTES`) unless the user set it."""
    os.environ.setdefault("LANCE_SHUFFLE_BATCH_BYTES", str(SHUFFLE_BATCH_BYTES))


def set_process_memory_policy() -> None:
    """Before the database's threads start: two malloc arenas (unless MALLOC_ARENA_MAX is the user's
    own), a bounded Lance read-ahead (unless LANCE_DEFAULT_IO_BUFFER_SIZE is) and index build batches
    (unless LANCE_SHUFFLE_BATCH_BYTES is)."""
    if "MALLOC_ARENA_MAX" not in os.environ:
        limit_malloc_arenas()
    limit_read_ahead()
    limit_index_build()
