"""The rankings `vask eval` measures beside the product's (services/query/ranking.py): only the evaluation
uses them. Each field is one measured alternative; with every field at its default this ranks exactly
as the product does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vask_server.adapters.calibration import Calibration
from vask_server.core.retrieve import CONVEX_ALPHA, RRF_K, Filters, Ranked, fuse, fuse_convex, graph_boost
from vask_server.core.scale import IDENTITY, CosineScale
from vask_server.services.query.ranking import GraphOf, calibrated_threshold


@dataclass(frozen=True)
class RankingVariant:
    """How to retrieve; `vask eval` compares variants side by side (docs/EVALUATION.md). The field
    order is the order the evaluation's JSON report lists them in."""

    mode: str = "hybrid"  # "vector" or "hybrid"
    # How hybrid mode merges the lists: "convex" (alpha × cosine + (1 − alpha) × normalised BM25)
    # or "rrf" (reciprocal ranks, the previous default).
    fusion: str = "convex"
    note_records: bool = True  # also match note-level records (title, aliases, headings, opening)
    # Boost notes linked to and from the strongest hits: on sample_vault it lowered hit@1 at every
    # weight tried, so the product does not.
    graph: bool = False
    graph_weight: float = 0.05
    graph_seeds: int = 5
    graph_min_links: int = 2  # a note must be linked with this many of the seeds (co-citation)
    per_note: int = 2  # chunks of one note among the results at most
    candidates: int = 50  # rows fetched from the keyword list before ranking
    vector_candidates: int = 30  # and from the vector list
    # "fixed": decline when the best cosine is under min_similarity; "calibrated": as the product.
    decline: str = "calibrated"
    decline_sigmas: float = 1.5
    # What the decline rule measures: "topic", the best cosine of the question's content words
    # alone (core/retrieve.topic_query), or "question", the best cosine of the question as asked.
    decline_on: str = "topic"
    # Convex fusion's cosines: "calibrated", moved onto the scale its weights were chosen on by the
    # index's calibration (core/scale.py), as the product; "raw", as the model gives them.
    cosines: str = "calibrated"

    def where(self) -> str | None:
        return None if self.note_records else "kind = 'chunk'"

    def decline_on_topic(self) -> bool:
        return self.decline == "calibrated" and self.decline_on == "topic"

    def fuse(
        self,
        vector_rows: list[dict[str, Any]],
        text_rows: list[dict[str, Any]],
        *,
        query: str,
        blind: bool,
        scale: CosineScale = IDENTITY,
    ) -> list[Ranked]:
        if self.mode == "hybrid" and self.fusion == "convex":
            alpha = 0.0 if blind else CONVEX_ALPHA
            moved = scale if self.cosines == "calibrated" else IDENTITY
            return fuse_convex(vector_rows, text_rows, query=query, alpha=alpha, scale=moved)
        return fuse(vector_rows, text_rows if self.mode == "hybrid" else [], query=query)

    async def boost(self, ranked: list[Ranked], graph: GraphOf) -> list[Ranked]:
        if not self.graph:
            return ranked
        return graph_boost(
            ranked, await graph(), seeds=self.graph_seeds, weight=self.graph_weight, min_links=self.graph_min_links
        )

    def threshold(self, calibration: Calibration, min_similarity: float, filters: Filters | None) -> float:
        if self.decline != "calibrated":
            return min_similarity
        return calibrated_threshold(calibration, self.decline_sigmas, min_similarity, filters)

    def score(self, item: Ranked) -> float:
        """The cosine, the convex score (above 1 for the exact matches it ranks first), or reciprocal
        ranks as a share of the best possible (first in both lists)."""
        if self.mode != "hybrid":
            return item.similarity or 0.0
        if self.fusion == "convex":
            return item.fused
        return item.fused / (2.0 / (RRF_K + 1))
