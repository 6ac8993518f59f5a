"""The exclusion rules as they are now, held against what a search, a note's connections and the
related pane return. A sync removes every note the rules keep out, but an index can predate a rule:
one added while no server ran (until the restart's check reaches it, or for as long as indexing is
paused), or one given to this process alone (`vask mcp` or `vask search` beside the server that
writes the index). A row such a rule keeps out is dropped before it is ranked, so it is never shown,
cited, counted as evidence or named."""

from __future__ import annotations

from collections.abc import Callable

from vask_server.adapters.vault import APP_SETTINGS, Vault
from vask_server.core.exclude import Excluder
from vask_server.core.plan import IndexOptions
from vask_server.services.options import excluder_for

KeptOut = Callable[[str], bool]


def nothing_kept_out(path: str) -> bool:
    """For a searcher without a vault to read the rules of (an evaluation's own)."""
    return False


class CurrentExclusions:
    """`keeps_out(path)`: whether a rule as it is now keeps the note out. Obsidian's Excluded files
    are parsed anew when `.obsidian/app.json` changes (a stat per call, not a parse)."""

    def __init__(self, vault: Vault, options: IndexOptions) -> None:
        self.vault = vault
        self.options = options
        self._excluder: Excluder | None = None
        self._read: tuple[int, int] | None = None

    def keeps_out(self, path: str) -> bool:
        excluder = self._current()
        return excluder.active and excluder.rule_for(path) is not None

    def _current(self) -> Excluder:
        stamp = self._app_settings_stamp()
        if self._excluder is None or stamp != self._read:
            self._excluder, self._read = excluder_for(self.options, self.vault), stamp
        return self._excluder

    def _app_settings_stamp(self) -> tuple[int, int] | None:
        if not self.options.obsidian_excluded:
            return None
        try:
            found = (self.vault.root / APP_SETTINGS).stat()
        except OSError:
            return None
        return (found.st_mtime_ns, found.st_size)
