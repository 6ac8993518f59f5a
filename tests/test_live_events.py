"""Watched changes reach /v1/events subscribers as one event a burst, not one a change."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any, cast

from vask_server.adapters.ollama import OllamaGateway
from vask_server.services.context import Services
from vask_server.services.sync.live import LiveIndex

# notify() and the stage ticks touch only the debouncer, the subscribers and what the snapshot reads
# (the gateway's last contact: none here, since nothing starts the worker)
SERVICES = cast(
    Services,
    SimpleNamespace(gateway=OllamaGateway("http://127.0.0.1:9"), indexer=SimpleNamespace(progress=None, paused=False)),
)
WAIT = 30.0  # seconds before a test gives up on an event (a guard against hanging, not a measure of speed)


class CountingLive(LiveIndex):
    """Counts how often the paths waiting are counted: the work each event costs (every waiting path)."""

    counted = 0

    @property
    def pending(self) -> int:
        self.counted += 1
        return super().pending


async def test_a_burst_of_watched_changes_is_one_event_with_every_path_pending():
    """Before, every change published an event, and each event counts every waiting path: quadratic in
    the burst. Now the burst costs no count at all, and its one event one count (whatever the machine's
    speed: counted, not timed)."""
    live = CountingLive(SERVICES, debounce=3600.0)  # (the paths stay waiting: no sync starts here)
    queue = live.subscribe()
    for n in range(10_000):  # what a git checkout of a 10,000-note vault sends
        live.notify(f"Notes/note {n}.md")
    try:
        assert live.counted == 0 and queue.empty()  # nothing counted or published per change
        event: dict[str, Any] = await asyncio.wait_for(queue.get(), WAIT)
        assert event["pending"] == 10_000 and live.counted == 1  # one event for the burst, counted once
        await asyncio.sleep(0.1)
        assert queue.empty() and live.counted == 1
        live.notify("Notes/one more.md")
        assert (await asyncio.wait_for(queue.get(), WAIT))["pending"] == 10_001  # a later change is heard
        assert live.counted == 2
    finally:
        await live.stop()


async def test_a_step_without_counts_is_heard_every_tick_with_its_seconds_and_stops_with_it():
    # LanceDB's compaction and index builds report nothing from inside; the step's seconds move instead
    live = LiveIndex(SERVICES, stage_tick=0.05)
    queue = live.subscribe()
    try:
        live._stage("keyword index")
        first = await asyncio.wait_for(queue.get(), WAIT)
        assert (first["stage"], first["stage_seconds"]) == ("keyword index", 0.0)
        ticks = [await asyncio.wait_for(queue.get(), WAIT) for _ in range(3)]  # nothing else happened
        assert all(t["stage"] == "keyword index" for t in ticks)
        seconds = [t["stage_seconds"] for t in ticks]
        assert seconds == sorted(seconds) and seconds[-1] > 0
        live._stage("vector index")  # a new step counts from 0 again
        while (event := await asyncio.wait_for(queue.get(), WAIT))["stage"] != "vector index":
            pass
        assert event["stage_seconds"] == 0.0
        live._stage(None)
        while (event := await asyncio.wait_for(queue.get(), WAIT))["stage"] is not None:
            pass
        assert event["stage_seconds"] is None
        await asyncio.sleep(0.2)
        assert queue.empty()  # no more ticks once the step is over
    finally:
        await live.stop()
