"""The person's pause of background syncs (`vask pause`, the plugin's button): they wait between
batches while it is on. Kept in index.json, so a restart stays paused and a `vask pause` run from
another process is heard."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable

from vask_server.adapters.store import Store
from vask_server.core.progress import SyncProgress

log = logging.getLogger(__name__)


class SyncPause:
    def __init__(self, store: Store) -> None:
        self.store = store
        self._changed = asyncio.Event()

    @property
    def on(self) -> bool:
        return self.store.read_meta().paused

    def set(self, paused: bool) -> None:
        meta = self.store.read_meta()
        meta.set_paused(paused)
        self.store.write_meta(meta)
        self._changed.set()

    async def wait_while_on(
        self, sync_progress: SyncProgress | None, progress: Callable[[int, int], None] | None
    ) -> None:
        """Until the pause is lifted; the running sync's progress says it is paused meanwhile, and
        does not count the pause in its estimate."""
        if not self.on:
            return
        started = time.monotonic()
        if sync_progress is not None:
            sync_progress.paused = True
        if progress and sync_progress is not None:
            progress(sync_progress.notes_done, sync_progress.notes_total)
        log.info("indexing paused")
        while self.on:
            self._changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), 1.0)  # (or `vask resume`, heard in index.json)
        log.info("indexing resumed")
        if sync_progress is not None:
            sync_progress.paused = False
            sync_progress.was_paused(time.monotonic() - started)
        if progress and sync_progress is not None:
            progress(sync_progress.notes_done, sync_progress.notes_total)
