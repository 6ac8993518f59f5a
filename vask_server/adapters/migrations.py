"""Changes to an index's format, in order, each run once per index when it is opened.

simonw/llm's `embeddings_migrations.py` is the model: a list of functions, run in order; `index.json`
records the names of those applied (`migrations`), so an index written by an older vask is brought up
to date before anything reads it, and one written by this vask runs none. A change of format is a new
function at the end of `MIGRATIONS`; a step, once released, is never edited, renamed or reordered.
Each step must also hold for an index that never needed it (it is checked, not assumed).

A step works on what an index is on disk, `index.json` as written and the database's connection,
not on the `Store`: the store reads the index in the format every step leads to, and opens it only
once they have run.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vask_server.adapters.lancedb_api import lancedb
from vask_server.adapters.meta import read_meta_json, write_meta_json
from vask_server.adapters.snapshot import clear_snapshot
from vask_server.core.cjk import SIMPLE

log = logging.getLogger(__name__)

APPLIED = "migrations"  # index.json (extra): the names of the steps applied, in order


@dataclass(frozen=True)
class OnDisk:
    """An index as a step finds it: its folder (with `index.json`) and its database."""

    index_dir: Path
    db: lancedb.AsyncConnection

    def read(self) -> dict[str, Any]:
        return read_meta_json(self.index_dir)

    def write(self, data: dict[str, Any]) -> None:
        write_meta_json(self.index_dir, data)


Migration = Callable[[OnDisk], Awaitable[None]]
MIGRATIONS: list[Migration] = []


def migration(step: Migration) -> Migration:
    MIGRATIONS.append(step)
    return step


def _extra(data: dict[str, Any]) -> dict[str, Any]:
    """`index.json`'s `extra`, made a dict when it is missing (or not one)."""
    extra = data.get("extra")
    if not isinstance(extra, dict):
        extra = data["extra"] = {}
    return extra


@migration
async def m001_keyword_terms_recorded(index: OnDisk) -> None:
    """An index's record says how its keyword text is cut (`keyword_terms`); one written before the
    choice existed was cut the simple way, and now says so."""
    data = index.read()
    changed = False
    for record in (data.get("active"), data.get("building")):
        if isinstance(record, dict) and "keyword_terms" not in record:
            record["keyword_terms"] = SIMPLE
            changed = True
    if changed:
        index.write(data)


@migration
async def m002_keyword_terms_out_of_the_fingerprint(index: OnDisk) -> None:
    """How the keyword text is cut is no longer part of the chunking's fingerprint (a change cuts the
    stored rows anew instead of chunking every note again): a fingerprint recorded with it loses it,
    so the index is not chunked again for nothing. The scan's snapshot carried the old fingerprint: it
    goes, and the next whole sync compares the notes one by one (and finds them unchanged)."""
    data = index.read()
    recorded = _extra(data).get("chunking")
    try:
        fingerprint = json.loads(recorded) if isinstance(recorded, str) else None
    except ValueError:
        return
    if isinstance(fingerprint, dict) and "keyword_terms" in fingerprint:
        del fingerprint["keyword_terms"]
        _extra(data)["chunking"] = json.dumps(fingerprint, sort_keys=True)
        index.write(data)
        clear_snapshot(index.index_dir)


def current_format() -> list[str]:
    """What a new index records as applied: it is written in the format every step leads to."""
    return [step.__name__ for step in MIGRATIONS]


async def migrate(index_dir: Path, db: lancedb.AsyncConnection) -> list[str]:
    """Runs the steps this index has not had, in order; returns their names. An index not built yet
    has nothing to bring up to date (its first sync records `current_format`): none run."""
    index = OnDisk(index_dir, db)
    data = index.read()
    if data.get("active") is None and data.get("building") is None:
        return []
    done = set(_extra(data).get(APPLIED, []))
    applied: list[str] = []
    for step in MIGRATIONS:
        if step.__name__ in done:
            continue
        log.info("bringing the index up to date: %s", step.__name__)
        await step(index)
        applied.append(step.__name__)
        data = index.read()  # (as the step left it)
        extra = _extra(data)
        extra[APPLIED] = [*extra.get(APPLIED, []), step.__name__]
        index.write(data)
    return applied
