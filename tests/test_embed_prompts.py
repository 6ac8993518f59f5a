"""The instructions each embedding model's card asks for, sent exactly so through Ollama's API and an
OpenAI-compatible one, by the names each server gives the model; and how models are matched by name."""

from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.fake_openai import openai_settings
from vask_server.core.embed_prompts import (
    FAMILIES,
    FROM_CARD,
    UNKNOWN,
    EmbedPrompts,
    base_name,
    family_of,
    instructions_for,
    prompts_for,
)
from vask_server.services.context import open_services

NOTE = "# Sourdough\n\nFeed the starter the night before.\n"
# What vask embeds of that note (its passage, under its heading; the note's record), and of a question
# (the question as asked; its topic), before any instruction
PASSAGES = ("Sourdough\n\nFeed the starter the night before.", "Sourdough\nFeed the starter the night before.")
QUESTION = "When do I feed the starter?"
QUESTION_TEXTS = (QUESTION, "feed starter")


@dataclass(frozen=True)
class Case:
    family: str
    ollama: str  # the name Ollama serves it by
    openai: str  # a name an OpenAI-compatible server (LM Studio, llama-server, vLLM) serves it by
    query: tuple[str, str]  # exactly what is sent for the question and its topic
    document: tuple[str, str]  # exactly what is sent for the note's passage and its record


SEARCH = "Represent this sentence for searching relevant passages: "
QWEN = "Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery:"

CASES = (
    Case(
        "e5",
        "multilingual-e5-small",
        "intfloat/multilingual-e5-small",
        ("query: When do I feed the starter?", "query: feed starter"),
        (
            "passage: Sourdough\n\nFeed the starter the night before.",
            "passage: Sourdough\nFeed the starter the night before.",
        ),
    ),
    Case(
        "e5 (English)",
        "jeffh/intfloat-e5-base-v2:f16",
        "intfloat/e5-base-v2",
        ("query: When do I feed the starter?", "query: feed starter"),
        (
            "passage: Sourdough\n\nFeed the starter the night before.",
            "passage: Sourdough\nFeed the starter the night before.",
        ),
    ),
    Case(
        "multilingual-e5-instruct",
        "jeffh/intfloat-multilingual-e5-large-instruct:f16",
        "text-embedding-multilingual-e5-large-instruct",
        (
            "Instruct: Given a web search query, retrieve relevant passages that answer the query\n"
            "Query: When do I feed the starter?",
            "Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery: feed starter",
        ),
        PASSAGES,
    ),
    Case(
        "bge-en",
        "bge-large:335m",
        "BAAI/bge-small-en-v1.5",
        (
            "Represent this sentence for searching relevant passages: When do I feed the starter?",
            "Represent this sentence for searching relevant passages: feed starter",
        ),
        PASSAGES,
    ),
    Case(
        "qwen3-embedding",
        "qwen3-embedding:0.6b",
        "Qwen/Qwen3-Embedding-0.6B",
        (
            "Instruct: Given a web search query, retrieve relevant passages that answer the query\n"
            "Query:When do I feed the starter?",
            "Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery:feed starter",
        ),
        PASSAGES,
    ),
    Case(
        "embeddinggemma",
        "embeddinggemma:300m",
        "google/embeddinggemma-300m",
        ("task: search result | query: When do I feed the starter?", "task: search result | query: feed starter"),
        (
            "title: none | text: Sourdough\n\nFeed the starter the night before.",
            "title: none | text: Sourdough\nFeed the starter the night before.",
        ),
    ),
    Case(
        "nomic-embed-text",
        "nomic-embed-text:v1.5",
        "text-embedding-nomic-embed-text-v1.5",
        ("search_query: When do I feed the starter?", "search_query: feed starter"),
        (
            "search_document: Sourdough\n\nFeed the starter the night before.",
            "search_document: Sourdough\nFeed the starter the night before.",
        ),
    ),
    Case(
        "nomic-embed-text (v2)",
        "nomic-embed-text-v2-moe",
        "nomic-ai/nomic-embed-text-v2-moe",
        ("search_query: When do I feed the starter?", "search_query: feed starter"),
        (
            "search_document: Sourdough\n\nFeed the starter the night before.",
            "search_document: Sourdough\nFeed the starter the night before.",
        ),
    ),
    Case(
        "snowflake-arctic-embed",
        "snowflake-arctic-embed:335m",
        "Snowflake/snowflake-arctic-embed-m-v1.5",
        (
            "Represent this sentence for searching relevant passages: When do I feed the starter?",
            "Represent this sentence for searching relevant passages: feed starter",
        ),
        PASSAGES,
    ),
    Case(
        "snowflake-arctic-embed2",
        "snowflake-arctic-embed2",
        "Snowflake/snowflake-arctic-embed-l-v2.0",
        ("query: When do I feed the starter?", "query: feed starter"),
        PASSAGES,
    ),
    Case(
        "granite-embedding",
        "granite-embedding:278m",
        "ibm-granite/granite-embedding-278m-multilingual",
        QUESTION_TEXTS,
        PASSAGES,
    ),
    Case("bge-m3", "bge-m3", "text-embedding-bge-m3", QUESTION_TEXTS, PASSAGES),
    Case(
        "mxbai-embed-large",
        "mxbai-embed-large:335m",
        "mxbai-embed-large-v1-f16",  # (llama-server names a model after its GGUF file)
        (
            "Represent this sentence for searching relevant passages: When do I feed the starter?",
            "Represent this sentence for searching relevant passages: feed starter",
        ),
        PASSAGES,
    ),
)


@pytest.fixture
def one_note(tmp_path: Path) -> Path:
    vault = tmp_path / "one"
    vault.mkdir()
    (vault / "Sourdough.md").write_text(NOTE, encoding="utf-8")
    return vault


@pytest.mark.parametrize("provider", ["ollama", "openai"])
@pytest.mark.parametrize("case", CASES, ids=lambda case: case.family)
async def test_each_model_is_sent_the_texts_its_card_asks_for(fake_ollama, one_note, settings_for, case, provider):
    model = case.ollama if provider == "ollama" else case.openai
    fake_ollama.fake.embed_models[model] = 96
    server = openai_settings(fake_ollama.url) if provider == "openai" else {}
    async with open_services(settings_for(one_note, embed_model=model, **server)) as services:
        await services.indexer.sync()
        probe = f"{case.document[0].removesuffix(PASSAGES[0])}dimension probe"
        assert fake_ollama.fake.embedded_texts == [probe, *case.document]
        await services.searcher.warm()  # (the calibration's probes, embedded as questions are)
        fake_ollama.fake.reset_counters()
        found = await services.searcher.search(QUESTION, top_k=3, min_similarity=0.0)
        assert fake_ollama.fake.embedded_texts == list(case.query)
        assert found.hits and found.hits[0].path == "Sourdough.md"


def test_every_family_in_the_table_is_tested_through_both_servers():
    tested = {family_of(case.ollama) for case in CASES} | {family_of(case.openai) for case in CASES}
    untested = {f.name for f in FAMILIES if f not in tested} - {"bge-zh", "all-minilm", "paraphrase-multilingual"}
    assert not untested
    for case in CASES:
        assert family_of(case.ollama) == family_of(case.openai) is not None, case


@pytest.mark.parametrize(
    ("name", "base"),
    [
        ("someone/nomic-embed-text:v1.5", "nomic-embed-text"),
        ("text-embedding-qwen3-embedding-0.6b", "qwen3-embedding-0.6b"),
        ("Qwen3-Embedding-0.6B-Q8_0", "qwen3-embedding-0.6b"),
        ("nomic-embed-text-v1.5.Q4_K_M.gguf", "nomic-embed-text-v1.5"),
        ("hf.co/someone/multilingual-e5-small-GGUF:Q4_K_M", "multilingual-e5-small"),
    ],
)
def test_names_are_read_as_the_servers_write_them(name, base):
    assert base_name(name) == base


def test_a_model_vask_does_not_know_gets_no_instruction_and_says_so():
    assert prompts_for("all-minilm") == EmbedPrompts() and family_of("all-minilm") is not None
    assert prompts_for("MXBAI-EMBED-LARGE:335m").query == SEARCH and prompts_for("mxbai-embed-large").document == ""
    for unknown in ("gte-base", "e5ish", "my-e5-small-finetune", "bge-m3-custom"):
        assert family_of(unknown) is None and prompts_for(unknown) == EmbedPrompts(), unknown
    known, unknown_model = instructions_for("multilingual-e5-small"), instructions_for("gte-base")
    assert (known.query_source, known.document_source) == (FROM_CARD, FROM_CARD)
    assert (unknown_model.query_source, unknown_model.document_source) == (UNKNOWN, UNKNOWN)
    assert prompts_for("qwen3-embedding:8b").query == QWEN


def test_the_names_the_docs_give_each_family_are_read_as_that_family():
    for family in FAMILIES:
        assert family.examples, family.name
        for name in family.examples:
            assert family_of(name) == family, name
