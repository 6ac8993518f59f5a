"""The server's index: a background worker that syncs on start, on watched changes and on request.

Watched paths are debounced, then synced together through the same incremental path as
`vask index`. When Ollama is down or fails, the work is kept and retried with backoff, so the index
catches up by itself when Ollama is back; searches meanwhile fall back to keywords. Every change of
state is published to subscribers (the `/v1/events` stream).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Coroutine, Iterable
from typing import Any

from vask_server.adapters.meta import IndexMeta
from vask_server.adapters.watcher import RESCAN, Debouncer
from vask_server.errors import VaskError
from vask_server.services.context import Services, index_status
from vask_server.services.sync.sync_report import SyncReport

log = logging.getLogger(__name__)

_MAX_RETRY_DELAY = 30.0
# Subscribers hear of watched changes at most this often. Each event counts the paths waiting, so an
# event a change made a burst quadratic: a git checkout touching thousands of notes held the event
# loop, and every request with it (docs/BENCHMARKS.md, "Sync and live events").
_NOTIFY_PUBLISH_EVERY = 0.05
# While a sync is in a step with no count of its own (compaction, full-text and vector index builds,
# long on a large vault, and LanceDB reports nothing from inside them), subscribers hear how long it
# has been in the step this often, so a client can show that it moves.
_STAGE_TICK_EVERY = 1.0
# `ollama.reachable` is what the last request to Ollama found, by any caller; when nothing has asked it
# for this long, the server asks it itself (a quick list of its models): sooner while it is down, to
# say when it is back.
OLLAMA_CHECK_EVERY = 30.0
OLLAMA_CHECK_WHILE_DOWN = 5.0


class LiveIndex:
    def __init__(
        self,
        services: Services,
        *,
        debounce: float = 0.25,
        stage_tick: float = _STAGE_TICK_EVERY,
        ollama_check: tuple[float, float] | None = None,  # (every, while down): the module's by default
    ) -> None:
        self.services = services
        self._ollama_check = ollama_check or (OLLAMA_CHECK_EVERY, OLLAMA_CHECK_WHILE_DOWN)
        self._ollama_task: asyncio.Task[None] | None = None
        self._stage_tick = stage_tick
        self._stage_handle: asyncio.TimerHandle | None = None
        self._stage_started: float | None = None
        self.debouncer = Debouncer(debounce, self._ready)
        self._queued: set[str] = set()
        self._full_requested = True  # the start-up sync
        self._wake = asyncio.Event()
        self._side_tasks: set[asyncio.Task[None]] = set()  # (held until done: the loop keeps only weak refs)
        self._wake.set()
        self._retry_delay = 1.0
        self._retry_handle: asyncio.TimerHandle | None = None
        self._publish_handle: asyncio.TimerHandle | None = None
        self._subscribers: set[asyncio.Queue[dict[str, Any]]] = set()
        self._task: asyncio.Task[None] | None = None
        self._warm: asyncio.Task[None] | None = None
        self._counting: asyncio.Task[None] | None = None
        # What the counts were read at: the store's writes and index.json (`_counts_current`)
        self._counted: tuple[int, IndexMeta] | None = None
        self.state = "starting"
        self.in_progress: list[str] = []
        self.done = 0
        self.total = 0
        self.stage: str | None = None  # what a sync does after its notes (services/sync/indexer.py StageFn)
        self.last_error: VaskError | None = None
        self.last_report: SyncReport | None = None
        self.last_synced_at: float | None = None
        self.counts: dict[str, Any] = {}
        self.syncs = 0  # completed syncs: lets tests and scripts wait for "after my change"

    # -- inputs -----------------------------------------------------------------------------------

    def notify(self, path: str) -> None:
        """A watched change: waits for the path to settle, then syncs it."""
        self.debouncer(path)
        if self._publish_handle is None:  # (one event for a burst: see _NOTIFY_PUBLISH_EVERY)
            loop = asyncio.get_running_loop()
            self._publish_handle = loop.call_later(_NOTIFY_PUBLISH_EVERY, self._publish_notified)

    def _publish_notified(self) -> None:
        self._publish_handle = None
        self._publish()

    def request(self, paths: Iterable[str] | None = None) -> int:
        """An explicit reindex: all notes when `paths` is None. Returns how many were queued."""
        if paths is None:
            self._full_requested = True
            queued = self.counts.get("notes", 0)
        else:
            items = list(paths)
            self._queued.update(items)
            queued = len(items)
        self._wake.set()
        self._publish()
        return int(queued)

    def pause(self, paused: bool) -> None:
        """Pauses (or resumes) indexing: the running sync stops at its next batch, with what it has
        embedded kept, and none starts until resumed; searches go on. Kept over a restart."""
        self.services.indexer.set_paused(paused)
        self._publish()

    def prioritize(self, paths: Iterable[str]) -> int:
        """Notes the person has open or opened last: indexed before the others."""
        moved = self.services.indexer.prioritize(paths)
        self._publish()
        return moved

    def _ready(self, path: str) -> None:
        if path == RESCAN:
            self._full_requested = True
        else:
            self._queued.add(path)
            if self.services.indexer.paused:  # (a note that opts out meanwhile leaves the index at once)
                self._leave_running(self.services.indexer.remove_opted_out([path]))
        self._wake.set()

    def _leave_running(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(work, name="vask-opt-out")
        self._side_tasks.add(task)
        task.add_done_callback(self._side_done)

    def _side_done(self, task: asyncio.Task[None]) -> None:
        self._side_tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("could not remove a note that opted out: %s", task.exception())

    # -- the worker -------------------------------------------------------------------------------

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="vask-live-index")
        self._ollama_task = asyncio.create_task(self._watch_ollama(), name="vask-ollama-check")
        # What the first search needs (the calibration, the tables' indexes) is read once the start-up
        # sync has ended (`_sync`): read beside it, it took the cores the check of the vault needs, and
        # a restart was confirmed current that much later.

    async def stop(self) -> None:
        self.debouncer.cancel()
        for handle in (self._retry_handle, self._publish_handle, self._stage_handle):
            if handle is not None:
                handle.cancel()
        for task in (self._task, self._counting, self._warm, self._ollama_task):
            # (cancelled until it ends: a library call that swallows one cancellation must not make
            # the server's stop wait forever)
            while task is not None and not task.done():
                task.cancel()
                await asyncio.wait({task}, timeout=1.0)
            if task is not None and not task.cancelled():
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    task.result()
        for queue in list(self._subscribers):
            queue.put_nowait({"type": "closed"})

    async def _run(self) -> None:
        # The counts the status shows are read beside the start-up sync, not before it.
        self._counting = asyncio.create_task(self._refresh_counts(), name="vask-counts")
        self._counting.add_done_callback(lambda _: self._publish())
        while True:
            await self._wake.wait()
            self._wake.clear()
            full, paths = self._full_requested, self._queued
            if not full and not paths:
                continue
            self._full_requested, self._queued = False, set()
            await self._sync(full, paths)

    async def _watch_ollama(self) -> None:
        """Keeps `ollama.reachable` true to what Ollama does now: asks it when no request has for a
        while, and tells subscribers when the answer changes (from any caller's request)."""
        gateway = self.services.gateway
        every, while_down = self._ollama_check
        told: bool | None = None
        while True:
            stale = time.monotonic() - gateway.contacted >= (while_down if gateway.reachable is False else every)
            if gateway.reachable is None or stale:
                await gateway.probe([])
            if gateway.reachable != told:
                told = gateway.reachable
                self._publish()
            await asyncio.sleep(min(1.0, while_down))

    async def _sync(self, full: bool, paths: set[str]) -> None:
        self.state = "indexing"
        self.in_progress = [] if full else sorted(paths)[:100]
        self.done, self.total = 0, 0 if full else len(paths)
        self._publish()
        try:
            report = await self.services.indexer.sync(
                None if full else paths, progress=self._progress, stage=self._stage, pausable=True
            )
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            # (an unexpected error's own text stays in the log: it may quote what it was reading)
            error = (
                exc
                if isinstance(exc, VaskError)
                else VaskError(f"Indexing failed: {type(exc).__name__}.", "See the vask server log.")
            )
            if not isinstance(exc, VaskError):
                log.exception("sync failed")
            else:
                log.warning("sync failed: %s", error.message)
            self.last_error = error
            self.state = "error"
            self._warm_up()
            # keep the work, try again later with backoff
            self._full_requested = self._full_requested or full
            self._queued |= paths
            self._schedule_retry()
        else:
            self.last_error = None
            self.last_report = report
            self.last_synced_at = time.time()
            self._retry_delay = 1.0
            if not await self._counts_current():  # before "idle", so whoever sees idle sees the new counts
                await self._refresh_counts()
            self.state = "indexing" if (self._queued or self._full_requested) else "idle"
            self._warm_up()
            self.syncs += 1
        finally:
            self.in_progress = []
            self._stage(None)

    def _warm_up(self) -> None:
        """Once, after the first sync (confirmed current, built, or failed): the first search's caches
        read now, while nobody waits for them."""
        if self._warm is None and self.services.store.read_meta().active is not None:
            self._warm = asyncio.create_task(self.services.searcher.warm(), name="vask-warm")

    def _schedule_retry(self) -> None:
        loop = asyncio.get_running_loop()
        delay, self._retry_delay = self._retry_delay, min(_MAX_RETRY_DELAY, self._retry_delay * 2)
        if self._retry_handle is not None:
            self._retry_handle.cancel()
        self._retry_handle = loop.call_later(delay, self._wake.set)

    def _progress(self, done: int, total: int) -> None:
        self.done, self.total = done, total
        self._publish()

    def _stage(self, stage: str | None) -> None:
        self.stage = stage
        self._stage_started = time.monotonic() if stage else None
        if self._stage_handle is not None:
            self._stage_handle.cancel()
            self._stage_handle = None
        if stage:
            self._stage_handle = asyncio.get_running_loop().call_later(self._stage_tick, self._stage_ticked)
        self._publish()

    def _stage_ticked(self) -> None:
        self._stage_handle = asyncio.get_running_loop().call_later(self._stage_tick, self._stage_ticked)
        self._publish()

    @property
    def stage_seconds(self) -> float | None:
        """How long the sync has been in its current `stage`; None outside one."""
        started = self._stage_started
        return None if started is None else round(time.monotonic() - started, 1)

    async def _counts_current(self) -> bool:
        """Whether the counts read last still hold: nothing was written to the tables or to index.json
        since (a sync that found every note as it was writes nothing)."""
        if self._counting is not None:
            with contextlib.suppress(Exception):
                await asyncio.shield(self._counting)
        store = self.services.store
        return self._counted == (store.writes, store.read_meta())

    async def _refresh_counts(self) -> None:
        store = self.services.store
        self._counted = (store.writes, store.read_meta())  # (before: a write meanwhile makes them stale)
        try:
            self.counts = await index_status(self.services)
        except Exception:  # counts are for display: never let them stop the worker
            self._counted = None
            log.exception("could not read index status")

    # -- outputs ----------------------------------------------------------------------------------

    @property
    def pending(self) -> int:
        """Notes waiting to be indexed; 0 once the index matches the vault (as far as we know)."""
        waiting = len(self.debouncer.waiting | self._queued)
        if self.state == "indexing":
            remaining = self.total - self.done
            return waiting + (remaining if self.total else max(1, len(self.in_progress)))
        if self._full_requested:
            return max(1, waiting)
        return waiting

    def snapshot(self) -> dict[str, Any]:
        error = self.last_error
        indexer = self.services.indexer
        progress = indexer.progress
        paused = indexer.paused
        told = progress.to_dict() if progress is not None else None
        state = "paused" if paused and self.state in ("indexing", "starting") else self.state
        return {
            "type": "status",
            "state": state,
            "paused": paused,
            # the running sync's notes and chunks done and (estimated) in all, pace and time left
            "progress": told,
            "eta_seconds": told["eta_seconds"] if told is not None else None,
            "notes": self.counts.get("notes", 0),
            "chunks": self.counts.get("chunks", 0),
            "pending": self.pending,
            "done": self.done,
            "total": self.total,
            "stage": self.stage,
            "stage_seconds": self.stage_seconds,
            "failed": len(self.counts.get("failed", [])),  # (files, as `vask status` lists them)
            "skipped": len(self.counts.get("skipped", [])),
            # (None only before the first request or check, in the first moments of a start)
            "ollama": {"reachable": self.services.gateway.reachable},
            **({"message": error.message, "hint": error.hint, "code": error.code} if error else {}),
        }

    def subscribe(self) -> asyncio.Queue[dict[str, Any]]:
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue(maxsize=64)
        self._subscribers.add(queue)
        return queue

    def unsubscribe(self, queue: asyncio.Queue[dict[str, Any]]) -> None:
        self._subscribers.discard(queue)

    def _publish(self) -> None:
        event = self.snapshot()
        for queue in self._subscribers:
            if queue.full():  # a slow reader gets the latest state, not a backlog
                with contextlib.suppress(asyncio.QueueEmpty):
                    queue.get_nowait()
            queue.put_nowait(event)

    async def wait_idle(self, timeout: float = 30.0) -> None:
        """Until nothing is waiting or running (for tests, scripts and `reindex` callers)."""
        deadline = time.monotonic() + timeout
        while self.pending or self.state in ("starting", "indexing"):
            if time.monotonic() > deadline:
                raise TimeoutError(f"index still busy: {self.snapshot()}")
            await asyncio.sleep(0.02)
