"""Notes most related to a note: its links both ways, and notes whose text is close to it."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from vask_server.adapters.store import Store, vector_matrix
from vask_server.core.retrieve import sql_string
from vask_server.errors import NotFound
from vask_server.services.search import ActiveIndex

LINK_BONUS = 0.15  # a link is the author's own statement that two notes belong together


async def related_notes(store: Store, index: ActiveIndex, path: str, top_k: int) -> list[dict[str, Any]]:
    manifest = await store.manifest(index.suffix)
    record = manifest.get(path)
    if record is None:
        raise NotFound(f"Not in the index: {path}", "Check the path, or wait until the note is indexed.")
    outgoing = {link.get("resolved") for link in json.loads(record.links or "[]")} - {None, path}
    incoming = {
        other.path
        for other in manifest.values()
        if other.path != path and any(link.get("resolved") == path for link in json.loads(other.links or "[]"))
    }
    scores: dict[str, float] = {}
    reasons: dict[str, str] = {}
    own = await store.all_chunk_rows(index.suffix, index.dimension, ["vector"], where=f"path = {sql_string(path)}")
    if own.num_rows:
        centroid = vector_matrix(own["vector"], index.dimension).mean(axis=0)
        norm = float(np.linalg.norm(centroid)) or 1.0
        rows = await store.vector_search(
            index.suffix, index.dimension, centroid / norm, 60, where=f"path != {sql_string(path)}"
        )
        for row in rows:
            if row["path"] not in scores:
                scores[row["path"]] = float(row["score"])
                reasons[row["path"]] = "similar"
    for other in outgoing | incoming:
        if other not in manifest:
            continue
        scores[other] = scores.get(other, 0.0) + LINK_BONUS
        reasons[other] = "links to" if other in outgoing else "linked from"
    ranked = sorted(scores.items(), key=lambda item: item[1], reverse=True)[:top_k]
    return [
        {"path": p, "title": manifest[p].title if p in manifest else p, "score": round(s, 4), "reason": reasons[p]}
        for p, s in ranked
    ]
