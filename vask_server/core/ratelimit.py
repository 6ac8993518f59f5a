"""Failed attempts per client address in a sliding window: past the limit, the address waits.

Pure: the clock comes in. Memory stays bounded however many addresses try (the oldest are dropped).
"""

from __future__ import annotations

from collections import OrderedDict, deque


class FailureLimiter:
    def __init__(self, limit: int = 20, window: float = 60.0, max_addresses: int = 10_000) -> None:
        self.limit = limit
        self.window = window
        self.max_addresses = max_addresses
        self._failures: OrderedDict[str, deque[float]] = OrderedDict()

    def _recent(self, address: str, now: float) -> deque[float] | None:
        times = self._failures.get(address)
        if times is None:
            return None
        while times and times[0] <= now - self.window:
            times.popleft()
        if not times:
            del self._failures[address]
            return None
        return times

    def wait(self, address: str, now: float) -> float:
        """Seconds this address must wait before it may try again; 0 when it may."""
        times = self._recent(address, now)
        if times is None or len(times) < self.limit:
            return 0.0
        return max(0.0, times[0] + self.window - now)

    def fail(self, address: str, now: float) -> bool:
        """Records one failure; True when it is the one that reaches the limit."""
        times = self._recent(address, now)
        if times is None:
            times = self._failures[address] = deque()
            while len(self._failures) > self.max_addresses:
                self._failures.popitem(last=False)
        self._failures.move_to_end(address)
        times.append(now)
        return len(times) == self.limit


class CallBudget:
    """Calls one client may make: at most `rate` in any `window` seconds, and at most `in_flight`
    unanswered at once. What stops an agent that floods a door with calls from starving the others
    (and the machine): past either limit a call is refused with how long to wait. Pure: the clock
    comes in; the caller says when a call it let in is done."""

    def __init__(self, rate: int = 1200, window: float = 60.0, in_flight: int = 32) -> None:
        self.rate = rate
        self.window = window
        self.in_flight = in_flight
        self._recent = FailureLimiter(rate, window)
        self._running: dict[str, int] = {}

    def admit(self, client: str, now: float) -> float | None:
        """None when the call may go ahead (then `done` must follow); else the seconds to wait, 0
        when the client must first wait for answers to calls it made."""
        wait = self._recent.wait(client, now)
        if wait > 0:
            return wait
        if self._running.get(client, 0) >= self.in_flight:
            return 0.0
        self._recent.fail(client, now)
        self._running[client] = self._running.get(client, 0) + 1
        return None

    def done(self, client: str) -> None:
        left = self._running.get(client, 0) - 1
        if left > 0:
            self._running[client] = left
        else:
            self._running.pop(client, None)
