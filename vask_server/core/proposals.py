"""Proposed changes to notes, as plain data, and the text work behind them: a link put where a note
already names the linked note (Obsidian's "link unlinked mention") or under a heading, an edit made
of exact replacements, and the unified diff a person reads before approving.

Pure: texts in, texts out. The caller reads the note, hashes its bytes and writes the result.
"""

from __future__ import annotations

import difflib
import hashlib
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, Literal
from urllib.parse import quote

Kind = Literal["link", "edit", "create"]
Status = Literal["pending", "applied", "rejected", "undone"]
Placement = Literal["mention", "heading"]
KINDS: tuple[Kind, ...] = ("link", "edit", "create")
STATUSES: tuple[Status, ...] = ("pending", "applied", "rejected", "undone")
DEFAULT_HEADING = "Related"
LINKS_SOURCE = "links"  # the source of the link suggestions vask makes itself


def content_hash(text: str) -> str:
    """The SHA-256 of a note's bytes (its text as UTF-8): what a proposal's base is checked by."""
    return bytes_hash(text.encode("utf-8"))


def bytes_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class LinkEdit:
    """A link added to a note, and where."""

    after: str  # the note's whole text with the link
    placement: Placement  # "mention": text already there became the link; "heading": a list item under a heading
    line: int  # 1-based line of the link in `after`
    shown: str  # the note's own words that became the link (mention), or the link's name (heading)
    markup: str  # the link as written: [[Target|shown]], [[Target]], or [shown](Target.md)
    heading: str | None = None  # the heading it went under (placement "heading")
    heading_created: bool = False  # that heading was added, at the end of the note


@dataclass(frozen=True)
class Proposal:
    """One proposed change to one note, and what became of it.

    `before` is the note's text when proposed (empty for a new note) and `base_hash` its bytes' hash
    (None: the note must not exist); the change is applied only while the note still has that
    content. `after` is the whole text it would have. Once applied, `after_hash` is what undo checks:
    the note is put back to `before`, byte for byte, only while it still has `after`.
    """

    id: str
    kind: Kind
    path: str
    base_hash: str | None
    before: str
    after: str
    source: str  # who made it: "links" (vask's link suggestions), or the label a proposer gave
    device: str  # the token that proposed it
    created: str  # ISO 8601, UTC
    summary: str  # one line a person reads in a list
    reason: str = ""  # the proposer's why, when it said
    status: Status = "pending"
    link: dict[str, Any] | None = None  # a link's target, placement, line, shown words, markup, heading
    decided: str | None = None  # when it was applied or rejected
    decided_by: str | None = None  # the device (or "cli") that did
    written_by: str | None = None  # "server", or "plugin" when Obsidian wrote it (Vault.process)
    undone: str | None = None
    undone_by: str | None = None
    events: tuple[dict[str, str], ...] = field(default=())  # [{"at", "action", "by"}], oldest first

    @property
    def after_hash(self) -> str:
        return content_hash(self.after)

    def to_dict(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["events"] = [dict(e) for e in self.events]
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Proposal:
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        values["events"] = tuple(dict(e) for e in values.get("events") or ())
        return cls(**values)


@dataclass(frozen=True)
class ChangeRequest:
    """A change someone proposes (through the API, or an agent through the MCP door): a note's new
    text whole (`content`), or exact replacements in it (`edits`, each `old` found exactly once), or,
    with `kind` "create", a new note's text."""

    kind: Literal["edit", "create"]
    path: str
    content: str | None = None
    edits: tuple[tuple[str, str], ...] = ()
    source: str = "api"  # who or what proposes it, as the person will see it ("claude-desktop")
    reason: str = ""  # why, in the proposer's words


# -- diffs ----------------------------------------------------------------------------------------

_NO_NEWLINE = "\\ No newline at end of file\n"


def unified_diff(path: str, before: str, after: str, *, created: bool = False, context: int = 3) -> str:
    """The change as `git diff` shows it: `--- a/path`, `+++ b/path`, hunks with `context` lines
    around each; a last line without a newline is marked as git marks it."""
    old = _diff_lines(before)
    new = _diff_lines(after)
    lines = difflib.unified_diff(
        old, new, fromfile="/dev/null" if created else f"a/{path}", tofile=f"b/{path}", n=context
    )
    return "".join(lines)


def _diff_lines(text: str) -> list[str]:
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith(("\n", "\r")):
        lines[-1] += "\n" + _NO_NEWLINE
    return lines


# -- edits ----------------------------------------------------------------------------------------


class EditMismatch(ValueError):
    """An exact replacement whose old text the note does not hold exactly once."""


def apply_replacements(text: str, edits: Sequence[tuple[str, str]]) -> str:
    """`text` with each (old, new) applied in turn; each `old` must occur exactly once in the text
    as it is by then, so that an edit cannot land somewhere its author did not mean."""
    for number, (old, new) in enumerate(edits, start=1):
        if not old:
            raise EditMismatch(f"edit {number}: 'old' is empty")
        count = text.count(old)
        if count != 1:
            where = "is not in the note" if count == 0 else f"occurs {count} times in the note"
            raise EditMismatch(f"edit {number}: its 'old' text {where}")
        text = text.replace(old, new, 1)
    return text


def newline_of(text: str) -> str:
    """The note's own line ending: a link added to a CRLF note ends its lines with CRLF too."""
    return "\r\n" if "\r\n" in text else "\n"


# -- where a note's text may become a link --------------------------------------------------------

_FENCE = re.compile(r"[ \t]{0,3}(`{3,}|~{3,})")
# Spans inside a line of prose that are not the note's own running words: comments, math, code,
# links and embeds, URLs, HTML, tags and block ids.
_SKIPPED = re.compile(
    r"%%.*?%%"
    r"|<!--.*?-->"
    r"|\$\$.*?\$\$"
    r"|(`+).+?\1"
    r"|!?\[\[[^\]\n]*\]\]"
    r"|!?\[[^\]\n]*\]\([^)\n]*\)"
    r"|\b[A-Za-z][A-Za-z0-9+.-]*://[^\s)>\]]+"
    r"|<[^>\n]+>"
    r"|(?<![^\s(\[,;])#[^\s#]+"
    r"|\s\^[A-Za-z0-9-]+[ \t]*\r?$",
    re.S | re.M,
)
_HEADING_LINE = re.compile(r"[ \t]{0,3}(#{1,6})(?:[ \t]+(.*?))??(?:[ \t]+#+)?[ \t]*$")
_TABLE_LINE = re.compile(r"[ \t]*\|.*\|[ \t]*$")
_LIST_LINE = re.compile(r"[ \t]*(?:[-*+]|\d+[.)])[ \t]")
# Characters a wikilink's name cannot carry (Obsidian refuses them in file names)
_NOT_IN_NAMES = set("[]|#^\n\r")


@dataclass(frozen=True)
class _Line:
    start: int  # offset of the line in the text
    text: str  # without its line ending
    end: int  # offset after the line ending
    kind: str  # "front", "code", "heading", "table", "text"


def _lines(text: str) -> list[_Line]:
    """The note's lines with what each is: frontmatter, code (fenced, fences included), heading,
    table row or prose."""
    out: list[_Line] = []
    offset = 0
    raw = text.splitlines(keepends=True)
    front_end = _frontmatter_lines(raw)
    fence: str | None = None
    for number, line in enumerate(raw):
        body = line.rstrip("\r\n")
        start, offset = offset, offset + len(line)
        if number < front_end:
            kind = "front"
        elif fence is not None:
            kind = "code"
            stripped = body.strip()
            if stripped.startswith(fence) and not stripped.strip(fence[0]):
                fence = None
        elif match := _FENCE.match(body):
            fence = match.group(1)
            kind = "code"
        elif _HEADING_LINE.match(body):
            kind = "heading"
        elif _TABLE_LINE.match(body):
            kind = "table"
        else:
            kind = "text"
        out.append(_Line(start, body, offset, kind))
    return out


def _frontmatter_lines(raw: list[str]) -> int:
    """How many lines the frontmatter takes (its fences included); 0 without one."""
    if not raw or raw[0].lstrip("\ufeff").rstrip("\r\n").strip() != "---":
        return 0
    for number in range(1, len(raw)):
        if raw[number].rstrip("\r\n").strip() in ("---", "..."):
            return number + 1
    return 0  # no closing fence: a rule, not frontmatter


def prose_mask(text: str) -> bytearray:
    """1 for each character of `text` that is not the note's running prose: frontmatter, code,
    headings (a link there would change the heading's anchor), table rows (a link's `|` would split
    the cell), comments, math, links and embeds, URLs, HTML, tags and block ids."""
    mask = bytearray(len(text))
    run_start: int | None = None  # prose lines are scanned in runs, so a comment may span lines

    def scan(start: int, end: int) -> None:
        for match in _SKIPPED.finditer(text, start, end):
            mask[match.start() : match.end()] = b"\x01" * (match.end() - match.start())

    for line in _lines(text):
        if line.kind == "text":
            run_start = line.start if run_start is None else run_start
            continue
        if run_start is not None:
            scan(run_start, line.start)
            run_start = None
        mask[line.start : line.end] = b"\x01" * (line.end - line.start)
    if run_start is not None:
        scan(run_start, len(text))
    return mask


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_"


def _spaced(char: str) -> bool:
    """A letter of a script that separates words with spaces (not Chinese, Japanese or Thai, where a
    name is a mention wherever its characters stand)."""
    name = unicodedata.name(char, "")
    return _is_word(char) and not any(s in name for s in ("CJK", "HIRAGANA", "KATAKANA", "HANGUL", "THAI"))


def usable_names(names: Iterable[str]) -> list[str]:
    """The names a mention may match, longest first: each once (ignoring case), at least two
    characters, and none with a character a link's name cannot hold."""
    seen: set[str] = set()
    out: list[str] = []
    for name in names:
        name = name.strip()
        if len(name) < 2 or _NOT_IN_NAMES & set(name) or name.casefold() in seen:
            continue
        seen.add(name.casefold())
        out.append(name)
    return sorted(out, key=lambda n: (-len(n), n))


@dataclass(frozen=True)
class Mention:
    start: int
    end: int
    shown: str  # the words as the note writes them


def find_mention(text: str, names: Iterable[str], mask: bytearray | None = None) -> Mention | None:
    """The first place where one of `names` stands in the note's prose as words of their own
    (ignoring case), not already a link and not in code, frontmatter, a heading or a comment; the
    longest name where several start at one place."""
    mask = prose_mask(text) if mask is None else mask
    best: Mention | None = None
    for name in usable_names(names):
        pattern = re.compile(re.escape(name), re.IGNORECASE)
        for match in pattern.finditer(text):
            start, end = match.span()
            if best is not None and start >= best.start:
                break
            if any(mask[start:end]):
                continue
            if _spaced(name[0]) and start > 0 and _spaced(text[start - 1]):
                continue
            if _spaced(name[-1]) and end < len(text) and _spaced(text[end]):
                continue
            best = Mention(start, end, match.group(0))
            break
    return best


# -- a link, written ------------------------------------------------------------------------------


def link_markup(link_name: str, shown: str | None, *, markdown: bool = False, target_path: str = "") -> str:
    """A link as Obsidian writes it: `[[name]]`, `[[name|shown]]` when the words differ from the
    name, or with "Use [[Wikilinks]]" off, `[shown](name.md)` with the path percent-encoded."""
    if markdown:
        path = link_name
        if target_path.lower().endswith(".md") and not path.lower().endswith(".md"):
            path += ".md"
        # (brackets and spaces encoded: a Markdown link's target ends at the first `)`)
        encoded = quote(path, safe="/-_.~!*'")
        return f"[{shown or link_name.rsplit('/', 1)[-1]}]({encoded})"
    if shown is None or shown == link_name:
        return f"[[{link_name}]]"
    return f"[[{link_name}|{shown}]]"


def link_at_mention(text: str, mention: Mention, markup: str) -> LinkEdit:
    after = text[: mention.start] + markup + text[mention.end :]
    line = text.count("\n", 0, mention.start) + 1
    return LinkEdit(after, "mention", line, mention.shown, markup)


def _heading_text(line: str) -> tuple[int, str] | None:
    match = _HEADING_LINE.match(line)
    if not match:
        return None
    return len(match.group(1)), (match.group(2) or "").strip()


def link_under_heading(text: str, heading: str, markup: str) -> LinkEdit:
    """`- markup` as the last item under the note's heading `heading` (its first, ignoring case and
    level), after what that section holds; the heading made, as `## heading`, at the end of the note
    when it has none."""
    nl = newline_of(text)
    item = f"- {markup}"
    lines = _lines(text)
    wanted = heading.strip().casefold()
    found: tuple[int, int, str] | None = None  # (line index, level, text as written)
    for index, line in enumerate(lines):
        parsed = _heading_text(line.text) if line.kind == "heading" else None
        if parsed and parsed[1].casefold() == wanted:
            found = (index, *parsed)
            break
    if found is None:
        body = text
        if body and not body.endswith(("\n", "\r")):
            body += nl
        if body.strip() and not body.endswith(nl + nl):
            body += nl  # (a blank line before the new heading)
        head = body + f"## {heading.strip()}{nl}"
        return LinkEdit(
            head + item + nl, "heading", head.count("\n") + 1, markup, markup, heading.strip(), heading_created=True
        )
    at, level, written = found
    end = len(lines)  # the section: up to the next heading of its level or above
    for index in range(at + 1, len(lines)):
        parsed = _heading_text(lines[index].text) if lines[index].kind == "heading" else None
        if parsed and parsed[0] <= level:
            end = index
            break
    last = at  # the section's last line that is not blank
    for index in range(at + 1, end):
        if lines[index].text.strip():
            last = index
    anchor = lines[last]
    head = text[: anchor.end]
    if not head.endswith(("\n", "\r")):
        head += nl
    if last != at and not _LIST_LINE.match(anchor.text):
        head += nl  # (a list after a paragraph starts after a blank line)
    after = head + item + nl + text[anchor.end :]
    return LinkEdit(after, "heading", head.count("\n") + 1, markup, markup, written)


def propose_link(
    text: str,
    names: Iterable[str],
    link_name: str,
    *,
    heading: str = DEFAULT_HEADING,
    markdown: bool = False,
    target_path: str = "",
) -> LinkEdit:
    """The link to a note named `names` (its file name, title, aliases) that `text` should get:
    where the note already names it, those words become the link; otherwise a list item under
    `heading`. `link_name` is how the link names its note (LinkResolver.link_text)."""
    mention = find_mention(text, names)
    if mention is not None:
        markup = link_markup(link_name, mention.shown, markdown=markdown, target_path=target_path)
        return link_at_mention(text, mention, markup)
    markup = link_markup(link_name, None, markdown=markdown, target_path=target_path)
    return link_under_heading(text, heading, markup)
