"""Cutting an index's keyword text anew when the way it is cut changes (`simple` <-> `cjk`, core/cjk.py).

Every passage's keyword text is made from what its row already stores (its note's title and aliases,
its heading and its text: `rows.search_text`), so no note is read or chunked again and nothing is
embedded: the rows keep their vectors. The sync that does this then compacts the table and builds its
keyword and vector indexes anew (`Indexer._finish_tables`).
"""

from __future__ import annotations

import logging
import time

import pyarrow as pa

from vask_server.adapters.tables import IndexTables
from vask_server.services.sync.rows import search_text

log = logging.getLogger(__name__)


async def recut_keyword_text(tables: IndexTables, terms: str) -> int:
    """Every row's keyword text cut as `terms` says. Returns how many rows."""
    started = time.perf_counter()
    aliases = {path: " ".join(names) for path, names in (await tables.note_aliases()).items()}
    rows = 0
    async for batch in tables.keyword_sources():
        columns = [batch[name].to_pylist() for name in ("path", "title", "heading", "text")]
        texts = [
            search_text(title or "", aliases.get(path, ""), heading or "", text or "", terms)
            for path, title, heading, text in zip(*columns, strict=True)
        ]
        await tables.set_search_text(batch["id"], pa.array(texts, pa.string()))
        rows += batch.num_rows
    log.info("keyword text of %d passages cut anew (%s) in %.1f s", rows, terms, time.perf_counter() - started)
    return rows
