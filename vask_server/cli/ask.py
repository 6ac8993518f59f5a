"""`vask ask` and `vask search`: the question and its flags made into a request, and what comes back
printed: the answer and its sources, the hits, the connections of a note, and what limited the search
(the scope, the time range)."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import date
from typing import TYPE_CHECKING, Any

from vask_server.core.citations import location, sources_block, written_on
from vask_server.core.models import Hit
from vask_server.core.question import Mode, Question
from vask_server.core.retrieve import Filters
from vask_server.core.scope import Scope
from vask_server.core.time.expr import TimeRange, describe_range
from vask_server.errors import ConfigError

if TYPE_CHECKING:
    from vask_server.services.context import Services
    from vask_server.services.query.search import SearchResult


# The way out of a connection reading, said whenever a question is read as one (the plugin's ✕ on the seed)
_AS_WRITTEN = "note: read as a question about what connects to a note; --no-connect asks it as written."


async def ask(args: argparse.Namespace, services: Services) -> int:
    """`vask ask`: the answer as the model writes it, then its sources; --json: the event stream."""
    question = _question(args, services, " ".join(args.question))
    sources: list[dict[str, Any]] = []
    status = 0
    async for event in services.qa.ask(question):
        if args.json:
            print(json.dumps(event, ensure_ascii=False), flush=True)
            status = 2 if event["type"] == "error" else status
            continue
        kind = event["type"]
        if kind == "sources":
            sources = event["sources"]
            if event.get("notice"):
                print(f"note: {event['notice']}", file=sys.stderr)
            if line := _scope_line(event.get("scope")):
                print(f"{line}:", file=sys.stderr)
            if line := _range_line(event.get("time_range")):
                print(f"{line}:", file=sys.stderr)
            if line := _connection_line(event.get("connection")):
                print(_AS_WRITTEN, file=sys.stderr)
                print(f"{line}:", file=sys.stderr)
        elif kind == "token":
            sys.stdout.write(event["text"])
            sys.stdout.flush()
        elif kind == "done":
            print()
            if sources:
                print()
                print(sources_block([_hit_from_source(s) for s in sources]))
        elif kind == "error":
            print()
            print(f"error: {event['message']}", file=sys.stderr)
            if event.get("hint"):
                print(f"hint: {event['hint']}", file=sys.stderr)
            status = 2
    return status


def _hit_from_source(source: dict[str, Any]) -> Hit:
    return Hit(
        chunk_id="",
        path=source["path"],
        title=source["title"],
        heading=source["heading"],
        anchor=source["anchor"],
        line_start=source["line_start"],
        line_end=source["line_end"],
        score=source["score"],
        text="",
        date=date.fromisoformat(source["date"]) if source.get("date") else None,
        date_end=date.fromisoformat(source["date_end"]) if source.get("date_end") else None,
        date_source=source.get("date_source"),
        page=source.get("page"),
    )


async def search(args: argparse.Namespace, services: Services) -> int:
    """`vask search`: the passages found, with what limited the search; --json: the hits in full."""
    question = _question(args, services, " ".join(args.query), mode=args.mode)
    result = await services.searcher.search_question(question)
    if result.notice:
        print(f"note: {result.notice}", file=sys.stderr)
    time_range = result.time_range.to_dict() if result.time_range else None
    scope = result.scope.to_dict() if result.scope else None
    if args.json:
        hits = [{**hit.to_dict(), "text": hit.text} for hit in result.hits]
        payload = {
            "hits": hits,
            "mode": result.mode,
            "time_range": time_range,
            "scope": scope,
            "order": result.order,
            "connection": result.connection_dict(),
        }
        print(json.dumps(payload, ensure_ascii=False, indent=2))
        return 0
    if line := _scope_line(scope):
        print(f"{line}:")
    if line := _range_line(time_range):
        print(f"{line}:")
    if result.seed is not None:
        print(_AS_WRITTEN, file=sys.stderr)
        _print_connections(result)
        return 0
    if not result.hits:
        print("Nothing in your notes comes close enough to this (VASK_DECLINE_SIGMAS, VASK_MIN_SIMILARITY).")
    elif result.order:
        print(f"The closest matches by date, {result.order} first; then the rest by score:")
    for n, hit in enumerate(result.hits, start=1):
        _print_hit(n, hit)
    return 0


def _print_hit(n: int, hit: Hit, also: str = "") -> None:
    when = f"{written_on(hit)}, " if hit.date else ""
    print(f"{n}. {hit.score:.3f}  [[{hit.link}]]  ({when}{location(hit)}{also})")
    snippet = " ".join(hit.text.split())
    print(f"   {snippet[:200]}{'…' if len(snippet) > 200 else ''}")


def _print_connections(result: SearchResult) -> None:
    """The notes connected to the seed: those not linked yet first (what a person most wants to see),
    then those already linked; each with the passage that connects and the seed's part it is near.
    The seed's own passages, when kept ("what could help with [[X]]?"), come before them."""
    print(f"{_connection_line(result.connection_dict())}:")
    groups = (
        (f"In [[{result.seed_title}]] itself", [h for h in result.hits if h.linked == "seed"]),
        ("Not linked yet", [h for h in result.hits if h.linked == "unlinked"]),
        ("Already linked", [h for h in result.hits if h.linked not in ("unlinked", "seed")]),
    )
    n = 0
    for title, hits in groups:
        if hits:
            print(f"\n{title}:")
        for hit in hits:
            n += 1
            how = f"; {hit.linked}" if hit.linked not in ("unlinked", "seed") else ""
            _print_hit(n, hit, f"{how}; near its part “{hit.near}”" if hit.near else how)
    if all(hit.linked == "seed" for hit in result.hits):
        print("No other note connects to it within what the question asked.")


def _question(args: argparse.Namespace, services: Services, text: str, mode: Mode | None = None) -> Question:
    """The question and its flags, as `ask` and `search` both take them (`--mode`: search's alone)."""
    settings = services.settings
    return Question(
        text,
        today=args.now or date.today(),
        top_k=settings.top_k,
        min_similarity=settings.min_similarity,
        filters=_filters(args),
        read_time=not args.no_time,
        open_note=_note_flag(args.note),
        connect=not args.no_connect,
        mode=mode,
    )


def _filters(args: argparse.Namespace) -> Filters | None:
    filters = Filters(
        folders=tuple(args.folder),
        exclude_folders=tuple(args.exclude_folder),
        tags=tuple(args.tag),
        date_from=args.since,
        date_to=args.until,
    )
    if filters.date_from and filters.date_to and filters.date_from > filters.date_to:
        raise ConfigError("--since is after --until.", "Give the earlier date with --since.")
    return None if filters.is_empty() else filters


def _note_flag(value: str | None) -> str | None:
    """--note: a vault-relative path, as Obsidian writes it."""
    return value.replace("\\", "/").lstrip("/") if value else None


def _scope_line(scope: dict[str, list[str]] | None) -> str | None:
    """'Within [[Launch Tidepool app]], #project': what the question's mentions limited it to."""
    if not scope:
        return None
    return "Within " + Scope(tuple(scope["notes"]), tuple(scope["tags"]), tuple(scope["folders"])).describe()


def _range_line(time_range: dict[str, Any] | None) -> str | None:
    """ "Notes from 1 Feb – 28 Feb 2026 ("last month")": what the search was limited to."""
    if not time_range:
        return None
    start, end = time_range.get("from"), time_range.get("to")
    described = describe_range(
        TimeRange(date.fromisoformat(start) if start else None, date.fromisoformat(end) if end else None, "")
    )
    line = f'{described} ("{time_range["text"]}")' if time_range.get("text") else described
    # (a day the calendar lacks: the notice says which real day was read, before the colon's list)
    return f"{time_range['notice']}\n{line}" if time_range.get("notice") else line


def _connection_line(connection: dict[str, Any] | None) -> str | None:
    """ "Notes connected to [[Launch Tidepool app]]": the seed of a connection question."""
    if not connection:
        return None
    return f"Notes connected to [[{connection['title']}]] ({connection['seed']})"
