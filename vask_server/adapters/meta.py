"""`index.json`: which index is active (complete) and which is being built. Atomic writes."""

from __future__ import annotations

import json
import logging
import os
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

META_FILE = "index.json"


@dataclass
class IndexMeta:
    active: dict[str, Any] | None = None  # {"model", "dimension", "suffix", "completed_at"}
    building: dict[str, Any] | None = None
    last_sync: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def read_meta(index_dir: Path) -> IndexMeta:
    path = index_dir / META_FILE
    if not path.exists():
        return IndexMeta()
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError) as exc:
        log.warning("could not read %s (%s); treating the index as empty", path, exc)
        return IndexMeta()
    return IndexMeta(
        active=data.get("active"),
        building=data.get("building"),
        last_sync=data.get("last_sync"),
        extra=data.get("extra", {}),
    )


def write_meta(index_dir: Path, meta: IndexMeta) -> None:
    """A crash leaves the old file or the new one, never half of one."""
    fd, tmp = tempfile.mkstemp(dir=index_dir, prefix=".index.", suffix=".json")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(asdict(meta), handle, indent=2)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, index_dir / META_FILE)
