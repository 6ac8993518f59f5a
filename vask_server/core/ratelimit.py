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
