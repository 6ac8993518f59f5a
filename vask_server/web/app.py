"""The aiohttp application, built by a factory: settings and adapters come in, nothing is read at import."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

from aiohttp import web

from vask_server.adapters.ollama import OllamaGateway
from vask_server.adapters.token import ensure_token
from vask_server.adapters.watcher import VaultWatcher
from vask_server.config import Settings
from vask_server.services.context import build_services
from vask_server.services.live import LiveIndex
from vask_server.web.keys import LIVE, SERVICES
from vask_server.web.middleware import (
    add_cors_headers,
    auth_middleware,
    cors_middleware,
    errors_middleware,
    host_middleware,
)
from vask_server.web.routes import routes

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 1_000_000


def create_app(
    settings: Settings,
    *,
    gateway: OllamaGateway | None = None,
    watch: bool = True,
    token: str | None = None,
) -> web.Application:
    settings.require_vault()
    token = token or ensure_token(settings.resolved_index_dir())
    extra_hosts = frozenset({settings.host.lower()}) if settings.allow_remote else frozenset()
    app = web.Application(
        client_max_size=MAX_BODY_BYTES,
        middlewares=[errors_middleware, host_middleware(extra_hosts), cors_middleware, auth_middleware(token)],
    )
    app.on_response_prepare.append(add_cors_headers)
    app.add_routes(routes)

    async def services_ctx(app: web.Application) -> AsyncIterator[None]:
        services = await build_services(settings, gateway=gateway)
        app[SERVICES] = services
        live = LiveIndex(services, debounce=settings.debounce_ms / 1000)
        app[LIVE] = live
        live.start()  # the first sync runs in the background: the server answers at once
        watcher = VaultWatcher(services.vault_root, live.notify) if watch else None
        if watcher is not None:
            watcher.start()
        try:
            yield
        finally:
            if watcher is not None:
                watcher.stop()
            await live.stop()
            await services.gateway.close()

    app.cleanup_ctx.append(services_ctx)
    return app
