"""The aiohttp application, built by a factory: settings and adapters come in, nothing is read at import."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from aiohttp import web

from vask_server.adapters.gateway import ModelGateway
from vask_server.adapters.token import TokenRegistry, ensure_first_token
from vask_server.adapters.watcher import VaultWatcher
from vask_server.config import Settings
from vask_server.core.ratelimit import FailureLimiter
from vask_server.services.context import build_services
from vask_server.services.options import file_types
from vask_server.services.sync.live import LiveIndex
from vask_server.web.asgi import Receive, Scope, Send, answer_with
from vask_server.web.keys import LIVE, SERVICES, TOKENS
from vask_server.web.middleware import (
    DEVICE,
    add_cors_headers,
    allowed_names,
    auth_middleware,
    check_origin,
    cors_middleware,
    errors_middleware,
    host_middleware,
)
from vask_server.web.proposal_routes import routes as proposal_routes
from vask_server.web.routes import routes

if TYPE_CHECKING:
    from vask_server.services.context import QueryServices

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 1_000_000


class AsgiMount(Protocol):
    """Another door served by this app at `path`, speaking ASGI (the MCP door's Streamable HTTP): behind
    the same middleware (errors, Host, token) and the Origin check, given the app's services once they
    are built, closed with the app. The scope it is called with says which device's token came
    (`vask.device`)."""

    path: str

    def attach(self, services: QueryServices) -> None: ...

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None: ...

    async def close(self) -> None: ...


def create_app(
    settings: Settings,
    *,
    gateway: ModelGateway | None = None,
    watch: bool = True,
    token: str | None = None,
    limiter: FailureLimiter | None = None,
    mounts: Sequence[AsgiMount] = (),
) -> web.Application:
    """`token` (tests): the `default` device's token instead of the index folder's `token` file;
    the other devices (`vask token add`) are read from the index folder either way."""
    settings.require_vault()
    index_dir = settings.resolved_index_dir()
    if token is None:
        ensure_first_token(index_dir)
    tokens = TokenRegistry(index_dir, fixed=token)
    extra_hosts = {*settings.allowed_hosts, settings.host}  # (the bound address: loopback or allowed remote)
    wildcard = settings.allow_remote and settings.host in ("0.0.0.0", "::", "[::]")
    app = web.Application(
        client_max_size=MAX_BODY_BYTES,
        middlewares=[
            errors_middleware,
            host_middleware(frozenset(extra_hosts), any_address=wildcard),
            cors_middleware,
            auth_middleware(tokens, limiter),
        ],
    )
    app.on_response_prepare.append(add_cors_headers)
    app.add_routes(routes)
    app.add_routes(proposal_routes)
    app[TOKENS] = tokens
    names = allowed_names(frozenset(extra_hosts))
    for mount in mounts:
        app.router.add_route("*", mount.path, _mounted(mount, names, wildcard))

    async def services_ctx(app: web.Application) -> AsyncIterator[None]:
        services = await build_services(settings, gateway=gateway)
        app[SERVICES] = services
        live = LiveIndex(services, debounce=settings.debounce_ms / 1000)
        app[LIVE] = live
        live.start()  # the first sync runs in the background: the server answers at once
        for mount in mounts:
            mount.attach(services)
        watcher = VaultWatcher(services.vault_root, live.notify, file_types(settings)) if watch else None
        if watcher is not None:
            watcher.start()
        try:
            yield
        finally:
            for mount in mounts:
                await mount.close()
            if watcher is not None:
                watcher.stop()
            await live.stop()
            await services.close()
            tokens.flush()  # the last-used times not yet written

    app.cleanup_ctx.append(services_ctx)
    return app


def _mounted(mount: AsgiMount, names: frozenset[str], any_address: bool) -> Handler:
    async def handle(request: web.Request) -> web.StreamResponse:
        check_origin(request.headers.get("Origin"), names, any_address=any_address)
        return await answer_with(mount, request, max_body=MAX_BODY_BYTES, scope_extra={"vask.device": request[DEVICE]})

    return handle


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
