"""How a search ranks and when it declines: the `Ranking` a searcher is given, and the product's.

`Searcher.search` asks its ranking for each choice (the candidates fetched, how the vector and keyword
lists are fused, the line below which it says "not in your notes", the score a hit shows). The product
has one ranking, `RetrievalConfig`, with the two knobs a person can change: vector-only or hybrid, and
how far above the unrelated level the decline line sits. The measured alternatives (reciprocal-rank
fusion, the link graph's boost, a fixed threshold, ...) are `services/query/ranking_variants.py`, which only
the evaluation uses.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from vask_server.adapters.calibration import Calibration
from vask_server.core.retrieve import CONVEX_ALPHA, Filters, Ranked, fuse, fuse_convex
from vask_server.core.scale import IDENTITY, CosineScale
from vask_server.services.query.graph import LinkGraph

# Within a date range, or the notes, folders or tags a question names, the best of few candidates is
# lower than the best of the whole vault, for unrelated text too, so the "not in your notes" line sits
# lower: at the level of unrelated pairs itself.
NARROWED_DECLINE_SIGMAS = 0.0

GraphOf = Callable[[], Awaitable[LinkGraph]]


class Ranking(Protocol):
    @property
    def mode(self) -> str:
        """ "vector" or "hybrid" (vector and keyword lists)."""

    @property
    def per_note(self) -> int:
        """Passages of one note among the results, at most."""

    @property
    def candidates(self) -> int:
        """Rows fetched from the keyword list before ranking."""

    @property
    def vector_candidates(self) -> int:
        """Rows fetched from the vector list before ranking."""

    def where(self) -> str | None:
        """A filter every candidate must pass besides the question's (None: none)."""

    def decline_on_topic(self) -> bool:
        """Whether the decline rule weighs the question's topic (core/retrieve.topic_query) rather
        than the question as asked."""

    def fuse(
        self,
        vector_rows: list[dict[str, Any]],
        text_rows: list[dict[str, Any]],
        *,
        query: str,
        blind: bool,
        scale: CosineScale = IDENTITY,
    ) -> list[Ranked]:
        """The candidates ranked. `blind`: the model's cosines say nothing of this question (a
        Chinese or Japanese one over an English-only model): the keyword side ranks alone. `scale`:
        the index's cosines on the scale the fusion's weights were chosen on (`cosine_scale`)."""

    async def boost(self, ranked: list[Ranked], graph: GraphOf) -> list[Ranked]:
        """The ranking moved by what else is known of the notes (the link graph)."""

    def threshold(self, calibration: Calibration, min_similarity: float, filters: Filters | None) -> float:
        """The evidence below which the search declines."""

    def score(self, item: Ranked) -> float:
        """The score a hit shows: the one that ranked it."""


@dataclass(frozen=True)
class RetrievalConfig:
    """The product's ranking: note-level records matched beside passages, hybrid lists fused by a
    convex combination of cosine and relative BM25, two passages a note at most, and a decline line
    calibrated per index and model."""

    mode: str = "hybrid"  # "vector" or "hybrid"
    # The decline line: mean + `decline_sigmas` standard deviations of the similarity between a topic
    # asked as a question and passages of other notes of the index, a scale each embedding model (and
    # its query instruction) sets for itself, so no one number fits all models. 1.5: the most absent
    # questions declined while losing at most 2 answerable ones over the ten sets of sample_vault,
    # with all-minilm and with mxbai-embed-large (docs/EVALUATION.md, "Not in your notes").
    decline_sigmas: float = 1.5
    per_note: int = 2
    candidates: int = 50
    # The vector list is shorter: a passage below its 30th cosine that ranks in the end is a keyword
    # match, which the keyword list brings: questions ranked the same six as with 50 (docs/EVALUATION.md,
    # "What the ranking's constants rest on"), and on a large index each row fewer is less to re-rank.
    vector_candidates: int = 30

    def where(self) -> str | None:
        return None

    def decline_on_topic(self) -> bool:
        return True

    def fuse(
        self,
        vector_rows: list[dict[str, Any]],
        text_rows: list[dict[str, Any]],
        *,
        query: str,
        blind: bool,
        scale: CosineScale = IDENTITY,
    ) -> list[Ranked]:
        if self.mode == "hybrid":
            alpha = 0.0 if blind else CONVEX_ALPHA
            return fuse_convex(vector_rows, text_rows, query=query, alpha=alpha, scale=scale)
        return fuse(vector_rows, [], query=query)

    async def boost(self, ranked: list[Ranked], graph: GraphOf) -> list[Ranked]:
        return ranked

    def threshold(self, calibration: Calibration, min_similarity: float, filters: Filters | None) -> float:
        return calibrated_threshold(calibration, self.decline_sigmas, min_similarity, filters)

    def score(self, item: Ranked) -> float:
        return item.fused if self.mode == "hybrid" else item.similarity or 0.0


def cosine_scale(calibration: Calibration | None) -> CosineScale:
    """How the index's cosines map onto the scale the ranking's weights were chosen on (core/scale.py):
    by its calibration's unrelated level and spread. Unmoved while there is none measured with
    questions (the model could not be asked), or it measured no spread."""
    if calibration is None or calibration.kind != "questions" or calibration.pair_std <= 0:
        return IDENTITY
    return CosineScale(calibration.pair_mean, calibration.pair_std)


def calibrated_threshold(
    calibration: Calibration, sigmas: float, min_similarity: float, filters: Filters | None
) -> float:
    """`sigmas` standard deviations above the index's unrelated level (fewer within a narrowed
    search); `min_similarity` while the calibration has measured no spread."""
    if calibration.pair_std <= 0:
        return min_similarity
    if filters is not None and not filters.is_empty():
        sigmas = min(sigmas, NARROWED_DECLINE_SIGMAS)
    return calibration.pair_mean + sigmas * calibration.pair_std
