"""Which files of a vault are indexed, by type: Markdown notes, Canvas boards and PDFs."""

from __future__ import annotations

MARKDOWN, CANVAS, PDF = "md", "canvas", "pdf"
ALL_TYPES: tuple[str, ...] = (MARKDOWN, CANVAS, PDF)
_SUFFIX = {MARKDOWN: ".md", CANVAS: ".canvas", PDF: ".pdf"}


def suffixes(types: tuple[str, ...]) -> tuple[str, ...]:
    """The file name endings (lower case) of these types."""
    return tuple(_SUFFIX[kind] for kind in types)


def file_type(path: str) -> str | None:
    """The type of a vault file, by its name (case ignored); None for a file vask never indexes."""
    lowered = path.lower()
    for kind, suffix in _SUFFIX.items():
        if lowered.endswith(suffix):
            return kind
    return None


def display_name(path: str) -> str:
    """A file's name without folders, and without `.md` (Obsidian shows a note's name so; a board or
    a PDF keeps its extension in a link, but not in a title)."""
    name = path.rsplit("/", 1)[-1]
    kind = file_type(name)
    return name[: -len(_SUFFIX[kind])] if kind is not None and len(name) > len(_SUFFIX[kind]) else name
