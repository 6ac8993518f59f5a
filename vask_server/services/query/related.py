"""Notes most related to a note, for the related-notes pane: its connections (services/query/connections.py),
the same that a question "what connects to [[Note]]?" finds."""

from __future__ import annotations

from typing import Any

from vask_server.adapters.meta import IndexRecord
from vask_server.core.retrieve import Filters
from vask_server.services.query.connections import Connected, find_connections
from vask_server.services.query.search import Searcher

_REASON = {"unlinked": "similar", "both": "links to"}  # (the pane's words for how they are connected)


async def connections_of(
    searcher: Searcher, index: IndexRecord, path: str, top_k: int, filters: Filters | None = None
) -> list[Connected]:
    """The notes connected to `path`, best first, each with the passage that connects it; `filters`
    (dates, folders, tags) apply to the connected notes. Ranked as the searcher ranks a connection
    question: on the index's cosine scale, without the notes a rule as it is now keeps out. What
    every door asks for a note's connections."""
    return await find_connections(
        searcher.store,
        searcher.graphs,
        index,
        path,
        top_k=top_k,
        filters=filters,
        scale=await searcher.cosine_scale(index),
        kept_out=searcher.exclusions(),
    )


async def related_notes(searcher: Searcher, index: IndexRecord, path: str, top_k: int) -> list[dict[str, Any]]:
    connected = await connections_of(searcher, index, path, top_k)
    return [
        {
            "path": c.path,
            "title": c.title,
            "score": round(c.score, 4),
            "reason": _REASON.get(c.linked, c.linked),
            "linked": c.linked != "unlinked",
            "passage": {"heading": c.passage.heading, "anchor": c.passage.anchor, "link": c.passage.link},
        }
        for c in connected
    ]
