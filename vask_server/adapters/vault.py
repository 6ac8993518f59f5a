"""The vault on disk: which notes exist, reading them safely, never leaving the vault folder."""

from __future__ import annotations

import errno
import json
import logging
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from vask_server.adapters.atomic import replace_file
from vask_server.core.exclude import Excluder
from vask_server.core.filetypes import ALL_TYPES, suffixes
from vask_server.core.proposals import bytes_hash
from vask_server.errors import BadRequest, NotFound

log = logging.getLogger(__name__)

IGNORED_DIRS = {".obsidian", ".trash", ".git", "node_modules"}
# Where Obsidian keeps the settings vask reads: the core Daily notes plugin's, the Periodic Notes plugin's.
DAILY_NOTES_SETTINGS = ".obsidian/daily-notes.json"
PERIODIC_NOTES_SETTINGS = ".obsidian/plugins/periodic-notes/data.json"
APP_SETTINGS = ".obsidian/app.json"  # "Files and links": Excluded files
SETTINGS_FILES = frozenset({DAILY_NOTES_SETTINGS, PERIODIC_NOTES_SETTINGS, APP_SETTINGS})
_BINARY_SNIFF = 8192
# (`read_head`: a link in the last part of the path is refused; Windows has no such flag, and opens
# text files translated unless told otherwise)
_NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0)
_BINARY = getattr(os, "O_BINARY", 0)


@dataclass(frozen=True)
class FileStat:
    mtime_ns: int
    size: int


@dataclass(frozen=True)
class VaultScan:
    notes: dict[str, FileStat]  # vault-relative paths of the files indexed (.md, and .canvas, .pdf when on)
    all_files: list[str]  # every file, attachments included: links can point at them
    # The words the CLI and the status use for these: "failed", paths that could not be looked at,
    # and "skipped", paths left out on purpose (a symlink out of the vault), each with why.
    problems: dict[str, str]
    skipped: dict[str, str] = field(default_factory=dict)
    # notes left out by an exclusion rule, with the rule: never read, never stored, never logged
    excluded: dict[str, str] = field(default_factory=dict)


class NoteUnreadable(Exception):
    """A note that is not indexed, with a reason a person can act on: "failed" (it could not be
    read) or "skipped" (left out on purpose: too large, binary, gone)."""

    def __init__(self, reason: str, status: str = "failed") -> None:
        super().__init__(reason)
        self.reason = reason
        self.status = status


def _read_only(path: Path) -> bool:
    """No one may write it (its mode), or this user may not."""
    return not stat.S_IMODE(os.stat(path).st_mode) & 0o222 or not os.access(path, os.W_OK)


class NoteChanged(Exception):
    """A note that no longer has the content a write was meant for: nothing was written."""

    def __init__(self, relative: str, now: str | None) -> None:
        super().__init__(relative)
        self.now = now  # the hash of its bytes now; None: there is no such file


_ALL_SUFFIXES = suffixes(ALL_TYPES)
TRASH = ".trash"  # Obsidian's own trash folder ("Deleted files: Move to Obsidian trash")


def is_note_path(relative: str, types: tuple[str, ...] = ALL_TYPES) -> bool:
    """Files of a type vask indexes (`types`: those turned on) that are not hidden, temporary or
    inside Obsidian's own folders."""
    parts = PurePosixPath(relative).parts
    wanted = _ALL_SUFFIXES if types == ALL_TYPES else suffixes(types)
    if not parts or not relative.lower().endswith(wanted):
        return False
    if any(part.startswith(".") or part in IGNORED_DIRS for part in parts):
        return False
    name = parts[-1]
    return not (name.startswith("~") or name.endswith("~") or name.startswith(".#"))


class Vault:
    def __init__(self, root: Path) -> None:
        self.root = root.resolve()

    def scan(self, excluder: Excluder | None = None, types: tuple[str, ...] = ALL_TYPES) -> VaultScan:
        """The files of these types (core/filetypes.py) that are not excluded, and every file."""
        wanted = suffixes(types)
        # Relative paths are built as strings along the walk: making a Path of every file and
        # asking it for its relative form was most of a scan (docs/BENCHMARKS.md, "Speed").
        notes: dict[str, FileStat] = {}
        excluded: dict[str, str] = {}
        all_files: list[str] = []
        problems: dict[str, str] = {}
        skipped: dict[str, str] = {}
        stack: list[tuple[str, str]] = [(str(self.root), "")]  # (folder, its path relative to the vault + "/")
        while stack:
            directory, prefix = stack.pop()
            try:
                entries = list(os.scandir(directory))
            except OSError as exc:
                problems[prefix[:-1] or "."] = f"folder not readable: {exc.strerror}"
                continue
            for entry in entries:
                name = entry.name
                if name.startswith(".") or name in IGNORED_DIRS:
                    continue
                relative = prefix + name
                try:
                    if entry.is_dir(follow_symlinks=False):
                        stack.append((entry.path, relative + "/"))
                        continue
                    if entry.is_symlink() and not self._inside(Path(entry.path)):
                        if relative.lower().endswith(wanted) or entry.is_dir(follow_symlinks=True):
                            skipped[relative] = "symlink that points outside the vault: not followed"
                        continue
                    info = entry.stat(follow_symlinks=True)
                except OSError as exc:
                    if relative.lower().endswith(wanted):
                        problems[relative] = f"cannot stat: {exc.strerror or exc}"
                    continue
                if not stat.S_ISREG(info.st_mode):
                    continue
                all_files.append(relative)
                # Folders that `is_note_path` refuses were never entered, and `name` passed the check
                # above: what is left of it is the name's own test.
                if name.lower().endswith(wanted) and not (name.startswith("~") or name.endswith("~")):
                    rule = excluder.rule_for(relative) if excluder is not None and excluder.active else None
                    if rule is None:
                        notes[relative] = FileStat(info.st_mtime_ns, info.st_size)
                    else:
                        excluded[relative] = rule
        return VaultScan(notes, sorted(all_files), problems, skipped, excluded)

    def stat(self, relative: str) -> FileStat | None:
        try:
            path = self.resolve(relative)
            info = path.stat()
        except (OSError, BadRequest, NotFound):
            return None
        if not stat.S_ISREG(info.st_mode):
            return None
        return FileStat(info.st_mtime_ns, info.st_size)

    def obsidian_settings(self, relative: str) -> dict[str, Any] | None:
        """One of Obsidian's JSON settings files, parsed; None when the vault has none. A file that
        cannot be read or parsed is logged and treated as absent: the defaults then apply."""
        path = self.root / relative
        try:
            data = json.loads(path.read_text("utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            log.warning("could not read %s (%s); using the defaults", relative, exc)
            return None
        if not isinstance(data, dict):
            log.warning("%s is not a JSON object; using the defaults", relative)
            return None
        return data

    def relative(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    def _inside(self, path: Path) -> bool:
        try:
            path.resolve().relative_to(self.root)
        except (ValueError, OSError, RuntimeError):
            return False
        return True

    def resolve(self, relative: str) -> Path:
        """A vault-relative path as an absolute one, refusing anything that leaves the vault
        (`..`, absolute paths, symlinks pointing out)."""
        if not relative or "\x00" in relative:
            raise BadRequest("Empty or invalid note path.", "Give a vault-relative path like 'Folder/Note.md'.")
        candidate = PurePosixPath(relative.replace("\\", "/"))
        if candidate.is_absolute() or ".." in candidate.parts or (relative[1:3] == ":/"):
            raise BadRequest(
                f"Path leaves the vault: {relative!r}",
                "Give a vault-relative path like 'Folder/Note.md'.",
            )
        path = self.root / candidate
        if not self._inside(path):
            raise BadRequest(f"Path leaves the vault: {relative!r}", "Symlinks out of the vault are not followed.")
        return path

    def read_head(self, relative: str, max_bytes: int) -> str:
        """The opening `max_bytes` of a note the vault's scan listed, as text (a character cut at the
        end is dropped), to tell its language by. The scan follows no link out of the vault, so the
        path is not resolved again link by link (most of the time of reading thousands of openings):
        one that is not a plain vault-relative path, or whose file is now a link, is not read."""
        parts = PurePosixPath(relative).parts
        if not parts or "\x00" in relative or PurePosixPath(relative).is_absolute() or ".." in parts:
            raise NoteUnreadable("not a path inside the vault", status="skipped")
        try:
            handle = os.open(os.path.join(self.root, relative), os.O_RDONLY | _NO_FOLLOW | _BINARY)
            try:
                data = os.read(handle, max_bytes)
            finally:
                os.close(handle)
        except OSError as exc:
            raise NoteUnreadable(f"cannot read: {exc.strerror or exc}") from None
        if b"\x00" in data[:_BINARY_SNIFF]:
            raise NoteUnreadable("binary file", status="skipped")
        return data.decode("utf-8", errors="ignore")

    def read_note(self, relative: str, max_bytes: int) -> tuple[str, list[str]]:
        """The note's text and any warnings. Raises NoteUnreadable with a reason."""
        path = self.resolve(relative)
        try:
            with path.open("rb") as handle:
                size = os.fstat(handle.fileno()).st_size
                if size > max_bytes:
                    raise NoteUnreadable(
                        f"too large: {size / 1_000_000:.1f} MB is over the {max_bytes / 1_000_000:.1f} MB limit "
                        "(VASK_MAX_NOTE_BYTES)",
                        status="skipped",
                    )
                data = handle.read(max_bytes + 1)
        except FileNotFoundError:
            raise NoteUnreadable("vanished before it could be read", status="skipped") from None
        except PermissionError:
            raise NoteUnreadable("permission denied") from None
        except IsADirectoryError:
            raise NoteUnreadable("is a folder") from None
        except OSError as exc:
            raise NoteUnreadable(f"cannot read: {exc.strerror or exc}") from None
        if b"\x00" in data[:_BINARY_SNIFF]:
            suffix = PurePosixPath(relative).suffix or "text"
            raise NoteUnreadable(f"binary file with a {suffix} name", status="skipped")
        try:
            return data.decode("utf-8"), []
        except UnicodeDecodeError as exc:
            text = data.decode("utf-8", errors="replace")
            return text, [f"{relative}: invalid UTF-8 at byte {exc.start}; undecodable bytes replaced"]

    def read_bytes(self, relative: str, max_bytes: int) -> bytes | None:
        """A file's bytes exactly (None: there is no such file), for a change to it; a path out of the
        vault is refused as `resolve` refuses it, a file over `max_bytes` with NoteUnreadable."""
        path = self.resolve(relative)
        try:
            with path.open("rb") as handle:
                if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                    raise NoteUnreadable("not a file")
                data = handle.read(max_bytes + 1)
        except FileNotFoundError:
            return None
        except IsADirectoryError:
            raise NoteUnreadable("is a folder") from None
        except OSError as exc:
            raise NoteUnreadable(f"cannot read: {exc.strerror or exc}") from None
        if len(data) > max_bytes:
            raise NoteUnreadable(f"too large: over the {max_bytes / 1_000_000:.1f} MB limit (VASK_MAX_NOTE_BYTES)")
        return data

    def _current_hash(self, path: Path) -> str | None:
        try:
            return bytes_hash(path.read_bytes())
        except FileNotFoundError:
            return None

    def write_note(self, relative: str, data: bytes, *, expected: str | None) -> None:
        """Replaces a file's bytes whole (adapters/atomic.replace_file), only while they still hash to
        `expected` (None: only while no file has that name; missing folders are made). Checked once the
        new bytes are on disk, right before the rename: a note saved in between is never overwritten
        (NoteChanged). A note that is a link to a file elsewhere in the vault is written where it
        points, and stays a link."""
        path = self.resolve(relative)
        real = path.resolve()
        if expected is not None and os.path.exists(real) and _read_only(real):
            # (a rename would replace a note made read-only: its owner meant it to stay as it is)
            raise PermissionError(errno.EACCES, "the note is read-only")
        if expected is None:
            real.parent.mkdir(parents=True, exist_ok=True)
            if not self._inside(real.parent):  # (a folder made through a link that points out)
                raise BadRequest(f"Path leaves the vault: {relative!r}", "Symlinks out of the vault are not followed.")

        def unchanged() -> None:
            now = self._current_hash(real) if expected is not None or os.path.lexists(real) else None
            if now != expected:
                raise NoteChanged(relative, now)

        try:
            replace_file(real, data, check=unchanged, create=expected is None)
        except FileExistsError:
            raise NoteChanged(relative, self._current_hash(real)) from None
        except FileNotFoundError:
            raise NoteChanged(relative, None) from None

    def trash_note(self, relative: str, *, expected: str) -> str:
        """Moves a note into Obsidian's trash folder (`.trash/`, where Obsidian's own "Move to Obsidian
        trash" puts it), only while its bytes still hash to `expected`; returns where it went."""
        path = self.resolve(relative)
        real = path.resolve()
        if self._current_hash(real) != expected:
            raise NoteChanged(relative, self._current_hash(real))
        trash = self.root / TRASH
        trash.mkdir(exist_ok=True)
        stem, suffix = os.path.splitext(real.name)
        target = trash / real.name
        number = 1
        while os.path.lexists(target):
            target = trash / f"{stem} {number}{suffix}"
            number += 1
        os.replace(real, target)
        return self.relative(target)
