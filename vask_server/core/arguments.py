"""A caller's values (an HTTP request's body, an MCP tool's arguments) → typed values, or a BadRequest
that says exactly what is wrong: the same limits and messages at every door."""

from __future__ import annotations

import math
from datetime import date
from typing import Any, cast

from vask_server.core.question import Mode
from vask_server.core.retrieve import Filters
from vask_server.core.time.ranges import parse_day, parse_now
from vask_server.errors import BadRequest

MAX_QUERY_CHARS = 4000
MAX_TOP_K = 50
MAX_HISTORY = 50
MAX_LIST_ITEMS = 200


def _encodable(value: str, name: str) -> str:
    """JSON can carry lone surrogates ("\\ud800") that no UTF-8 consumer downstream accepts."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise BadRequest(f"'{name}' contains invalid Unicode (a lone surrogate).") from None
    return value


def text(body: dict[str, Any], name: str, *, required: bool = True, max_chars: int = MAX_QUERY_CHARS) -> str:
    value = body.get(name)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or not value.strip():
        raise BadRequest(f"'{name}' must be a non-empty string.")
    if len(value) > max_chars:
        raise BadRequest(f"'{name}' is longer than {max_chars} characters.")
    if "\x00" in value:
        raise BadRequest(f"'{name}' contains a NUL character.")
    return _encodable(value, name).strip()


def integer(value: Any, name: str, default: int, low: int, high: int) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadRequest(f"'{name}' must be an integer from {low} to {high}.")
    if not low <= value <= high:
        raise BadRequest(f"'{name}' must be from {low} to {high}, got {value}.")
    return value


def number(value: Any, name: str, default: float, low: float, high: float) -> float:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise BadRequest(f"'{name}' must be a number from {low} to {high}.")
    if not low <= value <= high:
        raise BadRequest(f"'{name}' must be from {low} to {high}, got {value}.")
    return float(value)


def string_list(value: Any, name: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) and v and "\x00" not in v for v in value):
        raise BadRequest(f"'{name}' must be a list of non-empty strings.")
    if len(value) > MAX_LIST_ITEMS:
        raise BadRequest(f"'{name}' has more than {MAX_LIST_ITEMS} items.")
    return tuple(_encodable(v, name) for v in value)


def filters(value: Any) -> Filters | None:
    if value is None:
        return None
    names = ("folders", "exclude_folders", "tags", "paths", "date_from", "date_to")
    if not isinstance(value, dict):
        raise BadRequest(f"'filters' must be an object with {', '.join(names)}.")
    unknown = sorted(set(value) - set(names))
    if unknown:
        raise BadRequest(f"Unknown filter(s): {', '.join(unknown)}", f"Use {', '.join(names)}.")
    result = Filters(
        folders=string_list(value.get("folders"), "filters.folders"),
        exclude_folders=string_list(value.get("exclude_folders"), "filters.exclude_folders"),
        tags=string_list(value.get("tags"), "filters.tags"),
        paths=string_list(value.get("paths"), "filters.paths"),
        date_from=day(value.get("date_from"), "filters.date_from"),
        date_to=day(value.get("date_to"), "filters.date_to"),
    )
    if result.date_from and result.date_to and result.date_from > result.date_to:
        raise BadRequest("'filters.date_from' is after 'filters.date_to'.", "Give the earlier date as date_from.")
    return None if result.is_empty() else result


def day(value: Any, name: str) -> date | None:
    """An inclusive ISO date, or None when not given."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise BadRequest(f"'{name}' must be an ISO date string like \"2026-03-14\".")
    try:
        return parse_day(value, f"'{name}'")
    except ValueError as exc:
        raise BadRequest(str(exc), 'Send an ISO date like "2026-03-14".') from None


def today(value: Any, name: str = "now") -> date | None:
    """The day relative expressions ("last month") are resolved against, as the client gives it
    (`now`); None when it gives none (the caller then takes its own local date)."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise BadRequest(f"'{name}' must be an ISO date or date-time string.")
    try:
        return parse_now(value, f"'{name}'")
    except ValueError as exc:
        raise BadRequest(str(exc), "Send the client's local time, e.g. 2026-03-14T09:30:00+01:00.") from None


def flag(value: Any, name: str, default: bool) -> bool:
    if value is None:
        return default
    if not isinstance(value, bool):
        raise BadRequest(f"'{name}' must be true or false.")
    return value


def mode(body: dict[str, Any]) -> Mode | None:
    """`mode`, when the body sets it (null included): "vector" or "hybrid"; absent, the searcher's own."""
    if "mode" not in body:
        return None
    value = body["mode"]
    if value in ("vector", "hybrid"):
        return cast(Mode, value)
    raise BadRequest("'mode' must be 'vector' or 'hybrid'.")


def history(value: Any) -> list[dict[str, str]]:
    if value is None:
        return []
    if not isinstance(value, list) or len(value) > MAX_HISTORY:
        raise BadRequest(f"'history' must be a list of at most {MAX_HISTORY} turns.")
    turns: list[dict[str, str]] = []
    for turn in value:
        if (
            not isinstance(turn, dict)
            or turn.get("role") not in ("user", "assistant")
            or not isinstance(turn.get("content"), str)
        ):
            raise BadRequest('Each history turn must be {"role": "user"|"assistant", "content": string}.')
        turns.append({"role": turn["role"], "content": _encodable(turn["content"][:20_000], "history")})
    return turns
