"""Bearer tokens that guard the HTTP API, one per device, kept beside the index with mode 0600.

- `token`: the `default` device's token, as earlier versions kept it (plain text, so `vask token` can
  print it again for the Obsidian on this machine; `vask token revoke default` deletes it).
- `devices.json`: every other device, by name: the SHA-256 of its token (never the token), when it
  was made, and `may_apply` when the person allowed it to apply proposed changes to notes (`vask token
  allow-apply NAME`; the default device always may). Written only by `vask token` itself.
- `devices-used.json`: when each device was last seen, written only by the server, at most once a
  minute (so a burst of requests does not mean a burst of writes, and the server never rewrites the
  file the CLI writes).

SHA-256 rather than a slow password hash: the tokens are 256 random bits, so nobody can guess one
from its hash however fast the hash is; a slow KDF defends low-entropy passwords, and here it would
only cost time on every request (and hand an attacker a cheap way to burn the server's CPU).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import re
import secrets
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from vask_server.adapters.atomic import write_atomic
from vask_server.adapters.folders import ensure_index_dir
from vask_server.errors import ConfigError

TOKEN_FILE = "token"
DEVICES_FILE = "devices.json"
USED_FILE = "devices-used.json"
DEFAULT_DEVICE = "default"
NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,39}")
USED_WRITE_SECONDS = 60.0


def token_path(index_dir: Path) -> Path:
    return index_dir / TOKEN_FILE


def digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def read_token(index_dir: Path) -> str | None:
    path = token_path(index_dir)
    try:
        token = path.read_text("utf-8").strip()
    except FileNotFoundError:
        return None
    return token or None


@contextlib.contextmanager
def _locked(index_dir: Path) -> Iterator[None]:
    """Two `vask token add` at once must not lose one of the devices."""
    try:
        import fcntl
    except ImportError:  # (Windows: no advisory locks; the write itself stays atomic)
        yield
        return
    fd = os.open(index_dir / ".devices.lock", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise ConfigError(
            f"Cannot read {path}: {exc}",
            "Fix or delete that file (deleting it revokes every device but 'default'), then add devices again.",
        ) from None
    return data if isinstance(data, dict) else {}


def _devices(index_dir: Path) -> dict[str, dict[str, Any]]:
    raw = _read_json(index_dir / DEVICES_FILE).get("devices", {})
    return {str(k): v for k, v in raw.items() if isinstance(v, dict) and isinstance(v.get("sha256"), str)}


def _save_devices(index_dir: Path, devices: dict[str, dict[str, Any]]) -> None:
    write_atomic(index_dir / DEVICES_FILE, json.dumps({"version": 1, "devices": devices}, indent=2) + "\n")


def ensure_token(index_dir: Path) -> str:
    """The `default` device's token, creating it (readable by this user only) on first use."""
    ensure_index_dir(index_dir)
    existing = read_token(index_dir)
    if existing:
        os.chmod(token_path(index_dir), 0o600)
        token = existing
    else:
        token = secrets.token_urlsafe(32)
        write_atomic(token_path(index_dir), token + "\n")
    if not (index_dir / DEVICES_FILE).exists():
        with _locked(index_dir):
            _save_devices(index_dir, _devices(index_dir))
    return token


def ensure_first_token(index_dir: Path) -> None:
    """What the server does at start: make the `default` token only on the very first run, so a
    revoked `default` stays revoked across restarts (`vask token` makes it again, on purpose)."""
    ensure_index_dir(index_dir)
    if not (index_dir / DEVICES_FILE).exists():
        ensure_token(index_dir)


def _check_name(name: str) -> None:
    if not NAME_RE.fullmatch(name):
        raise ConfigError(
            f"{name!r} is not a device name.",
            "Use 1-40 letters, digits, '.', '_' or '-', starting with a letter or digit, such as phone or laptop-2.",
        )


def add_device(index_dir: Path, name: str, *, may_apply: bool = False) -> str:
    """A new device's token, returned once: only its hash is kept. `may_apply`: it may apply, reject
    and undo proposed changes to notes (off unless asked: a phone's token, if lost, then cannot
    change the notes)."""
    _check_name(name)
    if name == DEFAULT_DEVICE:
        raise ConfigError(
            "'default' is the token `vask token` prints.", "Run `vask token` for it, or pick another name."
        )
    ensure_index_dir(index_dir)
    with _locked(index_dir):
        devices = _devices(index_dir)
        if name in devices:
            raise ConfigError(
                f"A device named {name!r} exists already.",
                f"Pick another name, or run `vask token revoke {name}` first to replace its token.",
            )
        token = secrets.token_urlsafe(32)
        devices[name] = {"sha256": digest(token), "created": _now(), **({"may_apply": True} if may_apply else {})}
        _save_devices(index_dir, devices)
    return token


def revoke_device(index_dir: Path, name: str) -> None:
    if not index_dir.is_dir():  # (no index folder yet: no lock file to take, and no device to revoke)
        raise ConfigError(f"No device named {name!r}.", "There are no devices yet: `vask token` makes the first.")
    with _locked(index_dir):
        if name == DEFAULT_DEVICE and token_path(index_dir).exists():
            token_path(index_dir).unlink()
            if not (index_dir / DEVICES_FILE).exists():
                _save_devices(index_dir, {})  # (so that the server does not make a new default)
            return
        devices = _devices(index_dir)
        if name not in devices:
            known = ", ".join(d.name for d in list_devices(index_dir)) or "none"
            raise ConfigError(f"No device named {name!r}.", f"Devices: {known} (`vask token list`).")
        del devices[name]
        _save_devices(index_dir, devices)


def allow_apply(index_dir: Path, name: str, allowed: bool) -> None:
    """Lets a device apply, reject and undo proposed changes to notes, or stops it, from its next request."""
    if name == DEFAULT_DEVICE:
        raise ConfigError(
            "The default device always may apply proposed changes.", "Name another device (`vask token list`)."
        )
    if not index_dir.is_dir():
        raise ConfigError(f"No device named {name!r}.", "There are no devices yet: `vask token add NAME` makes one.")
    with _locked(index_dir):
        devices = _devices(index_dir)
        if name not in devices:
            known = ", ".join(d.name for d in list_devices(index_dir)) or "none"
            raise ConfigError(f"No device named {name!r}.", f"Devices: {known} (`vask token list`).")
        if allowed:
            devices[name]["may_apply"] = True
        else:
            devices[name].pop("may_apply", None)
        _save_devices(index_dir, devices)


@dataclass(frozen=True)
class Device:
    name: str
    sha256: str
    created: str | None
    last_used: str | None = None
    may_apply: bool = False  # may apply proposed changes to notes (always, for the default device)


def list_devices(index_dir: Path) -> list[Device]:
    used = _read_json(index_dir / USED_FILE)
    found: list[Device] = []
    token = read_token(index_dir)
    if token:
        created = datetime.fromtimestamp(token_path(index_dir).stat().st_mtime, UTC)
        stamp = created.isoformat(timespec="seconds").replace("+00:00", "Z")
        found.append(Device(DEFAULT_DEVICE, digest(token), stamp, used.get(DEFAULT_DEVICE), may_apply=True))
    for name, entry in sorted(_devices(index_dir).items()):
        allowed = entry.get("may_apply") is True
        found.append(Device(name, entry["sha256"], entry.get("created"), used.get(name), may_apply=allowed))
    return found


class TokenRegistry:
    """What the server checks a presented token against.

    It looks at the two files on every check (one stat each) and reads them again when either
    changed, so `vask token revoke` holds from the next request on, without a restart. `fixed`
    (tests) gives the `default` device's token instead of the `token` file.
    """

    def __init__(self, index_dir: Path, *, fixed: str | None = None, clock: Any = time.monotonic) -> None:
        self.index_dir = index_dir
        self._fixed = digest(fixed) if fixed else None
        self._clock = clock
        self._stamp: tuple[Any, ...] | None = None
        self._digests: dict[str, str] = {}  # name -> sha256
        self._may_apply: frozenset[str] = frozenset()
        self._used: dict[str, str] = {}
        self._used_dirty = False
        self._used_written = clock()

    def _file_stamp(self) -> tuple[Any, ...]:
        stamps: list[Any] = []
        for name in (TOKEN_FILE, DEVICES_FILE):
            try:
                st = os.stat(self.index_dir / name)
                stamps.append((st.st_ino, st.st_mtime_ns, st.st_size))
            except FileNotFoundError:
                stamps.append(None)
        return tuple(stamps)

    def _refresh(self) -> None:
        stamp = self._file_stamp()
        if stamp == self._stamp:
            return
        devices = _devices(self.index_dir)
        digests = {name: entry["sha256"] for name, entry in devices.items()}
        self._may_apply = frozenset(name for name, entry in devices.items() if entry.get("may_apply") is True)
        if self._fixed:
            digests[DEFAULT_DEVICE] = self._fixed
        else:
            token = read_token(self.index_dir)
            if token:
                digests[DEFAULT_DEVICE] = digest(token)
        self._digests, self._stamp = digests, stamp

    def match(self, presented: str) -> str | None:
        """The device whose token this is, or None. Every device is compared (in constant time),
        so the time taken says nothing about which one came close."""
        self._refresh()
        given = digest(presented).encode()
        found = None
        for name, known in self._digests.items():
            if hmac.compare_digest(given, known.encode()):
                found = name
        return found

    def may_apply(self, name: str) -> bool:
        """Whether this device may apply, reject and undo proposed changes to notes: the default
        device always, another only when allowed (`vask token allow-apply NAME`), from its next request."""
        if name == DEFAULT_DEVICE:
            return True
        self._refresh()
        return name in self._may_apply

    def touch(self, name: str) -> None:
        """Records a device's use in memory; written out when a device is first seen, else at most
        once a minute."""
        first = name not in self._used
        self._used[name] = _now()
        self._used_dirty = True
        if first or self._clock() - self._used_written >= USED_WRITE_SECONDS:
            self.flush()

    def flush(self) -> None:
        if not self._used_dirty:
            return
        self._used_written = self._clock()
        self._used_dirty = False
        try:
            self._refresh()
            merged = {**_read_json(self.index_dir / USED_FILE), **self._used}
            merged = {k: v for k, v in merged.items() if k in self._digests}  # revoked devices drop out
            write_atomic(self.index_dir / USED_FILE, json.dumps(merged, indent=2) + "\n")
        except (OSError, ConfigError):
            pass  # a last-used time is not worth failing a request over
