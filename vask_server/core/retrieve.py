"""Ranking: rows to hits, fusion of vector and keyword lists, grouping by note."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from vask_server.core.cjk import CJK_CHARS, cjk_words, has_cjk
from vask_server.core.models import Hit
from vask_server.core.scale import IDENTITY, CosineScale
from vask_server.core.scope import Scope

RRF_K = 60
_KEYWORD_QUERY_WORDS = 2
_STANDOUT_RATIO = 1.5
# The cosine's share in convex fusion; its neighbours score alike (docs/EVALUATION.md, "What the
# ranking's constants rest on").
CONVEX_ALPHA = 0.9
# Added to the score of a passage the question names exactly (see fuse_convex), so that the score
# alone ranks it first: every other passage scores at most 0.9 + 0.1 × 2 = 1.1, and such a passage's
# own cosine and keyword share are hardly ever under 0.1.
EXACT_LIFT = 1.0


@dataclass(frozen=True)
class Filters:
    folders: tuple[str, ...] = ()
    exclude_folders: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    # Inclusive: a passage is kept when its date span overlaps [date_from, date_to].
    date_from: date | None = None
    date_to: date | None = None
    # What the question named ([[Note]], #tag, path:Folder): a passage is kept when it is in any of
    # them; the fields above, set by the caller, must all hold as well.
    scope: Scope | None = None

    def is_empty(self) -> bool:
        return not (
            self.folders
            or self.exclude_folders
            or self.tags
            or self.paths
            or self.date_from
            or self.date_to
            or (self.scope and not self.scope.is_empty())
        )

    @property
    def dated(self) -> bool:
        return self.date_from is not None or self.date_to is not None


_WORD_RE = re.compile(r"[^\W_]+", re.UNICODE)
_STOPWORDS = frozenset(
    "a an the and or but of to in on at for with about from by as is are was were be been being do does did "
    "have has had what which who whom whose when where why how i me my mine we our you your it its this that "
    "these those there their they them he she his her so if not no can could would should will just any all "
    "some".split()
)


def content_words(text: str) -> set[str]:
    """The words that carry a text's topic, lower-cased. Chinese and Japanese, written without spaces,
    count by their character pairs (core/cjk.py), which is how the keyword index holds them."""
    if has_cjk(text):
        return {w for w in cjk_words(text) if (len(w) > 2 or has_cjk(w)) and w not in _STOPWORDS}
    return {w for w in (m.lower() for m in _WORD_RE.findall(text)) if len(w) > 2 and w not in _STOPWORDS}


_EDGE_PUNCTUATION = "¿?¡!.,;:\"'“”‘’()[]{}<>«»—–-…*_`"


def named_terms(question: str) -> set[str]:
    """The words of a Chinese or Japanese question written in another script ("logrotate", "win10"),
    lower-cased: the names it asks about, which the keyword index holds whole."""
    return {word for word in content_words(question) if not has_cjk(word) and not word.isdigit()}


def topic_query(question: str) -> str | None:
    """The question without its scaffolding ("What have I written about…", "How much did my…"):
    its content words in order. Such phrasing resembles any first-person note, so it lifts the
    best cosine of a question the notes cannot answer; the topic alone does not: it widens the
    gap between absent and answerable questions (docs/EVALUATION.md, "What the ranking's
    constants rest on"). Terms with digits or inner symbols ("i+1", "B2", "0.9.7") are kept
    whole, however short.
    None when fewer than two terms are left: then the question speaks for itself."""
    words: list[str] = []
    for token in question.split():
        term = token.replace("’", "'").strip(_EDGE_PUNCTUATION)
        if "'" in term:  # "What's", "Sam's", "didn't": the word before the apostrophe
            term, _, ending = term.partition("'")
            if ending == "t":
                continue  # a negated auxiliary
        if not any(ch.isalnum() for ch in term) or term.lower() in _STOPWORDS:
            continue
        if term.isalpha() and len(term) <= 2:
            continue  # short words go, short codes ("B2") stay
        if term not in words:
            words.append(term)
    topic = " ".join(words)
    return topic if len(words) >= 2 and topic != question.strip() else None


def covers_query(row: dict[str, Any], query: str | set[str]) -> bool:
    """Every content word of the query appears in the passage (title and heading included): exact
    evidence, such as a rare name or code, that a low cosine should not overrule. `query` may be
    given as its content words already, when many passages are checked against one query."""
    wanted = content_words(query) if isinstance(query, str) else query
    if not wanted:
        return False
    passage = passage_text(row)
    # word by word, as whole words, without splitting the passage (~75 passages per search)
    return all(holds_whole_word(passage, word) for word in wanted)


def passage_text(row: dict[str, Any]) -> str:
    """What exact matches are looked for in: title, heading and text, lower-cased, one space
    between words (a quoted term may wrap across lines in the note)."""
    return " ".join(" ".join(str(row.get(k) or "") for k in ("title", "heading", "text")).lower().split())


# A term the user quotes ('scenius', "grey zone"): a straight quote must not open after a letter or
# close before one, and hugs the term, so the apostrophes of "What's" or "runners'" open nothing.
_QUOTED_RE = re.compile(
    r"""(?<![^\W_])'(\S(?:[^'\n]*?\S)?)'(?![^\W_])|"(\S(?:[^"\n]*?\S)?)"|‘([^’\n]+?)’|“([^”\n]+?)”|«([^»\n]+?)»|「([^」\n]+?)」|『([^』\n]+?)』"""
)
_QUOTED_MAX_WORDS = 6  # a term or a name; a quoted sentence is the user citing, not naming


def quoted_terms(question: str) -> tuple[str, ...]:
    """Terms the question puts in quotes, lower-cased: the user names exactly what they mean."""
    terms: list[str] = []
    for match in _QUOTED_RE.finditer(question):
        term = " ".join(next(group for group in match.groups() if group is not None).split()).lower()
        if _WORD_RE.search(term) and len(term.split()) <= _QUOTED_MAX_WORDS and term not in terms:
            terms.append(term)
    return tuple(terms)


def holds_quoted(row: dict[str, Any], terms: Sequence[str]) -> bool:
    """The passage (title and heading included) holds every quoted term as written, word for word."""
    if not terms:
        return False
    passage = passage_text(row)
    return all(holds_whole_word(passage, term) for term in terms)


# A letter or digit of a script written with spaces: what must not touch a whole word. A CJK character
# may (Chinese puts no space between "在" and "Obsidian"), and a CJK term is found anywhere in a run.
_SPACED_WORD_CHAR_RE = re.compile(rf"(?![{CJK_CHARS}])[^\W_]")


def holds_whole_word(passage: str, word: str) -> bool:
    """`passage` holds `word` as a whole word, by the same notion of a word as content_words. Checked
    at each place the word occurs rather than by a pattern made for it: compiling one per word (its
    character classes span the CJK blocks) was a noticeable part of every search."""
    if has_cjk(word):
        return word in passage
    start = passage.find(word)
    while start != -1:
        end = start + len(word)
        if not (start and _SPACED_WORD_CHAR_RE.match(passage, start - 1)) and not (
            end < len(passage) and _SPACED_WORD_CHAR_RE.match(passage, end)
        ):
            return True
        start = passage.find(word, start + 1)
    return False


def row_to_hit(row: dict[str, Any], score: float, similarity: float | None = None) -> Hit:
    return Hit(
        chunk_id=row["id"],
        path=row["path"],
        title=row.get("title") or "",
        heading=row.get("heading") or "",
        anchor=row.get("anchor") or "",
        line_start=int(row.get("line_start") or 0),
        line_end=int(row.get("line_end") or 0),
        score=float(score),
        similarity=similarity,
        text=row.get("text") or "",
        tags=tuple(row.get("tags") or ()),
        date=row.get("date"),
        date_end=row.get("date_end"),
        date_source=row.get("date_source"),
        page=row.get("page"),
        keyword_only=bool(row.get("keyword_only")),
    )


STRONG_KEYWORD_RANK = 3  # the keyword matches kept as evidence whatever their cosine


@dataclass
class Ranked:
    row: dict[str, Any]
    similarity: float | None = None  # cosine to the question
    keyword: float | None = None  # BM25, when the full-text search saw it
    keyword_rank: int | None = None
    vector_rank: int | None = None
    fused: float = 0.0
    # Exact evidence, worked out once in _merge for fusion and for the decline rule alike:
    exact: bool = False  # a keyword passage holding every content word of the query
    quoted: bool = False  # a passage holding every term the query quotes

    @property
    def strong_keyword(self) -> bool:
        """Among the best keyword matches: an exact name or code can matter more than a cosine."""
        return self.keyword_rank is not None and self.keyword_rank <= STRONG_KEYWORD_RANK


def fuse(
    vector_rows: Sequence[dict[str, Any]],
    text_rows: Sequence[dict[str, Any]],
    *,
    vector_weight: float = 1.0,
    text_weight: float = 1.0,
    k: int = RRF_K,
    query: str = "",
) -> list[Ranked]:
    """Reciprocal-rank fusion: each list contributes weight / (k + rank); best first."""
    ranked = _merge(vector_rows, text_rows, query)
    for item in ranked.values():
        if item.vector_rank is not None:
            item.fused += vector_weight / (k + item.vector_rank)
        if item.keyword_rank is not None:
            item.fused += text_weight / (k + item.keyword_rank)
    return sorted(ranked.values(), key=lambda r: r.fused, reverse=True)


def fuse_convex(
    vector_rows: Sequence[dict[str, Any]],
    text_rows: Sequence[dict[str, Any]],
    *,
    query: str = "",
    alpha: float = CONVEX_ALPHA,
    scale: CosineScale = IDENTITY,
) -> list[Ranked]:
    """Convex combination: alpha × cosine + (1 − alpha) × BM25 divided by the query's best BM25.
    The cosine is the index's moved onto the scale these weights were chosen on (`scale`,
    core/scale.py); each Ranked keeps its own.

    Unlike reciprocal ranks, it keeps how strong each match is: a keyword list whose best match
    is one common word ("Spanish", "app") no longer counts as much as a close semantic match, and
    it ranks the right note first more often (docs/EVALUATION.md, "What the ranking's constants
    rest on"). A passage holding every content word of the query is an exact match ("quokkas", an
    alias, a code), where a few words' cosine says little: it gets the keyword share once more,
    and for a keyword-style query (one or two content words) it ranks above every passage that is
    not exact. So does a passage holding the terms the question quotes
    ("what's the 'grey zone'?"): quoting is how a user names an exact term. So does a keyword
    match that stands out, scoring at least 1.5 × the best match in any other note: a rare term
    the embedding model does not know ("Litestream"), whose cosine is noise. Those passages have
    EXACT_LIFT added, so the score that ranks is the one a hit shows. Every row carries its
    cosine ("score" for vector rows, "similarity" for keyword rows), but for a first sync's passages
    not embedded yet (`keyword_only`), whose cosine is unknown rather than 0: each is presumed as
    close as the closest keyword match that has one, in the share its BM25 has of the best. (Taken as
    0, a passage holding the question's very words ranked below loose matches of notes embedded
    before it.)"""
    ranked = _merge(vector_rows, text_rows, query)
    best_keyword = max((item.keyword or 0.0 for item in ranked.values()), default=0.0)
    keyword_style = 0 < len(content_words(query)) <= _KEYWORD_QUERY_WORDS
    standout = _standout_keyword_match(text_rows)
    presumed = _presumed_cosine(list(ranked.values()))
    for key, item in ranked.items():
        keyword = (item.keyword or 0.0) / best_keyword if best_keyword > 0 else 0.0
        # (on the index's scale, core/scale.py; a passage not embedded yet: its keyword share of the presumed)
        cosine = scale(item.similarity) if item.similarity is not None else scale(presumed) * keyword
        if item.exact:
            keyword += 1.0
        item.fused = alpha * cosine + (1.0 - alpha) * keyword
        if (item.exact and keyword_style) or item.quoted or key == standout:
            item.fused += EXACT_LIFT
    return sorted(ranked.values(), key=lambda r: r.fused, reverse=True)


def _presumed_cosine(ranked: list[Ranked]) -> float:
    """What a keyword match without a cosine (not embedded yet) is presumed to have at best: the best
    cosine of the keyword matches that have one, else of any candidate, else 0."""
    keyword = [r.similarity for r in ranked if r.keyword is not None and r.similarity is not None]
    known = keyword or [r.similarity for r in ranked if r.similarity is not None]
    return max(known, default=0.0)


def _standout_keyword_match(text_rows: Sequence[dict[str, Any]]) -> str | None:
    """The best keyword passage when it beats every other note's best by _STANDOUT_RATIO: such a
    passage is all but always in the right note (docs/EVALUATION.md, "What the ranking's
    constants rest on")."""
    if not text_rows:
        return None
    top = text_rows[0]
    runner_up = next((row for row in text_rows[1:] if row["path"] != top["path"]), None)
    if runner_up is None or float(top["score"]) >= _STANDOUT_RATIO * float(runner_up["score"]):
        return str(top["id"])
    return None


def _merge(
    vector_rows: Sequence[dict[str, Any]], text_rows: Sequence[dict[str, Any]], query: str = ""
) -> dict[str, Ranked]:
    ranked: dict[str, Ranked] = {}
    for rank, row in enumerate(vector_rows, start=1):
        item = ranked.setdefault(row["id"], Ranked(row))
        item.similarity = float(row["score"])
        item.vector_rank = rank
    for rank, row in enumerate(text_rows, start=1):
        item = ranked.setdefault(row["id"], Ranked(row))
        item.keyword = float(row["score"])
        item.keyword_rank = rank
        if item.similarity is None and "similarity" in row:
            item.similarity = float(row["similarity"])
    wanted, quoted = content_words(query), quoted_terms(query)
    for item in ranked.values():
        item.exact = item.keyword is not None and covers_query(item.row, wanted)
        item.quoted = holds_quoted(item.row, quoted)
    return ranked


def graph_boost(
    ranked: list[Ranked],
    graph: Mapping[str, Collection[str]],
    *,
    seeds: int = 3,
    weight: float = 0.3,
    min_links: int = 1,
) -> list[Ranked]:
    """Notes linked to or from the strongest hits move up, by a bounded amount.

    Each of the top `seeds` notes lends its neighbours `weight` × its own score, divided by its
    rank; a note's boost never exceeds `weight` × the best score, so links reorder close calls
    but cannot lift an unrelated note over a clear match.
    """
    if not ranked:
        return ranked
    note_best: dict[str, float] = {}
    for item in ranked:
        path = item.row["path"]
        note_best[path] = max(note_best.get(path, 0.0), item.fused)
    top_notes = sorted(note_best, key=lambda p: note_best[p], reverse=True)[:seeds]
    cap = weight * note_best[top_notes[0]]
    boost: dict[str, float] = {}
    links: dict[str, int] = {}
    for rank, seed in enumerate(top_notes, start=1):
        for neighbour in graph.get(seed, ()):
            if neighbour in note_best:
                boost[neighbour] = boost.get(neighbour, 0.0) + weight * note_best[seed] / rank
                links[neighbour] = links.get(neighbour, 0) + 1
    boost = {note: value for note, value in boost.items() if links[note] >= min_links}
    if not boost:
        return ranked
    for item in ranked:
        item.fused += min(cap, boost.get(item.row["path"], 0.0))
    return sorted(ranked, key=lambda r: r.fused, reverse=True)


def distinct_notes(hits: Iterable[Hit]) -> list[str]:
    """Note paths in first-seen order: what hit@k and MRR count."""
    seen: dict[str, None] = {}
    for hit in hits:
        seen.setdefault(hit.path, None)
    return list(seen)


def limit_per_note(hits: Sequence[Hit], top_k: int, per_note: int) -> list[Hit]:
    """Best chunks first, at most `per_note` from one note, so one long note cannot crowd out the rest."""
    counts: dict[str, int] = {}
    out: list[Hit] = []
    for hit in hits:
        if counts.get(hit.path, 0) >= per_note:
            continue
        counts[hit.path] = counts.get(hit.path, 0) + 1
        out.append(hit)
        if len(out) == top_k:
            break
    return out
