"""A subword token estimate, so chunk budgets are counted in tokens rather than characters.

Embedding models tokenise with WordPiece or BPE; their vocabularies cannot be loaded here (nothing is
fetched at run time), so we estimate: a short word is one token, a long or rare one costs a token per
few characters, each punctuation mark is a token, and non-Latin scripts cost about a token a character.
On English prose this lands close to BERT's WordPiece count and errs on the high side for code, URLs
and tables, which is the safe direction for a budget.
"""

from __future__ import annotations

import re

_TOKEN_RE = re.compile(r"[A-Za-z]+|\d+|[^\sA-Za-z\d]")
# Tokens are maximal runs of ASCII letters, maximal runs of digits, and single other characters.
# Only runs long enough to cost extra tokens need looking at one by one: letters from 11 on
# (1 + (n - 6) // 5 > 1), digits from 4 on (1 + (n - 1) // 3 > 1). The classes are disjoint, so these
# patterns find exactly the runs `_TOKEN_RE` finds, whole.
_LONG_WORD_RE = re.compile(r"[A-Za-z]{11,}")
_LONG_NUMBER_RE = re.compile(r"\d{4,}")
_WORD_CHARS_PER_EXTRA_TOKEN = 5
_DIGITS_PER_TOKEN = 3


def count_tokens(text: str) -> int:
    # Common short words are whole tokens; long ones split into subwords; each punctuation mark and
    # each character of a non-Latin script is a token. (Counted with regexes in C: this runs on
    # every line of every note, several times while chunking.)
    total = len(_TOKEN_RE.findall(text))
    for word in _LONG_WORD_RE.findall(text):
        total += (len(word) - 6) // _WORD_CHARS_PER_EXTRA_TOKEN
    for number in _LONG_NUMBER_RE.findall(text):
        total += (len(number) - 1) // _DIGITS_PER_TOKEN
    return total
