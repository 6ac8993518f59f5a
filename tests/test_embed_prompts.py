"""The instructions each embedding model's card asks for, sent exactly so through Ollama's API and an
OpenAI-compatible one, by the names each server gives the model; and how models are matched by name."""

import asyncio
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.fake_openai import openai_settings
from vask_server.adapters.meta import read_meta_json, write_meta_json
from vask_server.adapters.vault import Vault
from vask_server.config import load_settings
from vask_server.core.embed_prompts import (
    FAMILIES,
    FROM_CARD,
    FROM_SETTING,
    UNKNOWN,
    EmbedPrompts,
    base_name,
    family_of,
    instructions_for,
    prompts_for,
)
from vask_server.errors import ConfigError
from vask_server.services.context import instructions_status, open_services
from vask_server.services.options import unchanged_since_last_sync

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


# -- the settings for any other model ------------------------------------------------------------


def test_the_prefix_settings_are_kept_as_written():
    plain = load_settings(env={})
    assert plain.query_prefix is None and plain.embed_instructions().query_source == FROM_CARD
    env = {"VASK_EMBED_MODEL": "gte-base", "VASK_QUERY_PREFIX": "query: ", "VASK_DOCUMENT_PREFIX": "doc:\\n"}
    settings = load_settings(env=env)
    instructions = settings.embed_instructions()
    # the trailing space counts; \n is a line break
    assert (instructions.query, instructions.document) == ("query: ", "doc:\n")
    assert (instructions.query_source, instructions.document_source) == (FROM_SETTING, FROM_SETTING)
    # an empty value is no setting (the card's); `none` is no instruction, where the card has one
    e5 = load_settings(env={"VASK_EMBED_MODEL": "multilingual-e5-small", "VASK_QUERY_PREFIX": ""})
    assert e5.embed_instructions().prompts == EmbedPrompts("query: ", "passage: ")
    bare = load_settings(env={"VASK_EMBED_MODEL": "multilingual-e5-small"}, flags={"document_prefix": "none"})
    assert bare.embed_instructions().prompts == EmbedPrompts("query: ", "")
    assert bare.embed_instructions().document_source == FROM_SETTING
    # the flag wins over the environment
    flagged = load_settings(env={"VASK_QUERY_PREFIX": "a: "}, flags={"query_prefix": "b: "})
    assert flagged.query_prefix == "b: "


@pytest.mark.parametrize(("value", "problem"), [("x" * 1001, "at most 1000"), ("query:\r", "carriage return")])
def test_a_bad_prefix_is_refused_with_a_hint(value, problem):
    with pytest.raises(ConfigError) as raised:
        load_settings(env={"VASK_QUERY_PREFIX": value})
    assert problem in raised.value.message and "VASK_QUERY_PREFIX" in raised.value.hint


async def test_a_changed_query_prefix_applies_at_once_and_embeds_nothing_again(fake_ollama, small_vault, settings_for):
    async with open_services(settings_for(small_vault)) as services:
        await services.indexer.sync()
        suffix = services.searcher.active().suffix
    fake_ollama.fake.reset_counters()
    async with open_services(settings_for(small_vault, query_prefix="Find: ")) as services:
        # before any sync: the searches of the index it has already use it
        await services.searcher.warm()
        assert fake_ollama.fake.embedded_texts and all(t.startswith("Find: ") for t in fake_ollama.fake.embedded_texts)
        fake_ollama.fake.reset_counters()
        await services.searcher.search(QUESTION, top_k=3, min_similarity=0.0)
        assert fake_ollama.fake.embedded_texts == ["Find: When do I feed the starter?", "Find: feed starter"]
        # a sync embeds nothing, and records it with the index
        fake_ollama.fake.reset_counters()
        report = await services.indexer.sync()
        assert report.chunks_embedded == 0 and fake_ollama.fake.embedded_texts == []
        active = services.store.read_meta().active
        assert (active.suffix, active.query_prompt, active.document_prompt) == (suffix, "Find: ", "")
    # `vask index` sees that only the query instruction changed: it syncs (to record it), embedding nothing
    again = settings_for(small_vault, query_prefix="Find: ")
    assert unchanged_since_last_sync(again, Vault(small_vault), services.index_dir) is not None
    assert unchanged_since_last_sync(settings_for(small_vault), Vault(small_vault), services.index_dir) is None


async def test_a_changed_document_prefix_builds_new_tables_while_the_old_ones_answer(
    fake_ollama, small_vault, settings_for
):
    async with open_services(settings_for(small_vault, query_prefix="Find: ")) as services:
        await services.indexer.sync()
        await services.searcher.warm()  # (its calibration, kept: a search below must not wait for one)
        old = services.searcher.active().suffix
    fake = fake_ollama.fake
    fake.reset_counters()
    fake.hold_from_call = 1  # the new index's passages wait until released
    settings = settings_for(small_vault, query_prefix="Ask: ", document_prefix="Note: ")
    async with open_services(settings) as services:
        status = instructions_status(settings, services.store.read_meta().active)
        assert status["rebuild"] and status["index_document"] == "" and status["document"] == "Note: "
        sync = asyncio.create_task(services.indexer.sync())
        try:
            while services.store.read_meta().building is None or fake._sync_calls == 0:
                await asyncio.sleep(0.02)
            building = services.store.read_meta().building
            assert building is not None and building.suffix != old and building.document_prompt == "Note: "
            # the old index answers meanwhile, its questions with the instruction it was searched with
            assert services.searcher.active().suffix == old
            fake.embedded_texts.clear()
            found = await services.searcher.search(QUESTION, top_k=3, min_similarity=0.0)
            assert found.hits and fake.embedded_texts == ["Find: When do I feed the starter?", "Find: feed starter"]
            fake.embedded_texts.clear()
        finally:
            fake.released.set()
        await sync
        assert services.searcher.active().suffix == building.suffix
        # every passage of the new index was embedded with the new instruction
        assert fake.embedded_texts and all(t.startswith("Note: ") for t in fake.embedded_texts)
        tables = await services.store.database.table_names()
        assert not [name for name in tables if name.endswith(old)]  # the old tables went once it was complete
        fake.embedded_texts.clear()
        await services.searcher.search(QUESTION, top_k=3, min_similarity=0.0)
        assert fake.embedded_texts[:2] == ["Ask: When do I feed the starter?", "Ask: feed starter"]


async def test_an_index_made_before_instructions_were_recorded_is_read_by_its_tables_name(
    fake_ollama, one_note, settings_for
):
    """An e5 index built when vask sent e5 no instruction: its passages were embedded bare, which its
    tables' name tells, so a sync with e5's card builds it anew with "passage: "."""
    fake_ollama.fake.embed_models["multilingual-e5-small"] = 96
    bare = settings_for(one_note, embed_model="multilingual-e5-small", document_prefix="none")
    async with open_services(bare) as services:
        await services.indexer.sync()
        data = read_meta_json(services.store.index_dir)
        old = data["active"]["suffix"]
        assert old == "multilingual_e5_small_96_f16_d1_p1_h1"  # (the name such an index had)
        for key in ("document_prompt", "query_prompt"):
            del data["active"][key]
        write_meta_json(services.store.index_dir, data)
    card = settings_for(one_note, embed_model="multilingual-e5-small")
    async with open_services(card) as services:
        index = services.searcher.active()
        assert (index.document_prompt, index.query_prompt) == ("", "query: ")
        fake_ollama.fake.reset_counters()
        await services.indexer.sync()
        assert services.searcher.active().suffix != old
        assert "passage: Sourdough\n\nFeed the starter the night before." in fake_ollama.fake.embedded_texts
