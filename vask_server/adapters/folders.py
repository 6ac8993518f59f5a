"""The index folder: created on first use, and an unusable one is a clear error, not a traceback."""

from __future__ import annotations

import os
from pathlib import Path

from vask_server.errors import ConfigError

_HINT = "Pass --index-dir (or set VASK_INDEX_DIR) to a folder this user can write, or fix its permissions."


def ensure_index_dir(index_dir: Path) -> Path:
    try:
        index_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"Cannot create the index folder {index_dir}: {exc.strerror or exc}", _HINT) from None
    if not os.access(index_dir, os.W_OK | os.X_OK):
        raise ConfigError(f"The index folder is not writable: {index_dir}", _HINT)
    return index_dir
