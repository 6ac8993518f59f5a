"""The MCP door over Streamable HTTP, at `/mcp` on `vask serve`: the SDK's session manager, an ASGI
application the web app mounts (web/app.AsgiMount) behind its own token check, Host check and Origin
check. Nothing of the SDK is imported until the first request to /mcp comes (in a thread: the server
goes on answering meanwhile), so a server nobody reaches over MCP starts as quickly and holds no more
memory than before.

Each MCP session belongs to the device whose token opened it: another device's token cannot use it.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vask_server.services.context import QueryServices

# ASGI's three (the web app calls this as an ASGI application: web/app.AsgiMount)
Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

log = logging.getLogger(__name__)

MCP_PATH = "/mcp"
MAX_SESSIONS = 64  # MCP sessions open at once; an agent that opens more is told to wait (503)
SESSION_IDLE_SECONDS = 30 * 60
MAX_BODY_BYTES = 1_000_000  # (as the rest of the API)


class McpMount:
    """`/mcp`: started on its first request, stopped with the app."""

    path = MCP_PATH

    def __init__(self) -> None:
        self._services: QueryServices | None = None
        self._manager: Any = None
        self._runner: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._starting = asyncio.Lock()

    def attach(self, services: QueryServices) -> None:
        self._services = services

    async def _service(self) -> QueryServices:
        if self._services is None:
            from vask_server.errors import NotIndexed

            raise NotIndexed("The server is still starting.", "Try again in a moment.")
        return self._services

    async def _start(self) -> Any:
        async with self._starting:
            if self._manager is not None:
                return self._manager
            server_module = await asyncio.to_thread(importlib.import_module, "vask_server.mcp.server")
            security = importlib.import_module("mcp.server.transport_security")
            settings = (await self._service()).settings
            server = server_module.VaskMCPServer(self._service, top_k=settings.top_k)
            # (its Starlette app is not served: the session manager it makes is, through aiohttp. vask's own
            # Host and Origin checks ran before, knowing VASK_ALLOWED_HOSTS and the bound address: the
            # SDK's, which know only loopback, are off)
            server.streamable_http_app(
                max_sessions=MAX_SESSIONS,
                session_idle_timeout=SESSION_IDLE_SECONDS,
                max_request_body_size=MAX_BODY_BYTES,
                transport_security=security.TransportSecuritySettings(enable_dns_rebinding_protection=False),
            )
            manager = server.session_manager
            ready = asyncio.Event()

            async def run() -> None:
                async with manager.run():
                    ready.set()
                    await self._stop.wait()

            self._runner = asyncio.create_task(run(), name="vask-mcp-http")
            waiting = asyncio.create_task(ready.wait())
            await asyncio.wait({waiting, self._runner}, return_when=asyncio.FIRST_COMPLETED)
            if not ready.is_set():
                waiting.cancel()
                await self._runner  # (raises what stopped it)
            self._manager = manager
            log.info("the MCP endpoint %s is ready", MCP_PATH)
            return manager

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        manager = self._manager or await self._start()
        device = scope.get("vask.device")
        if device:
            from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
            from mcp.server.auth.provider import AccessToken

            # (the session's owner: the SDK refuses its session to any other device's token)
            scope["user"] = AuthenticatedUser(AccessToken(token="", client_id=str(device), scopes=[]))
        await manager.handle_request(scope, receive, send)

    async def close(self) -> None:
        self._stop.set()
        if self._runner is not None:
            try:
                await asyncio.wait_for(self._runner, 5)
            except (TimeoutError, asyncio.CancelledError):
                self._runner.cancel()
            except Exception:
                log.exception("the MCP endpoint did not stop cleanly")
