"""Watched changes reach /v1/events subscribers as one event a burst, not one a change."""

from __future__ import annotations

import asyncio
import time
from typing import Any, cast

from vask_server.services.context import Services
from vask_server.services.live import LiveIndex


async def test_a_burst_of_watched_changes_is_one_event_with_every_path_pending():
    # notify() touches only the debouncer and the subscribers: no services needed
    live = LiveIndex(cast(Services, None), debounce=5.0)
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
