"""The search service against a real LanceDB and the fake Ollama: what the decline rule measures."""

import asyncio
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from tests.fake_ollama import embed_text
from vask_server.adapters.tables import IndexTables
from vask_server.core.retrieve import topic_query
from vask_server.services.context import open_services
from vask_server.services.query.ranking import RetrievalConfig
from vask_server.services.query.ranking_variants import RankingVariant
from vask_server.services.query.search import Searcher


async def test_decline_measures_the_topic_of_the_question(fake_ollama, small_vault, settings_for):
    question = "What did I write about the sourdough starter and the lid?"
    topic = topic_query(question)
    assert topic == "write sourdough starter lid"
    async with open_services(settings_for(small_vault)) as services:
        await services.indexer.sync()
        await services.searcher.warm()  # (the calibration, which embeds its probes once)
        fake_ollama.fake.reset_counters()
        result = await services.searcher.search(question, top_k=5, min_similarity=0.0)
        # one call to Ollama carries both texts
        assert fake_ollama.fake.embed_calls == 1
        assert fake_ollama.fake.embedded_texts == [question, topic]
        # the evidence: the topic's best cosine among the candidates, here its best over the whole index
        tables = services.store.tables(services.searcher.active())
        dimension = tables.dimension
        by_id = await tables.vectors_by_id((await tables.all_chunk_rows(["id"]))["id"].to_pylist())
        vectors = np.stack(list(by_id.values()))
        expected = float(np.max(vectors @ np.asarray(embed_text(topic, dimension), dtype=np.float32)))
        assert result.evidence is not None and abs(result.evidence - expected) < 1e-4
        assert result.evidence_threshold is not None and not result.declined
        assert result.hits[0].path == "Sourdough.md"

        # the same question judged on its own cosine, with a threshold above the topic's: declined
        strict = RetrievalConfig(decline_sigmas=100.0)
        assert (await services.searcher.search(question, top_k=5, min_similarity=0.0, config=strict)).declined
        # "question" mode embeds only the question and compares its own best cosine over the index.
        # (Words the topic drops but the fake embedding keeps, "any" and "some", make the two differ.)
        phrased = "Is there any note with some sourdough starter?"

        def best_over_index(text: str) -> float:
            return float(np.max(vectors @ np.asarray(embed_text(text, dimension), dtype=np.float32)))

        own, of_topic = best_over_index(phrased), best_over_index(topic_query(phrased) or "")
        assert abs(own - of_topic) > 0.01, (own, of_topic)
        fake_ollama.fake.reset_counters()
        asked = await services.searcher.search(
            phrased, top_k=5, min_similarity=0.0, config=RankingVariant(decline_on="question")
        )
        assert fake_ollama.fake.embedded_texts == [phrased]
        assert asked.evidence is not None and abs(asked.evidence - own) < 1e-3
        assert asked.best_similarity is not None and abs(asked.best_similarity - own) < 1e-3


async def test_models_that_expect_instructions_get_them(fake_ollama, small_vault, settings_for):
    """mxbai-embed-large wants its queries introduced as searches; nomic-embed-text wants queries
    and documents marked. Texts reach Ollama with them; a model without any gets the text as is."""
    instruction = "Represent this sentence for searching relevant passages: "
    fake_ollama.fake.embed_models["mxbai-embed-large"] = 96
    fake_ollama.fake.embed_models["nomic-embed-text"] = 96
    async with open_services(settings_for(small_vault, embed_model="mxbai-embed-large:latest")) as services:
        await services.indexer.sync()
        passages = [t for t in fake_ollama.fake.embedded_texts if t != "dimension probe"]
        assert passages and not any(t.startswith(instruction) for t in passages)
        fake_ollama.fake.reset_counters()
        await services.searcher.warm()
        # the calibration's probes are embedded as questions are: with the instruction
        probes = fake_ollama.fake.embedded_texts
        assert len(probes) >= 2 and all(t.startswith(instruction) for t in probes)
        fake_ollama.fake.reset_counters()
        await services.searcher.search("sourdough starter", top_k=3, min_similarity=0.0)
        assert fake_ollama.fake.embedded_texts == [instruction + "sourdough starter"]
        mxbai_suffix = services.searcher.active().suffix

    fake_ollama.fake.reset_counters()
    async with open_services(settings_for(small_vault, embed_model="nomic-embed-text")) as services:
        await services.indexer.sync()
        passages = fake_ollama.fake.embedded_texts
        assert passages and all(t.startswith("search_document: ") for t in passages)
        await services.searcher.warm()
        fake_ollama.fake.reset_counters()
        await services.searcher.search("sourdough starter", top_k=3, min_similarity=0.0)
        assert fake_ollama.fake.embedded_texts == ["search_query: sourdough starter"]
        # vectors made with a document instruction live in tables of their own
        assert (
            services.searcher.active().suffix.startswith("nomic_embed_text_96_")
            and mxbai_suffix == "mxbai_embed_large_latest_96_f16_d1_p1_h1"
        )


async def test_a_quoted_term_found_in_the_notes_is_never_declined(fake_ollama, small_vault, settings_for):
    """A quoted term is the user naming exactly what they mean, often a word the embedding model
    does not know: a passage that holds it is evidence, whatever the cosine says."""
    strict = RetrievalConfig(decline_sigmas=100.0)  # every cosine is under this threshold
    async with open_services(settings_for(small_vault)) as services:
        await services.indexer.sync()
        searcher = services.searcher

        async def ask(question: str):  # type: ignore[no-untyped-def]
            return await searcher.search(question, top_k=5, min_similarity=0.0, config=strict)

        found = await ask("What speed did I mean by 'conversational'?")
        assert not found.declined and found.hits[0].path == "Running.md"
        # the same words unquoted, or a quoted term the notes do not hold: declined
        unquoted = await ask("What speed did I mean by conversational?")
        assert unquoted.declined and unquoted.hits == []
        assert (await ask("What speed did I mean by 'tempo'?")).declined


async def test_keyword_only_scores_are_shares_of_the_best_match(fake_ollama, vault, settings_for):
    """With Ollama down the hits are BM25 matches; their score is on the 0–1 scale the other modes
    use (here: a share of the query's best BM25), not raw BM25."""
    query = "sourdough starter feeding"
    async with open_services(settings_for(vault)) as services:
        await services.indexer.sync()
        index = services.searcher.active()
        raw = await services.store.tables(index).text_search(query, 24)
    down = settings_for(vault, ollama_host="http://127.0.0.1:9", ollama_retries=0)
    async with open_services(down) as services:
        result = await services.searcher.search(query, top_k=6, min_similarity=0.0)
    assert result.mode == "keyword" and len(result.hits) >= 3
    bm25 = {row["id"]: row["score"] for row in raw}
    assert max(bm25.values()) > 1.0  # raw BM25 is not on a 0–1 scale: the fix is needed here
    assert result.hits[0].score == 1.0 and result.hits[0].chunk_id == raw[0]["id"]
    for hit in result.hits:
        assert 0.0 < hit.score <= 1.0
        assert abs(hit.score - bm25[hit.chunk_id] / raw[0]["score"]) < 1e-6


async def test_the_calibration_is_kept_for_the_next_start_and_measured_again_after_a_change(
    fake_ollama, small_vault, settings_for, monkeypatch
):
    """The calibration (random pairs' similarity) is measured once per index version and kept in
    the index folder: a restart with nothing changed reads it instead of reading every chunk's row;
    a sync that changed something, or an unreadable file, has it measured again."""
    from vask_server.adapters.calibration import CALIBRATION_FILE

    settings = settings_for(small_vault)
    async with open_services(settings) as services:
        await services.indexer.sync()
        first = await services.searcher.search("sourdough starter", top_k=3, min_similarity=0.0)
        kept = (services.index_dir / CALIBRATION_FILE).read_text("utf-8")
        measured = services.searcher.calibrator.latest
        assert measured is not None and measured.pair_std > 0 and str(measured.pair_mean) in kept

    reads: list[str] = []
    real = IndexTables.all_chunk_rows

    def count_reads(services) -> None:
        # (on the class: the calibration reads through tables of a connection of its own)

        async def counted(self, *args, **kwargs):
            reads.append("rows")
            return await real(self, *args, **kwargs)

        monkeypatch.setattr(IndexTables, "all_chunk_rows", counted)

    async with open_services(settings) as services:  # the next start: nothing changed
        count_reads(services)
        await services.indexer.sync()
        again = await services.searcher.search("sourdough starter", top_k=3, min_similarity=0.0)
        assert reads == []
        assert services.searcher.calibrator.latest == measured
        assert [h.path for h in again.hits] == [h.path for h in first.hits]
        assert again.evidence_threshold == first.evidence_threshold

        (small_vault / "Sourdough.md").write_text("# Sourdough\n\nA new starter, fed twice a day.\n", "utf-8")
        await services.indexer.sync()
        await services.searcher.search("sourdough starter", top_k=3, min_similarity=0.0)
        assert reads == ["rows"]  # a new version: measured again (a small index, at once)
        latest = services.searcher.calibrator.latest
        assert latest is not None and latest.version != measured.version

    (services.index_dir / CALIBRATION_FILE).write_text("{not json", "utf-8")
    reads.clear()
    async with open_services(settings) as services:
        count_reads(services)
        await services.searcher.search("sourdough starter", top_k=3, min_similarity=0.0)
        assert reads == ["rows"]


async def test_the_calibration_does_not_depend_on_where_rows_sit_in_the_table(
    fake_ollama, small_vault, settings_for, monkeypatch
):
    """The same notes give the same decline line whatever order the table returns their rows in (a
    compaction, a rebuild or another sync order moves them): the sample is chosen by hashes of ids
    and paths, not by row position."""
    import pyarrow as pa

    from vask_server.adapters.calibration import CALIBRATION_FILE

    settings = settings_for(small_vault)
    measured = []
    for order in ("as stored", "reversed", "shuffled"):
        async with open_services(settings) as services:
            await services.indexer.sync()
            (services.index_dir / CALIBRATION_FILE).unlink(missing_ok=True)
            tables = services.store.tables(services.searcher.active())
            real = tables.all_chunk_rows

            async def reordered(*args, order=order, real=real, **kwargs):
                rows = await real(*args, **kwargs)
                if order == "as stored":
                    return rows
                positions = list(range(rows.num_rows))[::-1]
                if order == "shuffled":
                    positions = positions[1::2] + positions[::2]
                return rows.take(pa.array(positions))

            monkeypatch.setattr(tables, "all_chunk_rows", reordered)
            calibration = await services.searcher.calibrator.for_index(services.searcher.active())
            measured.append((calibration.notes, calibration.pair_mean, calibration.pair_std))
    assert measured[0][0] == 3 and measured[1] == measured[0] and measured[2] == measured[0]


def test_the_calibration_sample_is_one_passage_a_note_chosen_by_hashes():
    """One passage a note, the same for any row order; an edit of one note changes only its pick;
    of more notes than the sample holds, the same notes are kept whatever the order."""
    import hashlib
    import random

    import pyarrow as pa

    from vask_server.services.query.calibrator import _BACKGROUND_SAMPLE, calibration_sample

    def chunk_id(n: int, k: int) -> str:  # (as the index's: a hash of the note's path and text)
        return hashlib.sha256(f"{n}/{k}".encode()).hexdigest()[:32]

    rows = [(f"note {n}.md", chunk_id(n, k)) for n in range(700) for k in range(n % 5 + 1)]
    ids, notes = calibration_sample(pa.table({"id": [i for _, i in rows], "path": [p for p, _ in rows]}))
    assert notes == 700 and len(ids) == _BACKGROUND_SAMPLE == len(set(ids)) and ids == sorted(ids)
    by_path = dict((i, p) for p, i in rows)
    assert len({by_path[i] for i in ids}) == len(ids)  # (one passage a note)
    for seed in range(3):
        shuffled = random.Random(seed).sample(rows, len(rows))
        table = pa.table({"id": [i for _, i in shuffled], "path": [p for p, _ in shuffled]})
        assert calibration_sample(table) == (ids, notes)
    edited = [(p, "0" * 32 if p == by_path[ids[-1]] and i == ids[-1] else i) for p, i in rows]
    again, _ = calibration_sample(pa.table({"id": [i for _, i in edited], "path": [p for p, _ in edited]}))
    assert set(again) ^ set(ids) == {ids[-1], "0" * 32}


async def test_searches_that_arrive_while_the_calibration_is_measured_wait_for_that_one_measurement(
    fake_ollama, small_vault, settings_for, monkeypatch
):
    """The first start after `vask index` measures the calibration in its warm-up; searches that
    arrive meanwhile share that measurement instead of each reading every chunk's row again. Once
    the warm-up is over, what it freed is handed back to the system."""
    import asyncio

    from vask_server.adapters import memory as memory_module
    from vask_server.adapters.calibration import CALIBRATION_FILE
    from vask_server.adapters.memory import ReleaseWhenQuiet

    settings = settings_for(small_vault)
    async with open_services(settings) as services:
        await services.indexer.sync()
    (services.index_dir / CALIBRATION_FILE).unlink(missing_ok=True)

    reads: list[str] = []
    released: list[str] = []
    monkeypatch.setattr(memory_module, "release_memory", lambda: released.append("released"))
    async with open_services(settings) as services:
        real = IndexTables.all_chunk_rows

        async def counted(self, *args, **kwargs):
            reads.append("rows")
            await asyncio.sleep(0.05)  # long enough for the searches below to arrive meanwhile
            return await real(self, *args, **kwargs)

        monkeypatch.setattr(IndexTables, "all_chunk_rows", counted)
        searcher = services.searcher
        searcher._quiet = ReleaseWhenQuiet(after=0.01)
        results = await asyncio.gather(
            searcher.warm(),
            searcher.search("sourdough starter", top_k=3, min_similarity=0.0),
            searcher.search("sourdough starter", top_k=3, min_similarity=0.0),
        )
        assert reads == ["rows"]
        first, second = results[1], results[2]
        assert first.hits and [h.chunk_id for h in first.hits] == [h.chunk_id for h in second.hits]
        assert first.evidence_threshold == second.evidence_threshold
        assert (services.index_dir / CALIBRATION_FILE).is_file()

        await asyncio.sleep(0.05)
        released.clear()
        await searcher.warm()  # alone: no search touches the quiet timer
        for _ in range(100):
            if released:
                break
            await asyncio.sleep(0.01)
        assert released == ["released"]


async def test_a_search_reads_each_hit_from_its_one_column_as_the_separate_columns_hold_it(
    fake_ollama, small_vault, settings_for
):
    # The `hit` column repeats a chunk's fields as JSON, so that a search reads one column, not twelve.
    (small_vault / "Journal").mkdir()
    (small_vault / "Journal" / "2026-03-14.md").write_text("---\ntags: [log, café]\n---\n# Pi day\n\nBaked a pie.\n")
    async with open_services(settings_for(small_vault)) as services:
        await services.indexer.sync()
        store, index = services.store, services.searcher.active()
        fields = ["id", "path", "title", "heading", "anchor", "line_start", "line_end", "tags"]
        fields += ["date", "date_end", "date_source", "page", "text"]
        tables = store.tables(index)
        table = await tables.all_chunk_rows(fields)
        stored = {row["id"]: row for row in table.to_pylist()}
        probe = np.asarray(embed_text("pie", index.dimension), dtype=np.float32)
        by_vector = await tables.vector_search(probe, limit=len(stored))
        by_words = await tables.text_search("pie milestone", limit=len(stored))
    assert len(by_vector) == len(stored) and by_words
    for row in [*by_vector, *by_words]:
        assert {k: row[k] for k in fields} == stored[row["id"]]
    dated = next(row for row in by_vector if row["path"] == "Journal/2026-03-14.md")
    assert str(dated["date"]) == "2026-03-14" and dated["tags"] == ["log", "café"]


async def test_the_scores_of_a_list_read_in_its_order(fake_ollama, vault, settings_for):
    """The score a hit shows is the one that ranked it: exact matches ranked first carry their lift,
    for one- and two-word queries, quoted terms, rare keywords and plain questions alike."""
    from vask_server.core.retrieve import EXACT_LIFT

    queries = [
        "sourdough",
        "Litestream",
        "Tidepool API",
        'what is the "grey zone"?',
        "What have I written about being afraid to release things?",
        "easy runs",
    ]
    async with open_services(settings_for(vault)) as services:
        await services.indexer.sync()
        lifted = 0
        for query in queries:
            for config in (RetrievalConfig(), RetrievalConfig(mode="vector"), RankingVariant(fusion="rrf")):
                result = await services.searcher.search(query, top_k=10, min_similarity=0.0, config=config)
                scores = [hit.score for hit in result.hits]
                assert scores == sorted(scores, reverse=True), (query, config.mode, config.fusion, scores)
            hybrid = await services.searcher.search(query, top_k=10, min_similarity=0.0)
            lifted += sum(hit.score > EXACT_LIFT for hit in hybrid.hits)
        assert lifted > 0  # (the lift is exercised: some of these are matched exactly)


async def test_the_decline_line_is_calibrated_on_topics_asked_as_questions_against_other_notes(
    fake_ollama, small_vault, settings_for
):
    """The calibration measures the kind of cosine the decline rule compares: a topic embedded as a
    question against passages of other notes. Without the model it measures passage pairs for the
    moment, keeps nothing on disk, and measures properly once the model answers again; probes whose
    passage did not change are not embedded again."""
    from vask_server.adapters.calibration import CALIBRATION_FILE, read_calibration

    settings = settings_for(small_vault)
    async with open_services(settings) as services:
        await services.indexer.sync()
        fake_ollama.fake.reset_counters()
        calibration = await services.searcher.calibrator.for_index(services.searcher.active())
        assert calibration.kind == "questions" and fake_ollama.fake.embed_calls == 1
        probes = list(fake_ollama.fake.embedded_texts)
        assert len(probes) >= 2 and all(len(p.split()) <= 6 for p in probes)
        # by hand: each probe against the sampled passages of the other notes
        index = services.searcher.active()
        rows = await services.store.tables(index).all_chunk_rows(["id", "path", "text"], where="kind = 'chunk'")
        assert calibration.notes == len(set(rows["path"].to_pylist()))
        version = services.store.read_meta().version(index.suffix)
        assert read_calibration(services.index_dir, version) == calibration

        # a note changes: probes of unchanged passages come from memory
        (small_vault / "Sourdough.md").write_text("# Sourdough\n\nThe starter needs rye flour on Sundays.\n")
        await services.indexer.sync()
        fake_ollama.fake.reset_counters()
        again = await services.searcher.calibrator.for_index(services.searcher.active())
        assert again.kind == "questions"
        assert fake_ollama.fake.embed_calls <= 1 and len(fake_ollama.fake.embedded_texts) < len(probes)

    (services.index_dir / CALIBRATION_FILE).unlink()
    fake_ollama.fake.embed_models.pop("fake-embed")  # the model is gone: passages for the moment
    try:
        async with open_services(settings) as services:
            calibration = await services.searcher.calibrator.for_index(services.searcher.active())
            assert calibration.kind == "passages" and calibration.pair_std > 0
            assert not (services.index_dir / CALIBRATION_FILE).exists()
            fake_ollama.fake.embed_models["fake-embed"] = 96
            services.gateway._saw(True)  # (as the next request to Ollama would find)
            await services.searcher.calibrator.for_index(services.searcher.active())
            await _background_calibration_done()
            fixed = await services.searcher.calibrator.for_index(services.searcher.active())
            assert fixed.kind == "questions"
            assert (services.index_dir / CALIBRATION_FILE).exists()
    finally:
        fake_ollama.fake.embed_models["fake-embed"] = 96


async def _background_calibration_done() -> None:
    """Until the calibration the searcher measures again in the background (its task named as the
    calibrator names it) is done."""
    await asyncio.gather(*(t for t in asyncio.all_tasks() if t.get_name() == "vask-search-cache"))


async def test_the_keyword_list_is_searched_while_the_question_is_embedded(fake_ollama, small_vault, settings_for):
    """A hybrid search starts its keyword search before the model has embedded the question: with a
    real model the embedding takes longer than the keyword search, which it then hides."""
    question = "What did I write about the sourdough starter and the lid?"
    async with open_services(settings_for(small_vault)) as services:
        await services.indexer.sync()
        await services.searcher.warm()
        expected = await services.searcher.search(question, top_k=5, min_similarity=0.0)
        started: dict[str, float] = {}
        loop = asyncio.get_running_loop()
        _note_searches(services, lambda name, _: started.setdefault(name, loop.time()))
        fake_ollama.fake.delay = 0.5  # the model takes half a second to embed the question
        result = await services.searcher.search(question, top_k=5, min_similarity=0.0)
        assert started["vector"] - started["keyword"] >= 0.4  # (the vector search waits for the embedding)
        assert [h.chunk_id for h in result.hits] == [h.chunk_id for h in expected.hits]


async def test_with_the_model_down_the_keyword_search_already_under_way_answers_alone(
    fake_ollama, small_vault, settings_for
):
    """The fallback to keywords uses the keyword search a hybrid search started before the model
    failed, rather than searching a second time."""
    async with open_services(settings_for(small_vault)) as services:
        await services.indexer.sync()
    down = settings_for(small_vault, ollama_host="http://127.0.0.1:9", ollama_retries=0)
    async with open_services(down) as services:
        tables = services.store.tables(services.searcher.active())
        calls: list[int] = []
        search = tables.text_search

        async def counted(*args: Any, **kwargs: Any) -> Any:
            calls.append(args[1])  # (the limit)
            return await search(*args, **kwargs)

        tables.text_search = counted  # type: ignore[method-assign]
        result = await services.searcher.search("sourdough starter", top_k=5, min_similarity=0.0)
        assert result.mode == "keyword" and "Showing keyword matches only" in (result.notice or "")
        assert result.hits[0].path == "Sourdough.md"
        assert len(calls) == 1


async def test_the_vector_list_is_shorter_than_the_keyword_list(fake_ollama, small_vault, settings_for):
    """A hybrid search asks for 30 rows by meaning and 50 by keywords (each row fewer is less for the
    ANN index to re-rank and read), and for more by meaning when more results are wanted."""
    async with open_services(settings_for(small_vault)) as services:
        await services.indexer.sync()
        limits: dict[str, list[int]] = {"vector": [], "keyword": []}
        _note_searches(services, lambda name, args: limits[name].append(args[1]))  # (the limit)
        await services.searcher.search("sourdough starter", top_k=6, min_similarity=0.0)
        assert limits == {"vector": [30], "keyword": [50]}
        await services.searcher.search("sourdough starter", top_k=10, min_similarity=0.0)
        assert limits["vector"][-1] == 40  # four candidates a result wanted, at least


def _note_searches(services: Any, note: Callable[[str, tuple[Any, ...]], object]) -> None:
    """Calls `note("keyword" or "vector", the search's arguments)` as each search of the index starts."""
    tables = services.store.tables(services.searcher.active())

    def noting(name: str, search: Any) -> Any:
        async def wrapped(*args: Any, **kwargs: Any) -> Any:
            note(name, args)
            return await search(*args, **kwargs)

        return wrapped

    tables.text_search = noting("keyword", tables.text_search)
    tables.vector_search = noting("vector", tables.vector_search)


async def test_a_keyword_search_nobody_waits_for_is_held_by_its_searcher_until_it_ends(
    fake_ollama, small_vault, settings_for
):
    """With the model down, a search wanting more matches than the hybrid's keyword list searches
    again, and leaves that list's search running: its searcher holds it until it ends, then lets
    it go (no other searcher shares the set)."""
    async with open_services(settings_for(small_vault)) as services:
        await services.indexer.sync()
    down = settings_for(small_vault, ollama_host="http://127.0.0.1:9", ollama_retries=0)
    async with open_services(down) as services:
        tables = services.store.tables(services.searcher.active())
        search = tables.text_search
        release = asyncio.Event()

        async def slow_first(*args: Any, **kwargs: Any) -> Any:
            if args[1] == services.searcher.config.candidates:  # (the hybrid's own keyword list)
                await release.wait()
            return await search(*args, **kwargs)

        tables.text_search = slow_first  # type: ignore[method-assign]
        other = Searcher(services.store, services.gateway)
        result = await services.searcher.search("sourdough starter", top_k=20, min_similarity=0.0)
        assert result.mode == "keyword" and result.hits
        held = set(services.searcher._unwaited)
        assert len(held) == 1 and not other._unwaited
        release.set()
        await asyncio.gather(*held)
        await asyncio.sleep(0)  # (its callback runs after it)
        assert not services.searcher._unwaited


async def test_a_large_index_draws_its_calibration_notes_before_reading_any_passage(
    fake_ollama, small_vault, settings_for, monkeypatch
):
    """Above `_READ_EVERY_PASSAGE_UP_TO` notes the calibration never reads every passage's id and path
    (most of a first start's calibration at 100,000 notes): it draws its notes, then reads only their
    passages, one a note in the sample, and measures the same kind of line from them."""
    from vask_server.services.query import calibrator as calibrator_module

    monkeypatch.setattr(calibrator_module, "_READ_EVERY_PASSAGE_UP_TO", 1)  # (the small vault's 3 notes: "large")
    async with open_services(settings_for(small_vault)) as services:
        await services.indexer.sync()
        tables = services.store.tables(services.searcher.active())
        read_all: list[int] = []
        real = IndexTables.all_chunk_rows

        async def every_row(self: IndexTables, *args: Any, **kwargs: Any) -> Any:
            read_all.append(1)
            return await real(self, *args, **kwargs)

        monkeypatch.setattr(IndexTables, "all_chunk_rows", every_row)
        calibration = await services.searcher.calibrator.for_index(services.searcher.active())
        assert read_all == []
        monkeypatch.setattr(IndexTables, "all_chunk_rows", real)
        assert calibration.notes == 3 and calibration.kind == "questions" and calibration.pair_std > 0
        # one passage a note: its vectors are those of three different notes' passages
        notes, ids, by_id = await services.searcher.calibrator._sample(tables)
        paths = {row["path"] for row in (await tables.all_chunk_rows(["id", "path"])).to_pylist() if row["id"] in ids}
        assert notes == 3 and len(ids) == 3 and paths == {"Projects/Plan.md", "Sourdough.md", "Running.md"}
        assert all(by_id[i].shape == (tables.dimension,) for i in ids)


async def test_the_calibration_reads_through_a_connection_of_its_own_closed_after(
    fake_ollama, small_vault, settings_for, monkeypatch
):
    """What LanceDB caches while the calibration reads its sample (the path index's pages, the files'
    metadata) is kept for the life of the connection that read it: the calibration reads through one
    of its own, closed after, so the connection searches use holds only what searches load
    (docs/BENCHMARKS.md, "A restart as a person meets it")."""
    from vask_server.adapters.calibration import CALIBRATION_FILE
    from vask_server.adapters.database import Database

    opened: list[Database] = []
    real_connect = Database.connect.__func__  # type: ignore[attr-defined]

    async def connect(cls, index_dir, *, read_only=False):  # type: ignore[no-untyped-def]
        database = await real_connect(cls, index_dir, read_only=read_only)
        opened.append(database)
        return database

    read_by: list[Database] = []
    real_texts = IndexTables.texts_for_ids

    async def texts(self: IndexTables, ids: Any) -> Any:
        read_by.append(self.database)
        return await real_texts(self, ids)

    settings = settings_for(small_vault)
    async with open_services(settings) as services:
        await services.indexer.sync()
    (services.index_dir / CALIBRATION_FILE).unlink(missing_ok=True)
    async with open_services(settings) as services:
        monkeypatch.setattr(Database, "connect", classmethod(connect))
        monkeypatch.setattr(IndexTables, "texts_for_ids", texts)
        calibration = await services.searcher.calibrator.for_index(services.searcher.active())
        assert calibration.kind == "questions" and calibration.pair_std > 0
        (own,) = opened
        assert own is not services.store.database and own.read_only
        assert read_by and all(database is own for database in read_by)
        with pytest.raises(RuntimeError, match="closed"):
            await own.connection.list_tables()
        found = await services.searcher.search("sourdough starter", top_k=3, min_similarity=0.0)
        assert found.hits and opened == [own]  # (searches read through the store's own connection)
