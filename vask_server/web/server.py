"""`vask serve`: bind (loopback unless told otherwise), serve until SIGINT/SIGTERM, shut down cleanly."""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import signal
import sys

from aiohttp import web

from vask_server.config import Settings
from vask_server.errors import ConfigError
from vask_server.web.app import create_app

log = logging.getLogger(__name__)


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(settings: Settings) -> None:
    if is_loopback(settings.host):
        return
    if not settings.allow_remote:
        raise ConfigError(
            f"Refusing to bind {settings.host}: anyone who can reach it could read your notes.",
            "Bind 127.0.0.1 (the default), or pass --allow-remote if you really mean it.",
        )
    log.warning("binding %s: your notes are reachable from the network (token required)", settings.host)


async def serve(settings: Settings, *, watch: bool = True) -> None:
    check_bind(settings)
    app = create_app(settings, watch=watch)
    # Handlers are cancelled when their client disconnects: that is what stops a streamed answer.
    runner = web.AppRunner(app, handler_cancellation=True, access_log=None, shutdown_timeout=5.0)
    await runner.setup()
    site = web.TCPSite(runner, settings.host, settings.port)
    await site.start()
    port = runner.addresses[0][1] if runner.addresses else settings.port
    print(f"vask {settings.vault}: listening on http://{settings.host}:{port}", flush=True)
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
