"""Instructions embedding models expect in front of what they embed, from each model's card. Pure.

Retrieval models trained with instructions score worse without them: mxbai-embed-large (vask's
default) wants each query introduced as a search, e5 wants "query: " and "passage: ", Qwen3-Embedding
a task before each query. No server adds them (Ollama, LM Studio, llama-server and vLLM pass text
through unchanged), so vask does, the same way whatever the server: the gateways are sent finished
texts. A model not in the table gets none, unless the person sets them (VASK_QUERY_PREFIX,
VASK_DOCUMENT_PREFIX: `instructions_for`).

Models are matched by base name, the way the servers name them: without namespace or tag
("someone/nomic-embed-text:v1.5", "intfloat/multilingual-e5-small"), without LM Studio's
"text-embedding-" in front, and without a GGUF file's quantisation ("Qwen3-Embedding-0.6B-Q8_0").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_SEARCH_INSTRUCTION = "Represent this sentence for searching relevant passages: "
# Qwen3-Embedding's card: `Instruct: {task}\nQuery:{query}` (no space after "Query:"), its example task
_QWEN3_QUERY = "Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery:"
# multilingual-e5-large-instruct's card: the same shape, with a space after "Query:"
_E5_INSTRUCT_QUERY = "Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery: "


@dataclass(frozen=True)
class EmbedPrompts:
    query: str = ""
    document: str = ""


@dataclass(frozen=True)
class ModelFamily:
    """A family of models that share their instructions, as its card gives them."""

    name: str
    pattern: str  # matched (re.fullmatch) against the model's base name
    prompts: EmbedPrompts
    card: str  # where the instructions are written
    examples: tuple[str, ...] = ()  # names servers give its models (the docs list them)


# Most specific first: the first family whose pattern matches a base name is its family. A family
# with no instructions is listed too, so that vask can say "its card asks for none" rather than
# "not known".
FAMILIES: tuple[ModelFamily, ...] = (
    ModelFamily(
        "multilingual-e5-instruct",
        r"(?:.*-)?multilingual-e5-(?:small|base|large)-instruct",
        EmbedPrompts(query=_E5_INSTRUCT_QUERY),
        "https://huggingface.co/intfloat/multilingual-e5-large-instruct",
        ("text-embedding-multilingual-e5-large-instruct",),
    ),
    ModelFamily(
        "e5",  # e5-small/base/large, their -v2, multilingual-e5-small/base/large
        r"(?:.*-)?(?:multilingual-)?e5-(?:small|base|large)(?:-v2)?",
        EmbedPrompts(query="query: ", document="passage: "),
        "https://huggingface.co/intfloat/multilingual-e5-small",
        ("multilingual-e5-small", "intfloat/multilingual-e5-large", "e5-base-v2"),
    ),
    ModelFamily(
        "qwen3-embedding",
        r"qwen3-embedding(?:-[0-9.]+b)?",
        EmbedPrompts(query=_QWEN3_QUERY),
        "https://huggingface.co/Qwen/Qwen3-Embedding-0.6B",
        ("qwen3-embedding:0.6b", "Qwen/Qwen3-Embedding-8B"),
    ),
    ModelFamily(
        "embeddinggemma",
        r"embeddinggemma(?:-300m)?",
        EmbedPrompts(query="task: search result | query: ", document="title: none | text: "),
        "https://ai.google.dev/gemma/docs/embeddinggemma/model_card",
        ("embeddinggemma", "google/embeddinggemma-300m"),
    ),
    ModelFamily(
        "nomic-embed-text",  # v1, v1.5 and v2-moe: the same two prefixes
        r"nomic-embed-text(?:-v1(?:\.5)?|-v2-moe)?",
        EmbedPrompts(query="search_query: ", document="search_document: "),
        "https://huggingface.co/nomic-ai/nomic-embed-text-v2-moe",
        ("nomic-embed-text", "nomic-embed-text-v2-moe"),
    ),
    ModelFamily(
        "snowflake-arctic-embed2",  # Ollama's snowflake-arctic-embed2 is arctic-embed-l-v2.0
        r"snowflake-arctic-embed(?:2|-[ml]-v2(?:\.0)?)",
        EmbedPrompts(query="query: "),
        "https://huggingface.co/Snowflake/snowflake-arctic-embed-l-v2.0",
        ("snowflake-arctic-embed2", "Snowflake/snowflake-arctic-embed-m-v2.0"),
    ),
    ModelFamily(
        "snowflake-arctic-embed",  # v1 and v1.5: xs, s, m, m-long, l
        r"snowflake-arctic-embed(?:-(?:xs|s|m|m-long|l))?(?:-v1(?:\.5)?)?",
        EmbedPrompts(query=_SEARCH_INSTRUCTION),
        "https://huggingface.co/Snowflake/snowflake-arctic-embed-m-v1.5",
        ("snowflake-arctic-embed:335m", "snowflake-arctic-embed-m-v1.5"),
    ),
    ModelFamily(
        "bge-en",  # bge-small/base/large-en(-v1.5); Ollama's bge-large is bge-large-en-v1.5
        r"bge-(?:small|base|large)(?:-en(?:-v1\.5)?)?",
        EmbedPrompts(query=_SEARCH_INSTRUCTION),
        "https://huggingface.co/BAAI/bge-large-en-v1.5",
        ("bge-large", "BAAI/bge-small-en-v1.5"),
    ),
    ModelFamily(
        "bge-zh",
        r"bge-(?:small|base|large)-zh(?:-v1\.5)?",
        EmbedPrompts(query="为这个句子生成表示以用于检索相关文章："),
        "https://huggingface.co/BAAI/bge-large-zh-v1.5",
        ("BAAI/bge-large-zh-v1.5",),
    ),
    ModelFamily("bge-m3", r"bge-m3", EmbedPrompts(), "https://huggingface.co/BAAI/bge-m3", ("bge-m3",)),
    ModelFamily(
        "granite-embedding",  # 30m (English) and 278m (multilingual), r2 too
        r"granite-embedding(?:-[0-9]+m)?(?:-english|-multilingual)?(?:-r2)?",
        EmbedPrompts(),
        "https://huggingface.co/ibm-granite/granite-embedding-278m-multilingual",
        ("granite-embedding:278m", "granite-embedding:30m"),
    ),
    ModelFamily(
        "mxbai-embed-large",
        r"mxbai-embed-large(?:-v1)?",
        EmbedPrompts(query=_SEARCH_INSTRUCTION),
        "https://huggingface.co/mixedbread-ai/mxbai-embed-large-v1",
        ("mxbai-embed-large", "mixedbread-ai/mxbai-embed-large-v1"),
    ),
    ModelFamily(
        "all-minilm",
        r"all-minilm(?:-l6|-l12)?(?:-v2)?",
        EmbedPrompts(),
        "https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2",
        ("all-minilm",),
    ),
    ModelFamily(
        "paraphrase-multilingual",
        r"paraphrase-multilingual(?:-minilm-l12|-mpnet-base)?(?:-v2)?",
        EmbedPrompts(),
        "https://huggingface.co/sentence-transformers/paraphrase-multilingual-mpnet-base-v2",
        ("paraphrase-multilingual",),
    ),
)
_COMPILED = tuple((re.compile(family.pattern), family) for family in FAMILIES)

# What a GGUF file's name ends with (llama-server names a model after its file): a quantisation or format.
_FILE_ENDING = re.compile(r"[-._](?:gguf|f16|f32|bf16|fp16|q[0-9]\w*|iq[0-9]\w*)$")


def base_name(model: str) -> str:
    """The model's name without namespace, tag, LM Studio's "text-embedding-" or a file's quantisation."""
    base = model.strip().rsplit("/", 1)[-1].split(":", 1)[0].lower()
    base = base.removeprefix("text-embedding-")
    while (shorter := _FILE_ENDING.sub("", base)) != base:
        base = shorter
    return base


def family_of(model: str) -> ModelFamily | None:
    """The family whose card gives the model's instructions; None for a model vask does not know."""
    base = base_name(model)
    return next((family for pattern, family in _COMPILED if pattern.fullmatch(base)), None)


def prompts_for(model: str) -> EmbedPrompts:
    """The instructions the model's card gives (none for a model vask does not know)."""
    family = family_of(model)
    return family.prompts if family is not None else EmbedPrompts()


# Where an instruction in use comes from
FROM_CARD = "card"  # the model's card (the table above)
FROM_SETTING = "setting"  # VASK_QUERY_PREFIX / VASK_DOCUMENT_PREFIX
UNKNOWN = "unknown"  # a model vask does not know, and no setting: none is sent

# The setting's word for "no instruction", where the table has one (an empty value means "unset")
NO_PREFIX = "none"


@dataclass(frozen=True)
class Instructions:
    """The instructions an embedding model is sent, and where each comes from."""

    model: str
    prompts: EmbedPrompts
    query_source: str
    document_source: str
    family: ModelFamily | None

    @property
    def query(self) -> str:
        return self.prompts.query

    @property
    def document(self) -> str:
        return self.prompts.document


def instructions_for(model: str, query_prefix: str | None = None, document_prefix: str | None = None) -> Instructions:
    """The model's instructions: the settings' where given (NO_PREFIX for none), else its card's."""
    family = family_of(model)
    card = family.prompts if family is not None else EmbedPrompts()
    card_source = FROM_CARD if family is not None else UNKNOWN

    def chosen(setting: str | None, from_card: str) -> tuple[str, str]:
        if setting is None:
            return from_card, card_source
        return ("" if setting == NO_PREFIX else setting), FROM_SETTING

    query, query_source = chosen(query_prefix, card.query)
    document, document_source = chosen(document_prefix, card.document)
    return Instructions(model, EmbedPrompts(query, document), query_source, document_source, family)


def search_prompt(index_model: str, index_document: str, index_query: str, configured: Instructions | None) -> str:
    """The query instruction a search of an index uses. The configured one when the index is the
    configured model's, embedded with the configured document instruction: a changed query instruction
    applies at once, as nothing is embedded again for it. Otherwise (an older index that still answers
    while the configured one is built) the one recorded with that index."""
    if configured is not None and configured.model == index_model and configured.document == index_document:
        return configured.query
    return index_query


def shown(prompt: str) -> str:
    """An instruction as messages show it: quoted, so that a trailing space or a line break is seen."""
    return repr(prompt) if prompt else "none"


_WHERE = {FROM_CARD: "its card", UNKNOWN: "none known"}
_SETTING = {"questions": "VASK_QUERY_PREFIX", "passages": "VASK_DOCUMENT_PREFIX"}


def describe(instructions: Instructions) -> str:
    """Which instructions are in use and where each comes from, in a line: "questions 'query: ',
    passages 'passage: ' (multilingual-e5-small's card)", "questions 'Find: ' (VASK_QUERY_PREFIX),
    passages none (its card)"."""
    model = instructions.model
    sources = {instructions.query_source, instructions.document_source}
    if sources == {UNKNOWN}:
        return f"none ({model} is not a model vask knows)"
    if sources == {FROM_CARD} and not (instructions.query or instructions.document):
        return f"none ({model}'s card asks for none)"
    parts = []
    for role, prompt, source in (
        ("questions", instructions.query, instructions.query_source),
        ("passages", instructions.document, instructions.document_source),
    ):
        where = "" if sources == {FROM_CARD} else f" ({_SETTING[role] if source == FROM_SETTING else _WHERE[source]})"
        parts.append(f"{role} {shown(prompt)}{where}")
    return ", ".join(parts) + (f" ({model}'s card)" if sources == {FROM_CARD} else "")
