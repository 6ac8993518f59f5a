"""PDFs in the vault → their text, page by page, read in a worker process that can be stopped.

A hostile or broken PDF must not stall or exhaust a sync: files over the size limit are not
opened, and each file gets a time limit, after which the worker process (`pdf_worker.py`) is
killed and the file reported; the next PDF starts a fresh worker. A worker that crashes costs its
file only. The worker is started on the first PDF of a sync and stopped when the sync ends.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import queue
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from vask_server.adapters.vault import NoteUnreadable

log = logging.getLogger(__name__)

_START_TIMEOUT = 60.0  # a worker's own start (Python and the library): not counted against a file
_HEADER_WINDOW = 1024  # PDF readers accept a header this far into the file


@dataclass(frozen=True)
class PdfText:
    title: str  # from the document's metadata; "" when it has none
    pages: tuple[str, ...]  # the text of each page, page 1 first ("" for a page without text)


class PdfReader:
    def __init__(self, timeout: float, max_bytes: int, command: list[str] | None = None) -> None:
        self.timeout = timeout
        self.max_bytes = max_bytes
        self._command = command or [sys.executable, "-m", "vask_server.adapters.pdf_worker"]
        self._process: subprocess.Popen[str] | None = None
        self._answers: queue.Queue[str | None] = queue.Queue()
        self._lock = threading.Lock()

    def read(self, path: Path) -> PdfText:
        """The PDF's text. Raises NoteUnreadable: "failed" for a file that is not a readable PDF
        (damaged, encrypted, empty, or one the reader crashed on), "skipped" for one left out by a
        limit (size, time) or with no text to index (a scan)."""
        self._check_file(path)
        with self._lock:
            answer = self._ask(path)
        if not answer.get("ok"):
            reason, status = str(answer.get("reason") or "could not be read"), str(answer.get("status") or "failed")
            raise NoteUnreadable(reason, status)
        pages = tuple(str(page) for page in answer.get("pages", []))
        if not any(page.strip() for page in pages):
            raise NoteUnreadable(
                f"no text layer ({len(pages)} page{'s' if len(pages) != 1 else ''} of images only, such as a "
                "scan): nothing to index without OCR",
                status="skipped",
            )
        return PdfText(str(answer.get("title") or ""), pages)

    def _check_file(self, path: Path) -> None:
        try:
            with path.open("rb") as handle:
                size = os.fstat(handle.fileno()).st_size
                head = handle.read(_HEADER_WINDOW)
        except FileNotFoundError:
            raise NoteUnreadable("vanished before it could be read", status="skipped") from None
        except PermissionError:
            raise NoteUnreadable("permission denied") from None
        except OSError as exc:
            raise NoteUnreadable(f"cannot read: {exc.strerror or exc}") from None
        if size == 0:
            raise NoteUnreadable("empty file (0 bytes): not a PDF")
        if size > self.max_bytes:
            raise NoteUnreadable(
                f"too large: {size / 1_000_000:.1f} MB is over the {self.max_bytes / 1_000_000:.1f} MB limit "
                "(VASK_MAX_PDF_BYTES)",
                status="skipped",
            )
        if b"%PDF-" not in head:
            raise NoteUnreadable("not a PDF: the file has no PDF header (damaged, or another format named .pdf)")

    def _ask(self, path: Path) -> dict[str, Any]:
        process = self._worker()
        assert process.stdin is not None
        started = time.monotonic()
        try:
            process.stdin.write(json.dumps({"path": str(path)}) + "\n")
            process.stdin.flush()
            line = self._answers.get(timeout=self.timeout)
        except queue.Empty:
            log.warning("reading %s took over %.1f s: the PDF reader was stopped", path.name, self.timeout)
            self.close()
            return {
                "ok": False,
                "status": "skipped",
                "reason": f"reading it took longer than the {self.timeout:g} s limit (VASK_PDF_TIMEOUT): "
                "the PDF reader was stopped",
            }
        except OSError:  # the worker is gone (its pipe is closed)
            line = None
        if line is None:
            code = self._stop()
            return {"ok": False, "status": "failed", "reason": f"the PDF reader crashed on it (exit code {code})"}
        log.debug("read %s in %.2f s", path.name, time.monotonic() - started)
        answer: dict[str, Any] = json.loads(line)
        return answer

    def _worker(self) -> subprocess.Popen[str]:
        if self._process is not None and self._process.poll() is None:
            return self._process
        self._stop()
        process = subprocess.Popen(
            self._command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,  # (PDFium's own warnings about damaged files)
            text=True,
            encoding="utf-8",
            errors="replace",
        )
        self._answers = queue.Queue()
        assert process.stdout is not None
        threading.Thread(target=_pump, args=(process.stdout, self._answers), daemon=True, name="vask-pdf").start()
        try:
            ready = self._answers.get(timeout=_START_TIMEOUT)
        except queue.Empty:
            ready = None
        if ready is None:
            self._process = process
            code = self._stop()
            raise NoteUnreadable(f"the PDF reader could not start (exit code {code})")
        self._process = process
        return process

    def close(self) -> None:
        """Stops the worker (at the end of a sync, or after a file it stalled on)."""
        with_lock = self._lock.acquire(blocking=False)
        try:
            self._stop()
        finally:
            if with_lock:
                self._lock.release()

    def _stop(self) -> int | None:
        process, self._process = self._process, None
        if process is None:
            return None
        if process.poll() is None:
            process.kill()
        try:
            return process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            return None
        finally:
            for stream in (process.stdin, process.stdout):
                if stream is not None:
                    with contextlib.suppress(OSError):
                        stream.close()


def _pump(stream: IO[str], answers: queue.Queue[str | None]) -> None:
    """The worker's answers, a line each, into a queue that can be waited on with a time limit."""
    try:
        for line in stream:
            answers.put(line)
    except (OSError, ValueError):
        pass
    answers.put(None)
