"""Settings → indexing options (kept apart from the services so importing it stays cheap)."""

from __future__ import annotations

from vask_server.config import Settings
from vask_server.core.chunk import ChunkOptions
from vask_server.core.plan import IndexOptions


def index_options(settings: Settings) -> IndexOptions:
    return IndexOptions(
        chunking=ChunkOptions(max_tokens=settings.chunk_tokens, max_chars=settings.chunk_max_chars),
        max_note_bytes=settings.max_note_bytes,
    )
