"""Notes most related to a note, for the related-notes pane: its connections (services/query/connections.py),
the same that a question "what connects to [[Note]]?" finds."""

from __future__ import annotations

from typing import Any

from vask_server.adapters.meta import IndexRecord
from vask_server.adapters.store import Store
from vask_server.core.retrieve import Filters
from vask_server.core.scale import IDENTITY, CosineScale
from vask_server.services.query.connections import Connected, find_connections
from vask_server.services.query.graph import LinkGraphs

_REASON = {"unlinked": "similar", "both": "links to"}  # (the pane's words for how they are connected)


async def connections_of(
    store: Store,
    graphs: LinkGraphs,
    index: IndexRecord,
    path: str,
    top_k: int,
    filters: Filters | None = None,
    scale: CosineScale = IDENTITY,
) -> list[Connected]:
    """The notes connected to `path`, best first, each with the passage that connects it; `filters`
    (dates, folders, tags) apply to the connected notes. What every door asks for a note's connections.
    `scale`: the index's cosines on the scale connections are ranked on (`Searcher.cosine_scale`)."""
    return await find_connections(store, graphs, index, path, top_k=top_k, filters=filters, scale=scale)


async def related_notes(
    store: Store, graphs: LinkGraphs, index: IndexRecord, path: str, top_k: int, scale: CosineScale = IDENTITY
) -> list[dict[str, Any]]:
    connected = await connections_of(store, graphs, index, path, top_k, scale=scale)
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
