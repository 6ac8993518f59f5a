"""Question → ranked hits from the active index. Falls back to keyword search when Ollama is down.

Vector-only or hybrid (vector + BM25, fused by a convex combination of cosine and relative BM25), and
a threshold calibrated per index for saying "not in your notes": how it ranks and declines is the
searcher's `Ranking` (services/query/ranking.py), which `vask eval` swaps for the variants it measures.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import date, timedelta
from typing import Any

import numpy as np

from vask_server.adapters.gateway import ModelGateway
from vask_server.adapters.memory import ReleaseWhenQuiet
from vask_server.adapters.meta import IndexRecord
from vask_server.adapters.ollama import Embedder
from vask_server.adapters.sql import filters_to_where
from vask_server.adapters.store import Store
from vask_server.adapters.tables import SearchOptions
from vask_server.core.across import AcrossCentre
from vask_server.core.cjk import (
    CJK,
    CJK_COVERAGE_EVIDENCE,
    CJK_COVERAGE_FLOOR,
    cjk_content,
    coverage,
    keyword_text,
    written_in_cjk,
)
from vask_server.core.embed_prompts import EmbedPrompts, Instructions, search_prompt
from vask_server.core.model_languages import reads_only_english
from vask_server.core.models import Hit
from vask_server.core.progress import SyncProgress
from vask_server.core.question import Question, Understood, understand
from vask_server.core.retrieve import (
    Filters,
    Ranked,
    content_words,
    holds_whole_word,
    limit_per_note,
    named_terms,
    passage_text,
    row_to_hit,
    topic_query,
)
from vask_server.core.scale import CosineScale
from vask_server.core.scope import Directory, Scope, Unmatched, find_mentions
from vask_server.core.time.expr import TimeRange
from vask_server.errors import (
    IndexBroken,
    ModelMissing,
    NotIndexed,
    OllamaFailed,
    OllamaUnavailable,
    ScopeNotFound,
)
from vask_server.services.query.calibrator import Calibrator
from vask_server.services.query.connections import find_connections
from vask_server.services.query.exclusions import KeptOut, RulesNow, no_rules
from vask_server.services.query.graph import LinkGraphs
from vask_server.services.query.ranking import Ranking, RetrievalConfig, cosine_scale

log = logging.getLogger(__name__)

# "recently": the last 30 days, widened this many times (x3 each: 90 days, 270) when they hold nothing.
_RECENT_WIDENINGS = 2
# "when did I last…": among the hits scoring at least this share of the best, the latest comes first.
_ORDER_BY_DATE_WITHIN = 0.85
_NAMES_CHECKED = 5  # (a keyword search each: a question names a few things at most)
# The seed's own passages kept in a connection answer that may be about the seed itself: as many as
# a note gives an ordinary answer.
_SEED_KEPT = 2


@dataclass
class SearchResult:
    hits: list[Hit]
    mode: str  # what actually ran: "vector", "hybrid" or "keyword" (the fallback)
    notice: str | None = None
    best_similarity: float | None = None  # the best cosine of the question as asked
    evidence: float | None = None  # what the decline rule compared: the topic's best cosine, or the above
    evidence_threshold: float | None = None  # the calibrated cosine below which the search declines
    declined: bool = False
    time_range: TimeRange | None = None  # the dates searched within, when the question or caller set them
    query: str | None = (
        None  # what was searched: the question without its time words (and a follow-up's previous question)
    )
    scope: Scope | None = None  # the notes, tags and folders the question limited the search to
    # "latest"/"earliest" ("when did I last…"): the closest hits are by date, not by score
    order: str | None = None
    seed: str | None = None  # "what connects to [[X]]?": X's path; the hits are the notes connected to it
    seed_title: str | None = None
    connection_words: str | None = None  # the words that made it a connection question ("connect to")

    def connection_dict(self) -> dict[str, str] | None:
        """What a client shows as the seed's chip; None for any other question."""
        if self.seed is None:
            return None
        return {"seed": self.seed, "title": self.seed_title or self.seed, "words": self.connection_words or ""}


class Searcher:
    def __init__(
        self,
        store: Store,
        gateway: ModelGateway,
        config: RetrievalConfig | None = None,
        *,
        instructions: Instructions | None = None,
    ) -> None:
        self.store = store
        self.gateway = gateway
        self.config = config or RetrievalConfig()  # the product's ranking; a search may be given another
        # The configured model's instructions (None: each index's own, as recorded with it)
        self.instructions = instructions
        self._embedders: dict[tuple[str, str], Embedder] = {}
        self.calibrator = Calibrator(store, gateway, self.query_prompt)  # the decline line, per index version
        self._quiet = ReleaseWhenQuiet()
        self.graphs = LinkGraphs(store, self._quiet)  # also what /v1/related reads: one graph, built once
        self._unwaited: set[asyncio.Future[Any]] = set()  # tasks nobody waits for any more (`_leave_running`)
        # How far the running sync is (the indexer's, in the server): said by a search during a first sync
        self.sync_progress: Callable[[], SyncProgress | None] = lambda: None
        # Whether a rule as it is now keeps a note out (services/query/exclusions.py): its rows are dropped
        self.exclusions: RulesNow = no_rules  # the rules as they are now (services/query/exclusions.py)

    def active(self) -> IndexRecord:
        """The index searches read (`IndexMeta.searched`)."""
        return self.store.read_meta().searched()

    async def close(self) -> None:
        """Stops what the searcher runs in the background (a calibration being measured), before the
        model's client it uses is closed."""
        await self.calibrator.close()

    def query_prompt(self, index: IndexRecord) -> str:
        """The instruction put before the questions that search `index` (core/embed_prompts.search_prompt)."""
        return search_prompt(index.model, index.document_prompt, index.query_prompt, self.instructions)

    async def cosine_scale(self, index: IndexRecord) -> CosineScale:
        """How the index's cosines map onto the scale the ranking's weights were chosen on, by its
        calibration (services/query/ranking.cosine_scale)."""
        return cosine_scale(await self.calibrator.for_index(index))

    def _embedder(self, index: IndexRecord) -> Embedder:
        key = (index.model, self.query_prompt(index))
        if key not in self._embedders:
            # batch of 2: the question and its topic go to Ollama in one call
            prompts = EmbedPrompts(query=key[1], document=index.document_prompt)
            self._embedders[key] = Embedder(self.gateway, index.model, prompts=prompts, batch_size=2, concurrency=1)
        return self._embedders[key]

    async def search_question(self, question: Question | Understood, *, ranking: Ranking | None = None) -> SearchResult:
        """A question as the user asked it (read here, unless `understand` has read it already): the time it
        names is searched within, and "when did I last…" puts the latest of the close matches first. A
        question that names no time is searched exactly as `search` would. A follow-up is searched
        together with the previous question, within its own time or else the previous one's ("and in
        March?"). `ranking`: another way to rank than the searcher's own (what `vask eval` compares)."""
        understood = question if isinstance(question, Understood) else await self.understand(question)
        asked = understood.question
        config = ranking or self._ranking(asked.mode)
        if understood.seed is not None:
            result = await self.connections(understood)
            result.connection_words = understood.connection.phrase if understood.connection else None
        else:
            result = await self.search(
                understood.text,
                top_k=asked.top_k,
                min_similarity=asked.min_similarity,
                filters=understood.filters,
                config=config,
            )
        time_range = understood.time_range
        if understood.recent and understood.seed is None:
            result, time_range = await self._widen_recent(understood, result, config)
        if understood.order is not None:
            result.hits = order_by_date(result.hits, latest=understood.order == "latest")
            result.order = understood.order
        result.time_range = time_range
        result.query = understood.text
        result.scope = understood.scope
        if understood.notice:  # (how the question was read comes first)
            result.notice = f"{understood.notice} {result.notice}" if result.notice else understood.notice
        return result

    def _ranking(self, mode: str | None) -> Ranking:
        """The searcher's own ranking, in the mode the question asks for, if it asks."""
        return self.config if mode is None else replace(self.config, mode=mode)

    async def _widen_recent(
        self, understood: Understood, result: SearchResult, config: Ranking
    ) -> tuple[SearchResult, TimeRange | None]:
        """ "Recently" that found nothing in the last 30 days: looked for further back, and the range
        said, as far as it went."""
        asked = understood.question
        time_range = understood.time_range
        for _ in range(_RECENT_WIDENINGS):
            if result.hits or time_range is None or time_range.start is None or time_range.end is None:
                break
            span = (time_range.end - time_range.start).days * 3
            if span >= (time_range.end - date.min).days:
                break  # (a `now` near the calendar's first year: nothing further back)
            time_range = replace(time_range, start=time_range.end - timedelta(days=span))
            wider = replace(understood.filters, date_from=time_range.start)
            result = await self.search(
                understood.text,
                top_k=asked.top_k,
                min_similarity=asked.min_similarity,
                filters=wider,
                config=config,
            )
        return result, time_range

    async def connections(self, understood: Understood) -> SearchResult:
        """The notes connected to the question's seed (services/query/connections.py), one passage each,
        within the question's time and scope; the question's own words count too when it has any
        beyond "what connects to X" ("…about pricing"). When the seed may hold the answer itself
        ("what could help with [[Back pain]]?"), its passages that the question as written finds in it
        come first (`linked` "seed")."""
        index = self.active()
        seed = understood.seed
        assert seed is not None
        asked = understood.question
        self._quiet.touch()
        kept: list[Hit] = []
        if understood.connection is not None and understood.connection.keeps_seed:
            own = await self.search(
                understood.connection.asked,
                top_k=_SEED_KEPT,
                min_similarity=asked.min_similarity,
                filters=Filters(paths=(seed,)),
            )
            kept = [replace(hit, linked="seed") for hit in own.hits]
        topic = _connection_topic(understood.text)
        vector = None
        notice = None
        if topic:
            try:
                vector = (await self._embedder(index).embed([topic], query=True))[0]
            except (OllamaUnavailable, ModelMissing) as exc:  # the seed's own passages still find its connections
                notice = f"{exc.message}. Connections found from the note's own passages only. {exc.hint}"
        found = await find_connections(
            self.store,
            self.graphs,
            index,
            seed,
            top_k=asked.top_k,
            filters=understood.filters,
            question_vector=vector,
            kept_out=self.exclusions(),
            scale=await self.cosine_scale(index),
        )
        hits = kept + [replace(c.passage, linked=c.linked, near=c.seed_heading, score=c.score) for c in found]
        graph = await self.graphs.get(index)
        return SearchResult(
            hits, "connections", notice=notice, declined=not hits, seed=seed, seed_title=graph.title(seed) or seed
        )

    async def warm(self) -> None:
        """What the first search would otherwise do itself: the calibration sample, and one vector
        and one keyword query, which open the table and load its indexes. Run in the background once
        the server is ready (on a large index that made a restart's first search slow). Failures are
        left for that first search to meet and report."""
        try:
            index = self.active()
            await self.calibrator.for_index(index)
            if _english_across(index):  # (the everyday probes an English question is ranked with)
                with contextlib.suppress(OllamaUnavailable, ModelMissing, OllamaFailed):  # (its search asks again)
                    await self.calibrator.across_centre(index)
            probe = np.zeros(index.dimension, dtype=np.float32)
            probe[0] = 1.0
            tables = self.store.tables(index)
            await tables.vector_search(probe, 1)
            await tables.check_keyword_search()
        except Exception as exc:
            log.info("warming the search caches failed (%s); the first search does it", exc)
        finally:
            # What the warm-up read and freed (the calibration's sample, when it measured one)
            # goes back to the system now: the server sits idle at what it keeps, not at the warm-up's peak.
            await self._quiet.release_now()

    async def keep_calibration(self) -> None:
        """Measures the active index's search calibration now and keeps it in the index folder (`vask
        index`, at its end): the next `vask serve` reads it instead of measuring it after it is ready,
        while the first question waits. Where the model cannot be asked, that start measures it."""
        try:
            await self.calibrator.for_index(self.active())
        except NotIndexed:
            return

    async def understand(self, question: Question) -> Understood:
        """What `search_question` will search: the question's scope resolved in this index and its
        time read, and for "what connects to [[X]] / this note?" the seed (core/question.py).
        Raises ScopeNotFound when a [[Note]], #tag or path:Folder names nothing here, so that a client
        can hear it before an answer starts. "This note" asked without one is read as written, with a
        notice."""
        asked = [question.text] if question.previous is None else [question.text, question.previous]
        directory = await self._directory() if any(find_mentions(text)[0] for text in asked) else None
        understood = understand(question, directory)
        if understood.unmatched:
            raise scope_not_found(understood.unmatched)
        return understood

    async def _directory(self) -> Directory | None:
        """The notes and tags a mention can name; None before the first index exists."""
        try:
            index = self.active()
        except NotIndexed:
            return None
        graph = await self.graphs.get(index)
        return await asyncio.to_thread(lambda: graph.directory)  # (made by the first question naming something)

    async def _keyword_rows(
        self, index: IndexRecord, query: str, limit: int, where: str | None
    ) -> tuple[list[dict[str, Any]], IndexBroken | None]:
        """The keyword list of a hybrid search; a broken keyword index leaves the vector list to
        answer alone (and is in the store's problems, for the status)."""
        try:
            words = keyword_text(query, index.keyword_terms)
            if not index.complete:
                rows = await self._first_sync_keyword_rows(index, words, limit, where)
                return _kept(rows, self.exclusions()), None
            rows = await self.store.tables(index).text_search(words, limit, where, with_vectors=True)
        except IndexBroken as broken:
            return [], broken
        return _kept(rows, self.exclusions()), None

    async def _names_unheld(
        self, index: IndexRecord, question: str, where: str | None, candidates: Sequence[str]
    ) -> bool:
        """Whether a Chinese or Japanese question names, in another script, something no note (in
        the asked scope) holds: "logrotate" where nothing mentions it (core/cjk.py, CJK_COVERAGE_FLOOR).
        A name one of the search's own `candidates` (passage texts) holds needs no search; the others
        are looked for in the index, all at once."""
        names = [
            name
            for name in sorted(named_terms(question))[:_NAMES_CHECKED]
            if not any(holds_whole_word(text, name) for text in candidates)
        ]
        found = await asyncio.gather(*(self._keyword_rows(index, name, 1, where) for name in names))
        return any(broken is None and not rows for rows, broken in found)

    async def _first_sync_keyword_rows(
        self, index: IndexRecord, query: str, limit: int, where: str | None
    ) -> list[dict[str, Any]]:
        """During a first sync: keyword matches from the keyword table (every note), with the
        vectors of those already embedded; the others are marked `keyword_only`. None at all before
        that table is written (its first minute)."""
        tables = self.store.tables(index)
        if not tables.text_ready():
            return []
        rows = await tables.keyword_table_search(query, limit, where)
        vectors = await tables.vectors_by_id([row["id"] for row in rows])
        for row in rows:
            vector = vectors.get(row["id"])
            if vector is None:
                row["keyword_only"] = True
            else:
                row["vector"] = vector
        return rows

    def _first_sync_notice(self, index: IndexRecord) -> str | None:
        if index.complete:
            return None
        # (by keyword only once the keyword table is written and while it is kept: keyword_first.py)
        found = "found by keyword only" if self.store.tables(index).text_ready() else "found once they are embedded"
        progress = self.sync_progress()
        if progress is None or not progress.notes_total:
            return f"The first index of this vault is being built: notes not embedded yet are {found}."
        return f"Indexing: {progress.notes_done:,} of {progress.notes_total:,} notes embedded; the others are {found}."

    async def search(
        self,
        query: str,
        *,
        top_k: int,
        min_similarity: float,
        filters: Filters | None = None,
        config: Ranking | None = None,
    ) -> SearchResult:
        """The passages that answer `query`, or a decline: the candidates by meaning and by keyword,
        fused into one ranking, then the decision whether the notes answer it at all."""
        asked = _Asked.of(self.active(), query, top_k, min_similarity, filters, config or self.config)
        self._quiet.touch()  # what this search frees goes back to the system once searches pause
        # The keyword list needs only the words: it is searched while the model embeds the question
        # (with a real model the embedding takes longer than the keyword search, which it then hides).
        keywords = (
            asyncio.ensure_future(self._keyword_rows(asked.index, query, asked.config.candidates, asked.where))
            if asked.config.mode == "hybrid"
            else None
        )
        try:
            texts = [query] if asked.topic is None else [query, asked.topic]
            vectors = await self._embedder(asked.index).embed(texts, query=True)
        except BaseException as exc:
            if keywords is not None:
                # Never cancelled: with it cancelled, searches with the model down could hang. Held
                # until it finishes, in case nobody waits for it below.
                self._leave_running(keywords)
            if not isinstance(exc, (OllamaUnavailable, ModelMissing)):
                raise
            return await self._keywords_alone(asked, keywords, exc)
        centre = await self._across_centre(asked.index) if asked.across else None
        found = await self._candidates(asked, vectors, keywords, centre)
        scale = await self.cosine_scale(asked.index)
        text_rows = [] if asked.across else found.text_rows
        ranked = asked.config.fuse(found.vector_rows, text_rows, query=query, blind=asked.blind, scale=scale)
        ranked = await asked.config.boost(ranked, lambda: self.graphs.get(asked.index))
        return await self._decide(asked, found, ranked)

    async def _keywords_alone(
        self,
        asked: _Asked,
        keywords: asyncio.Future[tuple[list[dict[str, Any]], IndexBroken | None]] | None,
        failure: OllamaUnavailable | ModelMissing,
    ) -> SearchResult:
        """With the model down: the keyword matches alone, scored as shares of the best."""
        log.warning("query embedding failed (%s); falling back to keyword search", failure.message)
        # the keyword list already under way answers alone (shielded: a cancelled request leaves it be)
        wanted = asked.top_k * 4
        if keywords is not None and asked.config.candidates >= wanted:
            rows, broken = await asyncio.shield(keywords)
        else:
            rows, broken = await self._keyword_rows(asked.index, asked.query, wanted, asked.where)
        if broken is not None:  # nothing can be searched: say both, not "no matches"
            also = f"{broken.message[0].lower()}{broken.message[1:]}"
            notice = f"{failure.message}, and {also}. {failure.hint} {broken.hint}"
            return SearchResult([], "keyword", notice=notice)
        rows = rows[:wanted]
        for row in rows:
            row.pop("vector", None)
        return SearchResult(
            limit_per_note(_keyword_hits(rows), asked.top_k, asked.config.per_note),
            "keyword",
            notice=f"{failure.message}. Showing keyword matches only. {failure.hint}",
        )

    async def _across_centre(self, index: IndexRecord) -> AcrossCentre | None:
        """What every English question shares against the index's Chinese or Japanese passages, taken
        out of one before it is ranked (core/across.py); None (ranked as asked) when not measured."""
        try:
            return await self.calibrator.across_centre(index)
        except (OllamaUnavailable, ModelMissing, OllamaFailed) as exc:
            log.warning("ranking a question in another language as asked (%s)", exc)
            return None

    async def _candidates(
        self,
        asked: _Asked,
        vectors: np.ndarray,
        keywords: asyncio.Future[tuple[list[dict[str, Any]], IndexBroken | None]] | None,
        centre: AcrossCentre | None = None,
    ) -> _Candidates:
        """The rows closest in meaning to the question and, in a hybrid search, its keyword matches,
        each with its cosine to the question. With `centre`, a question in another language than the
        notes: searched and scored without what every such question shares (core/across.py)."""
        vector = vectors[0]
        filters = asked.filters
        options = SearchOptions(
            with_vectors=asked.topic is not None or centre is not None,
            # (notes named, by the caller or a [[Note]] in the question: few rows, searched exactly)
            approximate_filter=filters is None or not (filters.paths or (filters.scope and filters.scope.notes)),
        )
        limit = max(asked.config.vector_candidates, asked.top_k * 4)
        searched = centre.query(vector) if centre is not None else vector
        vector_search = self.store.tables(asked.index).vector_search(searched, limit, asked.where, options)
        text_rows: list[dict[str, Any]] = []
        notice: str | None = None
        if keywords is not None:
            # Both lists at once: the database runs each on its own threads, so the wait is the
            # longer of the two rather than their sum.
            vector_rows, (text_rows, broken) = await asyncio.gather(vector_search, keywords)
            if broken is not None:
                notice = f"{broken.message}. Showing matches by meaning only. {broken.hint}"
        else:
            vector_rows = await vector_search
        vector_rows = _kept(vector_rows, self.exclusions())
        if centre is not None:
            _score_across(vector_rows, vector, centre)
        embedded_rows = [row for row in text_rows if "vector" in row]  # (a first sync's not yet embedded have none)
        text_vectors = [np.asarray(row.pop("vector"), dtype=np.float32) for row in embedded_rows]
        for row, row_vector in zip(embedded_rows, text_vectors, strict=True):
            row["similarity"] = float(np.dot(vector, row_vector))  # every candidate gets a cosine
        # A model that reads only English says nothing of passages in Chinese or Japanese: their cosines
        # are no evidence that an English question is answered.
        unreadable = asked.index.keyword_terms == CJK and reads_only_english(asked.index.model) is True

        def readable(row: dict[str, Any]) -> bool:
            return not (unreadable and written_in_cjk([str(row.get("text") or "")]))

        kept = [
            (r, np.asarray(r.pop("vector"), dtype=np.float32)) for r in vector_rows if "vector" in r and readable(r)
        ]
        kept.extend((r, v) for r, v in zip(embedded_rows, text_vectors, strict=True) if readable(r))
        readable_vectors = [v for _, v in kept]
        across = asked.index.keyword_terms == CJK  # (only such an index holds passages in those languages)
        readable_cjk = [across and written_in_cjk([str(r.get("text") or "")]) for r, _ in kept]
        topic_vector = vectors[1] if asked.topic is not None else None
        return _Candidates(vector_rows, text_rows, readable_vectors, readable_cjk, topic_vector, notice)

    async def _decide(self, asked: _Asked, found: _Candidates, ranked: list[Ranked]) -> SearchResult:
        """Whether the notes answer the question (else the search declines), and the hits shown."""
        config = asked.config
        best = max((r.similarity for r in ranked if r.similarity is not None), default=None)
        evidence, across = best, False
        if found.topic_vector is not None and found.readable_vectors:
            # The topic's best cosine among the question's candidates: on the eval questions it equals
            # the topic's best over the whole index, without a search of its own.
            cosines = np.stack(found.readable_vectors) @ found.topic_vector
            evidence = float(cosines.max())
            # ... in Chinese or Japanese, or answered from such passages among others (a vault of
            # notes in both): a question that is not is held to the line of questions in another
            # language (core/across.py)
            across = asked.across or (
                not asked.cjk_units
                and (found.readable_cjk[int(cosines.argmax())] or _leads_in_cjk(asked, ranked[:_LEADING]))
            )
        elif found.topic_vector is not None:
            evidence = None
        calibration = await self.calibrator.for_index(asked.index)
        if across and calibration.across_mean is not None and calibration.across_std is not None:
            calibration = replace(calibration, pair_mean=calibration.across_mean, pair_std=calibration.across_std)
        threshold = config.threshold(calibration, asked.min_similarity, asked.filters)
        # Exact evidence outweighs a low cosine: the best keyword passages hold every content word,
        # or a candidate holds the terms the question quotes (a word the model may not know).
        exact = any(item.quoted or (item.exact and item.strong_keyword) for item in ranked)
        declined = not exact and (best is None or evidence is None or evidence < threshold)
        if asked.cjk_units and best is not None:
            declined = await self._cjk_declined(asked, ranked, declined=declined)
        hits = [] if declined else _passing(ranked, asked.min_similarity, score=config.score)
        declined = declined or not hits
        notice = found.notice
        partial = self._first_sync_notice(asked.index)
        if partial:
            notice = f"{notice} {partial}" if notice else partial
        return SearchResult(
            limit_per_note(hits, asked.top_k, config.per_note),
            config.mode,
            notice=notice,
            best_similarity=best,
            evidence=evidence,
            evidence_threshold=threshold,
            declined=declined,
        )

    async def _cjk_declined(self, asked: _Asked, ranked: list[Ranked], *, declined: bool) -> bool:
        """A question in Chinese or Japanese: what its keyword passages hold of it is evidence, and
        the only evidence when the model reads only English (core/cjk.py, CJK_COVERAGE_FLOOR)."""
        passages = [(r.keyword is not None, passage_text(r.row)) for r in ranked]
        held = max((coverage(asked.cjk_units, text) for keyword, text in passages if keyword), default=0.0)
        if asked.blind:
            texts = [text for _, text in passages]
            return held < CJK_COVERAGE_FLOOR or await self._names_unheld(asked.index, asked.query, asked.where, texts)
        return declined and held < CJK_COVERAGE_EVIDENCE

    def _leave_running(self, task: asyncio.Future[Any]) -> None:
        """Lets a task finish on its own; its outcome, failure included, is taken and dropped. Held
        until then: the event loop keeps only weak references to tasks."""
        self._unwaited.add(task)

        def settled(done: asyncio.Future[Any]) -> None:
            self._unwaited.discard(done)
            if not done.cancelled():
                done.exception()

        task.add_done_callback(settled)


@dataclass(frozen=True)
class _Asked:
    """One search as asked, and what follows from it before anything is searched."""

    index: IndexRecord
    query: str
    top_k: int
    min_similarity: float
    filters: Filters | None
    config: Ranking
    where: str | None  # the filters' and the ranking's, as one SQL condition
    topic: str | None  # what the decline rule weighs instead of the question (None: the question)
    cjk_units: set[str]  # the question's Chinese or Japanese, when the index cuts keyword text for it
    # ... and the model reads only English: its cosines say nothing of the question, and the keyword
    # side ranks alone
    blind: bool
    # A question not in Chinese or Japanese over notes mostly written in them, with a model that reads
    # both: its words match only the stray Latin words of those notes, so meaning ranks alone, and
    # it is held to the line of questions in another language (core/across.py)
    across: bool = False

    @classmethod
    def of(
        cls, index: IndexRecord, query: str, top_k: int, min_similarity: float, filters: Filters | None, config: Ranking
    ) -> _Asked:
        clauses = [c for c in (filters_to_where(filters), config.where()) if c]
        where = " AND ".join(f"({c})" for c in clauses) or None
        topic = topic_query(query) if config.decline_on_topic() else None
        units = cjk_content(query) if index.keyword_terms == CJK else set()
        blind = bool(units) and reads_only_english(index.model) is True
        across = not units and _english_across(index)
        return cls(index, query, top_k, min_similarity, filters, config, where, topic, units, blind, across)


@dataclass
class _Candidates:
    """What the searches found, before the ranking."""

    vector_rows: list[dict[str, Any]]
    text_rows: list[dict[str, Any]]  # (empty in a vector-only search)
    readable_vectors: list[np.ndarray]  # the vectors of the candidates the model can read
    readable_cjk: list[bool]  # ... whether each is written in Chinese or Japanese
    topic_vector: np.ndarray | None  # the question's topic, embedded beside it
    notice: str | None  # a broken keyword index: the vector list answered alone


def _english_across(index: IndexRecord) -> bool:
    """A question not in Chinese or Japanese over this index asks across languages: most of its notes
    are written in them, and its model reads them."""
    return mostly_cjk(index) and reads_only_english(index.model) is not True


def mostly_cjk(index: IndexRecord) -> bool:
    """Most of the notes the index's last whole sync read are written in Chinese or Japanese."""
    return cjk_share_of_notes(index) >= 0.5


# A vault with this share of its notes written in Chinese or Japanese is one of both languages (a
# Chinese speaker's notes around English commands and code): an English question there is answered
# from notes in either, and the vault's own line, measured on topics half of which are Chinese, sits
# above what it scores against the note that answers it (docs/EVALUATION.md, "Notes in two languages").
_BOTH_LANGUAGES_SHARE = 0.25


# The passages a question is answered from, for that rule: as many as a search returns unless told
# otherwise, whatever a caller asked for (a decline must not depend on how many hits are shown).
_LEADING = 6


def cjk_share_of_notes(index: IndexRecord) -> float:
    """The share of the notes the index's last whole sync read that are written in Chinese or Japanese."""
    choice = index.keyword_choice
    if index.keyword_terms != CJK or choice is None or not choice.notes_read:
        return 0.0
    return choice.cjk_notes / choice.notes_read


def scope_not_found(unmatched: tuple[Unmatched, ...]) -> ScopeNotFound:
    return ScopeNotFound(
        " ".join(miss.message() for miss in unmatched),
        " ".join(miss.hint() for miss in unmatched),
        [miss.miss() for miss in unmatched],
    )


def order_by_date(hits: list[Hit], *, latest: bool) -> list[Hit]:
    """The close matches (a score within _ORDER_BY_DATE_WITHIN of the best) by date, latest or
    earliest first, then the rest as ranked: "when did I last…" wants the newest of the passages
    about it, not the newest passage. A date read from the file's time alone says when it was last
    saved or checked out, not written: such passages follow the dated ones, in their ranked order."""
    if not hits:
        return hits
    best = max(hit.score for hit in hits)
    close = [hit for hit in hits if hit.score >= _ORDER_BY_DATE_WITHIN * best]
    rest = [hit for hit in hits if hit.score < _ORDER_BY_DATE_WITHIN * best]
    dated = [hit for hit in close if hit.date is not None and hit.date_source != "file-time"]
    undated = [hit for hit in close if hit not in dated]

    def when(hit: Hit) -> date:
        return (hit.date_end if latest else hit.date) or date.min

    return sorted(dated, key=when, reverse=latest) + undated + rest


def _passing(ranked: list[Ranked], min_similarity: float, *, score: Callable[[Ranked], float]) -> list[Hit]:
    """Passages good enough to show: similar enough, or among the strongest keyword matches
    (an exact rare term, like an alias, can matter more than a vector's opinion)."""
    hits = []
    for item in ranked:
        similarity = item.similarity if item.similarity is not None else 0.0
        if similarity >= min_similarity or item.strong_keyword:
            hits.append(row_to_hit(item.row, score(item), similarity))
    return hits


# Words a connection question uses that say nothing of a topic ("which ideas in my vault …")
_CONNECTION_WORDS = frozenset(
    "note notes idea ideas thing things anything something else vault written wrote write writing "
    "nota notas cosa cosas algo escrito".split()
)


def _connection_topic(text: str) -> str | None:
    """What a connection question asks beyond "which notes connect to X": its own content words,
    less generic ones ("which ideas from March …?" asks nothing more; "…about pricing" does)."""
    wanted = content_words(text) - _CONNECTION_WORDS
    words = [w for w in text.split() if w.strip("¿?¡!.,;:\"'()").lower() in wanted]
    return " ".join(words) if words else None


def _leads_in_cjk(asked: _Asked, leading: Sequence[Ranked]) -> bool:
    """In a vault of notes in both languages, whether any of a question's leading passages is written
    in Chinese or Japanese."""
    return cjk_share_of_notes(asked.index) >= _BOTH_LANGUAGES_SHARE and written_in_cjk(
        passage_text(r.row) for r in leading
    )


def _score_across(rows: list[dict[str, Any]], question: np.ndarray, centre: AcrossCentre) -> None:
    """Each row's score: its cosine to a question in another language, less what every such question
    shares (core/across.py)."""
    embedded = [row for row in rows if "vector" in row]
    if not embedded:
        return
    passages = np.stack([np.asarray(row["vector"], dtype=np.float32) for row in embedded])
    for row, score in zip(embedded, centre.scores(question, passages), strict=True):
        row["score"] = float(score)


def _keyword_hits(rows: list[dict[str, Any]]) -> list[Hit]:
    """Keyword-only hits (Ollama down), scored from 0 to 1 like the other modes: BM25 as a share of
    the query's best match, so the best is 1.0 and the score ranks but does not say how close a
    match is. Raw BM25 has no fixed scale: it grows with the query's words and their rarity (the
    best match of sample_vault queries scores 5 to 14)."""
    best = max((float(row["score"]) for row in rows), default=0.0)
    return [row_to_hit(row, float(row["score"]) / best if best > 0 else 0.0) for row in rows]


def _kept(rows: list[dict[str, Any]], kept_out: KeptOut) -> list[dict[str, Any]]:
    """The rows no rule keeps out, tested against the rules as they were taken for this list."""
    return [row for row in rows if not kept_out(row["path"])]
