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

# The tables' format is part of their name, so that an index written in an older format is rebuilt
# beside it, not mixed into it: "f16", vectors stored as 16-bit floats (names without it hold 32-bit
# ones); "d1", chunks carry the dates they were written (core/dates.py); "p1", and a PDF chunk's page;
# "h1", and what a search returns of a chunk in one column (store.py `hit_record`).
_VECTOR_FORMAT = "f16"
_ROW_FORMAT = "d1_p1_h1"
_EARLIER_ROW_FORMATS = ("d1_p1", "d1")  # newest first


def table_suffix(model: str, dimension: int) -> str:
    """The name of the tables that hold this model's index: one pair per model, dimension, document
    instruction and table format."""
    return f"{_model_suffix(model, dimension)}_{_VECTOR_FORMAT}_{_ROW_FORMAT}"


def reusable_suffixes(model: str, dimension: int) -> tuple[str, ...]:
    """The names the same model's index had in earlier formats (no hit column; no pages; no dates;
    32-bit vectors), newest first. Their vectors are the same model's, made the same way: a sync copies
    them into the new tables instead of asking the model again."""
    base = _model_suffix(model, dimension)
    earlier = tuple(f"{base}_{_VECTOR_FORMAT}_{row}" for row in _EARLIER_ROW_FORMATS)
    return (*earlier, f"{base}_{_VECTOR_FORMAT}", base)


def _model_suffix(model: str, dimension: int) -> str:
    slug = re.sub(r"[^a-z0-9]+", "_", model.lower()).strip("_") or "model"
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
