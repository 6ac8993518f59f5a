"""Text in scripts written without spaces between words (Chinese, Japanese): finding it, and cutting it
into keyword terms. Pure.

A full-text index that cuts text at spaces and punctuation sees a Chinese or Japanese clause as one
"word" (and drops it when it is longer than 40 characters), so no keyword search finds anything in
it. Search engines without a dictionary cut such text into overlapping pairs of characters: "状态栏"
becomes "状态 态栏", which a question holding "状态栏" matches pair by pair, and BM25 ranks the
passages sharing the most (and the rarest) pairs first. Each character is a term as well, so that a
one-character question word ("书") still finds its notes (Lucene's CJK analyzer does the same). Letters,
digits and words of other scripts are left whole, so an English word in a Chinese note is still one term.

`cjk_terms` is applied to the notes' keyword column when it is written and to questions before they
are searched, so both are cut alike; the index itself keeps its `simple` tokenizer
(docs/EVALUATION.md, "Non-English vaults", measures it against LanceDB's own n-gram and ICU ones).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# Han (CJK Unified Ideographs with extension A, compatibility ideographs, the iteration mark 々 and
# 〆), Hiragana, Katakana (with the prolonged sound mark ー and half-width forms): the scripts that
# put no space between words. Hangul is written with spaces between words, so it is left to the
# tokenizer as it is.
CJK_CHARS = "\u3005\u3006\u3040-\u309f\u30a0-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f"
CJK_RUN_RE = re.compile(f"[{CJK_CHARS}]+")
_CJK_CHAR_RE = re.compile(f"[{CJK_CHARS}]")
_LETTER_RE = re.compile(r"[^\W\d_]")


def has_cjk(text: str) -> bool:
    return _CJK_CHAR_RE.search(text) is not None


def bigrams(run: str) -> list[str]:
    """Overlapping character pairs of a run of CJK characters; a single character stands alone."""
    if len(run) < 2:
        return [run] if run else []
    return [run[i : i + 2] for i in range(len(run) - 1)]


def _run_terms(run: str) -> list[str]:
    return bigrams(run) + (list(run) if len(run) > 1 else [])


def cjk_terms(text: str) -> str:
    """`text` with every run of CJK characters replaced by its character pairs and its characters, set
    off by spaces; everything else as it was. Text without CJK characters comes back unchanged."""
    if not has_cjk(text):
        return text
    return CJK_RUN_RE.sub(lambda match: f" {' '.join(_run_terms(match[0]))} ", text)


# How the keyword column and questions are cut: the index records which (`index.json`).
SIMPLE = "simple"
CJK = "cjk"
# `auto` picks CJK when a note read is written mostly in Chinese or Japanese: this share of its letters
# CJK characters, or more. Cutting leaves every other word as it was, so an English vault with a few
# Chinese notes loses nothing by it, and their keywords are found.
CJK_NOTE_SHARE = 0.3


def written_mostly_in_cjk(text: str) -> bool:
    """Whether this note is written mostly in Chinese or Japanese (letters are counted only in a text
    that has a CJK character at all: a quick search settles every other)."""
    return has_cjk(text) and cjk_share([text]) >= CJK_NOTE_SHARE


def written_in_cjk(texts: Iterable[str]) -> bool:
    """Whether any of these notes is written mostly in Chinese or Japanese."""
    return any(written_mostly_in_cjk(text) for text in texts)


def keyword_text(text: str, terms: str) -> str:
    """What the full-text index is given (or asked) for `text` under the index's way of cutting."""
    return cjk_terms(text) if terms == CJK else text


def cjk_words(text: str) -> list[str]:
    """The words vask's own matching (exact matches, titles) sees in `text`, lower-cased: words of
    other scripts whole, CJK runs as their character pairs (a lone character stands alone)."""
    if has_cjk(text):
        text = CJK_RUN_RE.sub(lambda match: f" {' '.join(bigrams(match[0]))} ", text)
    return [term.lower() for term in re.findall(r"[^\W_]+", text)]


def cjk_share(texts: Iterable[str]) -> float:
    """The share of the letters in `texts` that are CJK characters (digits, spaces and punctuation not
    counted): how much of a vault is written without spaces."""
    cjk = letters = 0
    for text in texts:
        cjk += len(_CJK_CHAR_RE.findall(text))
        letters += len(_LETTER_RE.findall(text))
    return cjk / letters if letters else 0.0


# Characters of Chinese grammar and question words ("的", "什么", "怎么", "可以"): they are in almost
# every passage, so that a passage holds them says nothing about whether it answers.
_FUNCTION_CHARS = frozenset(
    "的了是在我你他她它们有和就不都一个上也很到说要去会着没看好这那什么怎吗呢吧啊为如何哪些可以能时候多少"
    "把被让给从对与及或而且但等地得之其此所用做已还再又只才"
)
_KATAKANA_RUN_RE = re.compile("[\u30a0-\u30ff\u31f0-\u31ff\uff66-\uff9f]{2,}")
_HAN_RE = re.compile("[\u3005\u3006\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def cjk_content(question: str) -> set[str]:
    """What a Chinese or Japanese question is about, as units a passage can be checked for: its Han
    characters less those of grammar, and its katakana words whole (a loanword's characters are
    shared by every other loanword). Hiragana, the grammar of Japanese, counts for nothing."""
    units = {char for char in _HAN_RE.findall(question) if char not in _FUNCTION_CHARS}
    units.update(_KATAKANA_RUN_RE.findall(question))
    return units


# With a model that reads the notes' language, a Chinese or Japanese question its cosines would decline
# is still taken as answered by a keyword passage holding at least this share of its `cjk_content`:
# on the tuning questions, between what the right notes' passages hold and what the best passage
# holds for a question the vault cannot answer (docs/EVALUATION.md, "What the ranking's constants
# rest on").
CJK_COVERAGE_EVIDENCE = 0.5


def coverage(units: set[str], passage: str) -> float:
    """The share of `units` that `passage` holds."""
    return sum(1 for unit in units if unit in passage) / len(units) if units else 0.0


# With a model that reads only English, the keyword list is a Chinese or Japanese question's only
# evidence, and coverage cannot tell a question the vault answers in other words from one it cannot
# answer: both hold about half of theirs. Two things tell most of them apart. A question about what
# the vault never mentions names it, and the name is in no note ("logrotate", "BitLocker", "iPhone").
# One about something else entirely shares little but grammar: below this share of what it asks about
# in every passage; answered paraphrases hold at least this much (docs/EVALUATION.md, "What the
# ranking's constants rest on").
CJK_COVERAGE_FLOOR = 0.3
