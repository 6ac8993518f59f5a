"""Changes to an index's format, in order, each run once per index when it is opened.

simonw/llm's `embeddings_migrations.py` is the model: a list of functions, run in order; `index.json`
records the names of those applied (`migrations`), so an index written by an older vask is brought up
to date before anything reads it, and one written by this vask runs none. A change of format is a new
function at the end of `MIGRATIONS`; a step, once released, is never edited, renamed or reordered.
Each step must also hold for an index that never needed it (it is checked, not assumed).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from vask_server.adapters.snapshot import clear_snapshot
from vask_server.core.cjk import SIMPLE

if TYPE_CHECKING:
    from vask_server.adapters.store import Store

log = logging.getLogger(__name__)

APPLIED = "migrations"  # index.json (extra): the names of the steps applied, in order

Migration = Callable[["Store"], Awaitable[None]]
MIGRATIONS: list[Migration] = []


def migration(step: Migration) -> Migration:
    MIGRATIONS.append(step)
    return step


@migration
async def m001_keyword_terms_recorded(store: Store) -> None:
    """An index's record says how its keyword text is cut (`keyword_terms`); one written before the
    choice existed was cut the simple way, and now says so."""
    meta = store.read_meta()
    changed = False
    for record in (meta.active, meta.building):
        if record is not None and "keyword_terms" not in record:
            record["keyword_terms"] = SIMPLE
            changed = True
    if changed:
        store.write_meta(meta)


@migration
async def m002_keyword_terms_out_of_the_fingerprint(store: Store) -> None:
    """How the keyword text is cut is no longer part of the chunking's fingerprint (a change cuts the
    stored rows anew instead of chunking every note again): a fingerprint recorded with it loses it,
    so the index is not chunked again for nothing. The scan's snapshot carried the old fingerprint: it
    goes, and the next whole sync compares the notes one by one (and finds them unchanged)."""
    meta = store.read_meta()
    recorded = meta.extra.get("chunking")
    try:
        fingerprint = json.loads(recorded) if isinstance(recorded, str) else None
    except ValueError:
        return
    if isinstance(fingerprint, dict) and "keyword_terms" in fingerprint:
        del fingerprint["keyword_terms"]
        meta.extra["chunking"] = json.dumps(fingerprint, sort_keys=True)
        store.write_meta(meta)
        clear_snapshot(store.index_dir)


def current_format() -> list[str]:
    """What a new index records as applied: it is written in the format every step leads to."""
    return [step.__name__ for step in MIGRATIONS]


async def migrate(store: Store) -> list[str]:
    """Runs the steps this index has not had, in order; returns their names. An index not built yet
    has nothing to bring up to date (its first sync records `current_format`): none run."""
    meta = store.read_meta()
    if meta.active is None and meta.building is None:
        return []
    done = set(meta.extra.get(APPLIED, []))
    applied: list[str] = []
    for step in MIGRATIONS:
        if step.__name__ in done:
            continue
        log.info("bringing the index up to date: %s", step.__name__)
        await step(store)
        applied.append(step.__name__)
        meta = store.read_meta()  # (as the step left it)
        meta.extra[APPLIED] = [*meta.extra.get(APPLIED, []), step.__name__]
        store.write_meta(meta)
    return applied
