"""Watched changes reach /v1/events subscribers as one event a burst, not one a change."""

from __future__ import annotations

import asyncio
import time
from types import SimpleNamespace
from typing import Any, cast

from vask_server.adapters.ollama import OllamaGateway
from vask_server.services.context import Services
from vask_server.services.live import LiveIndex

# notify() and the stage ticks touch only the debouncer, the subscribers and what the snapshot reads
# (the gateway's last contact: none here, since nothing starts the worker)
SERVICES = cast(
    Services,
    SimpleNamespace(gateway=OllamaGateway("http://127.0.0.1:9"), indexer=SimpleNamespace(progress=None, paused=False)),
)


async def test_a_burst_of_watched_changes_is_one_event_with_every_path_pending():
    live = LiveIndex(SERVICES, debounce=5.0)
    queue = live.subscribe()
    started = time.perf_counter()
    for n in range(10_000):  # what a git checkout of a 10,000-note vault sends
        live.notify(f"Notes/note {n}.md")
    spent = time.perf_counter() - started
    try:
        assert queue.empty()  # nothing published a change (each event counts every waiting path)
        event: dict[str, Any] = await asyncio.wait_for(queue.get(), 2)
        assert event["pending"] == 10_000
        await asyncio.sleep(0.1)
        assert queue.empty()  # one event for the burst
        live.notify("Notes/one more.md")
        assert (await asyncio.wait_for(queue.get(), 2))["pending"] == 10_001  # a later change is heard
        # Before, an event a change made this quadratic: 1.8 s here on an idle machine (~40 ms now).
        assert spent < 1.0
    finally:
        await live.stop()


async def test_a_step_without_counts_is_heard_every_tick_with_its_seconds_and_stops_with_it():
    # LanceDB's compaction and index builds report nothing from inside; the step's seconds move instead
    live = LiveIndex(SERVICES, stage_tick=0.05)
    queue = live.subscribe()
    try:
        live._stage("keyword index")
        first = await asyncio.wait_for(queue.get(), 2)
        assert (first["stage"], first["stage_seconds"]) == ("keyword index", 0.0)
        ticks = [await asyncio.wait_for(queue.get(), 2) for _ in range(3)]  # nothing else happened
        assert all(t["stage"] == "keyword index" for t in ticks)
        seconds = [t["stage_seconds"] for t in ticks]
        assert seconds == sorted(seconds) and seconds[-1] > 0
        live._stage("vector index")  # a new step counts from 0 again
        while (event := await asyncio.wait_for(queue.get(), 2))["stage"] != "vector index":
            pass
        assert event["stage_seconds"] == 0.0
        live._stage(None)
        while (event := await asyncio.wait_for(queue.get(), 2))["stage"] is not None:
            pass
        assert event["stage_seconds"] is None
        await asyncio.sleep(0.2)
        assert queue.empty()  # no more ticks once the step is over
    finally:
        await live.stop()
