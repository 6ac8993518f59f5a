"""watchdog → asyncio: file events become vault-relative paths, debounced per path.

Editors save in many ways (write in place, write a temp file and rename it over the note, delete and
recreate); each path waits until it has been quiet for the debounce interval, then it is handed on
once. Folder events (rename, move, delete of a folder) ask for a rescan instead, which is cheap: a
stat of every note, reading only what changed.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

from vask_server.adapters.vault import SETTINGS_FILES, is_note_path
from vask_server.core.filetypes import ALL_TYPES

log = logging.getLogger(__name__)

RESCAN = "\x00rescan"  # a marker, not a path: no file name can contain NUL


def _decode(path: bytes | str) -> str:
    return os.fsdecode(path)


class _Bridge(FileSystemEventHandler):
    def __init__(
        self, root: Path, loop: asyncio.AbstractEventLoop, emit: Callable[[str], None], types: tuple[str, ...]
    ) -> None:
        self.root = root
        self.loop = loop
        self.emit = emit
        self.types = types

    def _relative(self, raw: bytes | str) -> str | None:
        try:
            return Path(_decode(raw)).relative_to(self.root).as_posix()
        except ValueError:
            return None

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in ("opened", "closed_no_write"):
            return
        paths = [event.src_path] + ([event.dest_path] if event.dest_path else [])
        if event.is_directory:
            if event.event_type in ("moved", "deleted", "created"):
                relatives = [self._relative(p) for p in paths]
                if any(r is not None and not _hidden(r) for r in relatives):
                    self.loop.call_soon_threadsafe(self.emit, RESCAN)
            return
        for raw in paths:
            relative = self._relative(raw)
            if relative is not None and is_note_path(relative, self.types):
                self.loop.call_soon_threadsafe(self.emit, relative)
            elif relative in SETTINGS_FILES:
                # Obsidian's settings that decide what is indexed (Excluded files) and how notes are
                # dated (Daily notes, Periodic Notes): a full sync reads them anew
                self.loop.call_soon_threadsafe(self.emit, RESCAN)


def _hidden(relative: str) -> bool:
    return any(part.startswith(".") for part in relative.split("/"))


class Debouncer:
    """Hands each key to `ready` once it has been quiet for `delay` seconds."""

    def __init__(self, delay: float, ready: Callable[[str], None]) -> None:
        self.delay = delay
        self.ready = ready
        self._timers: dict[str, asyncio.TimerHandle] = {}

    def __call__(self, key: str) -> None:
        timer = self._timers.pop(key, None)
        if timer is not None:
            timer.cancel()
        loop = asyncio.get_running_loop()
        self._timers[key] = loop.call_later(self.delay, self._fire, key)

    def _fire(self, key: str) -> None:
        self._timers.pop(key, None)
        self.ready(key)

    @property
    def waiting(self) -> set[str]:
        return set(self._timers)

    def cancel(self) -> None:
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()


class VaultWatcher:
    def __init__(self, root: Path, on_path: Callable[[str], None], types: tuple[str, ...] = ALL_TYPES) -> None:
        self.root = root.resolve()
        self.on_path = on_path
        self.types = types  # the file types turned on: a save of another kind starts no sync
        self._observer: Observer | None = None  # type: ignore[valid-type]

    def start(self) -> None:
        loop = asyncio.get_running_loop()
        observer = Observer()
        observer.schedule(_Bridge(self.root, loop, self.on_path, self.types), str(self.root), recursive=True)
        observer.daemon = True
        observer.start()
        self._observer = observer
        log.info("watching %s", self.root)

    def stop(self) -> None:
        observer = self._observer
        if observer is not None:
            observer.stop()
            observer.join(timeout=5)
            self._observer = None
