"""The writer's lock on an index folder: one process at a time writes an index (`vask serve`,
`vask index`, and `vask pause` / `vask resume` for the moment they write `index.json` with no server
running). Readers (`vask search`, `vask ask`, `vask status`) never take it.

The lock is the operating system's (`filelock`: `flock` on Linux and macOS, `LockFileEx` on
Windows) on `writer.lock`, held for the writer's lifetime: the system lets go of it when the
process ends, however it ends, so a `kill -9` leaves nothing that blocks the next writer. Beside it,
`writer.json` says who holds it (pid, command, and where a `vask serve` answers): for the error a second
writer gets, and for `vask pause`, which goes through the running server. It is believed only while
the lock is held; one that a killed writer left is overwritten by the next.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from urllib.parse import urlsplit

from filelock import FileLock, Timeout

from vask_server.adapters.atomic import write_atomic
from vask_server.adapters.folders import ensure_index_dir
from vask_server.errors import VaskError

LOCK_FILE = "writer.lock"
HOLDER_FILE = "writer.json"
SERVE = "vask serve"
INDEX = "vask index"


@dataclass(frozen=True)
class Holder:
    """Who holds an index's writer lock."""

    pid: int
    command: str  # SERVE, INDEX, "vask pause", ...
    started_at: str
    url: str | None = None  # where a `vask serve` answers, once it listens
    tls_cert: str | None = None  # its certificate, when it serves HTTPS: what a client of it pins

    def describe(self) -> str:
        """E.g. "vask serve (pid 1234) on 127.0.0.1:8765"."""
        where = f" on {urlsplit(self.url).netloc}" if self.url else ""
        return f"{self.command} (pid {self.pid}){where}"


class IndexBusy(VaskError):
    """Another process holds the index's writer lock. `holder`: who, when `writer.json` says."""

    code = "index_busy"
    status = 409
    http = False  # (said by a command as it starts, never an HTTP answer)

    def __init__(self, message: str, hint: str, index_dir: Path, holder: Holder | None) -> None:
        super().__init__(message, hint)
        self.index_dir = index_dir
        self.holder = holder


def read_holder(index_dir: Path) -> Holder | None:
    """What `writer.json` says; None when there is none or it cannot be read. (Whether it is current
    is the lock's to say: see `WriterLock.acquire`.)"""
    try:
        data = json.loads((index_dir / HOLDER_FILE).read_text("utf-8"))
        return Holder(
            pid=int(data["pid"]),
            command=str(data["command"]),
            started_at=str(data.get("started_at", "")),
            url=str(data["url"]) if data.get("url") else None,
            tls_cert=str(data["tls_cert"]) if data.get("tls_cert") else None,
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


class WriterLock:
    """The writer's lock of `index_dir`, for `command`. `acquire` never waits: a held lock is an
    `IndexBusy` error naming its holder."""

    def __init__(self, index_dir: Path, command: str) -> None:
        self.index_dir = index_dir
        self.command = command
        # (not thread-local: a server may release it from another thread than the one that took it)
        self._lock = FileLock(index_dir / LOCK_FILE, timeout=0, thread_local=False)
        self._holder: Holder | None = None

    @property
    def held(self) -> bool:
        return self._lock.is_locked

    def acquire(self) -> None:
        """Takes the lock (creating the index folder if need be) and says so in `writer.json`. Raises
        `IndexBusy` when another process holds it."""
        if self.held:
            return
        ensure_index_dir(self.index_dir)
        try:
            self._lock.acquire()
        except Timeout:
            raise self._busy() from None
        self._holder = Holder(os.getpid(), self.command, datetime.now(UTC).isoformat(timespec="seconds"))
        self._write_holder()

    def announce(self, url: str, tls_cert: Path | None = None) -> None:
        """Where this `vask serve` answers, once it listens (what `vask pause` posts to)."""
        if self._holder is None:
            return
        self._holder = Holder(
            self._holder.pid, self._holder.command, self._holder.started_at, url, str(tls_cert) if tls_cert else None
        )
        self._write_holder()

    def release(self) -> None:
        if not self.held:
            return
        with contextlib.suppress(OSError):  # (a stale file is harmless: the lock says whether it is current)
            if read_holder(self.index_dir) == self._holder:
                os.unlink(self.index_dir / HOLDER_FILE)
        self._holder = None
        self._lock.release()

    def __enter__(self) -> WriterLock:
        self.acquire()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.release()

    def _write_holder(self) -> None:
        assert self._holder is not None
        write_atomic(self.index_dir / HOLDER_FILE, json.dumps(asdict(self._holder), indent=2) + "\n")

    def _busy(self) -> IndexBusy:
        holder = read_holder(self.index_dir)
        who = holder.describe() if holder is not None else "Another vask process"
        message = f"{who} holds this index ({self.index_dir}): one process at a time writes an index."
        return IndexBusy(message, busy_hint(self.command, holder), self.index_dir, holder)


def busy_hint(command: str, holder: Holder | None) -> str:
    """What to do when `command` finds the index held by `holder`."""
    if holder is not None and holder.command == SERVE:
        if command == INDEX:
            return (
                "That server keeps the index up to date by itself (`vask status` shows how far it is, "
                "`vask pause` pauses it); to index from here instead, stop it first."
            )
        return (
            "Use the server that is running (`vask search`, `vask status` and `vask pause` work beside it), "
            "or stop it first (Ctrl-C where it runs, or turn off the Obsidian plugin's local server); "
            "or give this one another --index-dir."
        )
    if holder is not None and holder.command == INDEX:
        return "Wait for it to finish, or stop it (Ctrl-C keeps what it embedded), then run this again."
    return "Wait for it to finish, or stop it, then run this again."
