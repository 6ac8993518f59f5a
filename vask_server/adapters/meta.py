"""`index.json`: which index is active (complete) and which is being built. Atomic writes."""

from __future__ import annotations

import hashlib
import json
import logging
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from vask_server.adapters.atomic import write_atomic
from vask_server.core.embed_prompts import prompts_for

log = logging.getLogger(__name__)

META_FILE = "index.json"

# Every table name ends so, the format of the first release (16-bit vectors; dates, pages and the
# `hit` column in every chunk row). A later change of format is a step of `migrations.py`, not a new
# name: the name changes only with the model, its dimension or its document instruction.
_FORMAT = "f16_d1_p1_h1"


def table_suffix(model: str, dimension: int, document_prompt: str | None = None) -> str:
    """The name of the tables that hold this model's index: one pair per model, dimension and
    document instruction (`document_prompt`; None: the one the model's card gives)."""
    return f"{_model_suffix(model, dimension, document_prompt)}_{_FORMAT}"


def _model_suffix(model: str, dimension: int, document_prompt: str | None) -> str:
    slug = re.sub(r"[^a-z0-9]+", "_", model.lower()).strip("_") or "model"
    if document_prompt is None:
        document_prompt = prompts_for(model).document
    if document_prompt:
        # Vectors made with another instruction in front are not interchangeable: their own tables.
        return f"{slug}_{dimension}_{hashlib.sha256(document_prompt.encode()).hexdigest()[:8]}"
    return f"{slug}_{dimension}"


@dataclass
class IndexMeta:
    active: dict[str, Any] | None = None  # {"model", "dimension", "suffix", "completed_at"}
    building: dict[str, Any] | None = None
    last_sync: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def version(self, suffix: str) -> str:
        """Names what a table holds after the last sync, for what is kept per index version (the
        search calibration, the link graph). The sync counter tells apart two syncs within the one
        second `last_sync` has."""
        return f"{suffix}@{self.last_sync}#{self.extra.get('syncs', 0)}"

    @property
    def paused(self) -> bool:
        """Background syncs wait while this is set (`vask pause`, the plugin's Pause indexing)."""
        return bool(self.extra.get("paused"))

    def set_paused(self, paused: bool) -> None:
        if paused:
            self.extra["paused"] = True
        else:
            self.extra.pop("paused", None)


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
    write_atomic(index_dir / META_FILE, json.dumps(asdict(meta), indent=2))
