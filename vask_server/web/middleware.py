"""Safety on localhost and on a network: one JSON error shape, a Host check, a CORS allow-list,
per-device bearer tokens with failed attempts limited per address.

A web page in the user's browser can send requests to 127.0.0.1 (or to the server's LAN address);
these layers make sure it can neither read the answers (CORS), nor reach us through a rebound DNS
name (Host), nor act without a token that only the user's own devices have.
"""

from __future__ import annotations

import ipaddress
import logging
import math
import time
from collections.abc import Awaitable, Callable

from aiohttp import web

from vask_server.adapters.token import TokenRegistry
from vask_server.core.ratelimit import FailureLimiter
from vask_server.errors import (
    ForbiddenHost,
    ForbiddenOrigin,
    MethodNotAllowed,
    NotFound,
    PayloadTooLarge,
    TooManyAttempts,
    Unauthorized,
    VaskError,
    error_for_status,
)

log = logging.getLogger(__name__)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

# Obsidian desktop, Obsidian mobile on iOS, Obsidian mobile on Android
ALLOWED_ORIGINS = frozenset({"app://obsidian.md", "capacitor://localhost", "http://localhost"})
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})
AUTHENTICATED = web.RequestKey("authenticated", bool)
DEVICE = web.RequestKey("device", str)
PUBLIC_ROUTES = frozenset({("GET", "/v1/health")})  # bare health only; details need the token

# Hints for aiohttp's own refusals, which carry none
_HINTS = {
    NotFound: "See GET /v1/openapi.json for the API.",
    MethodNotAllowed: "See GET /v1/openapi.json for the API.",
    PayloadTooLarge: "Send a smaller request body.",
}


def error_response(error: VaskError) -> web.Response:
    response = web.json_response({"error": error.to_dict()}, status=error.status)
    if isinstance(error, TooManyAttempts):
        response.headers["Retry-After"] = str(max(1, math.ceil(error.retry_after)))
    return response


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


def host_name(header: str) -> str:
    """The name in a Host header, without its port, lower-case and without a final dot; an IP address
    in its one short form: `[::1]:8765` and `[0:0::1]` -> `[::1]`, `LocalHost.:1` -> `localhost`."""
    if header.startswith("["):
        name = header.split("]")[0].lower() + "]"
    else:
        name = header.rsplit(":", 1)[0].lower() if header.count(":") == 1 else header.lower()
    return _canonical(name)


def _canonical(name: str) -> str:
    """`localhost.` -> `localhost`; an IP literal in its compressed form, an IPv6 one in brackets."""
    try:
        address = ipaddress.ip_address(name.strip("[]"))
    except ValueError:
        return name.rstrip(".")
    return f"[{address.compressed}]" if address.version == 6 else address.compressed


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name.strip("[]"))
    except ValueError:
        return False
    return True


def host_middleware(
    extra_hosts: frozenset[str] = frozenset(), *, any_address: bool = False
) -> Callable[..., Awaitable[web.StreamResponse]]:
    """`extra_hosts`: the bound address and the names in VASK_ALLOWED_HOSTS. `any_address` (bound to
    0.0.0.0 or ::, so the address clients use is not known): any IP literal too. DNS rebinding needs
    a name the attacker controls; a browser sends an IP literal only for a page at that very address.
    localhost, 127.0.0.1 and ::1 are the same machine by any of the forms a client writes them in."""
    allowed = allowed_names(extra_hosts)

    @web.middleware
    async def check_host(request: web.Request, handler: Handler) -> web.StreamResponse:
        host = request.headers.get("Host", "")
        name = host_name(host)
        if name not in allowed and not (any_address and _is_ip(name)):
            raise ForbiddenHost(
                f"Host {host!r} is not allowed.",
                "vask answers only requests addressed to 127.0.0.1, [::1], localhost, the address it binds or a "
                "name in VASK_ALLOWED_HOSTS (--allowed-hosts) (DNS-rebinding protection).",
            )
        return await handler(request)

    return check_host


def allowed_names(extra_hosts: frozenset[str] = frozenset()) -> frozenset[str]:
    """The names a request may be addressed to: loopback in its forms, and `extra_hosts`."""
    return frozenset(_canonical(name.lower()) for name in LOOPBACK_HOSTS | extra_hosts)


def check_origin(origin: str | None, allowed: frozenset[str], *, any_address: bool = False) -> None:
    """The Origin check the MCP specification asks of its HTTP endpoint (against DNS rebinding and pages
    of other sites): no Origin (an agent, a command), Obsidian's, or a page of this very server (a name
    the Host check allows, any scheme and port) may call; any other page is refused (403)."""
    if origin is None or origin in ALLOWED_ORIGINS:
        return
    scheme, _, rest = origin.partition("://")
    name = host_name(rest.split("/", 1)[0]) if scheme in ("http", "https") and rest else ""
    if name and (name in allowed or (any_address and _is_ip(name))):
        return
    raise ForbiddenOrigin(
        f"Origin {origin[:200]!r} is not allowed here.",
        "vask's MCP endpoint answers agents (which send no Origin), Obsidian, and pages served from this "
        "machine's own addresses; a page of another site may not call it (DNS-rebinding protection).",
    )


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
                "Access-Control-Allow-Headers": "Authorization, Content-Type, Accept",
                "Access-Control-Max-Age": "600",
                "Vary": "Origin",
            }
        )
        if request.headers.get("Access-Control-Request-Private-Network") == "true":
            # Chromium asks before a page reaches a private address (the desktop app's server on the LAN)
            response.headers["Access-Control-Allow-Private-Network"] = "true"
        return response
    return await handler(request)


async def add_cors_headers(request: web.Request, response: web.StreamResponse) -> None:
    """on_response_prepare: also reaches streaming responses, whose headers go out before the body."""
    origin = request.headers.get("Origin")
    if origin in ALLOWED_ORIGINS:
        response.headers["Access-Control-Allow-Origin"] = origin
        response.headers["Vary"] = "Origin"


TOKEN_HINT = (
    "Send 'Authorization: Bearer <token>'. On the server's machine, `vask token` prints the default device's "
    "token and `vask token add NAME` makes one for another device; paste it into the plugin's settings."
)


def auth_middleware(
    tokens: TokenRegistry, limiter: FailureLimiter | None = None
) -> Callable[..., Awaitable[web.StreamResponse]]:
    limiter = limiter or FailureLimiter()

    @web.middleware
    async def check_token(request: web.Request, handler: Handler) -> web.StreamResponse:
        address = request.remote or "unknown"
        now = time.monotonic()
        wait = limiter.wait(address, now)
        if wait > 0:
            # Also refuses the right token while it lasts: otherwise guesses could still be told apart.
            raise TooManyAttempts(
                f"Too many failed token checks from {address}.",
                f"Wait {math.ceil(wait)} s, then try again with the right token (`vask token list` shows the devices).",
                retry_after=wait,
            )
        header = request.headers.get("Authorization", "")
        scheme, _, given = header.partition(" ")
        device = tokens.match(given.strip()) if scheme.lower() == "bearer" and given.strip() else None
        request[AUTHENTICATED] = device is not None
        if device is not None:
            request[DEVICE] = device
            tokens.touch(device)
            return await handler(request)
        if (request.method, request.path) in PUBLIC_ROUTES and not header:
            return await handler(request)
        # Logged without the token, whatever was sent: only who, where, and what kind of failure.
        reason = "a token no device has" if header else "no token"
        blocked = limiter.fail(address, now)
        log.warning("refused %s %s from %s: %s", request.method, request.path, address, reason)
        if blocked:
            log.warning(
                "%s failed %d token checks in %.0f s: refused for a while", address, limiter.limit, limiter.window
            )
        raise Unauthorized(
            "Missing or wrong bearer token (or this device's token was revoked)."
            if header
            else "This endpoint needs a bearer token.",
            TOKEN_HINT,
        )

    return check_token
