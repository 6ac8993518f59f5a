"""Which way a vault's keyword text is cut (`VASK_KEYWORD_TOKENIZER`, core/cjk.py), and why. Pure.

Under `auto` the choice is read from a sample of the vault's notes at every whole sync (the start-up
sync of `vask serve`, `vask index`, a reindex), so a vault whose mix of languages changes gets the
other way once it needs it. The sample is spread evenly over all of the vault's sorted paths, not taken
from its start: Chinese and Japanese names sort after Latin ones, and a sample of the first paths of
a mostly English vault never reached them. Notes whose names are written in Chinese or Japanese are
read as well, wherever they are: a few of them in a large vault fall between the evenly spread ones.
Only the opening of each note is read; a note written mostly in these scripts is so from its start.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from vask_server.core.cjk import CJK, SIMPLE, has_cjk

# The version of the rule below: a choice recorded under another (or before any was recorded) is
# made again at the next whole sync, even when no note changed.
RULE = 2
# Notes read, spread evenly over the vault (all of them in a vault this small or smaller) ...
SAMPLE_NOTES = 2_000
# ... and at most this many more of those named in Chinese or Japanese.
NAMED_NOTES = 200
# The bytes read of each: the opening of a long note tells its script as well as all of it does.
SAMPLE_BYTES = 4_096
# Of the notes read, this many (spread over them) are judged for the share not in English, the
# slower test (core/language.py), which only advises on the embedding model.
LANGUAGE_NOTES = 200


def spread(items: Sequence[str], count: int) -> list[str]:
    """`count` of `items` at even steps over all of them (all when there are no more): any run of
    `len(items) / count` neighbours holds one."""
    total = len(items)
    if total <= count:
        return list(items)
    return [items[i * total // count] for i in range(count)]


def sample_paths(paths: Sequence[str]) -> list[str]:
    """The notes to read to choose: `SAMPLE_NOTES` spread over the sorted paths, and up to
    `NAMED_NOTES` of those whose names are in Chinese or Japanese, each once, in path order."""
    ordered = sorted(paths)
    chosen = spread(ordered, SAMPLE_NOTES)
    if len(chosen) < len(ordered) and has_cjk("\n".join(ordered)):  # (one search over them all first)
        named = spread([path for path in ordered if has_cjk(path)], NAMED_NOTES)
        chosen = sorted(set(chosen).union(named))
    return chosen


@dataclass(frozen=True)
class KeywordChoice:
    """How the keyword text is cut (`terms`), and what it was chosen by: the setting, and under
    `auto` how many notes were read and how many of them are written mostly in Chinese or Japanese."""

    terms: str
    setting: str  # VASK_KEYWORD_TOKENIZER: "auto", "simple" or "cjk"
    notes_read: int
    cjk_notes: int
    rule: int = RULE

    def holds_for(self, setting: str) -> bool:
        """Made under this setting and today's rule: the same notes would give the same choice."""
        return self.setting == setting and self.rule == RULE

    def reason(self) -> str:
        if self.setting != "auto":
            return f"set by VASK_KEYWORD_TOKENIZER={self.setting}"
        if not self.notes_read:
            return "no note could be read to choose by"
        if self.cjk_notes:
            of = f"{self.cjk_notes:,} of the {self.notes_read:,} notes read"
            return f"{of} {'is' if self.cjk_notes == 1 else 'are'} written mostly in Chinese or Japanese"
        return f"none of the {self.notes_read:,} notes read is written mostly in Chinese or Japanese"

    def to_record(self) -> dict[str, Any]:
        """What index.json keeps beside `keyword_terms`."""
        return {"setting": self.setting, "notes_read": self.notes_read, "cjk_notes": self.cjk_notes, "rule": self.rule}

    @classmethod
    def recorded(cls, active: Mapping[str, Any] | None) -> KeywordChoice | None:
        """The choice an index's record holds; None when it holds none (recorded before the reason was
        kept) or not a whole one."""
        record = (active or {}).get("keyword_choice")
        terms = (active or {}).get("keyword_terms")
        if not isinstance(record, Mapping) or terms not in (SIMPLE, CJK):
            return None
        try:
            return cls(
                str(terms),
                str(record["setting"]),
                int(record["notes_read"]),
                int(record["cjk_notes"]),
                int(record.get("rule", 0)),
            )
        except (KeyError, TypeError, ValueError):
            return None


def choose_keyword_terms(setting: str, notes_read: int, cjk_notes: int) -> KeywordChoice:
    """The setting's choice when it names one; under `auto`, `cjk` when any note read is written
    mostly in Chinese or Japanese (cutting changes no other word, so the rest of the vault loses
    nothing by it), else `simple`."""
    if setting in (SIMPLE, CJK):
        return KeywordChoice(setting, setting, notes_read, cjk_notes)
    return KeywordChoice(CJK if cjk_notes else SIMPLE, "auto", notes_read, cjk_notes)


@dataclass(frozen=True)
class VaultLanguage:
    """What a sample of the vault's notes tells: how its keyword text is cut, and the share of its
    notes not in English (which `vask status` and `vask doctor` weigh the embedding model against)."""

    keyword: KeywordChoice
    not_english: float
