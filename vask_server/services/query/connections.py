"""The notes that connect to a seed note: those it links to or that link to it, and those about the same
ideas that are not linked yet, found from the seed's own passages. One mechanism for the related-notes
pane and for questions such as "which ideas from the last three months connect to [[Project]]?".

Each connected note comes with the passage that connects it (its passage closest to any passage of
the seed), the seed's passage it is closest to, and whether the two notes are linked: unlinked
connections are what a person most wants surfaced, so they are told apart.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from vask_server.adapters.meta import IndexRecord
from vask_server.adapters.schema import vector_matrix
from vask_server.adapters.sql import filters_to_where, sql_string
from vask_server.adapters.store import Store
from vask_server.adapters.tables import IndexTables, SearchOptions
from vask_server.core.cjk import keyword_text
from vask_server.core.models import Hit
from vask_server.core.retrieve import Filters, row_to_hit
from vask_server.core.scale import IDENTITY, CosineScale
from vask_server.errors import IndexBroken, NotFound
from vask_server.services.query.exclusions import KeptOut, nothing_kept_out
from vask_server.services.query.graph import LinkGraph, LinkGraphs

# A link is the author's own statement that two notes belong together: it counts this much on top of
# how close the two notes' passages are (small beside related passages' cosines: docs/EVALUATION.md,
# "What the ranking's constants rest on").
LINK_BONUS = 0.15
# How close a note is: its passage closest to any of the seed's (what connects, shown) for this share,
# the rest its closeness to the seed as a whole (the mean of its passages): together they find more
# than the closest passage alone (docs/EVALUATION.md, "What the ranking's constants rest on").
_PASSAGE_SHARE = 0.7
# Notes that name the seed's title (as BM25 keywords, as a share of the best such match) count this much
# more: a plugin page "zotlit" for a note "Zotero 101", where a small embedding model sees little in
# common; more than this loses linked notes (docs/EVALUATION.md, "What the ranking's constants
# rest on").
TITLE_WEIGHT = 0.2
# The seed's passages a candidate is compared with, at most (spread over a long note).
_SEED_PASSAGES = 16
# Candidates: the rows closest to the seed as a whole (its passages' mean), and to the question's own
# words when it has some, and the best keyword matches of its title.
# Searching from each of the seed's passages as well (up to 16 searches) found no more connections
# on either connection set and made /v1/related several times slower (docs/BENCHMARKS.md, "Speed").
_CANDIDATE_ROWS = 60
_KEYWORD_ROWS = 30
# A note that links to more than this many others is a list (a folder's index, "all plugins"): never
# offered as a connection not linked yet, as every note it lists would be.
_LIST_LINKS = 100
# A question that says more than "what connects to X" ("…about pricing") weighs its own words in so.
_QUESTION_WEIGHT = 0.5


@dataclass(frozen=True)
class Connected:
    """A note connected to the seed."""

    path: str
    title: str
    # what ranked it: how close it is to the seed (_PASSAGE_SHARE), + its title match's share
    # (TITLE_WEIGHT), + LINK_BONUS when linked
    score: float
    linked: str  # "links to" (the seed links to it), "linked from", "both", or "unlinked"
    passage: Hit  # its passage that connects
    seed_heading: str  # the seed's passage that passage is closest to


async def find_connections(
    store: Store,
    graphs: LinkGraphs,
    index: IndexRecord,
    seed: str,
    *,
    top_k: int,
    filters: Filters | None = None,
    question_vector: np.ndarray | None = None,
    kept_out: KeptOut = nothing_kept_out,
    scale: CosineScale = IDENTITY,
) -> list[Connected]:
    """The `top_k` notes most connected to `seed` in this index, best first. `filters` (dates,
    folders, tags, what the question named) apply to the connected notes, never to the seed; the
    seed is never among them. `question_vector`: the question's own words, when it says more than
    "what connects to X". `kept_out`: the notes a rule as it is now keeps out, the seed included
    (services/query/exclusions.py). `scale`: the index's cosines moved onto the scale the bonuses below
    were chosen on (core/scale.py)."""
    graph = await graphs.get(index)
    if seed not in graph or kept_out(seed):
        raise NotFound(f"Not in the index: {seed}", "Check the path, or wait until the note is indexed.")
    tables, dimension = store.tables(index), index.dimension
    seed_rows = await tables.all_chunk_rows(
        ["id", "heading", "vector", "ordinal"], where=f"path = {sql_string(seed)} AND kind = 'chunk'"
    )
    seed_rows = seed_rows.sort_by("ordinal")  # in the note's order, so the passages kept spread over it
    seed_vectors = vector_matrix(seed_rows["vector"], dimension) if seed_rows.num_rows else np.zeros((0, dimension))
    seed_headings = seed_rows["heading"].to_pylist() if seed_rows.num_rows else []
    if len(seed_vectors) > _SEED_PASSAGES:  # a long note: passages spread over all of it
        keep = np.linspace(0, len(seed_vectors) - 1, _SEED_PASSAGES).round().astype(int)
        seed_vectors, seed_headings = seed_vectors[keep], [seed_headings[i] for i in keep]
    # Without filters the search goes unfiltered, through the ANN index as it is, and the seed's own
    # rows and the notes' records are dropped after: a filtered search probes further to fill its
    # limit, and the pane asks on every note switch.
    narrowed = filters is not None and not filters.is_empty()
    where = _others(seed, filters) if narrowed else None
    queries = []
    if len(seed_vectors):
        centroid = seed_vectors.mean(axis=0)
        queries.append(centroid / (float(np.linalg.norm(centroid)) or 1.0))
    if question_vector is not None:
        queries.append(question_vector)
    options = SearchOptions(with_vectors=True, approximate_filter=True, with_kind=not narrowed)
    by_meaning = asyncio.gather(*(tables.vector_search(q, _CANDIDATE_ROWS, where, options) for q in queries))
    # The seed's name as keywords, searched beside them: notes that name what the seed is about
    # ("Zotero", "graph view") where a small embedding model sees little in common. (A keyword search
    # filtered to the other notes is cheap.)
    title = graph.title(seed) or ""
    # (cut as the index cuts its keyword text: core/cjk.py)
    by_name = _keyword_matches(tables, keyword_text(title, index.keyword_terms), _others(seed, filters))
    near, named = await asyncio.gather(by_meaning, by_name)
    rows: dict[str, dict[str, Any]] = {
        row["id"]: row
        for batch in near
        for row in batch
        if (narrowed or (row["path"] != seed and row.pop("kind", "chunk") == "chunk")) and not kept_out(row["path"])
    }
    bonus: dict[str, float] = {}  # each title match's share of the best match, weighed
    top = max((float(r["score"]) for r in named), default=0.0)
    named = [row for row in named if not kept_out(row["path"])]
    for row in named:
        if top > 0:
            bonus[row["id"]] = TITLE_WEIGHT * float(row["score"]) / top
        rows.setdefault(row["id"], row)
    links = {path: how for path, how in _links(graph, seed).items() if not kept_out(path)}
    linked_missing = sorted(set(links) - {row["path"] for row in rows.values()})
    if linked_missing:  # linked notes the searches did not reach: their passages, within the filters
        rows.update({row["id"]: row for row in await _rows_of(tables, linked_missing, filters)})
    return _rank(graph, list(rows.values()), seed_vectors, seed_headings, links, question_vector, bonus, top_k, scale)


async def _keyword_matches(tables: IndexTables, words: str, where: str) -> list[dict[str, Any]]:
    """The passages (with their vectors) that best match `words` as BM25 keywords; none when there are
    no words or the keyword index is broken."""
    if not words.strip():
        return []
    try:
        return await tables.text_search(words, _KEYWORD_ROWS, where, with_vectors=True)
    except IndexBroken:  # (shown in the status; connections still come from the vectors)
        return []


def _others(seed: str, filters: Filters | None) -> str:
    """The filters a connected note's passages must meet, and not the seed's."""
    own = filters_to_where(filters)
    others = f"path != {sql_string(seed)} AND kind = 'chunk'"
    return f"({own}) AND {others}" if own else others


async def _rows_of(tables: IndexTables, paths: list[str], filters: Filters | None) -> list[dict[str, Any]]:
    narrowed = replace(filters or Filters(), paths=tuple(paths))
    where = f"({filters_to_where(narrowed)}) AND kind = 'chunk'"
    table = await tables.all_chunk_rows(["id"], where=where)
    if not table.num_rows:
        return []
    # Their passages' full rows, ranked later against the seed: a vector search within those notes
    # (exact, as a few notes' rows are) gives each row's hit fields and vector in one read.
    probe = np.zeros(tables.dimension, dtype=np.float32)
    probe[0] = 1.0
    return await tables.vector_search(probe, table.num_rows, where, SearchOptions(with_vectors=True))


def _links(graph: LinkGraph, seed: str) -> dict[str, str]:
    outgoing, incoming = graph.links_to(seed), graph.linked_from(seed)
    out = {path: "links to" for path in outgoing}
    for path in incoming:
        out[path] = "both" if path in out else "linked from"
    out.pop(seed, None)
    return out


def _rank(
    graph: LinkGraph,
    rows: list[dict[str, Any]],
    seed_vectors: np.ndarray,
    seed_headings: list[str],
    links: dict[str, str],
    question_vector: np.ndarray | None,
    bonus: dict[str, float],
    top_k: int,
    scale: CosineScale = IDENTITY,
) -> list[Connected]:
    if not rows:
        return []
    vectors = np.stack([np.asarray(row.pop("vector"), dtype=np.float32) for row in rows])
    if len(seed_vectors):
        # each row against each seed passage, on the bonuses' scale
        pairs = scale.array(vectors @ np.asarray(seed_vectors, dtype=np.float32).T)
        closeness, nearest = pairs.max(axis=1), pairs.argmax(axis=1)
        whole = seed_vectors.mean(axis=0)
        whole = whole / (float(np.linalg.norm(whole)) or 1.0)
        to_whole = scale.array(vectors @ np.asarray(whole, dtype=np.float32))
        closeness = _PASSAGE_SHARE * closeness + (1 - _PASSAGE_SHARE) * to_whole
    else:  # a seed with no passages of its own (an empty note): links and the question only
        closeness, nearest = np.zeros(len(rows), dtype=np.float32), np.zeros(len(rows), dtype=int)
    if question_vector is not None:
        closeness = closeness + _QUESTION_WEIGHT * scale.array(vectors @ question_vector)
    if bonus:
        closeness = closeness + np.asarray([bonus.get(row["id"], 0.0) for row in rows], dtype=np.float32)
    best: dict[str, int] = {}  # each note's row closest to the seed
    for i, row in enumerate(rows):
        if row["path"] not in best or closeness[i] > closeness[best[row["path"]]]:
            best[row["path"]] = i
    ranked = []
    for path, i in best.items():
        linked = links.get(path, "unlinked")
        score = float(closeness[i]) + (LINK_BONUS if linked != "unlinked" else 0.0)
        hit = row_to_hit(rows[i], score, float(closeness[i]))
        heading = seed_headings[int(nearest[i])] if seed_headings else ""
        ranked.append(Connected(path, graph.title(path) or hit.title or path, score, linked, hit, heading))
    ranked.sort(key=lambda c: (-c.score, c.path))  # (ties by path: the same order every time)
    return _choose(ranked, top_k, graph)


def _choose(ranked: list[Connected], top_k: int, graph: LinkGraph) -> list[Connected]:
    """The `top_k` to show, best first: the linked notes (the author said they belong together), the
    closest first, and a third of the places at least for the closest notes not linked yet (what a
    person does not know of), more when there are fewer linked ones. Lists are no unlinked connection."""
    linked = [c for c in ranked if c.linked != "unlinked"]
    unlinked = [c for c in ranked if c.linked == "unlinked" and graph.link_count(c.path) <= _LIST_LINKS]
    shown_unlinked = unlinked[: max(top_k // 3, top_k - len(linked))]
    chosen = linked[: top_k - len(shown_unlinked)] + shown_unlinked
    return sorted(chosen, key=lambda c: (-c.score, c.path))
