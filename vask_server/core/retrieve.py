"""Ranking: filters as SQL, rows to hits, fusion of vector and keyword lists, grouping by note."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from vask_server.core.models import Hit

RRF_K = 60


@dataclass(frozen=True)
class Filters:
    folders: tuple[str, ...] = ()
    exclude_folders: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()

    def is_empty(self) -> bool:
        return not (self.folders or self.exclude_folders or self.tags or self.paths)


def _literal(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _folder_prefix(folder: str) -> str:
    return folder.strip().strip("/") + "/"


def filters_to_where(filters: Filters | None) -> str | None:
    """A LanceDB SQL filter; every value is escaped, since paths and tags come from users."""
    if filters is None or filters.is_empty():
        return None
    clauses: list[str] = []
    if filters.folders:
        clauses.append(
            "(" + " OR ".join(f"starts_with(path, {_literal(_folder_prefix(f))})" for f in filters.folders) + ")"
        )
    for folder in filters.exclude_folders:
        clauses.append(f"NOT starts_with(path, {_literal(_folder_prefix(folder))})")
    if filters.tags:
        tags = ", ".join(_literal(t.lstrip("#").lower()) for t in filters.tags)
        clauses.append(f"array_has_any(tags, [{tags}])")
    if filters.paths:
        clauses.append(f"path IN ({', '.join(_literal(p) for p in filters.paths)})")
    return " AND ".join(clauses)


def row_to_hit(row: dict[str, Any], score: float) -> Hit:
    return Hit(
        chunk_id=row["id"],
        path=row["path"],
        title=row.get("title") or "",
        heading=row.get("heading") or "",
        anchor=row.get("anchor") or "",
        line_start=int(row.get("line_start") or 0),
        line_end=int(row.get("line_end") or 0),
        score=float(score),
        text=row.get("text") or "",
        tags=tuple(row.get("tags") or ()),
    )


@dataclass
class Ranked:
    row: dict[str, Any]
    similarity: float | None = None  # cosine, when the vector search saw it
    keyword: float | None = None  # BM25, when the full-text search saw it
    fused: float = 0.0
    sources: set[str] = field(default_factory=set)


def fuse(
    vector_rows: Sequence[dict[str, Any]],
    text_rows: Sequence[dict[str, Any]],
    *,
    vector_weight: float = 1.0,
    text_weight: float = 1.0,
    k: int = RRF_K,
) -> list[Ranked]:
    """Reciprocal-rank fusion: each list contributes weight / (k + rank); best first."""
    ranked: dict[str, Ranked] = {}
    for rank, row in enumerate(vector_rows, start=1):
        item = ranked.setdefault(row["id"], Ranked(row))
        item.similarity = float(row["score"])
        item.fused += vector_weight / (k + rank)
        item.sources.add("vector")
    for rank, row in enumerate(text_rows, start=1):
        item = ranked.setdefault(row["id"], Ranked(row))
        item.keyword = float(row["score"])
        item.fused += text_weight / (k + rank)
        item.sources.add("keyword")
    return sorted(ranked.values(), key=lambda r: r.fused, reverse=True)


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
