"""What a sync did, counted for `vask index`, the status and the server's log."""

from __future__ import annotations

from dataclasses import dataclass, field

from vask_server.adapters.meta import IndexMeta


@dataclass
class SyncReport:
    scanned: int = 0
    changed: int = 0
    unchanged: int = 0
    deleted: int = 0
    chunks_embedded: int = 0
    chunks_reused: int = 0
    chunks_removed: int = 0  # rows of deleted notes
    touched: int = 0  # notes whose file time changed but not their text: rows kept, time recorded
    failed: list[tuple[str, str]] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    excluded: dict[str, int] = field(default_factory=dict)  # notes left out, by rule (never their paths)
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0
    model: str = ""
    dimension: int = 0

    def summary(self) -> str:
        return (
            f"{self.scanned} notes scanned, {self.changed} changed, {self.deleted} deleted; "
            + (f"{self.touched} touched (only their time changed); " if self.touched else "")
            + f"chunks: {self.chunks_embedded} embedded, {self.chunks_reused} reused, "
            f"{self.chunks_removed} removed; {len(self.failed)} failed, {len(self.skipped)} skipped; "
            + (f"{sum(self.excluded.values())} excluded; " if self.excluded else "")
            + f"{self.seconds:.2f} s"
        )


def remember_scan_problems(meta: IndexMeta, problems: dict[str, str], skipped: dict[str, str]) -> bool:
    """Files the scan failed to look at or skipped are in no manifest, so the status reads them from
    here, under the same word the sync used. True when that changed what `meta` holds."""
    found = {
        "scan_problems": dict(sorted(problems.items())),
        "scan_skipped": dict(sorted(skipped.items())),
    }
    changed = any(meta.extra.get(key, {}) != value for key, value in found.items())
    meta.extra.update(found)
    return changed
