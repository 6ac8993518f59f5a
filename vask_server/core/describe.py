"""A note-level record: what a note is about as a whole, for questions about the note itself.

Title, aliases, tags, headings and opening paragraph go into one short text. Hub and
map-of-content notes, whose meaning lives in their links, also get a synthetic description built
from their link labels, so "which books did I file under productivity?" can match a list of links.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace

from vask_server.core.chunk import ChunkOptions, chunk_note
from vask_server.core.models import Chunk, Note
from vask_server.core.parse import LINE_BLANK, LINE_CODE, LINE_FENCE, LINE_HEADING, LINE_META
from vask_server.core.tokens import count_tokens

NOTE_RECORD_TOKENS = 200
_OPENING_TOKENS = 70
_HUB_LINK_SHARE = 0.35  # a note whose words are this much link text is treated as a hub


def _link_labels(note: Note) -> list[str]:
    labels: list[str] = []
    for link in note.links:
        if link.embed and link.resolved and not link.resolved.lower().endswith(".md"):
            continue  # images and attachments say nothing about the note
        label = link.alias or (link.target.rsplit("/", 1)[-1] if link.target else "")
        if label and label not in labels:
            labels.append(label)
    return labels


def is_hub(note: Note) -> bool:
    body_words = sum(
        len(line.split())
        for line, kind in zip(note.lines, note.kinds, strict=True)
        if kind not in (LINE_META, LINE_CODE, LINE_FENCE, LINE_HEADING)
    )
    link_words = sum(len(label.split()) for label in _link_labels(note))
    return len(note.links) >= 5 and body_words > 0 and link_words / body_words >= _HUB_LINK_SHARE


def _opening(note: Note) -> str:
    words: list[str] = []
    for line, kind in zip(note.lines, note.kinds, strict=True):
        if kind in (LINE_META, LINE_CODE, LINE_FENCE, LINE_HEADING, LINE_BLANK):
            if words and kind == LINE_BLANK:
                break  # the first paragraph only
            continue
        words.extend(line.split())
        if count_tokens(" ".join(words)) >= _OPENING_TOKENS:
            break
    return " ".join(words)


def describe(note: Note) -> str:
    parts = [note.title]
    if note.aliases:
        parts.append("Also called: " + ", ".join(note.aliases) + ".")
    if note.tags:
        parts.append("Tags: " + ", ".join(note.tags) + ".")
    headings = [h.text for h in note.headings if h.text.casefold() != note.title.casefold()]
    if headings:
        parts.append("Sections: " + "; ".join(headings[:25]) + ".")
    if is_hub(note):
        parts.append("A hub note linking to: " + "; ".join(_link_labels(note)[:40]) + ".")
    opening = _opening(note)
    if opening:
        parts.append(opening)
    text = "\n".join(parts)
    while count_tokens(text) > NOTE_RECORD_TOKENS and len(text) > 40:
        text = text[: int(len(text) * 0.9)]
    return text


def note_record(note: Note) -> Chunk | None:
    """One extra chunk per note (kind "note"), pointing at the top of the note."""
    last_line = len(note.lines)
    if last_line == 0:
        return None
    text = describe(note)
    content_hash = hashlib.sha256(f"note\0{text}".encode()).hexdigest()[:32]
    return Chunk(
        id=hashlib.sha256(f"{note.path}\0note\0{content_hash}".encode()).hexdigest()[:32],
        path=note.path,
        title=note.title,
        heading_path=(note.title,),
        anchor="",
        line_start=1,
        line_end=last_line,
        text=text,
        embed_text=text,
        hash=content_hash,
        ordinal=-1,
        kind="note",
    )


def sectioned_chunks(note: Note, options: ChunkOptions | None, *, record_of: Note | None) -> list[Chunk]:
    """Chunks of a file whose sections must stay apart (a board's groups, a document's pages): a
    small section is not merged into its neighbour, and every chunk opens the file itself, not a
    heading. With `record_of`, the note-level record made from it follows, when there are chunks."""
    options = replace(options or ChunkOptions(), min_tokens=0)
    chunks = [replace(chunk, anchor="") for chunk in chunk_note(note, options)]
    record = note_record(record_of) if record_of is not None and chunks else None
    return [*chunks, *([record] if record else [])]
