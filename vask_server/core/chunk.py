"""Note → chunks: split at headings, packed to a token budget, each with exact provenance.

Sections are cut at headings; tiny sections join a neighbour instead of becoming contentless
fragments; a section larger than the budget is split between blocks (paragraphs, lists, whole
tables, whole code blocks), and only a block that alone is too big is split by lines (a table
repeats its header row in each piece). The heading path goes in front of the embedded text.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass

from vask_server.core.models import Chunk, Note
from vask_server.core.parse import LINE_BLANK, LINE_CODE, LINE_FENCE, LINE_HEADING, LINE_META, LINE_TABLE
from vask_server.core.tokens import count_tokens

HEADING_SEPARATOR = " > "
_REPEATED_HEADER = "table-header"  # a table's header copied into a later piece: not new content
_ROW_PART = "table-row-part"  # a piece of a row too long for one chunk: plain text, not a table row

# Chunking asks for the token count of the same line several times (section sizes, merging, packing):
# counted once, then remembered. Bounded by a long note's lines, so a long sync does not keep every
# line it has seen (docs/BENCHMARKS.md, "Memory").
_line_tokens = functools.lru_cache(maxsize=2048)(count_tokens)


@dataclass(frozen=True)
class ChunkOptions:
    max_tokens: int = 240
    max_chars: int = 3000
    # A section with fewer tokens than this joins a neighbour when the two fit the budget.
    min_tokens: int = 48
    # Embed table rows as "column: value" pairs: a Markdown grid of pipes reads poorly to a model.
    tables_as_text: bool = True
    # With tables as text, a table larger than this is split into pieces of `table_rows` rows (the
    # header repeated in each), so a question about one row meets that row, not a whole dashboard:
    # a row alone, led by the name of what it is about, is closer to its question than in a group
    # (docs/EVALUATION.md, "What the ranking's constants rest on").
    table_tokens: int = 100
    table_rows: int = 1


@dataclass
class _Section:
    heading_path: tuple[str, ...]
    anchor: str
    lines: list[tuple[int, str, str]]  # (line number, text, kind); includes its own heading line

    @property
    def body_tokens(self) -> int:
        return sum(_line_tokens(text) for _, text, kind in self.lines if kind != LINE_HEADING)


@dataclass
class _Piece:
    """Consecutive lines of one group of sections, before ids and hashes."""

    heading_path: tuple[str, ...]
    anchor: str
    lines: list[tuple[int, str, str]]


def chunk_note(note: Note, options: ChunkOptions | None = None) -> list[Chunk]:
    options = options or ChunkOptions()
    sections = _sections(note)
    groups = _merge_small(sections, options)
    pieces: list[_Piece] = []
    for group in groups:
        pieces.extend(_split_to_budget(group, options))
    return _finalise(note, pieces, tables_as_text=options.tables_as_text)


def _sections(note: Note) -> list[_Section]:
    stack: list[tuple[int, str]] = []
    current = _Section((note.title,), "", [])
    sections = [current]
    headings = {h.line: h for h in note.headings}
    for number, (text, kind) in enumerate(zip(note.lines, note.kinds, strict=True), start=1):
        if kind == LINE_META:
            continue
        heading = headings.get(number)
        if heading is not None:
            while stack and stack[-1][0] >= heading.level:
                stack.pop()
            stack.append((heading.level, heading.text))
            path = [t for _, t in stack if t]  # an empty heading (`#` alone) names nothing
            if path and path[0].casefold() == note.title.casefold():
                path = path[1:]  # "# Title" atop a note titled "Title" repeats the title
            current = _Section((note.title, *path), heading.text, [])
            sections.append(current)
        current.lines.append((number, text, kind))
    return [s for s in sections if any(kind not in (LINE_BLANK,) for _, _, kind in s.lines)]


def _has_content(section: _Section) -> bool:
    return any(kind not in (LINE_BLANK, LINE_HEADING) for _, _, kind in section.lines)


def _merge_small(sections: list[_Section], options: ChunkOptions) -> list[_Section]:
    """Joins tiny or empty sections to a neighbour while the result fits the budget."""
    merged: list[_Section] = []
    for section in sections:
        if merged:
            previous = merged[-1]
            tiny = previous.body_tokens < options.min_tokens or section.body_tokens < options.min_tokens
            fits = (
                _prefix_tokens(previous.heading_path) + previous.body_tokens + _all_tokens(section)
                <= options.max_tokens
            )
            if (tiny and fits) or (not _has_content(previous) and fits):
                if not _has_content(previous):
                    # Headings with nothing under them yet: the content, and so the link, is below.
                    previous.heading_path, previous.anchor = section.heading_path, section.anchor
                previous.lines.extend(section.lines)
                continue
        merged.append(_Section(section.heading_path, section.anchor, list(section.lines)))
    return [s for s in merged if _has_content(s)]


def _all_tokens(section: _Section) -> int:
    return sum(_line_tokens(text) for _, text, _ in section.lines)


def _prefix_tokens(heading_path: tuple[str, ...]) -> int:
    return count_tokens(HEADING_SEPARATOR.join(heading_path)) + 1


def _blocks(lines: list[tuple[int, str, str]]) -> list[list[tuple[int, str, str]]]:
    """Paragraphs, lists, whole tables and whole code blocks, split at blank lines."""
    blocks: list[list[tuple[int, str, str]]] = []
    current: list[tuple[int, str, str]] = []
    in_code = False
    for line in lines:
        kind = line[2]
        if kind == LINE_FENCE:
            if not in_code and current:
                blocks.append(current)
                current = []
            current.append(line)
            in_code = not in_code
            if not in_code:
                blocks.append(current)
                current = []
            continue
        if in_code or kind == LINE_CODE:
            current.append(line)
            continue
        if kind == LINE_BLANK:
            if current:
                blocks.append(current)
                current = []
            continue
        starts_table = kind == LINE_TABLE and current and current[-1][2] != LINE_TABLE
        ends_table = kind != LINE_TABLE and current and current[-1][2] == LINE_TABLE
        if kind == LINE_HEADING or starts_table or ends_table:
            if current:
                blocks.append(current)
            current = []
        current.append(line)
    if current:
        blocks.append(current)
    return blocks


def _split_to_budget(section: _Section, options: ChunkOptions) -> list[_Piece]:
    prefix = _prefix_tokens(section.heading_path)
    budget = max(16, options.max_tokens - prefix)
    char_budget = max(200, options.max_chars - len(HEADING_SEPARATOR.join(section.heading_path)) - 2)
    units: list[list[tuple[int, str, str]]] = []
    for block in _blocks(section.lines):
        is_table = all(kind == LINE_TABLE for _, _, kind in block)
        if is_table and options.tables_as_text:
            units.extend(
                _split_table(block, min(budget, options.table_tokens), budget, char_budget, options.table_rows)
            )
        else:
            units.extend(_fit_block(block, budget, char_budget))
    pieces: list[_Piece] = []
    current: list[tuple[int, str, str]] = []
    tokens = chars = 0
    for unit in units:
        unit_tokens = sum(_line_tokens(t) for _, t, _ in unit)
        unit_chars = sum(len(t) + 1 for _, t, _ in unit)
        row_group = options.tables_as_text and any(kind == _REPEATED_HEADER for _, _, kind in unit)
        previous_group = options.tables_as_text and any(kind == _REPEATED_HEADER for _, _, kind in current)
        if current and (
            tokens + unit_tokens > budget or chars + unit_chars > char_budget or row_group or previous_group
        ):
            pieces.append(_Piece(section.heading_path, section.anchor, current))
            current, tokens, chars = [], 0, 0
        current = current + unit
        tokens += unit_tokens
        chars += unit_chars
    if current:
        pieces.append(_Piece(section.heading_path, section.anchor, current))
    return pieces


def _fit_block(block: list[tuple[int, str, str]], budget: int, char_budget: int) -> list[list[tuple[int, str, str]]]:
    """A block that fits stays whole; otherwise split by lines, tables repeating their header."""
    tokens = sum(_line_tokens(t) for _, t, _ in block)
    chars = sum(len(t) + 1 for _, t, _ in block)
    if tokens <= budget and chars <= char_budget:
        return [block]
    is_table = all(kind == LINE_TABLE for _, _, kind in block)
    header = block[:2] if is_table and len(block) > 2 else []
    rows = block[len(header) :]
    repeated = [(number, text, _REPEATED_HEADER) for number, text, _ in header]
    header_tokens = sum(_line_tokens(t) for _, t, _ in header)
    header_chars = sum(len(t) + 1 for _, t, _ in header)
    out: list[list[tuple[int, str, str]]] = []
    current: list[tuple[int, str, str]] = []
    used_tokens, used_chars = header_tokens, header_chars
    for line in rows:
        for part in _split_line(line, budget - header_tokens, char_budget - header_chars):
            part_tokens, part_chars = _line_tokens(part[1]), len(part[1]) + 1
            if current and (used_tokens + part_tokens > budget or used_chars + part_chars > char_budget):
                out.append((repeated if out else header) + current)
                current, used_tokens, used_chars = [], header_tokens, header_chars
            current.append(part)
            used_tokens += part_tokens
            used_chars += part_chars
    if current:
        out.append((repeated if out else header) + current)
    return out


def _split_table(
    block: list[tuple[int, str, str]], table_budget: int, budget: int, char_budget: int, max_rows: int
) -> list[list[tuple[int, str, str]]]:
    """A table that fits `table_budget` stays whole; a larger one becomes groups of at most
    `max_rows` rows and `table_budget` tokens, each under the header. A row too long for a chunk on
    its own is split as plain text: its pieces are not rows, and must not be read against the
    header's columns."""
    tokens = sum(_line_tokens(t) for _, t, _ in block)
    chars = sum(len(t) + 1 for _, t, _ in block)
    if (tokens <= table_budget and chars <= char_budget) or len(block) <= 2:
        return _fit_block(block, budget, char_budget)
    header, rows = block[:2], block[2:]
    repeated = [(number, text, _REPEATED_HEADER) for number, text, _ in header]
    header_tokens = sum(_line_tokens(t) for _, t, _ in header)
    room_tokens = budget - header_tokens  # the most one row may take
    group_tokens = max(1, table_budget - header_tokens)  # the most a group of rows may take
    room_chars = char_budget - sum(len(t) + 1 for _, t, _ in header)
    out: list[list[tuple[int, str, str]]] = []
    group: list[tuple[int, str, str]] = []
    used_tokens = used_chars = 0
    header_placed = False

    def close_group() -> None:
        nonlocal group, used_tokens, used_chars, header_placed
        if group:
            out.append((repeated if header_placed else header) + group)
            header_placed = True
            group, used_tokens, used_chars = [], 0, 0

    for number, text, _ in rows:
        row_tokens, row_chars = _line_tokens(text), len(text) + 1
        if row_tokens > room_tokens or row_chars > room_chars:
            close_group()
            out.extend([part] for part in _split_line((number, text, _ROW_PART), budget, char_budget))
            continue
        if group and (
            len(group) >= max_rows or used_tokens + row_tokens > group_tokens or used_chars + row_chars > room_chars
        ):
            close_group()
        group.append((number, text, LINE_TABLE))
        used_tokens += row_tokens
        used_chars += row_chars
    close_group()
    if not header_placed and out:  # every row was too long: the header still belongs somewhere
        out[0] = header + out[0]
    return out


def _split_line(line: tuple[int, str, str], budget: int, char_budget: int) -> list[tuple[int, str, str]]:
    number, text, kind = line
    if _line_tokens(text) <= budget and len(text) <= char_budget:
        return [line]
    words = text.split(" ")
    parts: list[tuple[int, str, str]] = []
    current: list[str] = []
    for word in words:
        while len(word) > char_budget:  # a URL or base64 blob with no spaces
            if current:
                parts.append((number, " ".join(current), kind))
                current = []
            parts.append((number, word[:char_budget], kind))
            word = word[char_budget:]
        candidate = " ".join([*current, word])
        if current and (count_tokens(candidate) > budget or len(candidate) > char_budget):
            parts.append((number, " ".join(current), kind))
            current = [word]
        else:
            current.append(word)
    if current:
        parts.append((number, " ".join(current), kind))
    return parts


def _finalise(note: Note, pieces: list[_Piece], *, tables_as_text: bool = True) -> list[Chunk]:
    chunks: list[Chunk] = []
    seen: dict[str, int] = {}
    keys = _table_keys(note) if tables_as_text else None
    for ordinal, piece in enumerate(pieces):
        text = _join(piece)
        if not text.strip():
            continue
        own_lines = [number for number, _, kind in piece.lines if kind != _REPEATED_HEADER]
        heading = HEADING_SEPARATOR.join(piece.heading_path)
        body = _join(piece, table_keys=keys) if keys is not None else text
        embed_text = f"{heading}\n\n{body}"
        content_hash = hashlib.sha256(embed_text.encode("utf-8")).hexdigest()[:32]
        duplicate = seen.get(content_hash, 0)
        seen[content_hash] = duplicate + 1
        chunk_id = hashlib.sha256(f"{note.path}\0{content_hash}\0{duplicate}".encode()).hexdigest()[:32]
        chunks.append(
            Chunk(
                id=chunk_id,
                path=note.path,
                title=note.title,
                heading_path=piece.heading_path,
                anchor=_link_safe(piece.anchor),
                line_start=own_lines[0],
                line_end=own_lines[-1],
                text=text,
                embed_text=embed_text,
                hash=content_hash,
                ordinal=ordinal,
            )
        )
    return chunks


def _join(piece: _Piece, *, table_keys: dict[int, int | None] | None = None) -> str:
    """Lines of a piece, dropping its own leading heading (it is in the heading path). Given
    `table_keys` (see `_table_keys`), table rows become sentences led by the column that names
    each row in the note's whole table (the piece may hold one row of it)."""
    lines = piece.lines
    if lines and lines[0][2] == LINE_HEADING and piece.anchor:
        lines = lines[1:]
    out: list[str] = []
    table: list[str] = []
    table_line = 0
    for number, text, kind in [*lines, (0, "", LINE_BLANK)]:
        if kind in (LINE_TABLE, _REPEATED_HEADER):
            table_line = table_line or number
            table.append(text)
            continue
        if table:
            if table_keys is None:
                out.extend(table)
            else:
                out.extend(table_as_text(table, key=table_keys.get(table_line)))
            table, table_line = [], 0
        if kind == LINE_BLANK:
            if out and out[-1] != "":
                out.append("")
            continue
        out.append(text)  # (a piece of an over-long row, _ROW_PART, is plain text here)
    return "\n".join(out).strip()


def _cells(line: str) -> list[str]:
    inner = line.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") else inner
    return [cell.strip().replace("\\|", "|") for cell in inner.replace("\\|", "\x00").split("|")]


def _is_separator(cells: list[str]) -> bool:
    return all(cell and set(cell) <= set(":- ") for cell in cells)


def _table_keys(note: Note) -> dict[int, int | None]:
    """For every table line of the note (1-based), the key column of its whole table: worked out
    once per table, not once per piece (a 2,000-row log is 2,000 pieces)."""
    keys: dict[int, int | None] = {}
    start = 0
    for index in range(len(note.kinds) + 1):
        if index < len(note.kinds) and note.kinds[index] == LINE_TABLE:
            continue
        if index > start:
            key = _key_column(list(note.lines[start:index]))
            keys.update(dict.fromkeys(range(start + 1, index + 1), key))
        start = index + 1
    return keys


def _key_column(lines: list[str]) -> int | None:
    """The column that names each row: the first whose values are all present and all different
    ("Note" on a dashboard whose "Area" repeats; the date of a log). None when no column does."""
    rows = [_cells(line) for line in lines]
    if len(rows) < 3 or not _is_separator(rows[1]):
        return None
    body = [row for row in rows[2:] if not _is_separator(row)]
    for column in range(len(rows[0])):
        values = [row[column].casefold() if column < len(row) else "" for row in body]
        if values and all(values) and len(set(values)) == len(values):
            return column
    return None


def table_as_text(lines: list[str], *, key: int | None = None) -> list[str]:
    """Markdown table rows as "column: value" lines, so each row reads as a sentence of facts.
    With a `key` column, its value leads as the row's subject: "Homelab — Status: Blocked; …"."""
    rows = [[c.replace("\x00", "|") for c in _cells(line)] for line in lines]
    if len(rows) < 2 or not _is_separator(rows[1]):
        return lines  # no header row: keep as written
    header = rows[0]
    out = []
    for row in rows[2:]:
        if _is_separator(row):
            continue
        subject = row[key] if key is not None and key < len(row) else ""
        pairs = [
            f"{name}: {value}" if name else value
            for column, (name, value) in enumerate(zip(header, row, strict=False))
            if value and not (subject and column == key)
        ]
        if subject:
            out.append(f"{subject} — " + "; ".join(pairs) + "." if pairs else f"{subject}.")
        elif pairs:
            out.append("; ".join(pairs) + ".")
    return out


def _link_safe(heading: str) -> str:
    """Obsidian drops these characters from heading links."""
    cleaned = "".join(" " if ch in "#|^[]" else ch for ch in heading)
    return " ".join(cleaned.split())
