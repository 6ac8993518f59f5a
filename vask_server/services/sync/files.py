"""Vault files other than Markdown notes → the Note and chunks the indexer stores for any note.

A Canvas board is read as text and parsed as JSON (core/canvas.py); a PDF's text comes from the PDF
reader's worker process (adapters/pdf.py), page by page (core/paged.py). Either raises
NoteUnreadable with the reason the status shows, and then nothing of the file is indexed.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

from vask_server.adapters.pdf import PdfReader
from vask_server.adapters.vault import NoteUnreadable, Vault
from vask_server.core.canvas import CanvasError, canvas_chunks, canvas_note
from vask_server.core.links import LinkResolver
from vask_server.core.models import Chunk, Note
from vask_server.core.paged import document_title, paged_chunks, paged_note
from vask_server.core.plan import IndexOptions


@dataclass
class ReadFile:
    note: Note
    chunks: list[Chunk]
    content_hash: str
    warnings: list[str] = field(default_factory=list)


def read_canvas(vault: Vault, path: str, options: IndexOptions, resolver: LinkResolver) -> ReadFile:
    text, warnings = vault.read_note(path, options.max_note_bytes)
    try:
        data = json.loads(text)
    except ValueError as exc:
        where = f" at line {exc.lineno}, column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else ""
        detail = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
        raise NoteUnreadable(f"invalid canvas: not JSON ({detail}{where}); nothing of it is indexed") from None
    try:
        note = canvas_note(path, data, resolver)
    except CanvasError as exc:
        raise NoteUnreadable(f"invalid canvas: {exc}; nothing of it is indexed") from None
    chunks = canvas_chunks(note, options.chunking, with_record=options.note_records)
    return ReadFile(note, chunks, content_hash(text), [*warnings, *note.warnings])


def read_pdf(vault: Vault, reader: PdfReader, path: str, options: IndexOptions) -> ReadFile:
    document = reader.read(vault.resolve(path))
    note = paged_note(path, document_title(path, document.title), document.pages)
    chunks = paged_chunks(note, options.chunking, with_record=options.note_records)
    return ReadFile(note, chunks, content_hash("\f".join(document.pages)))


def content_hash(text: str) -> str:
    """What a file's text is, for the manifest: a changed hash means the file must be read again."""
    return hashlib.sha256(text.encode("utf-8", errors="replace")).hexdigest()[:32]
