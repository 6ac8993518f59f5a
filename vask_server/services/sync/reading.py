"""How a sync reads notes: each file read, parsed, chunked and dated into a `Prepared` record (or
why it could not be), and a sample of the vault's notes to tell its languages by.

Run in worker threads: it is the CPU-heavy part of a sync. Nothing here writes to the store.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterable
from datetime import date, datetime

from vask_server.adapters.manifest import Manifest, NoteRecord
from vask_server.adapters.pdf import PdfReader
from vask_server.adapters.vault import FileStat, NoteUnreadable, Vault
from vask_server.core.chunk import chunk_note
from vask_server.core.cjk import written_mostly_in_cjk
from vask_server.core.describe import note_record
from vask_server.core.exclude import opt_out_rule, opted_out, opted_out_text
from vask_server.core.filetypes import CANVAS, MARKDOWN, PDF, file_type, suffixes
from vask_server.core.keyword_choice import (
    LANGUAGE_NOTES,
    SAMPLE_BYTES,
    VaultLanguage,
    choose_keyword_terms,
    sample_paths,
    spread,
)
from vask_server.core.language import not_english_share
from vask_server.core.links import LinkResolver
from vask_server.core.models import Chunk, Note
from vask_server.core.parse import parse_note, plain_note
from vask_server.core.plan import IndexOptions
from vask_server.core.time.dates import chunk_dates, date_note
from vask_server.services.sync.files import ReadFile, content_hash, read_canvas, read_pdf
from vask_server.services.sync.rows import Prepared

log = logging.getLogger(__name__)


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
        """A Canvas board or a PDF (services/sync/files.py), dated as a note without dates of its own is."""
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


def vault_language(vault: Vault, notes: Iterable[str], setting: str) -> VaultLanguage:
    """The one place the vault's languages are read from its notes (the indexer at a whole sync, and
    `vask doctor`): the opening of each note of `sample_paths`. Nothing of the text is kept; notes that
    opted out are left out, and so is a note whose frontmatter runs past what is read of it (an
    opt-out could be further down)."""
    paths = [path for path in notes if not path.lower().endswith(_NOT_NOTES)]  # (file_type, quicker)
    texts = []
    for path in sample_paths(paths):
        try:
            head = vault.read_head(path, SAMPLE_BYTES)
        except NoteUnreadable:
            continue
        if not opted_out_text(head) and not _frontmatter_cut(head):
            texts.append(head)
    cjk_notes = sum(1 for text in texts if written_mostly_in_cjk(text))
    not_english = round(not_english_share(spread(texts, LANGUAGE_NOTES)), 3)
    return VaultLanguage(choose_keyword_terms(setting, len(texts), cjk_notes), not_english)


_NOT_NOTES = suffixes((CANVAS, PDF))  # files whose text is not a note's (a board's JSON, a PDF's bytes)


def _frontmatter_cut(head: str) -> bool:
    """The note opens a frontmatter block that does not end within `head`."""
    lines = head.lstrip("\ufeff").split("\n")
    return lines[0].strip() == "---" and not any(line.strip() in ("---", "...") for line in lines[1:])


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
