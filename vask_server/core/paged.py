"""A paged document's text (a PDF's, from adapters/pdf.py) → a Note and chunks that never span pages.

Each page with text becomes a section under a heading "Page N", so the chunker cuts at every page
and a small page is never merged into the next; each chunk then records its page, and opens there
(`[[file.pdf#page=N]]`) instead of at a heading. Line numbers count the extracted text's lines.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from vask_server.core.chunk import ChunkOptions
from vask_server.core.describe import sectioned_chunks
from vask_server.core.filetypes import display_name
from vask_server.core.models import Chunk, Heading, Note
from vask_server.core.parse import LINE_BLANK, LINE_HEADING, LINE_TEXT

_SPACES = re.compile(r"[ \t\u00a0]+")


def document_title(path: str, metadata_title: str) -> str:
    """The document's own title when it has a real one, else its file name without the extension
    (tools write placeholders such as "untitled" or "Microsoft Word - draft.docx")."""
    title = " ".join(metadata_title.split())
    if title and title.casefold() not in {"untitled", "title", "document"} and not title.lower().endswith(".docx"):
        return title
    return display_name(path)


def paged_note(path: str, title: str, pages: Sequence[str]) -> Note:
    lines: list[str] = []
    kinds: list[str] = []
    headings: list[Heading] = []
    for number, page in enumerate(pages, start=1):
        text = [_SPACES.sub(" ", line).strip() for line in page.split("\n")]
        if not any(text):
            continue
        lines.append(f"Page {number}")
        kinds.append(LINE_HEADING)
        headings.append(Heading(1, f"Page {number}", len(lines)))
        for line in text:
            if line or (kinds and kinds[-1] != LINE_BLANK):
                lines.append(line)
                kinds.append(LINE_TEXT if line else LINE_BLANK)
    return Note(
        path=path,
        title=title,
        aliases=(),
        tags=(),
        links=(),
        headings=tuple(headings),
        lines=tuple(lines),
        kinds=tuple(kinds),
        body_start=1,
    )


def page_of_lines(note: Note) -> list[int]:
    """The page of each line of a `paged_note`, read back from its page headings."""
    pages: list[int] = []
    current = 0
    starts = {heading.line: heading.text for heading in note.headings}
    for number in range(1, len(note.lines) + 1):
        if number in starts:
            current = int(starts[number].removeprefix("Page "))
        pages.append(current)
    return pages


def paged_chunks(note: Note, options: ChunkOptions | None = None, *, with_record: bool = True) -> list[Chunk]:
    """Chunks of one page each at most, each with its page; plus, with `with_record`, a note-level
    record (title and opening) that opens the first page."""
    # The record without the page headings: "Sections: Page 1; Page 2…" says nothing.
    chunks = sectioned_chunks(note, options, record_of=replace(note, headings=()) if with_record else None)
    pages = page_of_lines(note)
    return [replace(c, page=pages[c.line_start - 1]) for c in chunks]  # the record's line 1: the first page
