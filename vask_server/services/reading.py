"""How a sync reads notes: each file read, parsed, chunked and dated into a `Prepared` record (or
why it could not be), and a sample of the vault's text to tell its languages by.

Run in worker threads: it is the CPU-heavy part of a sync. Nothing here writes to the store.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from datetime import date, datetime

from vask_server.adapters.manifest import Manifest, NoteRecord
from vask_server.adapters.pdf import PdfReader
from vask_server.adapters.vault import FileStat, NoteUnreadable, Vault, VaultScan
from vask_server.core.chunk import chunk_note
from vask_server.core.dates import chunk_dates, date_note
from vask_server.core.describe import note_record
from vask_server.core.exclude import opt_out_rule, opted_out, opted_out_text
from vask_server.core.filetypes import CANVAS, MARKDOWN, file_type
from vask_server.core.links import LinkResolver
from vask_server.core.models import Chunk, Note
from vask_server.core.parse import parse_note, plain_note
from vask_server.core.plan import IndexOptions
from vask_server.services.files import ReadFile, content_hash, read_canvas, read_pdf
from vask_server.services.rows import Prepared

log = logging.getLogger(__name__)

# Notes read to tell a vault's script (VASK_KEYWORD_TOKENIZER=auto), spread evenly over its paths.
_LANGUAGE_SAMPLE = 200


class NoteReader:
    """Reads a sync's notes with the sync's `options` (the indexer sets them as each sync starts).
    The PDF worker is started on the first PDF and stopped by `close`, when the sync ends."""

    def __init__(self, vault: Vault, options: IndexOptions) -> None:
        self.vault = vault
        self.options = options
        self._pdf: PdfReader | None = None

    def close(self) -> None:
        if self._pdf is not None:
            self._pdf.close()
            self._pdf = None

    def prepare(
        self,
        paths: list[str],
        on_disk: dict[str, FileStat],
        manifest: Manifest,
        resolver: LinkResolver,
        keep: Collection[str] = (),
    ) -> list[Prepared]:
        """Reads, parses and chunks (in a worker thread: it is the CPU-heavy part). `keep`: notes
        whose stored rows stay if their text is as the manifest records it (only their time
        changed), instead of being parsed and written again."""
        out: list[Prepared] = []
        for path in paths:
            item = Prepared(path=path, stamp=on_disk[path])
            if file_type(path) not in (MARKDOWN, None):
                self._read_other(item, resolver)
                out.append(item)
                continue
            try:
                text, warnings = self.vault.read_note(path, self.options.max_note_bytes)
            except NoteUnreadable as exc:
                item.status, item.reason = exc.status, exc.reason
                out.append(item)
                continue
            item.warnings.extend(warnings)
            item.content_hash = content_hash(text)
            record = manifest.get(path) if path in keep else None
            if record is not None and only_touched(record, item):
                item.kept = record
                out.append(item)
                continue
            try:
                note = parse_note(path, text, resolver)
                if opted_out(note.frontmatter):
                    out.append(_opted_out(item, manifest))
                    continue
                item.note, item.chunks = self._chunked(note)
            except Exception as exc:  # a parser bug must cost the note its structure, not its text
                if opted_out_text(text):  # (even a note the parser chokes on keeps its opt-out, unlogged)
                    out.append(_opted_out(item, manifest))
                    continue
                log.exception("could not parse %s", path)
                problem = f"could not parse: {type(exc).__name__}: {exc}"
                try:
                    warning = f"{path}: {problem}; indexed as plain text, without its headings, links and tags"
                    item.note, item.chunks = self._chunked(plain_note(path, text, warning))
                except Exception:  # not even as plain text: the note is listed as failed, with why
                    log.exception("could not index %s as plain text", path)
                    item.status, item.reason = "failed", problem
                    item.note, item.chunks = None, []
            if item.note is not None:
                item.warnings.extend(item.note.warnings)
                dates = date_note(item.note, datetime.fromtimestamp(item.stamp.mtime_ns / 1e9), self.options.dates)
                item.dates, item.modified = chunk_dates(item.chunks, dates), dates.modified
            out.append(item)
        return out

    def _read_other(self, item: Prepared, resolver: LinkResolver) -> None:
        """A Canvas board or a PDF (services/files.py), dated as a note without dates of its own is."""
        try:
            read: ReadFile
            if file_type(item.path) == CANVAS:
                read = read_canvas(self.vault, item.path, self.options, resolver)
            else:
                if self._pdf is None:
                    self._pdf = PdfReader(self.options.pdf_timeout, self.options.max_pdf_bytes)
                read = read_pdf(self.vault, self._pdf, item.path, self.options)
        except NoteUnreadable as exc:
            item.status, item.reason = exc.status, exc.reason
            return
        item.note, item.chunks, item.content_hash = read.note, read.chunks, read.content_hash
        item.warnings.extend(read.warnings)
        dates = date_note(read.note, datetime.fromtimestamp(item.stamp.mtime_ns / 1e9), self.options.dates)
        item.dates, item.modified = chunk_dates(item.chunks, dates), dates.modified

    def _chunked(self, note: Note) -> tuple[Note, list[Chunk]]:
        chunks = chunk_note(note, self.options.chunking)
        record = note_record(note) if self.options.note_records else None
        if record is not None:
            chunks.append(record)
        return note, chunks


def sample_notes(vault: Vault, scan: VaultScan, max_note_bytes: int) -> list[str]:
    """The text of up to `_LANGUAGE_SAMPLE` notes spread over the vault, to tell its languages by
    (nothing of it is kept). Notes that opted out are left out."""
    paths = sorted(p for p in scan.notes if file_type(p) in (MARKDOWN, None))
    step = max(1, len(paths) // _LANGUAGE_SAMPLE)
    texts = []
    for path in paths[::step][:_LANGUAGE_SAMPLE]:
        try:
            text, _ = vault.read_note(path, max_note_bytes)
        except NoteUnreadable:
            continue
        if not opted_out_text(text):
            texts.append(text)
    return texts


def only_touched(record: NoteRecord, item: Prepared) -> bool:
    """The note was indexed whole from this very text, and its time moved within the same day: its
    rows would come out the same (the day is all of the time they record)."""
    return (
        record.status == "ok"
        and record.content_hash == item.content_hash
        and _day(record.mtime_ns) == _day(item.stamp.mtime_ns)
    )


def _day(mtime_ns: int) -> date:
    return datetime.fromtimestamp(mtime_ns / 1e9).date()  # as date_note reads it: local time


def _opted_out(item: Prepared, manifest: Manifest) -> Prepared:
    """The rule for a note that opted out in its frontmatter: read only to see this, nothing of it is
    kept, embedded or logged; its rows, if it has any, are removed (the indexer's pending opt-outs)."""
    item.status, item.reason = "excluded", opt_out_rule()
    item.was_indexed = item.path in manifest
    return item
