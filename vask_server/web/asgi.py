"""An ASGI application answering one aiohttp request: how `vask serve` (aiohttp) carries a door whose
library speaks ASGI (the MCP SDK's Streamable HTTP transport), behind the same middleware as the rest of
the API (errors, Host, token).

Written here rather than taken from a library: aiohttp-asgi, the one maintained adapter, answers
`receive()` after the body with empty body messages instead of waiting for the client to leave, and an
SSE stream (the MCP transport's) waits on `receive()` for just that; it also keeps only the last of
repeated response headers. This one follows the ASGI HTTP spec: the body as it arrives, then
`http.disconnect` once the client has gone; the response streamed as the application sends it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from aiohttp import web

from vask_server.errors import PayloadTooLarge, VaskError

log = logging.getLogger(__name__)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
AsgiApp = Callable[[Scope, Receive, Send], Awaitable[None]]

_GONE_POLL_SECONDS = 0.5  # how often a request whose body is read checks that its client is still there


def http_scope(request: web.Request, *, extra: dict[str, Any] | None = None) -> Scope:
    peer = request.transport.get_extra_info("peername") if request.transport else None
    own = request.transport.get_extra_info("sockname") if request.transport else None
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": f"{request.version.major}.{request.version.minor}",
        "method": request.method,
        "scheme": request.scheme,
        "path": request.path,
        "raw_path": request.raw_path.split("?", 1)[0].encode("latin-1"),
        "query_string": request.query_string.encode("latin-1"),
        "root_path": "",
        "headers": [(name.lower(), value) for name, value in request.raw_headers],
        "client": tuple(peer[:2]) if isinstance(peer, tuple) else None,
        "server": tuple(own[:2]) if isinstance(own, tuple) else None,
        "state": {},
        **(extra or {}),
    }


async def answer_with(
    app: AsgiApp, request: web.Request, *, max_body: int, scope_extra: dict[str, Any] | None = None
) -> web.StreamResponse:
    """Runs `app` for `request`; the response it sends, streamed. A body over `max_body` bytes is refused
    (413) before the application sees it, whether it says its length or is sent in chunks."""
    if request.content_length is not None and request.content_length > max_body:
        raise PayloadTooLarge(f"The request body is over {max_body:,} bytes.", "Send a smaller request body.")
    exchange = _Exchange(request, max_body)
    # Run beside the handler, not in it: aiohttp cancels a handler whose client leaves, where an ASGI
    # application expects to hear `http.disconnect` and end by itself (the MCP transport treats a
    # cancelled request as one that failed, and drops the session it had just opened).
    task = asyncio.ensure_future(app(http_scope(request, extra=scope_extra), exchange.receive, exchange.send))
    try:
        await asyncio.shield(task)
    except asyncio.CancelledError:
        exchange.gone.set()
        _let_finish(task)
        raise
    except VaskError:
        if exchange.response is not None and exchange.response.prepared:
            log.warning("an ASGI application failed after its answer began")
            return exchange.response
        raise
    except Exception:
        log.exception("an ASGI application failed on %s %s", request.method, request.path)
        if exchange.response is not None and exchange.response.prepared:
            return exchange.response  # (its client sees the stream end early)
        raise VaskError("Internal error.", "See the vask server log.") from None
    finally:
        exchange.gone.set()
    return await exchange.finished()


class _Exchange:
    """One request's `receive` and `send`, as the ASGI HTTP spec has them."""

    def __init__(self, request: web.Request, max_body: int) -> None:
        self.request = request
        self.max_body = max_body
        self.read = 0
        self.body_done = False
        self.gone = asyncio.Event()
        self.response: web.StreamResponse | None = None
        self.ended = False

    async def receive(self) -> Message:
        if not self.body_done:
            chunk = await self.request.content.readany()
            self.read += len(chunk)
            if self.read > self.max_body:
                self.body_done = True
                raise PayloadTooLarge(f"The request body is over {self.max_body:,} bytes.", "Send a smaller body.")
            self.body_done = not chunk or self.request.content.at_eof()
            return {"type": "http.request", "body": chunk, "more_body": not self.body_done}
        while not self.gone.is_set():
            transport = self.request.transport
            if transport is None or transport.is_closing():
                break
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.gone.wait(), _GONE_POLL_SECONDS)
        return {"type": "http.disconnect"}

    async def send(self, message: Message) -> None:
        kind = message["type"]
        if kind == "http.response.start":
            if self.response is not None:
                raise RuntimeError("http.response.start sent twice")
            response = web.StreamResponse(status=int(message["status"]))
            for name, value in message.get("headers", ()):
                response.headers.add(_text(name), _text(value))
            self.response = response
            return
        if kind != "http.response.body":
            return  # (extensions vask does not offer: ignored, as a server may)
        if self.response is None:
            raise RuntimeError("http.response.body before http.response.start")
        if self.ended:
            return
        try:
            if not self.response.prepared:
                await self.response.prepare(self.request)
            body = message.get("body", b"")
            if body:
                await self.response.write(body)
            if not message.get("more_body", False):
                await self.response.write_eof()
                self.ended = True
        except (ConnectionResetError, ConnectionError):
            self.gone.set()
            raise OSError("the client went away") from None

    async def finished(self) -> web.StreamResponse:
        if self.response is None:
            raise VaskError("Internal error: the application sent no answer.", "See the vask server log.")
        if not self.response.prepared:
            await self.response.prepare(self.request)
        if not self.ended:
            with contextlib.suppress(ConnectionError):
                await self.response.write_eof()
        return self.response


_FINISHING: set[asyncio.Future[None]] = set()  # (the event loop keeps only weak references to tasks)
FINISH_SECONDS = 10.0  # an application told its client left is cancelled after this long


def _let_finish(task: asyncio.Future[None]) -> None:
    """An application whose client has left: given time to end by itself, then cancelled."""
    _FINISHING.add(task)
    timer = asyncio.get_running_loop().call_later(FINISH_SECONDS, task.cancel)

    def ended(done: asyncio.Future[None]) -> None:
        timer.cancel()
        _FINISHING.discard(done)
        if not done.cancelled() and done.exception() is not None:
            log.debug("an ASGI application ended with %r after its client left", done.exception())

    task.add_done_callback(ended)


def _text(value: bytes | str) -> str:
    return value.decode("latin-1") if isinstance(value, bytes) else value
