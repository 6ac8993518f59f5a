"""`vask serve`: bind (loopback unless told otherwise), serve until Ctrl+C, a request to terminate or the
starter's pipe closing, shut down cleanly: on Linux, macOS and Windows alike."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import functools
import logging
import os
import signal
import socket
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiohttp import web

from vask_server import __version__
from vask_server.adapters.pairing import Pairing, check_nonce, remove_pair_file, write_pair_file
from vask_server.adapters.tls import server_ssl_context
from vask_server.adapters.token import ensure_first_token, read_token
from vask_server.adapters.writer_lock import SERVE, WriterLock
from vask_server.config import Settings, is_loopback, loopback_only
from vask_server.errors import ConfigError
from vask_server.web.app import AsgiMount, create_app

log = logging.getLogger(__name__)


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
    """Bound, listening sockets for every address `host` names, as aiohttp's TCPSite would make, all on
    one port (`localhost` names both ::1 and 127.0.0.1 on macOS and some Linux: with port 0 each would
    otherwise get its own, and a client reaching the other address would find nothing there).
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
    addresses = list(dict.fromkeys((info[0], info[4]) for info in infos))
    tries = _FREE_PORT_TRIES if port == 0 and len(addresses) > 1 else 1
    for attempt in range(tries):
        try:
            return _bind_all(addresses)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE and attempt + 1 < tries:
                continue  # (the free port of the first address was taken on another: pick another)
            if exc.errno == errno.EADDRINUSE:
                raise ConfigError(f"Port {port} on {host} is already in use.", hint) from None
            reason = os.strerror(exc.errno) if exc.errno else str(exc)  # (not the message that repeats the address)
            raise ConfigError(
                f"Cannot listen on {host}:{port}: {reason}",
                "Pass --host (VASK_HOST) an address of this machine and --port (VASK_PORT) a port above 1023 "
                "(0 picks a free one).",
            ) from None
    raise AssertionError("unreachable")  # (the last try returns or raises)


_FREE_PORT_TRIES = 5


def _bind_all(addresses: Sequence[tuple[socket.AddressFamily, Any]]) -> list[socket.socket]:
    """One listening socket per address; the port the first one got (0: a free one) for all."""
    sockets: list[socket.socket] = []
    try:
        for family, address in addresses:
            if sockets:
                address = (address[0], sockets[0].getsockname()[1], *address[2:])
            sockets.append(socket.create_server(address, family=family, backlog=128))
    except OSError:
        for sock in sockets:
            sock.close()
        raise
    return sockets


@dataclass(frozen=True)
class Launch:
    """How a program that starts `vask serve` (the Obsidian plugin) learns its address and keeps it tied
    to itself: see adapters/pairing.py."""

    pair_file: Path | None = None
    pair_nonce: str = ""
    stop_with_stdin: bool = False  # stop when standard input closes: the starter is gone, even killed


def _pairing_token(settings: Settings) -> str:
    index_dir = settings.resolved_index_dir()
    ensure_first_token(index_dir)
    token = read_token(index_dir)
    if not token:
        raise ConfigError(
            "The `default` device's token was revoked, so there is none to pair with.",
            "Run `vask token` to make a new one (it is what the plugin on this machine uses), then start again.",
        )
    return token


def _watch_stdin(loop: asyncio.AbstractEventLoop, stop: asyncio.Event) -> None:
    """Sets `stop` when standard input reaches its end: the process that started this one and held the
    other end of the pipe has gone (a crash or a kill included, which no signal reports)."""

    def read() -> None:
        with contextlib.suppress(OSError, ValueError):
            while sys.stdin.buffer.read(4096):
                pass
        with contextlib.suppress(RuntimeError):  # (the loop closed first)
            loop.call_soon_threadsafe(stop.set)

    threading.Thread(target=read, name="vask-stdin", daemon=True).start()


def stop_on_signals(loop: asyncio.AbstractEventLoop, stop: asyncio.Event) -> Callable[[], None]:
    """Sets `stop` on Ctrl+C (SIGINT), a request to terminate (SIGTERM) and, on Windows, Ctrl+Break
    (SIGBREAK). Through the loop's own handlers where it has them (Unix); Windows' loops have none
    (NotImplementedError), so there through `signal.signal`, whose handler runs in the main thread
    and hands the stop to the loop. Returns what puts the previous handlers back."""
    signals = [signal.SIGINT, signal.SIGTERM]
    if hasattr(signal, "SIGBREAK"):  # (Windows only)
        signals.append(signal.SIGBREAK)
    undo: list[Callable[[], object]] = []

    def from_handler(_signum: int, _frame: object) -> None:
        loop.call_soon_threadsafe(stop.set)

    for sig in signals:
        try:
            loop.add_signal_handler(sig, stop.set)
            undo.append(functools.partial(loop.remove_signal_handler, sig))
            continue
        except NotImplementedError:
            pass
        except (RuntimeError, ValueError):  # (not the main thread: no handler can be set from here)
            log.debug("cannot handle signal %s here", sig)
            continue
        try:
            previous = signal.signal(sig, from_handler)
        except (OSError, RuntimeError, ValueError):
            log.debug("cannot handle signal %s here", sig)
            continue
        undo.append(functools.partial(signal.signal, sig, previous))

    def restore() -> None:
        for step in reversed(undo):
            with contextlib.suppress(OSError, RuntimeError, ValueError):
                step()

    return restore


async def serve(
    settings: Settings, *, watch: bool = True, launch: Launch | None = None, mounts: Sequence[AsgiMount] = ()
) -> None:
    launch = launch or Launch()
    if launch.pair_file is not None:
        settings, set_aside = loopback_only(settings)
        for note in set_aside:
            print(f"note: {note}", file=sys.stderr, flush=True)
    ssl_context = server_ssl_context(settings)  # (a bad certificate stops the start here)
    check_bind(settings, tls=ssl_context is not None)
    token = ""
    if launch.pair_file is not None:
        check_nonce(launch.pair_nonce)
        token = _pairing_token(settings)
    # One writer an index (adapters/writer_lock.py): taken before the port when the folder exists, so
    # that a second server started as the first was (same port) is told which server holds the index.
    lock = WriterLock(settings.resolved_index_dir(), SERVE)
    if lock.index_dir.is_dir():
        lock.acquire()
    try:
        sockets = listen(settings.host, settings.port)
    except BaseException:
        lock.release()
        raise
    try:
        lock.acquire()  # (a new folder: made once the port is ours, as before)
        app = create_app(settings, watch=watch, mounts=mounts)
        # Handlers are cancelled when their client disconnects: that is what stops a streamed answer.
        runner = web.AppRunner(app, handler_cancellation=True, access_log=None, shutdown_timeout=5.0)
        await runner.setup()
    except BaseException:
        for sock in sockets:
            sock.close()
        lock.release()
        raise
    for sock in sockets:
        await web.SockSite(runner, sock, ssl_context=ssl_context).start()
    port = runner.addresses[0][1] if runner.addresses else settings.port
    scheme = "https" if ssl_context else "http"
    shown = f"[{settings.host}]" if ":" in settings.host else settings.host
    url = f"{scheme}://{shown}:{port}"
    lock.announce(url, settings.tls_cert)
    print(f"vask {settings.vault}: listening on {url}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    restore_signals = stop_on_signals(loop, stop)
    if launch.stop_with_stdin:
        _watch_stdin(loop, stop)
    try:
        if launch.pair_file is not None:
            # Written once the port answers, so a reader never finds an address that refuses it.
            write_pair_file(launch.pair_file, Pairing(url, token, launch.pair_nonce, os.getpid(), __version__))
            print(f"paired: the address and token are in {launch.pair_file} (this user only)", flush=True)
        await stop.wait()
        print("shutting down", file=sys.stderr, flush=True)
    finally:
        if launch.pair_file is not None:
            remove_pair_file(launch.pair_file, launch.pair_nonce)
        try:
            await runner.cleanup()  # stops the watcher, cancels the sync worker, closes Ollama and streams
        finally:
            restore_signals()  # (after: a second Ctrl+C while shutting down changes nothing)
            lock.release()


def run_server(
    settings: Settings, *, watch: bool = True, launch: Launch | None = None, mounts: Sequence[AsgiMount] = ()
) -> int:
    """`mounts`: other doors this server carries (the MCP door's /mcp), given by the command line."""
    asyncio.run(serve(settings, watch=watch, launch=launch, mounts=mounts))
    return 0
