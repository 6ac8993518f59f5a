"""The line below which a search declines ("not in your notes"), calibrated per index version.

What an unrelated passage's cosine looks like depends on the model and the vault, so it is measured:
a topic taken from a passage, embedded as a question, against a sample of passages of other notes.
Measured once per index version (a sync makes a new one) and kept on disk (adapters/calibration.py);
how the searcher turns it into a threshold is its `Ranking`'s (services/query/ranking.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import pyarrow as pa

from vask_server.adapters.calibration import Calibration, read_calibration, write_calibration
from vask_server.adapters.gateway import ModelGateway
from vask_server.adapters.meta import IndexRecord
from vask_server.adapters.ollama import Embedder
from vask_server.adapters.schema import vector_matrix
from vask_server.adapters.store import Store
from vask_server.adapters.tables import IndexTables
from vask_server.core.across import ACROSS_PROBES, AcrossCentre
from vask_server.core.cjk import CJK, written_in_cjk
from vask_server.core.embed_prompts import EmbedPrompts
from vask_server.core.model_languages import reads_only_english
from vask_server.core.retrieve import topic_query
from vask_server.errors import ModelMissing, NotIndexed, OllamaFailed, OllamaUnavailable

log = logging.getLogger(__name__)

# Passages sampled (one a note) for a calibration; an index of more notes than this keeps its
# previous figures while a sync's new version is measured in the background.
_BACKGROUND_SAMPLE = 512
# Of that sample, the passages whose topic is embedded as a question for the calibration (a few dozen
# short texts, once per index version: probes whose passage did not change are not embedded again).
_QUERY_PROBES = 64
_PROBE_WORDS = 6  # content words of a probe: about as many as a question's topic has
# An index of more notes than this has its sample's notes drawn before any passage is read; a smaller
# one reads every passage's id and path, which is quick there (and keeps its sample as it was).
_READ_EVERY_PASSAGE_UP_TO = 4 * _BACKGROUND_SAMPLE
_SPARE_NOTES = 64  # drawn beyond the sample, for notes whose passages a sync replaced meanwhile


@dataclass(frozen=True)
class _IndexCache:
    """Per index version: the calibration measured on a sample of its vectors (or kept from a run
    before), and the index it belongs to."""

    suffix: str
    calibration: Calibration


class Calibrator:
    """The searcher's calibration: the one of the index version searched, measured when a search
    (or the warm-up) first needs it."""

    def __init__(
        self, store: Store, gateway: ModelGateway, query_prompt: Callable[[IndexRecord], str] | None = None
    ) -> None:
        self.store = store
        self.gateway = gateway
        # The instruction the index's questions are embedded with (the searcher's choice): its probes get it
        self.query_prompt = query_prompt or (lambda index: index.query_prompt)
        self._cache: _IndexCache | None = None
        self._refresh: asyncio.Task[None] | None = None
        # The measurement a search waits for, shared by every search (and the warm-up) that needs it
        # meanwhile: each measuring for itself read every chunk's path once per caller.
        self._measuring: tuple[str, asyncio.Task[_IndexCache]] | None = None
        self._probe_vectors: dict[str, np.ndarray] = {}  # the last calibration's probes, by text
        self._probe_key: tuple[str, int, str] | None = None  # ... embedded by this model, size, instruction
        # core/across.py's probes embedded, so keyed: one embedding shared by the questions that wait for it
        self._across_vectors: tuple[tuple[str, int, str], asyncio.Future[np.ndarray]] | None = None

    async def for_index(self, index: IndexRecord) -> Calibration:
        """The calibration of the index's current version: measured (once, whoever asks meanwhile),
        read from disk, or the previous version's while a fresh one is measured in the background."""
        return (await self._current(index)).calibration

    @property
    def latest(self) -> Calibration | None:
        """The calibration searches use now (the last one measured or read), if any."""
        return self._cache.calibration if self._cache is not None else None

    async def close(self) -> None:
        """Stops a calibration being measured, before the model's client it uses is closed."""
        for task in (self._refresh, self._measuring[1] if self._measuring else None):
            if task is not None and not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task

    def _version(self, index: IndexRecord) -> str:
        """The index version, and the query instruction its probes are embedded with: a new one is
        measured anew, though nothing is embedded again in the index."""
        version = self.store.read_meta().version(index.suffix)
        prompt = self.query_prompt(index)
        return f"{version}?q={hashlib.sha256(prompt.encode()).hexdigest()[:8]}" if prompt else version

    async def _current(self, index: IndexRecord) -> _IndexCache:
        version = self._version(index)
        cache = self._cache
        if cache is not None and cache.calibration.version == version:
            if cache.calibration.kind != "questions" and self.gateway.reachable and not self._refreshing():
                # measured while the model could not be asked: measured properly now that it can be
                self._refresh = asyncio.create_task(self._refresh_later(index, version), name="vask-search-cache")
            return cache
        if cache is not None and cache.suffix == index.suffix and cache.calibration.notes >= _BACKGROUND_SAMPLE:
            # A sync changed a large index. One edit barely moves the calibration (a sample of 512 of
            # its notes), so the previous figures serve while fresh ones are computed in the
            # background: no search waits for it. (A small index is re-read at once: it is quick,
            # and there one note can move the figures.)
            if not self._refreshing():
                self._refresh = asyncio.create_task(self._refresh_later(index, version), name="vask-search-cache")
            return cache
        if self._measuring is None or self._measuring[0] != version or self._measuring[1].done():
            task = asyncio.create_task(self._rebuild(index, version), name="vask-search-cache")
            self._measuring = (version, task)
        # (shielded: a client that hangs up does not cancel what the other waiters wait for)
        return await asyncio.shield(self._measuring[1])

    def _refreshing(self) -> bool:
        return self._refresh is not None and not self._refresh.done()

    async def _refresh_later(self, index: IndexRecord, version: str) -> None:
        try:
            await self._rebuild(index, version, background=True)
        except Exception:  # the next search tries again; meanwhile the previous figures serve
            log.exception("refreshing the search calibration failed")

    async def _rebuild(self, index: IndexRecord, version: str, *, background: bool = False) -> _IndexCache:
        saved = read_calibration(self.store.index_dir, version)
        # (one kept by a vask that did not measure questions in another language is measured again)
        outdated = saved is not None and saved.across_mean is None and _reads_cjk(index)
        if saved is not None and not outdated:  # a restart with nothing changed since it was measured
            return self._keep(_IndexCache(index.suffix, saved), background)
        cache = await self._measure(index, version)
        # (one measured without the model is not kept; nor by a reader, which writes nothing beside the index)
        if cache.calibration.kind == "questions" and not self.store.read_only:
            try:
                write_calibration(self.store.index_dir, cache.calibration)
            except OSError as exc:  # only costs the next start this measurement
                log.warning("could not keep the search calibration (%s)", exc)
        return self._keep(cache, background)

    def _keep(self, cache: _IndexCache, background: bool) -> _IndexCache:
        if not background or self._cache is None or self._cache.suffix == cache.suffix:
            self._cache = cache  # (a background refresh never replaces the cache of a newer index)
        return cache

    async def _measure(self, index: IndexRecord, version: str) -> _IndexCache:
        try:
            async with self.store.passing_reader(index) as tables:
                return await self._measure_with(index, version, tables)
        except NotIndexed:  # (tables a first sync has not written yet: a writer's store makes them empty)
            return await self._measure_with(index, version, self.store.tables(index))

    async def _measure_with(self, index: IndexRecord, version: str, tables: IndexTables) -> _IndexCache:
        notes, ids, by_id = await self._sample(tables)
        across: tuple[float, float] | None = None
        if index.keyword_terms == CJK and reads_only_english(index.model) is True:
            # Questions in Chinese or Japanese are not judged by this model's cosines (see `search`),
            # and English ones not against such passages: the line is measured on what it reads.
            texts = await tables.texts_for_ids(ids)
            ids = [i for i in ids if not written_in_cjk([texts.get(i, "")])]
        elif _reads_cjk(index) and index.complete:
            across = await self._across(index, tables, ids, by_id)
        found = np.stack([by_id[i] for i in ids]) if ids else np.zeros((0, index.dimension), dtype=np.float32)
        kind, pairs = "passages", None
        if index.complete:  # (a first sync's model is busy: its searches must not queue behind it)
            try:
                kind, pairs = "questions", await self._question_pairs(index, tables, ids, found)
            except (OllamaUnavailable, ModelMissing, OllamaFailed) as exc:
                log.warning("the search calibration could not ask the model (%s); measured on passages for now", exc)
        if pairs is None:
            pairs = (found @ found.T)[np.triu_indices(found.shape[0], 1)]
        pair_mean = float(pairs.mean()) if pairs.size else 0.0
        pair_std = float(pairs.std()) if pairs.size else 0.0
        calibration = Calibration(version, notes, pair_mean, pair_std, kind)
        if across is not None and kind == "questions":
            calibration = replace(calibration, across_mean=across[0], across_std=across[1])
        return _IndexCache(index.suffix, calibration)

    async def _sample(self, tables: IndexTables) -> tuple[int, list[str], dict[str, np.ndarray]]:
        """The passages a calibration measures (`calibration_sample`): how many notes they were drawn
        from, their ids and their vectors. A large index's notes are drawn first, by the hashes of their
        paths, and only their passages read (through the path index): reading every passage's id and
        path was most of a first start's calibration, and of the memory it left (docs/BENCHMARKS.md)."""
        paths = await tables.paths_with_passages()
        if len(paths) > _READ_EVERY_PASSAGE_UP_TO:
            drawn = _hashed_first(paths.to_pylist())[: _BACKGROUND_SAMPLE + _SPARE_NOTES]
            rows = await tables.passages_of(drawn, ["id", "path", "vector"])
            if rows is not None and len(rows):
                ids, _ = calibration_sample(rows.select(["id", "path"]))
                wanted = set(ids)
                vectors = vector_matrix(rows["vector"], tables.dimension)
                by_id = {i: v for i, v in zip(rows["id"].to_pylist(), vectors, strict=True) if i in wanted}
                return len(paths), ids, by_id
        # Ids and paths only, then the vectors of the sampled rows: every vector is too much to read
        rows = await tables.all_chunk_rows(["id", "path"], where="kind = 'chunk'")
        ids, notes = calibration_sample(rows)
        by_id = await tables.vectors_by_id(ids)
        return notes, [i for i in ids if i in by_id], by_id  # (a sync since can have replaced some)

    async def _across(
        self, index: IndexRecord, tables: IndexTables, ids: list[str], by_id: dict[str, np.ndarray]
    ) -> tuple[float, float] | None:
        """Everyday English topics asked as questions against the sample's passages in Chinese or
        Japanese (core/across.py): the unrelated level of a question in another language than the
        passage, with a model that reads both. None with no such passage in the sample, or no model."""
        texts = await tables.texts_for_ids(ids)
        written = [by_id[i] for i in ids if written_in_cjk([texts.get(i, "")])]
        if not written:
            return None
        try:
            probes = await self._across_probes(index)
        except (OllamaUnavailable, ModelMissing, OllamaFailed):
            return None  # (the same-language line is then measured on passages, and not kept)
        pairs = (probes @ np.stack(written).T).ravel()
        return float(pairs.mean()), float(pairs.std())

    async def _across_probes(self, index: IndexRecord) -> np.ndarray:
        """core/across.py's probes embedded as the index's questions are: once per model and query
        instruction, the questions that arrive meanwhile waiting for that one embedding (one that
        failed is tried again by the next)."""
        prompt = self.query_prompt(index)
        key = _embedded_by(index, prompt)
        kept = self._across_vectors
        if kept is None or kept[0] != key or _failed(kept[1]):
            kept = (key, asyncio.ensure_future(self._embed_probes(index, prompt)))
            self._across_vectors = kept
        # (shielded: a client that hangs up does not cancel what the other questions wait for)
        return await asyncio.shield(kept[1])

    async def _embed_probes(self, index: IndexRecord, prompt: str) -> np.ndarray:
        prompts = EmbedPrompts(query=prompt, document=index.document_prompt)
        embedder = Embedder(self.gateway, index.model, prompts=prompts, batch_size=len(ACROSS_PROBES), concurrency=1)
        return np.asarray(await embedder.embed(list(ACROSS_PROBES), query=True), dtype=np.float32)

    async def across_centre(self, index: IndexRecord) -> AcrossCentre | None:
        """What every question in another language than the index's Chinese or Japanese passages
        shares (core/across.py): None where the calibration measured no such level. The probes are
        embedded at most once per query instruction (a calibration read from disk has none yet)."""
        calibration = await self.for_index(index)
        if calibration.across_mean is None:
            return None
        probes = await self._across_probes(index)
        return AcrossCentre(probes.mean(axis=0), calibration.across_mean)

    async def _question_pairs(
        self, index: IndexRecord, tables: IndexTables, ids: list[str], sample: np.ndarray
    ) -> np.ndarray:
        """Cosines of the kind the decline rule compares: a topic embedded as a question (with the
        model's query instruction) against a passage of another note. The topics are the opening
        content words of some of the sample's own passages, each against the rest of the sample
        (one passage a note: so every pair is two different notes)."""
        if len(ids) < 2:
            return np.zeros(0, dtype=np.float32)
        chosen = sorted(range(len(ids)), key=lambda k: ids[k])[:_QUERY_PROBES]  # (stable from one sync to the next)
        texts = await tables.texts_for_ids([ids[k] for k in chosen])
        probes = [_probe(texts.get(ids[k], "")) for k in chosen]
        prompt = self.query_prompt(index)
        if _embedded_by(index, prompt) != self._probe_key:
            self._probe_vectors, self._probe_key = {}, _embedded_by(index, prompt)
        missing = sorted({p for p in probes if p not in self._probe_vectors})
        if missing:
            prompts = EmbedPrompts(query=prompt, document=index.document_prompt)
            embedder = Embedder(self.gateway, index.model, prompts=prompts, batch_size=_QUERY_PROBES, concurrency=1)
            vectors = await embedder.embed(missing, query=True)
            self._probe_vectors = {p: self._probe_vectors[p] for p in probes if p in self._probe_vectors}
            self._probe_vectors.update(zip(missing, vectors, strict=True))
        matrix = np.stack([self._probe_vectors[p] for p in probes])
        cosines = matrix @ sample.T
        own = np.zeros_like(cosines, dtype=bool)
        own[np.arange(len(chosen)), chosen] = True
        pairs: np.ndarray = cosines[~own]
        return pairs


def _failed(pending: asyncio.Future[np.ndarray]) -> bool:
    return pending.done() and (pending.cancelled() or pending.exception() is not None)


def _embedded_by(index: IndexRecord, prompt: str) -> tuple[str, int, str]:
    """What probe vectors kept for reuse were embedded by: the same instruction to another model (an
    index built anew beside the old one) gives other vectors, of another size too."""
    return index.model, index.dimension, prompt


def _reads_cjk(index: IndexRecord) -> bool:
    """An index that holds notes in Chinese or Japanese, of a model that reads them."""
    return index.keyword_terms == CJK and reads_only_english(index.model) is not True


def calibration_sample(rows: pa.Table) -> tuple[list[str], int]:
    """The passages a calibration measures, by id (sorted), and how many notes the rows hold: one
    passage a note, so that pairs are between different notes and one long table or log (many
    near-identical passages) cannot drag the "unrelated" level up; of more notes than
    `_BACKGROUND_SAMPLE`, that many. Chosen by hashes, never by where rows sit in the table (which a
    compaction or a rewrite of the same notes changes): a note's passage is its smallest id (ids are
    hashes of its path and text), the notes kept those whose path hashes lowest. The same notes give
    the same sample, and an edit changes only the edited note's pick."""
    if rows.num_rows == 0:
        return [], 0
    per_note = rows.select(["path", "id"]).group_by("path").aggregate([("id", "min")])
    first = dict(zip(per_note["path"].to_pylist(), per_note["id_min"].to_pylist(), strict=True))
    kept = _hashed_first(list(first))[:_BACKGROUND_SAMPLE]
    return sorted(first[path] for path in kept), len(first)


def _hashed_first(paths: list[str]) -> list[str]:
    """The paths in the order of their hashes: a sample of notes no table's row order decides."""
    return sorted(paths, key=lambda path: hashlib.blake2b(path.encode(), digest_size=8).digest())


def _probe(text: str) -> str:
    """A passage's opening content words, as short as a question's topic."""
    words = (topic_query(" ".join(text.split()[:60])) or text).split()[:_PROBE_WORDS]
    return " ".join(words) or "note"
