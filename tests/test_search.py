"""The search service against a real LanceDB and the fake Ollama: what the decline rule measures."""

import numpy as np

from tests.fake_ollama import embed_text
from vask_server.core.retrieve import topic_query
from vask_server.services.context import open_services
from vask_server.services.search import RetrievalConfig


async def test_decline_measures_the_topic_of_the_question(fake_ollama, small_vault, settings_for):
    question = "What did I write about the sourdough starter and the lid?"
    topic = topic_query(question)
    assert topic == "write sourdough starter lid"
    async with open_services(settings_for(small_vault)) as services:
        await services.indexer.sync()
        fake_ollama.fake.reset_counters()
        result = await services.searcher.search(question, top_k=5, min_similarity=0.0)
        # one call to Ollama carries both texts
        assert fake_ollama.fake.embed_calls == 1
        assert fake_ollama.fake.embedded_texts == [question, topic]
        # the evidence is the topic's best cosine over the whole index, computed here independently
        suffix = services.searcher.active().suffix
        dimension = services.searcher.active().dimension
        rows = await services.store.all_chunk_rows(suffix, dimension, ["id"])
        vectors = await services.store.vectors_for_ids(suffix, dimension, rows["id"].to_pylist())
        expected = float(np.max(vectors @ np.asarray(embed_text(topic, dimension), dtype=np.float32)))
        assert result.evidence is not None and abs(result.evidence - expected) < 1e-4
        assert result.evidence_threshold is not None and not result.declined
        assert result.hits[0].path == "Sourdough.md"

        # the same question judged on its own cosine, with a threshold above the topic's: declined
        strict = RetrievalConfig(decline_sigmas=100.0)
        assert (await services.searcher.search(question, top_k=5, min_similarity=0.0, config=strict)).declined
        # "question" mode embeds only the question and compares its own best cosine
        fake_ollama.fake.reset_counters()
        asked = await services.searcher.search(
            question, top_k=5, min_similarity=0.0, config=RetrievalConfig(decline_on="question")
        )
        assert fake_ollama.fake.embedded_texts == [question]
        assert asked.evidence == asked.best_similarity
