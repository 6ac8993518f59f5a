"""Safety on localhost: one JSON error shape, a loopback Host check, a CORS allow-list, a bearer token.

A web page in the user's browser can send requests to 127.0.0.1; these layers make sure it can
neither read the answers (CORS), nor reach us through a rebound DNS name (Host), nor act without
the token that only the user's own Obsidian has.
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import Awaitable, Callable

from aiohttp import web

from vask_server.errors import (
    ForbiddenHost,
    ForbiddenOrigin,
    MethodNotAllowed,
    NotFound,
    PayloadTooLarge,
    Unauthorized,
    VaskError,
    error_for_status,
)

log = logging.getLogger(__name__)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

ALLOWED_ORIGINS = frozenset({"app://obsidian.md", "capacitor://localhost"})
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})
AUTHENTICATED = web.RequestKey("authenticated", bool)
PUBLIC_ROUTES = frozenset({("GET", "/v1/health")})  # bare health only; details need the token

# Hints for aiohttp's own refusals, which carry none
_HINTS = {
    NotFound: "See GET /v1/openapi.json for the API.",
    MethodNotAllowed: "See GET /v1/openapi.json for the API.",
    PayloadTooLarge: "Send a smaller request body.",
}


def error_response(error: VaskError) -> web.Response:
    return web.json_response({"error": error.to_dict()}, status=error.status)


@web.middleware
async def errors_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        return await handler(request)
    except VaskError as exc:
        return error_response(exc)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        cls = error_for_status(exc.status)  # one of the documented codes, whatever aiohttp raised
        return error_response(cls(exc.reason, _HINTS.get(cls, "")))
    except Exception:
        log.exception("unhandled error on %s %s", request.method, request.path)
        return error_response(VaskError("Internal error.", "See the vask server log."))


def host_middleware(extra_hosts: frozenset[str] = frozenset()) -> Callable[..., Awaitable[web.StreamResponse]]:
    allowed = LOOPBACK_HOSTS | extra_hosts

    @web.middleware
    async def check_host(request: web.Request, handler: Handler) -> web.StreamResponse:
        host = request.headers.get("Host", "")
        name = host.rsplit(":", 1)[0] if not host.startswith("[") else host.split("]")[0] + "]"
        if name.lower() not in allowed:
            raise ForbiddenHost(
                f"Host {host!r} is not allowed.",
                "vask answers only requests addressed to 127.0.0.1 or localhost (DNS-rebinding protection).",
            )
        return await handler(request)

    return check_host


@web.middleware
async def cors_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    origin = request.headers.get("Origin")
    if request.method == "OPTIONS" and "Access-Control-Request-Method" in request.headers:
        if origin not in ALLOWED_ORIGINS:
            raise ForbiddenOrigin(
                f"Origin {origin!r} is not allowed.",
                f"vask answers cross-origin requests only from Obsidian ({', '.join(sorted(ALLOWED_ORIGINS))}).",
            )
        response = web.Response(status=204)
        response.headers.update(
            {
                "Access-Control-Allow-Origin": origin,
                "Access-Control-Allow-Methods": "GET, POST, OPTIONS",
                "Access-Control-Allow-Headers": "Authorization, Content-Type",
                "Access-Control-Max-Age": "600",
                "Vary": "Origin",
            }
        )
        return response
    return await handler(request)


async def add_cors_headers(request: web.Request, response: web.StreamResponse) -> None:
    """on_response_prepare: also reaches streaming responses, whose headers go out before the body."""
    origin = request.headers.get("Origin")
    if origin in ALLOWED_ORIGINS:
        response.headers["Access-Control-Allow-Origin"] = origin
        response.headers["Vary"] = "Origin"


def auth_middleware(token: str) -> Callable[..., Awaitable[web.StreamResponse]]:
    expected = token.encode()

    @web.middleware
    async def check_token(request: web.Request, handler: Handler) -> web.StreamResponse:
        header = request.headers.get("Authorization", "")
        scheme, _, given = header.partition(" ")
        presented = scheme.lower() == "bearer" and bool(given)
        valid = presented and hmac.compare_digest(given.strip().encode(), expected)
        request[AUTHENTICATED] = valid
        if valid:
            return await handler(request)
        if (request.method, request.path) in PUBLIC_ROUTES and not header:
            return await handler(request)
        raise Unauthorized(
            "Missing or wrong bearer token." if header else "This endpoint needs a bearer token.",
            "Send 'Authorization: Bearer <token>'; `vask token` prints it. Paste it into the plugin's settings.",
        )

    return check_token
