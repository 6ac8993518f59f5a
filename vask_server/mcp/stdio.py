"""`vask mcp`: the MCP server over standard input and output, as desktop agents launch their tools (one
process a conversation). It answers `initialize` at once and opens the index read-only in the background
(the database library alone takes seconds to import); a tool called before that is ready waits for it. It
never syncs, watches, embeds a note or writes the index: a `vask serve` may be writing it meanwhile.

Standard output carries the protocol alone: everything else (logs, warnings) goes to standard error.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from vask_server.config import Settings
from vask_server.mcp.server import VaskMCPServer

if TYPE_CHECKING:
    from vask_server.services.context import QueryServices

log = logging.getLogger(__name__)


class ReaderServices:
    """The query services over the index as it stands, opened once, when first wanted or as soon as the
    client has said it is initialized, whichever comes first."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._task: asyncio.Task[QueryServices] | None = None

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._open(), name="vask-mcp-open")

    async def get(self) -> QueryServices:
        self.start()
        assert self._task is not None
        return await asyncio.shield(self._task)

    async def _open(self) -> QueryServices:
        # (the import, seconds of it, in a thread: the protocol goes on being answered meanwhile)
        await asyncio.to_thread(_import_services)
        from vask_server.services.context import open_reader_services

        return await open_reader_services(self.settings)

    async def close(self) -> None:
        if self._task is None:
            return
        if not self._task.done():
            self._task.cancel()
        try:
            services = await self._task
        except BaseException:  # (cancelled, or it never opened: nothing to close)
            return
        await services.close()


def _import_services() -> None:
    from vask_server.adapters.memory import set_process_memory_policy

    set_process_memory_policy()  # (before the database's threads start: they read it once)
    import vask_server.mcp.calls  # noqa: F401  (and with it the services and the database library)


# What a client sends first: the handshake (up to 2025-11-25), or the discovery of 2026-07-28
_GREETINGS = frozenset({"initialize", "notifications/initialized", "server/discover"})


def build_stdio_server(settings: Settings) -> tuple[VaskMCPServer, ReaderServices]:
    reader = ReaderServices(settings)
    server = VaskMCPServer(reader.get, top_k=settings.top_k)

    async def open_once_greeted(ctx: Any, call_next: Any) -> Any:
        result = await call_next(ctx)
        if ctx.method in _GREETINGS:  # (answered first: the client's handshake is not kept waiting)
            reader.start()
        return result

    server.middleware.append(open_once_greeted)
    return server, reader


async def serve_stdio(settings: Settings) -> None:
    settings.require_vault()  # (a wrong vault is said before any message is read)
    server, reader = build_stdio_server(settings)
    try:
        await server.run_stdio_async()
    finally:
        await reader.close()


def run_stdio(settings: Settings) -> int:
    import anyio

    anyio.run(serve_stdio, settings)
    return 0
