"""The queue of proposed changes, kept with the index: one JSON file a proposal in `proposals/` of the
index folder, each written whole (adapters/atomic.write_atomic, mode 0600: it holds notes' text).

A file a proposal, rather than one file for all, so that a decision rewrites one small file and a
large queue or history is never rewritten whole. Decisions are taken under a lock on the folder
(`filelock`, the operating system's own lock, gone with its process however it ends), so that
`vask serve` and `vask proposals` deciding at once cannot both apply one proposal.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
from collections.abc import Iterator
from pathlib import Path

from filelock import FileLock

from vask_server.adapters.atomic import write_atomic
from vask_server.adapters.folders import ensure_index_dir
from vask_server.core.proposals import Proposal

log = logging.getLogger(__name__)

PROPOSALS_DIR = "proposals"
LOCK_FILE = ".lock"
ID_RE = re.compile(r"[0-9a-f]{12}")


class ProposalStore:
    def __init__(self, index_dir: Path) -> None:
        self.index_dir = index_dir
        self.folder = index_dir / PROPOSALS_DIR

    def _ensure(self) -> None:
        ensure_index_dir(self.index_dir)
        self.folder.mkdir(mode=0o700, exist_ok=True)

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Held while a proposal is read, decided and saved."""
        self._ensure()
        with FileLock(self.folder / LOCK_FILE, timeout=30):
            yield

    def _path(self, proposal_id: str) -> Path | None:
        return self.folder / f"{proposal_id}.json" if ID_RE.fullmatch(proposal_id) else None

    def get(self, proposal_id: str) -> Proposal | None:
        path = self._path(proposal_id)
        return None if path is None else self._read(path)

    def all(self) -> list[Proposal]:
        """Every proposal kept, oldest first."""
        try:
            names = sorted(os.listdir(self.folder))
        except FileNotFoundError:
            return []
        found = [
            self._read(self.folder / name)
            for name in names
            if name.endswith(".json") and ID_RE.fullmatch(name[: -len(".json")])
        ]
        return sorted((p for p in found if p is not None), key=lambda p: (p.created, p.id))

    def _read(self, path: Path) -> Proposal | None:
        try:
            return Proposal.from_dict(json.loads(path.read_text("utf-8")))
        except FileNotFoundError:
            return None
        except (OSError, ValueError, TypeError) as exc:
            # (written whole, so only a hand edit or a disk fault gets here: said, then passed over)
            log.warning("a proposal file could not be read and is passed over: %s (%s)", path.name, exc)
            return None

    def save(self, proposal: Proposal) -> None:
        path = self._path(proposal.id)
        if path is None:
            raise ValueError(f"not a proposal id: {proposal.id!r}")
        self._ensure()
        write_atomic(path, json.dumps(proposal.to_dict(), ensure_ascii=False, indent=1) + "\n")

    def delete(self, proposal_id: str) -> None:
        path = self._path(proposal_id)
        if path is not None:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
