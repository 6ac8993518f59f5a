"""`vask serve`: bind (loopback unless told otherwise), serve until SIGINT/SIGTERM, shut down cleanly."""

from __future__ import annotations

import asyncio
import errno
import ipaddress
import logging
import os
import signal
import socket
import sys

from aiohttp import web

from vask_server.config import Settings
from vask_server.errors import ConfigError
from vask_server.web.app import create_app
from vask_server.web.tls import server_ssl_context

log = logging.getLogger(__name__)


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(settings: Settings, *, tls: bool = False) -> None:
    if is_loopback(settings.host):
        return
    if not settings.allow_remote:
        raise ConfigError(
            f"Refusing to bind {settings.host}: anyone who can reach it could read your notes.",
            "Bind 127.0.0.1 (the default), or pass --allow-remote if you really mean it "
            "(with --tls-cert and --tls-key, so that tokens and notes are encrypted on the way).",
        )
    if tls:
        log.warning("binding %s over https: your notes are reachable from the network (token required)", settings.host)
        return
    banner = (
        f"WARNING: binding {settings.host} WITHOUT TLS. Tokens, questions and the passages of your notes "
        "cross the network in plain text: anyone on it can read them and reuse a token. Pass --tls-cert "
        "and --tls-key (README: 'One server, several devices'), or put vask behind an https proxy such "
        "as Tailscale serve and bind 127.0.0.1."
    )
    print(banner, file=sys.stderr, flush=True)
    log.warning("binding %s without TLS: tokens and notes travel in plain text", settings.host)


def listen(host: str, port: int) -> list[socket.socket]:
    """Bound, listening sockets for every address `host` names, as aiohttp's TCPSite would make.
    Bound before the app starts, so a port in use stops `vask serve` before it syncs or watches."""
    hint = (
        f"Another program (perhaps another `vask serve`) is using port {port}: stop it, or pass --port "
        "(VASK_PORT) another port; 0 picks a free one."
    )
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise ConfigError(
            f"Cannot listen on {host}: {exc.strerror}", "Pass --host (VASK_HOST) an address of this machine."
        ) from None
    sockets: list[socket.socket] = []
    try:
        for family, address in dict.fromkeys((info[0], info[4]) for info in infos):
            sockets.append(socket.create_server(address, family=family, backlog=128))
    except OSError as exc:
        for sock in sockets:
            sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise ConfigError(f"Port {port} on {host} is already in use.", hint) from None
        reason = os.strerror(exc.errno) if exc.errno else str(exc)  # (not the message that repeats the address)
        raise ConfigError(
            f"Cannot listen on {host}:{port}: {reason}",
            "Pass --host (VASK_HOST) an address of this machine and --port (VASK_PORT) a port above 1023 "
            "(0 picks a free one).",
        ) from None
    return sockets


async def serve(settings: Settings, *, watch: bool = True) -> None:
    ssl_context = server_ssl_context(settings)  # (a bad certificate stops the start here)
    check_bind(settings, tls=ssl_context is not None)
    sockets = listen(settings.host, settings.port)
    try:
        app = create_app(settings, watch=watch)
        # Handlers are cancelled when their client disconnects: that is what stops a streamed answer.
        runner = web.AppRunner(app, handler_cancellation=True, access_log=None, shutdown_timeout=5.0)
        await runner.setup()
    except BaseException:
        for sock in sockets:
            sock.close()
        raise
    for sock in sockets:
        await web.SockSite(runner, sock, ssl_context=ssl_context).start()
    port = runner.addresses[0][1] if runner.addresses else settings.port
    scheme = "https" if ssl_context else "http"
    shown = f"[{settings.host}]" if ":" in settings.host else settings.host
    print(f"vask {settings.vault}: listening on {scheme}://{shown}:{port}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
        print("shutting down", file=sys.stderr, flush=True)
    finally:
        await runner.cleanup()  # stops the watcher, cancels the sync worker, closes Ollama and streams


def run_server(settings: Settings, *, watch: bool = True) -> int:
    asyncio.run(serve(settings, watch=watch))
    return 0
