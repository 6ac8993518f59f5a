"""The pair file: how `vask serve --pair-file PATH --pair-nonce N` tells the program that started it (the
Obsidian plugin) where it listens and which token to send, without anyone copying a token.

The file is JSON, written whole (a reader sees no half file) and readable by this user only (0600, in
a folder made 0700 when vask makes it). It carries the nonce the starter chose, so that a file left by
an earlier run (a crash leaves one) is not taken for this run's; the starter also checks the address
with the token before it trusts them. The server removes the file when it stops, if it is still its own.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from dataclasses import asdict, dataclass
from pathlib import Path

from vask_server.adapters.atomic import write_atomic
from vask_server.errors import ConfigError

# What a nonce may look like: enough characters to be unguessable, none a shell or JSON would read otherwise
NONCE_RE = re.compile(r"[A-Za-z0-9_-]{16,128}")
PAIR_VERSION = 1


@dataclass(frozen=True)
class Pairing:
    url: str  # where the server answers, e.g. http://127.0.0.1:53117
    token: str  # the `default` device's token
    nonce: str  # the starter's, from --pair-nonce
    pid: int  # the server's process
    version: str  # vask's

    def to_json(self) -> str:
        return json.dumps({"pair_version": PAIR_VERSION, **asdict(self)}, indent=2) + "\n"


def check_nonce(nonce: str) -> str:
    if not NONCE_RE.fullmatch(nonce):
        raise ConfigError(
            "--pair-nonce must be 16 to 128 letters, digits, '-' or '_'.",
            "The Obsidian plugin chooses it; run `vask serve` without --pair-file to start it yourself.",
        )
    return nonce


def write_pair_file(path: Path, pairing: Pairing) -> None:
    """Writes the pair file (0600), making its folder (0700) when it is missing."""
    folder = path.parent
    try:
        if not folder.is_dir():
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        write_atomic(path, pairing.to_json())
    except OSError as exc:
        raise ConfigError(
            f"Cannot write the pair file {path}: {exc.strerror or exc}",
            "Pass --pair-file a path in a folder this user can write.",
        ) from None


def remove_pair_file(path: Path, nonce: str) -> None:
    """Removes the pair file if it is still this run's (a newer run may have written its own since)."""
    with contextlib.suppress(OSError, ValueError):
        if json.loads(path.read_text("utf-8")).get("nonce") == nonce:
            os.unlink(path)
