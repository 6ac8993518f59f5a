"""Question → ranked hits from the active index. Falls back to keyword search when Ollama is down."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from vask_server.adapters.ollama import Embedder, OllamaGateway
from vask_server.adapters.store import Store
from vask_server.core.models import Hit
from vask_server.core.retrieve import Filters, filters_to_where, fuse, limit_per_note, row_to_hit
from vask_server.errors import ModelMissing, NotIndexed, OllamaUnavailable

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RetrievalConfig:
    """How to retrieve; eval compares configurations side by side."""

    mode: str = "vector"  # "vector" or "hybrid"
    per_note: int = 2  # chunks of one note among the results at most
    candidates: int = 50  # rows fetched from each list before ranking


@dataclass
class SearchResult:
    hits: list[Hit]
    mode: str  # what actually ran: "vector", "hybrid" or "keyword" (the fallback)
    notice: str | None = None
    best_similarity: float | None = None
    extra: dict[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class ActiveIndex:
    model: str
    dimension: int
    suffix: str


class Searcher:
    def __init__(self, store: Store, gateway: OllamaGateway, config: RetrievalConfig | None = None) -> None:
        self.store = store
        self.gateway = gateway
        self.config = config or RetrievalConfig()
        self._embedders: dict[str, Embedder] = {}

    def active(self) -> ActiveIndex:
        meta = self.store.read_meta()
        if not meta.active:
            raise NotIndexed(
                "The vault has not been indexed yet.",
                "Run `vask index --vault PATH`, or wait for `vask serve` to finish its first sync.",
            )
        return ActiveIndex(meta.active["model"], int(meta.active["dimension"]), meta.active["suffix"])

    def _embedder(self, model: str) -> Embedder:
        if model not in self._embedders:
            self._embedders[model] = Embedder(self.gateway, model, batch_size=1, concurrency=1)
        return self._embedders[model]

    async def search(
        self,
        query: str,
        *,
        top_k: int,
        min_similarity: float,
        filters: Filters | None = None,
        config: RetrievalConfig | None = None,
    ) -> SearchResult:
        config = config or self.config
        index = self.active()
        where = filters_to_where(filters)
        try:
            vector = (await self._embedder(index.model).embed([query]))[0]
        except (OllamaUnavailable, ModelMissing) as exc:
            log.warning("query embedding failed (%s); falling back to keyword search", exc.message)
            rows = await self.store.text_search(index.suffix, index.dimension, query, top_k * 4, where)
            hits = [row_to_hit(row, row["score"]) for row in rows]
            return SearchResult(
                limit_per_note(hits, top_k, config.per_note),
                "keyword",
                notice=f"{exc.message}. Showing keyword matches only. {exc.hint}",
            )
        vector_rows = await self.store.vector_search(
            index.suffix, index.dimension, vector, max(config.candidates, top_k * 4), where
        )
        best = max((float(r["score"]) for r in vector_rows), default=None)
        if config.mode == "hybrid":
            text_rows = await self.store.text_search(index.suffix, index.dimension, query, config.candidates, where)
            ranked = fuse(vector_rows, text_rows)
            hits = [
                row_to_hit(r.row, r.similarity if r.similarity is not None else 0.0)
                for r in ranked
                if (r.similarity or 0.0) >= min_similarity or r.keyword is not None
            ]
        else:
            hits = [row_to_hit(row, row["score"]) for row in vector_rows if row["score"] >= min_similarity]
        return SearchResult(limit_per_note(hits, top_k, config.per_note), config.mode, best_similarity=best)
