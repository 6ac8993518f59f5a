"""Files in the index folder written whole: a reader (or a crash) sees the old file or the new one,
never half of one."""

from __future__ import annotations

import contextlib
import os
import tempfile
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
