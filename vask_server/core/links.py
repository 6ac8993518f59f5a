"""Resolve link targets against the vault's real files, the way Obsidian does."""

from __future__ import annotations

import posixpath
from collections import defaultdict
from collections.abc import Iterable
from urllib.parse import unquote


def _strip_md(name: str) -> str:
    return name[:-3] if name.lower().endswith(".md") else name


class LinkResolver:
    """Maps what a link says (`Plan`, `Projects/Plan`, `diagram.png`) to a vault-relative path.

    Order, as in Obsidian: an exact vault path; a path relative to the linking note; a file name
    that is unique in the vault; among several files of that name, the one in the linking note's
    folder, else the shortest path; finally a partial path that ends the target.
    """

    def __init__(self, paths: Iterable[str]) -> None:
        self._by_lower_path: dict[str, str] = {}
        self._by_name: dict[str, list[str]] = defaultdict(list)
        for path in paths:
            lowered = path.lower()
            self._by_lower_path[lowered] = path
            name = posixpath.basename(lowered)
            self._by_name[name].append(path)
            if lowered.endswith(".md"):
                self._by_name[name[:-3]].append(path)
        for candidates in self._by_name.values():
            candidates.sort(key=lambda p: (p.count("/"), len(p), p))

    def __contains__(self, path: str) -> bool:
        return path.lower() in self._by_lower_path

    def resolve(self, target: str, source: str = "") -> str | None:
        cleaned = unquote(target).strip().replace("\\", "/").lstrip("/")
        if not cleaned:
            return source or None
        lowered = cleaned.lower()
        for candidate in (lowered, lowered + ".md"):
            if candidate in self._by_lower_path:
                return self._by_lower_path[candidate]
        source_dir = posixpath.dirname(source.lower())
        if source_dir or cleaned.startswith("."):
            relative = posixpath.normpath(posixpath.join(source_dir, lowered))
            for candidate in (relative, relative + ".md"):
                if candidate in self._by_lower_path:
                    return self._by_lower_path[candidate]
        if "/" not in lowered:
            candidates = self._by_name.get(lowered, [])
            if len(candidates) == 1:
                return candidates[0]
            if candidates:
                same_folder = [p for p in candidates if posixpath.dirname(p.lower()) == source_dir]
                return (same_folder or candidates)[0]
            return None
        suffixes = ("/" + lowered, "/" + lowered + ".md")
        matches = sorted(
            (path for low, path in self._by_lower_path.items() if low.endswith(suffixes)),
            key=lambda p: (p.count("/"), len(p), p),
        )
        return matches[0] if matches else None

    def link_text(self, target: str, source: str = "", style: str = "shortest") -> str:
        """What a new link from `source` to `target` says, as Obsidian writes one ("New link format"):
        `shortest`, the name alone where it leads to `target` and to no other file, else the path;
        `relative`, the path from `source`'s folder; `absolute`, the vault path. Without `.md`; always
        one that this resolver (the index's) reads back as `target`."""
        full = _strip_md(target)
        if style == "relative":
            relative = posixpath.relpath(full, posixpath.dirname(source) or ".")
            if self.resolve(relative, source) == target:
                return relative
        elif style != "absolute":
            name = note_name(target)
            if self._by_name.get(name.lower(), []) == [target]:
                return name
        return full if self.resolve(full, source) == target else target


def note_name(target: str) -> str:
    """The readable name of a link target: its file name without folders or `.md`."""
    return _strip_md(posixpath.basename(target.replace("\\", "/").rstrip("/")))
