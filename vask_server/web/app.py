"""The aiohttp application, built by a factory: settings and adapters come in, nothing is read at import."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

from aiohttp import web

from vask_server.adapters.gateway import ModelGateway
from vask_server.adapters.token import TokenRegistry, ensure_first_token
from vask_server.adapters.watcher import VaultWatcher
from vask_server.config import Settings
from vask_server.core.ratelimit import FailureLimiter
from vask_server.services.context import build_services
from vask_server.services.live import LiveIndex
from vask_server.services.options import file_types
from vask_server.web.keys import LIVE, SERVICES, TOKENS
from vask_server.web.middleware import (
    add_cors_headers,
    auth_middleware,
    cors_middleware,
    errors_middleware,
    host_middleware,
)
from vask_server.web.proposal_routes import routes as proposal_routes
from vask_server.web.routes import routes

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 1_000_000


def create_app(
    settings: Settings,
    *,
    gateway: ModelGateway | None = None,
    watch: bool = True,
    token: str | None = None,
    limiter: FailureLimiter | None = None,
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

    async def services_ctx(app: web.Application) -> AsyncIterator[None]:
        services = await build_services(settings, gateway=gateway)
        app[SERVICES] = services
        live = LiveIndex(services, debounce=settings.debounce_ms / 1000)
        app[LIVE] = live
        live.start()  # the first sync runs in the background: the server answers at once
        watcher = VaultWatcher(services.vault_root, live.notify, file_types(settings)) if watch else None
        if watcher is not None:
            watcher.start()
        try:
            yield
        finally:
            if watcher is not None:
                watcher.stop()
            await live.stop()
            await services.close()
            tokens.flush()  # the last-used times not yet written

    app.cleanup_ctx.append(services_ctx)
    return app
