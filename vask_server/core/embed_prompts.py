"""Instructions some embedding models expect in front of what they embed.

Retrieval models trained with instructions score worse without them: mxbai-embed-large (vask's
default) wants each query introduced as a search, nomic-embed-text wants queries and documents
marked as such. Ollama passes text through unchanged, so the caller adds them. Models are matched
by base name, without tag or namespace ("mxbai-embed-large:335m", "someone/nomic-embed-text:v1.5").
"""

from __future__ import annotations

from dataclasses import dataclass

_SEARCH_INSTRUCTION = "Represent this sentence for searching relevant passages: "


@dataclass(frozen=True)
class EmbedPrompts:
    query: str = ""
    document: str = ""


# From each model's card (Ollama library page or Hugging Face). A model not listed gets none.
_KNOWN: dict[str, EmbedPrompts] = {
    "mxbai-embed-large": EmbedPrompts(query=_SEARCH_INSTRUCTION),
    "snowflake-arctic-embed": EmbedPrompts(query=_SEARCH_INSTRUCTION),
    "nomic-embed-text": EmbedPrompts(query="search_query: ", document="search_document: "),
}


def prompts_for(model: str) -> EmbedPrompts:
    base = model.strip().rsplit("/", 1)[-1].split(":", 1)[0].lower()
    return _KNOWN.get(base, EmbedPrompts())
