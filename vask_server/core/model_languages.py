"""Which languages an embedding model reads, as far as its name tells. Pure.

An English-only model cannot read Chinese or Japanese notes: all-MiniLM maps much of a Chinese
vault's tokens to `[UNK]`, and unrelated Chinese passages sit far closer to each other than unrelated
English ones (docs/EVALUATION.md, "What the ranking's constants rest on"), so its similarities say
nothing there. `vask doctor` and `vask status` say so, and the
search then takes its evidence for Chinese and Japanese questions from the keyword side only.
Models are matched by base name, as in core/embed_prompts.py.
"""

from __future__ import annotations

from vask_server.core.embed_prompts import base_name

# From each model's card (Ollama library page or Hugging Face): trained on English text only.
ENGLISH_ONLY = (
    "all-minilm",
    "nomic-embed-text",  # (v1 and v1.5; nomic-embed-text-v2 is multilingual)
    "mxbai-embed-large",
    "snowflake-arctic-embed",  # (v1 and v1.5; snowflake-arctic-embed2 and -v2.0 are multilingual)
    "bge-large",  # (Ollama's bge-large is bge-large-en-v1.5)
    "bge-base-en",
    "bge-small-en",
    "e5-small",  # (intfloat's English e5 and e5-v2; multilingual-e5 is not)
    "e5-base",
    "e5-large",
    "granite-embedding-30m",
)
# Trained on many languages, Chinese and Japanese among them; and any model whose name says "multilingual"
# (multilingual-e5, paraphrase-multilingual, granite-embedding-278m-multilingual, gte-multilingual, ...).
MULTILINGUAL = (
    "bge-m3",
    "bge-small-zh",  # (Chinese and English)
    "bge-base-zh",
    "bge-large-zh",
    "multilingual-e5",
    "paraphrase-multilingual",
    "granite-embedding:278m",
    "granite-embedding-278m",
    "snowflake-arctic-embed2",
    "snowflake-arctic-embed-l-v2",
    "snowflake-arctic-embed-m-v2",
    "qwen3-embedding",
    "jina-embeddings-v3",
    "nomic-embed-text-v2",
    "embeddinggemma",
)
RECOMMENDED_MULTILINGUAL = "bge-m3"


def reads_only_english(model: str) -> bool | None:
    """True for a model known to read English only, False for one known to read many languages, None
    when its name says neither. Names are read as core/embed_prompts.py reads them (without namespace,
    LM Studio's "text-embedding-" or a file's quantisation); Ollama's tag counts where it names the model
    (granite-embedding:30m is English-only, :278m multilingual)."""
    base = base_name(model)
    tag = model.strip().rsplit("/", 1)[-1].lower().partition(":")[2]
    full = f"{base}:{tag}" if tag else base
    if "multilingual" in base:
        return False
    for name in MULTILINGUAL:
        if full.startswith(name) if ":" in name else base.startswith(name):
            return False
    if base == "granite-embedding" and tag == "30m":
        return True  # (granite's small model is English-only, its 278m one multilingual)
    return True if any(base == name or base.startswith(f"{name}-") for name in ENGLISH_ONLY) else None


def language_advice(model: str, not_english: float | None, *, mostly: float = 0.5) -> str | None:
    """What to tell a user whose notes are mostly not English while their embedding model reads only
    English; None otherwise (or when not known)."""
    if not_english is None or not_english < mostly or reads_only_english(model) is not True:
        return None
    return (
        f"{round(100 * not_english)}% of the notes read are not in English, and '{model}' reads only English: "
        f"searches by meaning cannot read them (keyword search still can). Use a multilingual model: "
        f"`ollama pull {RECOMMENDED_MULTILINGUAL}`, then `VASK_EMBED_MODEL={RECOMMENDED_MULTILINGUAL} vask index` "
        "(a new index is built beside the old one, which answers until it is complete)."
    )
