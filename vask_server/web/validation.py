"""Request bodies → typed values, or a 400 that says exactly what is wrong. The values' own checks are
core/arguments.py's, shared with the other doors."""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import date
from typing import Any

from aiohttp import web

from vask_server.core.arguments import (
    MAX_HISTORY,
    MAX_LIST_ITEMS,
    MAX_QUERY_CHARS,
    MAX_TOP_K,
    day,
    filters,
    flag,
    history,
    integer,
    mode,
    number,
    string_list,
    text,
)
from vask_server.core.arguments import today as client_today
from vask_server.errors import BadRequest

__all__ = [
    "MAX_HISTORY",
    "MAX_LIST_ITEMS",
    "MAX_QUERY_CHARS",
    "MAX_TOP_K",
    "day",
    "filters",
    "flag",
    "history",
    "integer",
    "json_object",
    "mode",
    "number",
    "string_list",
    "text",
    "today",
]


async def json_object(request: web.Request, allowed: Iterable[str]) -> dict[str, Any]:
    raw = await request.read()
    if not raw.strip():
        return {}
    try:
        body = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadRequest(f"The request body is not valid JSON: {exc}", "Send a JSON object.") from None
    if not isinstance(body, dict):
        raise BadRequest("The request body must be a JSON object.", 'Send a JSON object like {"query": "..."}.')
    unknown = sorted(set(body) - set(allowed))
    if unknown:
        raise BadRequest(f"Unknown field(s): {', '.join(unknown)}", f"Allowed fields: {', '.join(sorted(allowed))}.")
    return body


def today(value: Any) -> date:
    """The client's `now` as a day, else the server's local date."""
    return client_today(value) or date.today()
