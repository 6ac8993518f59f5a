"""How far a sync has got and how long the rest will take: a small estimator the indexer feeds.

Time left is measured in bytes of notes, not in notes or chunks: a sync takes its notes newest
first, and recent notes (daily notes, short captures) are smaller than old ones, so a count of notes
done says little about the work left; how many chunks the notes still to read will make is not known
before they are read, but their bytes are (the scan has them). The pace is the time per byte over
the last few minutes, so a model that warms up, or a laptop that wakes, is followed within minutes.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

# The window the pace is measured over: long enough to smooth the batches (each a few seconds to a
# minute with a slow model), short enough to follow a change of pace.
PACE_WINDOW_S = 300.0
# No time left is told before this much work is measured: the first batch includes starting up.
MIN_MEASURED_S = 5.0


@dataclass
class SyncProgress:
    notes_total: int
    bytes_total: int
    started: float  # the clock's time when the first note was taken
    notes_done: int = 0
    bytes_done: int = 0
    chunks_done: int = 0  # rows written (new vectors and reused ones)
    chunks_embedded: int = 0  # of which, vectors the model made
    paused: bool = False
    _marks: deque[tuple[float, int, int]] = field(default_factory=deque)  # (time, bytes done, chunks embedded)
    _paused_s: float = 0.0

    def __post_init__(self) -> None:
        self._marks.append((self.started, 0, 0))

    def advance(self, now: float, *, notes: int, size: int, chunks: int, embedded: int) -> None:
        """A batch is done: `notes` notes of `size` bytes, making `chunks` rows, `embedded` of them new."""
        self.notes_done += notes
        self.bytes_done += size
        self.chunks_done += chunks
        self.chunks_embedded += embedded
        self._marks.append((now - self._paused_s, self.bytes_done, self.chunks_embedded))
        while len(self._marks) > 2 and self._marks[-1][0] - self._marks[1][0] >= PACE_WINDOW_S:
            self._marks.popleft()

    def was_paused(self, seconds: float) -> None:
        """Time spent paused does not count as time spent working."""
        self._paused_s += seconds

    @property
    def chunks_total(self) -> int:
        """The rows the whole sync will write: those written, and as many again per byte for the rest."""
        if self.bytes_done <= 0:
            return self.chunks_done
        left = max(0, self.bytes_total - self.bytes_done)
        return self.chunks_done + round(left * self.chunks_done / self.bytes_done)

    def rate(self) -> float | None:
        """Chunks embedded a second over the window; None until measured."""
        (t0, _, c0), (t1, _, c1) = self._marks[0], self._marks[-1]
        if t1 - t0 < MIN_MEASURED_S:
            return None
        return (c1 - c0) / (t1 - t0)

    def eta_seconds(self, *, min_measured_s: float = MIN_MEASURED_S) -> float | None:
        """Seconds left for the notes not yet done, at the window's pace; None until measured."""
        (t0, b0, _), (t1, b1, _) = self._marks[0], self._marks[-1]
        if t1 - t0 < min_measured_s or b1 <= b0:
            return None
        left = max(0, self.bytes_total - self.bytes_done)
        return left * (t1 - t0) / (b1 - b0)

    def fraction(self) -> float:
        return 1.0 if self.bytes_total <= 0 else min(1.0, self.bytes_done / self.bytes_total)

    def to_dict(self) -> dict[str, object]:
        eta = self.eta_seconds()
        rate = self.rate()
        return {
            "notes_done": self.notes_done,
            "notes_total": self.notes_total,
            "chunks_done": self.chunks_done,
            "chunks_total": self.chunks_total,
            "percent": round(100 * self.fraction(), 1),
            "rate": None if rate is None else round(rate, 1),
            "eta_seconds": None if eta is None else round(eta),
            "paused": self.paused,
        }


def describe_eta(seconds: float | None) -> str:
    """ "~40 min left", "~3 h 10 min left", "less than a minute left"; "" when not known."""
    if seconds is None:
        return ""
    minutes = round(seconds / 60)
    if minutes < 1:
        return "less than a minute left"
    if minutes < 60:
        return f"~{minutes} min left"
    hours, minutes = divmod(minutes, 60)
    return f"~{hours} h {minutes} min left" if minutes else f"~{hours} h left"
