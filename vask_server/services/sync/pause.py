"""The person's pause of background syncs (`vask pause`, the plugin's button): they wait between
batches while it is on. Kept in index.json, so a restart stays paused; while `vask serve` runs, `vask
pause` asks it through its API (the server alone writes index.json then: adapters/writer_lock.py)."""

from __future__ import annotations

import asyncio
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
        return self.store.paused

    def set(self, paused: bool) -> None:
        self.store.set_paused(paused)
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
            await self._changed.wait()  # (`set`: the plugin's button, or `vask resume` through the API)
        log.info("indexing resumed")
        if sync_progress is not None:
            sync_progress.paused = False
            sync_progress.was_paused(time.monotonic() - started)
        if progress and sync_progress is not None:
            progress(sync_progress.notes_done, sync_progress.notes_total)
