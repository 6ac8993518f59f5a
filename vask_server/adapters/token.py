"""The bearer token that guards the HTTP API: made once, kept with mode 0600 beside the index."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from vask_server.adapters.folders import ensure_index_dir

TOKEN_FILE = "token"


def token_path(index_dir: Path) -> Path:
    return index_dir / TOKEN_FILE


def read_token(index_dir: Path) -> str | None:
    path = token_path(index_dir)
    try:
        token = path.read_text("utf-8").strip()
    except FileNotFoundError:
        return None
    return token or None


def ensure_token(index_dir: Path) -> str:
    """Returns the stored token, creating it (readable by this user only) on first use."""
    ensure_index_dir(index_dir)
    existing = read_token(index_dir)
    if existing:
        os.chmod(token_path(index_dir), 0o600)
        return existing
    token = secrets.token_urlsafe(32)
    path = token_path(index_dir)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(token + "\n")
    os.chmod(path, 0o600)
    return token
