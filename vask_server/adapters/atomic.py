"""Files written whole: a reader (or a crash) sees the old file or the new one, never half of one. The
index folder's own files (`write_atomic`) and notes in the vault (`replace_file`)."""

from __future__ import annotations

import contextlib
import os
import secrets
import tempfile
from collections.abc import Callable
from pathlib import Path


def write_atomic(path: Path, text: str) -> None:
    """Writes `text` to `path` through a temporary file beside it, synced, then renamed over it. The
    file is readable by this user only (mkstemp's 0600): the index folder holds tokens and names."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)  # a failed write leaves no temporary file behind
        raise


# A note's temporary file: hidden (a leading dot, which Obsidian, vask's scan and its watcher pass
# over) and named after its note, so that one a killed process left is found and removed by the next
# write of that note.
_TEMP_MARK = ".vask-"
_TEMP_SUFFIX = ".tmp"
_BINARY = getattr(os, "O_BINARY", 0)


def temporary_name(name: str) -> str:
    return f".{name}{_TEMP_MARK}{secrets.token_hex(6)}{_TEMP_SUFFIX}"


def leftover_temporaries(path: Path) -> list[Path]:
    """Temporary files of `path` that an earlier write, stopped before its rename, left beside it."""
    prefix = f".{path.name}{_TEMP_MARK}"
    try:
        names = os.listdir(path.parent)
    except OSError:
        return []
    return [path.parent / n for n in names if n.startswith(prefix) and n.endswith(_TEMP_SUFFIX)]


def replace_file(path: Path, data: bytes, *, check: Callable[[], None] | None = None, create: bool = False) -> None:
    """Writes `data` to `path` whole, so that a reader, or a crash at any moment, finds the old file or
    the new one, never a part: a temporary file in the same folder, written and synced, then renamed
    over `path`, and the folder synced. `check` runs after the temporary file is on disk and right
    before the rename; it raises to stop the write (nothing changes). `create`: `path` must not exist
    and is never replaced (the temporary file is hard-linked to the name, which fails if it is taken).

    The new file keeps the old one's permission bits; a new one gets the usual ones (the umask's).
    Earlier temporary files of `path` are removed first."""
    for stale in leftover_temporaries(path):
        with contextlib.suppress(OSError):
            stale.unlink()
    mode = None if create else os.stat(path).st_mode & 0o7777
    tmp = path.parent / temporary_name(path.name)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _BINARY, 0o666)
    try:
        try:
            if mode is not None:
                os.chmod(tmp, mode)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        if check is not None:
            check()
        if create:
            _link_new(tmp, path)
        else:
            os.replace(tmp, path)
        _sync_folder(path.parent)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)  # (gone after a rename; after a link or a failure, this removes it)


def _link_new(tmp: Path, path: Path) -> None:
    """Gives the written file the name `path`, which must not exist: a hard link fails if it does,
    where a rename would replace it. On a file system without hard links, the name is checked, then
    the file renamed (a program creating that very name in between would lose its file)."""
    try:
        os.link(tmp, path)
    except FileExistsError:
        raise
    except OSError:
        if os.path.lexists(path):
            raise FileExistsError(path) from None
        os.replace(tmp, path)


def _sync_folder(folder: Path) -> None:
    """The rename itself made durable (POSIX); Windows cannot open a folder for that and journals it."""
    if os.name == "nt":
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    except OSError:
        pass  # (some file systems refuse to sync a folder; the rename is still atomic)
    finally:
        os.close(fd)
