"""Which notes must never be indexed: the user's globs (`VASK_EXCLUDE`), Obsidian's own "Excluded
files" (`userIgnoreFilters` in `.obsidian/app.json`) and a note's own opt-out in its frontmatter.

Pure: the rules come in as plain data. Globs are gitignore patterns, matched by `pathspec` (the
library pip and black use for the same job). Obsidian's filters are matched as Obsidian matches them:
an entry written `/like this/` is a regular expression searched in the path, any other entry a path
prefix, both ignoring case.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pathspec

# The frontmatter opt-out: `vask: exclude` (or false / no / off / private). A note that says so is
# read once to see it, then nothing of it is kept.
OPT_OUT_KEY = "vask"
_OPT_OUT_VALUES = {"exclude", "excluded", "false", "no", "off", "private", "never"}


@dataclass(frozen=True)
class ExclusionRules:
    globs: tuple[str, ...] = ()  # VASK_EXCLUDE, gitignore-style, relative to the vault root
    obsidian: tuple[str, ...] = ()  # userIgnoreFilters, when honoured
    problems: tuple[str, ...] = field(default=(), compare=False)  # rules that could not be used, and why

    def fingerprint(self) -> dict[str, list[str]]:
        return {"globs": list(self.globs), "obsidian": list(self.obsidian)}


def obsidian_filters(app_settings: Mapping[str, object] | None) -> tuple[str, ...]:
    """The "Excluded files" entries of a parsed `.obsidian/app.json`."""
    filters = (app_settings or {}).get("userIgnoreFilters")
    if not isinstance(filters, list):
        return ()
    return tuple(f.strip() for f in filters if isinstance(f, str) and f.strip())


class Excluder:
    """Says which rule, if any, keeps a path out of the index."""

    def __init__(self, rules: ExclusionRules) -> None:
        self.rules = rules
        self._globs = pathspec.GitIgnoreSpec.from_lines(rules.globs)
        problems = list(rules.problems)
        self._obsidian: list[tuple[str, re.Pattern[str]]] = []
        for entry in rules.obsidian:
            if len(entry) > 2 and entry.startswith("/") and entry.endswith("/"):
                try:
                    self._obsidian.append((entry, re.compile(entry[1:-1], re.IGNORECASE)))
                except re.error as exc:
                    problems.append(f"Obsidian excluded-files entry {entry!r} is not a valid regular expression: {exc}")
            else:
                self._obsidian.append((entry, re.compile("^" + re.escape(entry), re.IGNORECASE)))
        self.problems = tuple(problems)

    @property
    def active(self) -> bool:
        return bool(self.rules.globs or self._obsidian)

    def rule_for(self, path: str) -> str | None:
        """The rule that excludes this vault-relative path, as the user wrote it, or None."""
        if self.rules.globs:
            result = self._globs.check_file(path)
            if result.include and result.index is not None:
                return f"VASK_EXCLUDE {self.rules.globs[result.index]}"
        for entry, pattern in self._obsidian:
            if pattern.search(path):
                return f"Obsidian excluded files {entry}"
        return None


def opted_out(frontmatter: Mapping[str, object]) -> bool:
    """The note asks to be left out: `vask: exclude` (also false, no, off, private, never)."""
    for key, value in frontmatter.items():
        if str(key).strip().lower() != OPT_OUT_KEY:
            continue
        if value is False:
            return True
        return isinstance(value, str) and value.strip().lower() in _OPT_OUT_VALUES
    return False


_OPT_OUT_LINE_RE = re.compile(rf"^{OPT_OUT_KEY}\s*:\s*['\"]?(\w+)['\"]?\s*$", re.IGNORECASE | re.MULTILINE)


def opted_out_text(text: str) -> bool:
    """The opt-out read from a note's raw text, for a note whose parsing failed: a `vask:` line in
    its opening `---` block."""
    lines = text.lstrip("\ufeff").split("\n")
    if not lines or lines[0].strip() != "---":
        return False
    block = []
    for line in lines[1:]:
        if line.strip() in ("---", "..."):
            break
        block.append(line)
    match = _OPT_OUT_LINE_RE.search("\n".join(block))
    return match is not None and match.group(1).lower() in _OPT_OUT_VALUES


def opt_out_rule() -> str:
    return f"frontmatter {OPT_OUT_KEY}: exclude"


def split_globs(values: Sequence[str]) -> tuple[str, ...]:
    """`--exclude` values and `VASK_EXCLUDE` (comma-separated) as one list of patterns."""
    out: list[str] = []
    for value in values:
        out.extend(part.strip() for part in value.split(",") if part.strip())
    return tuple(dict.fromkeys(out))
