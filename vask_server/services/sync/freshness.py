"""How far the index is behind the vault, told without writing or syncing anything: for a reader beside
the index's writer (`vask mcp`), which answers from the index as it stands and says when that is behind
or still being built, and for `vask doctor`. From `index.json`, a scan of the vault's files and the
notes table's recorded file times; never a note's name, only counts.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Literal

from vask_server.adapters.meta import IndexMeta
from vask_server.adapters.store import Store
from vask_server.adapters.vault import NoteUnreadable, Vault
from vask_server.config import Settings
from vask_server.core.exclude import opted_out_text
from vask_server.core.filetypes import MARKDOWN, file_type
from vask_server.core.plan import plan_scan
from vask_server.services.options import excluder_for, index_options

State = Literal["current", "behind", "building", "not_indexed"]

OPT_OUT_READS = 1_000  # notes without a record read to see whether they opted out (more: counted as late)


@dataclass(frozen=True)
class Freshness:
    state: State
    notes_in_vault: int
    notes_indexed: int  # records of the index searched (the complete one, or the one being built)
    changed: int = 0  # notes new or changed on disk since the last sync
    deleted: int = 0  # notes indexed that are gone from disk
    last_sync: str | None = None
    model: str | None = None
    building_model: str | None = None  # the model of an index being built beside (or before) it

    @property
    def late(self) -> int:
        return self.changed + self.deleted

    def notice(self) -> str | None:
        """What a result says about the index it came from, or None when it is up to date."""
        if self.state == "not_indexed":
            return "The vault is not indexed yet: nothing can be searched. Run `vask index`, or start `vask serve`."
        parts = []
        if self.building_model and self.model is None:
            parts.append(
                f"The first index of this vault is being built ({self.notes_indexed:,} of about "
                f"{self.notes_in_vault:,} notes so far): results come from what is indexed so far."
            )
        elif self.building_model:
            parts.append(
                f"A new index ({self.building_model}) is being built; results come from the current one ({self.model})."
            )
        if self.late and self.state != "building":
            parts.append(
                f"The index is behind the vault: {self.late:,} note{'s' if self.late != 1 else ''} changed since "
                f"its last sync ({self.last_sync}); a running `vask serve` catches up by itself, else run "
                "`vask index`."
            )
        return " ".join(parts) or None


async def measure(settings: Settings, vault: Vault, store: Store) -> Freshness:
    """The index of `store` against the vault's files now (a scan, in a thread)."""
    meta = store.read_meta()
    record = meta.active or meta.building
    options = index_options(settings, vault)
    scan = await asyncio.to_thread(vault.scan, excluder_for(options, vault), options.file_types)
    on_disk = scan.notes
    if record is None:
        return Freshness("not_indexed", len(on_disk), 0)
    try:
        manifest = await store.tables(record).manifest(with_links=False)
    except Exception:  # (a table not written yet, or being replaced: nothing recorded to compare)
        return _described(meta, len(on_disk), 0, len(on_disk), 0)
    stamps = manifest.stamps()
    plan = plan_scan(on_disk, stamps)
    # A note that opted out (`vask: exclude`) has no record, as the sync keeps none: not behind.
    new = [path for path in plan.changed if path not in stamps]
    opted = await asyncio.to_thread(count_opted_out, vault, new[:OPT_OUT_READS], settings.max_note_bytes)
    return _described(meta, len(on_disk), len(stamps), len(plan.changed) - opted, len(plan.deleted))


def _described(meta: IndexMeta, in_vault: int, indexed: int, changed: int, deleted: int) -> Freshness:
    active, building = meta.active, meta.building
    if active is None:
        state: State = "building"
    elif changed or deleted:
        state = "behind"
    else:
        state = "current"
    return Freshness(
        state,
        in_vault,
        indexed,
        changed,
        deleted,
        meta.last_sync,
        active.model if active else None,
        building.model if building else None,
    )


def count_opted_out(vault: Vault, paths: Iterable[str], max_bytes: int) -> int:
    """How many of these notes opted out in their frontmatter (read, never named)."""
    count = 0
    for path in paths:
        if file_type(path) not in (MARKDOWN, None):
            continue
        with contextlib.suppress(NoteUnreadable):
            count += opted_out_text(vault.read_note(path, max_bytes)[0])
    return count


class FreshnessWatch:
    """The freshness measured at most once every `max_age` seconds, shared by whoever asks meanwhile:
    a scan of a large vault takes a moment, and an agent may send many calls in a row."""

    def __init__(self, measure_now: Callable[[], Awaitable[Freshness]]) -> None:
        self._measure = measure_now
        self._task: asyncio.Future[Freshness] | None = None
        self._at = 0.0

    async def get(self, max_age: float = 30.0) -> Freshness:
        now = time.monotonic()
        if self._task is None or (self._task.done() and now - self._at > max_age):
            self._task = asyncio.ensure_future(self._measure())
            self._at = now
        task = self._task
        try:
            return await asyncio.shield(task)
        except Exception:
            self._task = None  # (measured again next time)
            raise
