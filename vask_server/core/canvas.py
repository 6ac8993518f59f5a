"""A JSON Canvas board (`.canvas`, jsoncanvas.org) → a Note, so it is chunked, embedded and searched
as any note is.

The board becomes lines in reading order (top to bottom, then left to right): each labelled group
is a heading (a group inside another one level deeper), followed by the cards that lie inside it.
A text card is Markdown, parsed as a note's body is (its links, tags and headings count, its
headings one level below its group's); a file card becomes a link to its file (for the link graph
and related notes), a link card its URL, and a labelled edge a line "From → label → To" after the
cards of the group its start lies in. Line numbers count these lines, not the file's JSON.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from vask_server.core.chunk import ChunkOptions
from vask_server.core.describe import sectioned_chunks
from vask_server.core.filetypes import display_name
from vask_server.core.links import LinkResolver, note_name
from vask_server.core.models import Chunk, Heading, Link, Note
from vask_server.core.parse import LINE_BLANK, LINE_HEADING, parse_note

_MAX_LEVEL = 6
_NAME_CHARS = 60  # how much of a text card names it in an edge's line


class CanvasError(ValueError):
    """The file is not a JSON Canvas board: why, in words a person can act on."""


@dataclass
class _Node:
    id: str
    type: str
    x: float
    y: float
    width: float
    height: float
    data: Mapping[str, Any]
    children: list[_Node] = field(default_factory=list)

    @property
    def area(self) -> float:
        return self.width * self.height

    def contains(self, other: _Node) -> bool:
        cx, cy = other.x + other.width / 2, other.y + other.height / 2
        return self is not other and self.x <= cx <= self.x + self.width and self.y <= cy <= self.y + self.height


def canvas_note(path: str, data: object, resolver: LinkResolver | None = None) -> Note:
    """The board as a Note. Raises CanvasError when `data` (parsed JSON) is not a board."""
    nodes, edges, warnings = _read(path, data)
    builder = _Builder(path, resolver)
    by_id = {node.id: node for node in nodes}
    groups = [n for n in nodes if n.type == "group"]
    top: list[_Node] = []
    parent_of: dict[str, str] = {}
    for node in nodes:
        around = [g for g in groups if g.contains(node) and not (node.type == "group" and g.area <= node.area)]
        if around:
            parent = min(around, key=lambda g: g.area)
            parent.children.append(node)
            parent_of[node.id] = parent.id
        else:
            top.append(node)
    edges_by_group: dict[str | None, list[Mapping[str, Any]]] = {}
    for edge in edges:
        if isinstance(edge.get("label"), str) and edge["label"].strip():
            edges_by_group.setdefault(parent_of.get(str(edge.get("fromNode"))), []).append(edge)
    # The title as a heading first: cards outside every group sit under it (the chunker leaves a
    # heading that repeats the title out of the heading path), and a card cannot be read as frontmatter.
    title = display_name(path)
    builder.heading(1, title)
    builder.place(top, 0, by_id, edges_by_group, None)
    return Note(
        path=path,
        title=title,
        aliases=(),
        tags=tuple(dict.fromkeys(builder.tags)),
        links=tuple(builder.links),
        headings=tuple(builder.headings),
        lines=tuple(builder.lines),
        kinds=tuple(builder.kinds),
        body_start=1,
        warnings=tuple(warnings),
    )


def canvas_chunks(note: Note, options: ChunkOptions | None = None, *, with_record: bool = True) -> list[Chunk]:
    """Chunks that follow the board's groups: a small group is not merged into its neighbour, and
    every chunk opens the board itself (a canvas has no headings to link to); plus, with
    `with_record`, the board's note-level record."""
    return sectioned_chunks(note, options, record_of=note if with_record else None)


def _read(path: str, data: object) -> tuple[list[_Node], list[Mapping[str, Any]], list[str]]:
    if not isinstance(data, dict):
        raise CanvasError(f"not a JSON Canvas board: the file holds a JSON {type(data).__name__}, not an object")
    raw_nodes = data.get("nodes", [])
    raw_edges = data.get("edges", [])
    if not isinstance(raw_nodes, list) or not isinstance(raw_edges, list):
        raise CanvasError("not a JSON Canvas board: 'nodes' and 'edges' must be lists")
    warnings: list[str] = []
    nodes: list[_Node] = []
    for index, raw in enumerate(raw_nodes):
        node = _node(raw)
        if node is None:
            warnings.append(f"{path}: node {index + 1} is not a card with an id, a type and a position; left out")
            continue
        nodes.append(node)
    nodes.sort(key=lambda n: (n.y, n.x))
    edges: list[Mapping[str, Any]] = [edge for edge in raw_edges if isinstance(edge, dict)]
    return nodes, edges, warnings


def _node(raw: object) -> _Node | None:
    if not isinstance(raw, dict) or not isinstance(raw.get("id"), str) or not isinstance(raw.get("type"), str):
        return None
    try:
        x, y, width, height = (float(raw.get(key, 0)) for key in ("x", "y", "width", "height"))
    except (TypeError, ValueError):
        return None
    return _Node(raw["id"], raw["type"], x, y, max(width, 0.0), max(height, 0.0), raw)


class _Builder:
    def __init__(self, path: str, resolver: LinkResolver | None) -> None:
        self.path = path
        self.resolver = resolver
        self.lines: list[str] = []
        self.kinds: list[str] = []
        self.headings: list[Heading] = []
        self.links: list[Link] = []
        self.tags: list[str] = []

    def heading(self, level: int, text: str) -> None:
        self.lines.append(text)
        self.kinds.append(LINE_HEADING)
        self.headings.append(Heading(level, text, len(self.lines)))

    def blank(self) -> None:
        if self.kinds and self.kinds[-1] != LINE_BLANK:
            self.lines.append("")
            self.kinds.append(LINE_BLANK)

    def markdown(self, text: str, depth: int) -> None:
        """A card's Markdown, parsed on its own (an unclosed fence or comment stays inside its
        card); a blank line in front so that a leading `---` is text, not frontmatter."""
        card = parse_note(self.path, "\n" + text, self.resolver)
        offset = len(self.lines) - 1  # (the card's line 1 is the blank added in front)
        for heading in card.headings:
            self.headings.append(Heading(min(heading.level + depth, _MAX_LEVEL), heading.text, heading.line + offset))
        self.lines.extend(card.lines[1:])
        self.kinds.extend(card.kinds[1:])
        self.links.extend(card.links)
        self.tags.extend(card.tags)
        self.blank()

    def place(
        self,
        nodes: list[_Node],
        depth: int,
        by_id: Mapping[str, _Node],
        edges_by_group: Mapping[str | None, list[Mapping[str, Any]]],
        group: _Node | None,
    ) -> None:
        # Cards first, then the groups inside: a group's heading would otherwise take the cards
        # that follow it in reading order but lie outside it.
        for node in nodes:
            if node.type != "group":
                self.card(node, depth)
        for edge in edges_by_group.get(group.id if group else None, []):
            start, end = by_id.get(str(edge.get("fromNode"))), by_id.get(str(edge.get("toNode")))
            if start is not None and end is not None:
                self.lines.append(f"{_name(start)} → {' '.join(str(edge['label']).split())} → {_name(end)}")
                self.kinds.append("text")
        self.blank()
        for node in nodes:
            if node.type != "group":
                continue
            label = node.data.get("label")
            inner = depth
            if isinstance(label, str) and label.strip():
                inner = min(depth + 1, _MAX_LEVEL - 1)
                self.heading(inner, " ".join(label.split()))
            self.place(node.children, inner, by_id, edges_by_group, node)

    def card(self, node: _Node, depth: int) -> None:
        data = node.data
        if node.type == "text" and isinstance(data.get("text"), str):
            self.markdown(data["text"], depth)
        elif node.type == "file" and isinstance(data.get("file"), str):
            subpath = data.get("subpath") if isinstance(data.get("subpath"), str) else ""
            self.markdown(f"[[{data['file']}{subpath}]]", depth)
        elif node.type == "link" and isinstance(data.get("url"), str):
            self.markdown(data["url"], depth)


def _name(node: _Node) -> str:
    """How an edge's line names a card: a text card by its first line, a file by its name."""
    data = node.data
    if node.type == "text" and isinstance(data.get("text"), str):
        text: str = data["text"]
        first = next((line.strip(" #") for line in text.splitlines() if line.strip()), "")
        return first if len(first) <= _NAME_CHARS else first[: _NAME_CHARS - 1] + "…"
    if node.type == "file" and isinstance(data.get("file"), str):
        return note_name(str(data["file"]))
    if node.type == "group" and isinstance(data.get("label"), str):
        return str(data["label"])
    if node.type == "link" and isinstance(data.get("url"), str):
        return str(data["url"])
    return "a card"  # (a card of an unknown type)
