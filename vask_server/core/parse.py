"""Markdown note → `Note`: frontmatter, tags, links resolved to readable text, headings with lines.

Pure: the caller reads the file and passes its text. Every line of the file keeps its position in
`Note.lines` (removed content becomes blank), so chunks can cite exact line numbers.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

import yaml
from frontmatter.default_handlers import YAMLHandler

from vask_server.core.links import LinkResolver, note_name
from vask_server.core.models import Heading, Link, Note

LINE_TEXT = "text"
LINE_BLANK = "blank"
LINE_HEADING = "heading"
LINE_FENCE = "fence"
LINE_CODE = "code"
LINE_TABLE = "table"
LINE_META = "meta"  # frontmatter

_FENCE_RE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
# CommonMark: `#` alone, `# ` and `## ##` are (empty) headings too. (`??`: a closing `#`s is tried first.)
_HEADING_RE = re.compile(r"^\s{0,3}(#{1,6})(?:[ \t]+(.*?))??(?:[ \t]+#+)?[ \t]*$")
_CALLOUT_RE = re.compile(r"^((?:\s*>)+)\s*\[!([\w-]+)\][+-]?\s*(.*)$")
_QUOTE_RE = re.compile(r"^(?:\s*>)+\s?")
_BLOCK_ID_RE = re.compile(r"\s\^([A-Za-z0-9-]+)\s*$")
_WIKILINK_RE = re.compile(r"(!?)\[\[([^\[\]\n]+?)\]\]")
_MD_IMAGE_RE = re.compile(r"!\[([^\]\n]*)\]\(([^)\n]*)\)")
_MD_LINK_RE = re.compile(r"\[([^\]\n]+)\]\(([^)\n]+)\)")
# Obsidian tags: letters, digits, _ - /, at least one non-digit; preceded by start or whitespace.
_TAG_RE = re.compile(r"(?:(?<=^)|(?<=[\s(\[,;]))#([\w/-]*[^\W\d][\w/-]*)")
_TABLE_RE = re.compile(r"^\s*\|.*\|\s*$")
_INLINE_CODE_RE = re.compile(r"(`+)(.+?)\1")
_URL_SCHEME_RE = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
_MAX_INDENT = 16
_DEEP_INDENT_RE = re.compile(rf"^[ \t]{{{_MAX_INDENT + 1},}}")


@dataclass
class _State:
    fence: str | None = None
    in_percent_comment: bool = False
    in_html_comment: bool = False
    links: list[Link] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    heading: Heading | None = None  # set by `_clean_line` for a heading line


def normalize_tag(tag: str) -> str:
    return tag.strip().lstrip("#").strip("/").lower()


def normalize_newlines(raw: str) -> str:
    return raw.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


def parse_note(path: str, raw: str, resolver: LinkResolver | None = None) -> Note:
    text = normalize_newlines(raw)
    raw_lines = text.split("\n") if text else []
    if raw_lines and raw_lines[-1] == "" and text.endswith("\n"):
        raw_lines.pop()
    warnings: list[str] = []
    front, body_start = _split_frontmatter(raw_lines, path, warnings)

    lines: list[str] = []
    kinds: list[str] = []
    headings: list[Heading] = []
    state = _State()
    for number, line in enumerate(raw_lines, start=1):
        if number < body_start:
            lines.append("")
            kinds.append(LINE_META)
            continue
        clean, kind = _clean_line(line, path, resolver, state)
        if state.heading is not None:
            headings.append(replace(state.heading, line=number))
            state.heading = None
        lines.append(clean)
        kinds.append(kind)

    title = _first_string(front.get("title")) or note_name(path)
    aliases = tuple(_string_list(front.get("aliases", front.get("alias"))))
    tags = _dedupe(
        [normalize_tag(t) for t in _string_list(front.get("tags", front.get("tag")), split_spaces=True)] + state.tags
    )
    return Note(
        path=path,
        title=title,
        aliases=aliases,
        tags=tuple(t for t in tags if t),
        links=tuple(state.links),
        headings=tuple(headings),
        lines=tuple(lines),
        kinds=tuple(kinds),
        body_start=body_start,
        warnings=tuple(warnings),
        frontmatter=front,
    )


def plain_note(path: str, raw: str, warning: str) -> Note:
    """The note as plain lines, without frontmatter, headings, links or tags: what is indexed when
    `parse_note` fails on it, so that a parser bug costs the note its structure, not its text."""
    text = normalize_newlines(raw)
    lines = text.split("\n") if text else []
    if lines and lines[-1] == "" and text.endswith("\n"):
        lines.pop()
    return Note(
        path=path,
        title=note_name(path),
        aliases=(),
        tags=(),
        links=(),
        headings=(),
        lines=tuple(lines),
        kinds=tuple(LINE_TEXT if line.strip() else LINE_BLANK for line in lines),
        body_start=1,
        warnings=(warning,),
    )


def frontmatter_of(raw: str) -> dict[str, Any]:
    """A note's frontmatter alone, read as `parse_note` reads it (without the rest of the note)."""
    return _split_frontmatter(normalize_newlines(raw).split("\n"), "", [])[0]


def _split_frontmatter(lines: list[str], path: str, warnings: list[str]) -> tuple[dict[str, Any], int]:
    """Returns (frontmatter, first body line). Invalid YAML warns and keeps the body."""
    if not lines or lines[0].strip() != "---":
        return {}, 1
    for index in range(1, len(lines)):
        if lines[index].strip() in ("---", "..."):
            break
    else:
        return {}, 1  # no closing fence: a horizontal rule, not frontmatter
    block = "\n".join(lines[1:index])
    body_start = index + 2
    if not block.strip():
        return {}, body_start
    try:
        loaded = YAMLHandler().load(block)
    except yaml.YAMLError as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        lenient = _lenient_frontmatter(lines[1:index])
        if not lenient:
            warnings.append(f"{path}: invalid YAML frontmatter ({reason}); indexed the body without it")
            return {}, body_start
        kept = ", ".join(lenient)
        warnings.append(f"{path}: invalid YAML frontmatter ({reason}); read it line by line instead, keeping {kept}")
        return lenient, body_start
    if not isinstance(loaded, dict):
        warnings.append(f"{path}: frontmatter is not a mapping; indexed the body without it")
        return {}, body_start
    return {str(k): v for k, v in loaded.items()}, body_start


_FRONT_KEY_RE = re.compile(r"^([^\s#-][^:]*?)[ \t]*:(?:[ \t]+(.*?))?[ \t]*$")
_FRONT_ITEM_RE = re.compile(r"^[ \t]*-(?:[ \t]+(.*?))?[ \t]*$")


def _lenient_frontmatter(lines: list[str]) -> dict[str, Any]:
    """What a line-by-line reading finds in frontmatter that strict YAML rejects but people write
    (`- @name`, a quoted value with quotes inside, `key: value` followed by `- item`s): top-level
    `key: value` pairs and `- item` lists under a key. Nested mappings are left out."""
    found: dict[str, Any] = {}
    key: str | None = None
    for line in lines:
        match = _FRONT_KEY_RE.match(line)
        if match:
            key = match.group(1).strip().strip("\"'")
            found[key] = _lenient_scalar(match.group(2) or "")
            continue
        item = _FRONT_ITEM_RE.match(line)
        if item and key is not None:
            value = _lenient_scalar(item.group(1) or "")
            if value is not None:
                previous = found[key]
                items = previous if isinstance(previous, list) else ([] if previous is None else [previous])
                found[key] = [*items, value]
        elif line[:1] in (" ", "\t") and ":" in line:
            key = None  # a nested mapping: its items are not the top-level key's
    return {k: v for k, v in found.items() if k and v is not None}


def _lenient_scalar(text: str) -> Any:
    """One value as YAML reads it alone (quotes, `[a, b]`, dates), else as the text written."""
    text = text.strip()
    if not text:
        return None
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError:
        pass
    else:
        if not isinstance(value, dict):  # (`a: b` as a value is text, not a mapping)
            return value
    if len(text) > 1 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    if text.startswith("["):  # an unclosed flow list, `[a, b`
        return [part.strip() for part in text.strip("[]").split(",") if part.strip()]
    return text


def _clean_line(line: str, path: str, resolver: LinkResolver | None, state: _State) -> tuple[str, str]:
    if state.fence is not None:
        stripped = line.strip()
        if stripped.startswith(state.fence[0] * len(state.fence)) and not stripped.strip(state.fence[0]):
            state.fence = None
            return line, LINE_FENCE
        return line, LINE_CODE
    without_comments = _strip_comments(line, state)
    fence = _FENCE_RE.match(without_comments)
    if fence:
        state.fence = fence.group(1)
        return without_comments, LINE_FENCE
    if not without_comments.strip():
        return "", LINE_BLANK
    heading = _HEADING_RE.match(without_comments)
    if heading:
        # Level and text come from the line as written, not from its rendering: that can be empty
        # (`# ![](x.png)`), and `# ` rendered is `#`, which is no heading line.
        if not heading.group(2):
            state.heading = Heading(len(heading.group(1)), "", 0)
            return without_comments.rstrip(), LINE_HEADING
        start, end = heading.span(2)
        text = _render_inline(heading.group(2), path, resolver, state, collect_tags=False)
        state.heading = Heading(len(heading.group(1)), text.strip(), 0)
        return (without_comments[:start] + text + without_comments[end:]).rstrip(), LINE_HEADING
    callout = _CALLOUT_RE.match(without_comments)
    if callout:
        kind = callout.group(2).replace("-", " ").capitalize()
        title = callout.group(3).strip()
        rendered = f"{kind}: {title}" if title else f"{kind}:"
        return _render_inline(rendered, path, resolver, state), LINE_TEXT
    # Each pattern needs a character that most lines lack: test for it first (a sub is costly).
    content = _QUOTE_RE.sub("", without_comments) if ">" in without_comments else without_comments
    content = _BLOCK_ID_RE.sub("", content) if "^" in content else content
    if content[:1] in (" ", "\t"):
        content = _DEEP_INDENT_RE.sub(" " * _MAX_INDENT, content)  # a deep list is not pages of spaces
    kind = LINE_TABLE if _TABLE_RE.match(content) else LINE_TEXT
    return _render_inline(content, path, resolver, state), kind


def _strip_comments(line: str, state: _State) -> str:
    """Drops `%% … %%` and `<!-- … -->`, which may span lines."""
    out: list[str] = []
    position = 0
    while position < len(line):
        if state.in_percent_comment:
            end = line.find("%%", position)
            if end < 0:
                return "".join(out)
            state.in_percent_comment = False
            position = end + 2
        elif state.in_html_comment:
            end = line.find("-->", position)
            if end < 0:
                return "".join(out)
            state.in_html_comment = False
            position = end + 3
        else:
            percent = line.find("%%", position)
            html = line.find("<!--", position)
            starts = [s for s in (percent, html) if s >= 0]
            if not starts:
                out.append(line[position:])
                break
            start = min(starts)
            out.append(line[position:start])
            if start == percent:
                state.in_percent_comment = True
                position = start + 2
            else:
                state.in_html_comment = True
                position = start + 4
    return "".join(out)


def _render_inline(
    text: str, path: str, resolver: LinkResolver | None, state: _State, *, collect_tags: bool = True
) -> str:
    """Links become readable text, tags lose their `#`; inline code is left exactly as written."""
    if "`" not in text:
        return _render_prose(text, path, resolver, state, collect_tags).rstrip()
    pieces: list[str] = []
    position = 0
    for code in _INLINE_CODE_RE.finditer(text):
        pieces.append(_render_prose(text[position : code.start()], path, resolver, state, collect_tags))
        pieces.append(code.group(0))
        position = code.end()
    pieces.append(_render_prose(text[position:], path, resolver, state, collect_tags))
    return "".join(pieces).rstrip()


def _render_prose(text: str, path: str, resolver: LinkResolver | None, state: _State, collect_tags: bool) -> str:
    def wikilink(match: re.Match[str]) -> str:
        link, display = _parse_wikilink(match.group(2), bool(match.group(1)), path, resolver)
        state.links.append(link)
        return display

    def image(match: re.Match[str]) -> str:
        return match.group(1)

    def md_link(match: re.Match[str]) -> str:
        label, url = match.group(1), match.group(2).strip().split(" ")[0].strip("<>")
        if url and not _URL_SCHEME_RE.match(url) and not url.startswith("#"):
            target, _, heading = url.partition("#")
            resolved = resolver.resolve(target, path) if resolver else None
            state.links.append(Link(target=target, resolved=resolved, heading=heading or None, alias=label))
        return label

    def tag(match: re.Match[str]) -> str:
        if collect_tags:
            state.tags.append(normalize_tag(match.group(1)))
        return match.group(1)

    # Each pattern needs a literal that most prose lacks: test for it first (a sub is costly).
    if "[[" in text:
        text = _WIKILINK_RE.sub(wikilink, text)
    if "](" in text:
        text = _MD_IMAGE_RE.sub(image, text)
        text = _MD_LINK_RE.sub(md_link, text)
    return _TAG_RE.sub(tag, text) if "#" in text else text


def _parse_wikilink(inner: str, embed: bool, path: str, resolver: LinkResolver | None) -> tuple[Link, str]:
    target_part, _, alias = inner.partition("|")
    target, _, fragment = target_part.partition("#")
    target = target.strip()
    block: str | None = None
    heading: str | None = None
    fragment = fragment.strip()
    if fragment.startswith("^"):
        block = fragment[1:]
    elif fragment:
        heading = fragment.split("#")[-1].strip()  # [[Note#H1#H2]] points at H2
    alias_text = alias.strip() or None
    resolved = resolver.resolve(target, path) if resolver is not None else None
    link = Link(target=target, resolved=resolved, heading=heading, block=block, alias=alias_text, embed=embed)
    name = note_name(target) if target else note_name(path)
    if alias_text:
        display = alias_text
    elif heading and target:
        display = f"{name} — {heading}"
    elif heading:
        display = heading
    else:
        display = name
    return link, display


def _first_string(value: Any) -> str | None:
    if isinstance(value, str) and value.strip():
        return value.strip()
    if isinstance(value, list) and value and isinstance(value[0], str):
        return value[0].strip() or None
    return None


def _string_list(value: Any, *, split_spaces: bool = False) -> list[str]:
    """A YAML list or a comma (and for tags, space) separated string, as clean strings."""
    if value is None:
        return []
    items: Iterable[Any] = value if isinstance(value, list | tuple) else [value]
    out: list[str] = []
    for item in items:
        if item is None:
            continue
        text = str(item)
        separators = r"[,\s]+" if split_spaces else r","
        out.extend(part.strip() for part in re.split(separators, text) if part.strip())
    return _dedupe(out)


def _dedupe(items: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for item in items:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out
