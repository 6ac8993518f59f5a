"""Scope in a question: `[[Note]]`, `#tag` and `path:Folder` (Obsidian's own search operator) limit
retrieval to those notes, tags (with their children) or folders. Pure: what the index holds comes in
as a `Directory`.

"in [[Project X]], what did we decide about pricing?" → search "what did we decide about pricing?"
within Project X. A mention that matches nothing is an error naming the closest names, never a silent
search of the whole vault.
"""

from __future__ import annotations

import difflib
import functools
import posixpath
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from vask_server.core.links import note_name
from vask_server.core.parse import normalize_tag
from vask_server.errors import ScopeKind, ScopeMiss

# [[Note]], [[Folder/Note|alias]], [[Note#Heading]]: the target before | and #. Brackets around nothing
# but spaces ("names not in [[ ]]") are the link syntax talked about, not a note named.
_NOTE_RE = re.compile(r"\[\[(?!\s*\]\])([^\[\]|#\n]+?)(?:#[^\[\]|\n]*)?(?:\|[^\[\]\n]*)?\]\]")
# #tag as Obsidian writes it: letters, digits, _ - /, at least one non-digit, after a space or the start
_TAG_RE = re.compile(r"(?:(?<=^)|(?<=[\s(,;]))#([\w/-]*[^\W\d][\w/-]*)")
# path:Folder or path:"Folder with spaces" (a question mark or stop after an unquoted one is not its)
_FOLDER_RE = re.compile(r"(?<![\w])path:(?:\"([^\"\n]+)\"|(\S+?))(?=[?!.,;:]*(?:\s|$))", re.IGNORECASE)
# "in [[X]]," "about #tag": the word that introduced a mention goes with it
_LEAD_RE = re.compile(r"(?:\b(?:in|within|from|about|for|inside|en|dentro de|sobre)\s+)$", re.IGNORECASE)
_CLOSEST = 3


@dataclass(frozen=True)
class Mention:
    kind: ScopeKind
    written: str  # as in the question: "[[Project X]]", "#running", 'path:"01 Projects"'
    value: str  # the name, tag or folder it names


@dataclass(frozen=True)
class Scope:
    notes: tuple[str, ...] = ()  # vault-relative paths
    tags: tuple[str, ...] = ()  # the tags named, and the nested tags they include
    folders: tuple[str, ...] = ()

    def is_empty(self) -> bool:
        return not (self.notes or self.tags or self.folders)

    def to_dict(self) -> dict[str, list[str]]:
        return {"notes": list(self.notes), "tags": list(self.tags), "folders": list(self.folders)}

    def describe(self) -> str:
        """One line for people: `[[Note]], #tag, path:"Folder"`."""
        return ", ".join(
            [f"[[{note_name(p)}]]" for p in self.notes]
            + [f"#{t}" for t in self.tags]
            + [f'path:"{f}"' for f in self.folders]
        )


@dataclass(frozen=True)
class Directory:
    """What the index holds that a mention can name."""

    notes: Sequence[str]  # vault-relative paths: notes with .md, boards and PDFs with their extension
    tags: Iterable[str]  # lower-case, without '#'
    names: Mapping[str, Sequence[str]] = field(default_factory=dict)  # path → its title and aliases

    @functools.cached_property
    def by_name(self) -> dict[str, list[str]]:
        """Lower-case name → the notes it names: file name, path without .md, title, aliases (as
        Obsidian resolves a link; a name two notes share names both). A board or PDF is named
        with its extension, as Obsidian links to it: [[Roadmap.canvas]], [[Handbook.pdf]]."""
        out: dict[str, list[str]] = {}
        for path in self.notes:
            keys = {note_name(path).lower(), path.lower().removesuffix(".md")}
            keys |= {n.lower() for n in self.names.get(path, ())}
            for key in keys - {""}:
                out.setdefault(key, []).append(path)
        return out

    @functools.cached_property
    def sorted_tags(self) -> list[str]:
        return sorted(set(self.tags))

    def folders(self) -> set[str]:
        out: set[str] = set()
        for path in self.notes:
            folder = posixpath.dirname(path)
            while folder:
                out.add(folder)
                folder = posixpath.dirname(folder)
        return out


@dataclass(frozen=True)
class Unmatched:
    mention: Mention
    closest: tuple[str, ...]  # how to write what the index does hold, closest first

    def message(self) -> str:
        what = {"note": "note", "tag": "tag", "folder": "folder"}[self.mention.kind]
        return f"No {what} {self.mention.written} in the index."

    def miss(self) -> ScopeMiss:
        """This miss as the error sends it to a client."""
        return ScopeMiss(self.mention.kind, self.mention.written, self.closest)

    def hint(self) -> str:
        if not self.closest:
            return "Check the spelling, or ask without it to search every note."
        return f"Closest: {', '.join(self.closest)}."


def find_mentions(question: str) -> tuple[list[Mention], str]:
    """The scope mentions of a question, and the question without them (and the "in" before them)."""
    mentions: list[Mention] = []
    spans: list[tuple[int, int]] = []
    for match in _NOTE_RE.finditer(question):
        mentions.append(Mention("note", match[0], match[1].strip()))
        spans.append(match.span())
    for match in _FOLDER_RE.finditer(question):
        mentions.append(Mention("folder", match[0], (match[1] or match[2]).strip().strip("/")))
        spans.append(match.span())
    taken = [range(*span) for span in spans]
    for match in _TAG_RE.finditer(question):
        if any(match.start() in r for r in taken):
            continue  # a '#' inside [[Note#Heading]]
        mentions.append(Mention("tag", match[0], normalize_tag(match[1])))
        spans.append(match.span())
    if not mentions:
        return [], question
    text = question
    for start, end in sorted(spans, reverse=True):
        lead = _LEAD_RE.search(text[:start])
        start = lead.start() if lead else start
        text = text[:start] + " " + text[end:]
    text = re.sub(r"\s+([?.!,;:])", r"\1", " ".join(text.split()))
    return mentions, re.sub(r"^[,;:]\s*", "", text).strip()


def resolve(mentions: Sequence[Mention], directory: Directory) -> tuple[Scope, list[Unmatched]]:
    """The notes, tags and folders the mentions name in this index; those that name nothing, each
    with the closest names it holds."""
    by_name = directory.by_name
    tags = directory.sorted_tags
    folders = sorted(directory.folders()) if any(m.kind == "folder" for m in mentions) else []
    notes: list[str] = []
    chosen_tags: list[str] = []
    chosen_folders: list[str] = []
    unmatched: list[Unmatched] = []
    for mention in mentions:
        if mention.kind == "note":
            key = mention.value.lower().removesuffix(".md")
            found = by_name.get(key)
            if found:
                notes.extend(p for p in sorted(found) if p not in notes)
            else:
                close = difflib.get_close_matches(key, list(by_name), n=2 * _CLOSEST, cutoff=0.5)
                names = dict.fromkeys(f"[[{_display(by_name[c][0])}]]" for c in close)  # a name and a path: one note
                unmatched.append(Unmatched(mention, tuple(names)[:_CLOSEST]))
        elif mention.kind == "tag":
            nested = [t for t in tags if t == mention.value or t.startswith(mention.value + "/")]
            if nested:
                chosen_tags.extend(t for t in nested if t not in chosen_tags)
            else:
                close = difflib.get_close_matches(mention.value, tags, n=_CLOSEST, cutoff=0.5)
                unmatched.append(Unmatched(mention, tuple(f"#{c}" for c in close)))
        else:
            wanted = {f.lower(): f for f in folders}.get(mention.value.lower())
            if wanted:
                chosen_folders.append(wanted)
            else:
                close = difflib.get_close_matches(mention.value, folders, n=_CLOSEST, cutoff=0.5)
                unmatched.append(Unmatched(mention, tuple(f'path:"{c}"' for c in close)))
    return Scope(tuple(notes), tuple(chosen_tags), tuple(chosen_folders)), unmatched


def _display(path: str) -> str:
    return note_name(path)
