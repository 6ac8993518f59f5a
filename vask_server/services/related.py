"""Notes most related to a note, for the related-notes pane: its connections (services/connections.py),
the same that a question "what connects to [[Note]]?" finds."""

from __future__ import annotations

from typing import Any

from vask_server.adapters.store import Store
from vask_server.core.scale import IDENTITY, CosineScale
from vask_server.services.active_index import ActiveIndex
from vask_server.services.connections import find_connections
from vask_server.services.graph import LinkGraphs

_REASON = {"unlinked": "similar", "both": "links to"}  # (the pane's words for how they are connected)


async def related_notes(
    store: Store, graphs: LinkGraphs, index: ActiveIndex, path: str, top_k: int, scale: CosineScale = IDENTITY
) -> list[dict[str, Any]]:
    """`scale`: the index's cosines on the scale connections are ranked on (services/ranking.cosine_scale)."""
    connected = await find_connections(
        store,
        graphs,
        index.suffix,
        index.dimension,
        path,
        top_k=top_k,
        keyword_terms=index.keyword_terms,
        scale=scale,
    )
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
