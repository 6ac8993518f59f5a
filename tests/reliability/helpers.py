"""What "the index is right" means, for the reliability suite."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from vask_server.config import Settings
from vask_server.services.context import Services, open_services


async def index_fingerprint(services: Services) -> dict[str, Any]:
    """Everything that must match a clean build: chunk ids, their notes and hashes, the manifest."""
    active = services.store.read_meta().active
    assert active is not None, "no active index"
    tables = services.store.tables(active)
    rows = await tables.all_chunk_rows(["id", "path", "hash", "kind"])
    ids = rows["id"].to_pylist()
    manifest = await tables.manifest()
    return {
        "model": active.model,
        "chunks": sorted(
            zip(ids, rows["path"].to_pylist(), rows["hash"].to_pylist(), rows["kind"].to_pylist(), strict=True)
        ),
        "duplicate_ids": len(ids) - len(set(ids)),
        "manifest": sorted((r.path, r.status, r.chunk_count) for r in manifest.values()),
        "orphans": sorted(set(rows["path"].to_pylist()) - set(manifest)),
    }


async def clean_build(settings: Settings, index_dir: Path) -> dict[str, Any]:
    fresh = dataclasses.replace(settings, index_dir=index_dir)
    async with open_services(fresh) as services:
        await services.indexer.sync()
        return await index_fingerprint(services)


async def indexed_notes_have_their_vectors(services: Services) -> None:
    """No note is recorded as indexed without its chunks (the manifest is written last)."""
    meta = services.store.read_meta()
    active = meta.active or meta.building
    assert active is not None, "nothing indexed or being built"
    tables = services.store.tables(active)
    manifest = await tables.manifest()
    rows = await tables.all_chunk_rows(["path"])
    counts: dict[str, int] = {}
    for path in rows["path"].to_pylist():
        counts[path] = counts.get(path, 0) + 1
    for record in manifest.values():
        if record.status == "ok":
            assert counts.get(record.path, 0) == record.chunk_count, (
                record.path,
                record.chunk_count,
                counts.get(record.path),
            )


def describe(fingerprint: dict[str, Any]) -> str:
    return json.dumps({k: (len(v) if isinstance(v, list) else v) for k, v in fingerprint.items()})
