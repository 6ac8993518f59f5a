"""Which languages an embedding model reads, as far as its name tells. Pure.

An English-only model cannot read Chinese or Japanese notes: all-MiniLM maps much of a Chinese
vault's tokens to `[UNK]`, and unrelated Chinese passages sit far closer to each other than unrelated
English ones (docs/EVALUATION.md, "What the ranking's constants rest on"), so its similarities say
nothing there. `vask doctor` and `vask status` say so, and the
search then takes its evidence for Chinese and Japanese questions from the keyword side only.
Models are matched by base name, without tag or namespace, as in core/embed_prompts.py.
"""

from __future__ import annotations

# From each model's card (Ollama library page or Hugging Face): trained on English text only.
ENGLISH_ONLY = (
    "all-minilm",
    "nomic-embed-text",
    "mxbai-embed-large",
    "snowflake-arctic-embed",  # (v1; snowflake-arctic-embed2 is multilingual)
    "bge-large",  # (Ollama's bge-large is bge-large-en-v1.5)
    "bge-base-en",
    "bge-small-en",
)
# Trained on many languages, Chinese and Japanese among them.
MULTILINGUAL = (
    "bge-m3",
    "multilingual-e5",
    "paraphrase-multilingual",
    "granite-embedding:278m",
    "snowflake-arctic-embed2",
    "qwen3-embedding",
    "jina-embeddings-v3",
    "nomic-embed-text-v2",
    "embeddinggemma",
)
RECOMMENDED_MULTILINGUAL = "bge-m3"


def _base(model: str) -> str:
    return model.strip().rsplit("/", 1)[-1].lower()


def reads_only_english(model: str) -> bool | None:
    """True for a model known to read English only, False for one known to read many languages, None
    when its name says neither."""
    full = _base(model)
    base = full.split(":", 1)[0]
    for name in MULTILINGUAL:
        if full.startswith(name) if ":" in name else base.startswith(name):
            return False
    if base.startswith("granite-embedding") and full.endswith(":30m"):
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
