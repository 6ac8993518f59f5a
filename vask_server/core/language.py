"""Whether notes are written in English, as far as a few hundred of them tell. Pure.

An English-only embedding model is fine for English notes and says nothing useful about others
(core/model_languages.py); this is what `vask doctor` and `vask status` compare it with. A note is
taken as not English when most of its letters are of another script (Chinese, Japanese, Cyrillic…),
or when the common short words of German, French, Spanish, Portuguese or Italian outnumber English's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_LATIN_RUN_RE = re.compile(r"[A-Za-z\u00c0-\u024f]+")
_WORD_RE = re.compile(r"[^\W\d_]+")
_ENGLISH = frozenset("the and of to is in that it for with was on are this you have not but be at".split())
_OTHERS = (
    frozenset(
        "der die das und ist nicht ich ein eine mit auf für den dem zu "  # German
        "le la les et est une des du pour pas dans je que qui sur "  # French
        "el los las y es un una por para con del lo se que como "  # Spanish
        "os um uma não com para por uma são do da "  # Portuguese
        "il di che è per non gli una sono della".split()  # Italian
    )
    - _ENGLISH
)
# A vault is called not English when at least this share of the notes read are not
MOSTLY = 0.5


def looks_english(text: str) -> bool:
    # Letters counted as the lengths of the runs of them (the words): one pass, where a list of
    # every letter took several times as long, and a vault's sample is judged at every whole sync.
    found = _WORD_RE.findall(text)
    letters = sum(map(len, found))
    if not letters:
        return True  # (nothing to read: no reason to advise anything)
    latin = letters if text.isascii() else sum(map(len, _LATIN_RUN_RE.findall(text)))
    if latin < 0.5 * letters:
        return False
    words = [w.lower() for w in found]
    english = sum(1 for w in words if w in _ENGLISH)
    others = sum(1 for w in words if w in _OTHERS)
    return english >= others


def not_english_share(texts: Iterable[str]) -> float:
    """The share of these notes that are not written in English (0 when there are none)."""
    verdicts = [looks_english(text) for text in texts if text.strip()]
    return sum(1 for english in verdicts if not english) / len(verdicts) if verdicts else 0.0
