"""Asking the `vask serve` that holds an index (`writer_lock.Holder`) to do something, over its HTTP
API and with the `default` device's token: what `vask pause` and `vask resume` do while a server
runs, instead of writing `index.json` beside it."""

from __future__ import annotations

import ssl
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from vask_server.adapters.token import read_token
from vask_server.adapters.writer_lock import Holder
from vask_server.errors import VaskError

# A server bound to every address is reached on this machine's own
_WILDCARDS = {"0.0.0.0": "127.0.0.1", "[::]": "[::1]"}


def local_url(url: str) -> str:
    """The server's address as this machine reaches it (a wildcard bind is asked on loopback)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    shown = f"[{host}]" if ":" in host else host
    local = _WILDCARDS.get(shown, shown)
    return urlunsplit(parts._replace(netloc=f"{local}:{parts.port}" if parts.port else local))


def _verify(holder: Holder) -> ssl.SSLContext | bool:
    """HTTPS to the server is checked against its own certificate (pinned: no name to match on
    loopback, and a self-signed one has no authority above it)."""
    if not holder.tls_cert:
        return True
    context = ssl.create_default_context(cafile=holder.tls_cert)
    context.check_hostname = False
    context.verify_flags |= ssl.VERIFY_X509_PARTIAL_CHAIN  # (the leaf itself is the trust anchor)
    return context


def post(holder: Holder, index_dir: Path, path: str, *, timeout: float = 10.0) -> Any:
    """POSTs to `path` of the server that holds `index_dir`; its JSON answer. A server that cannot be
    reached, or refuses, is a `VaskError` that says what to do."""
    who = holder.describe()
    if not holder.url:
        raise VaskError(f"{who} is starting and does not listen yet.", "Try again in a moment.")
    token = read_token(index_dir)
    if not token:
        raise VaskError(
            f"{who} holds this index, and the `default` device's token it would take was revoked.",
            "Run `vask token` to make a new one, or use the Obsidian plugin's command.",
        )
    url = local_url(holder.url) + path
    headers = {"Authorization": f"Bearer {token}"}
    try:
        # (this machine's own server: never through a proxy the environment names)
        response = httpx.post(url, headers=headers, timeout=timeout, verify=_verify(holder), trust_env=False)
    except (httpx.HTTPError, ssl.SSLError, OSError) as exc:
        raise VaskError(
            f"Could not reach {who} at {url}: {exc or type(exc).__name__}.",
            "Check that it is still running (`vask status`), then try again.",
        ) from None
    if response.status_code != 200:
        try:
            error = response.json()["error"]
            detail = f"{error['message']} ({error['code']})"
        except (ValueError, KeyError, TypeError):
            detail = f"HTTP {response.status_code}"
        raise VaskError(f"{who} refused {path}: {detail}.", "Check its log, or use the Obsidian plugin's command.")
    return response.json()
