"""Which registry an Ollama model's name downloads from, read as Ollama reads it.

Ollama's names are `[host/][namespace/]model[:tag]`: one part is a model of Ollama's own library, two are
a namespace and a model there, three start with the registry's host (`hf.co/user/repo:Q4_K_M`). Ollama
also takes a scheme in front (`https://host/...`, `http://` for a registry without TLS). Ollama's own
registry answers to the names below.
"""

from __future__ import annotations

OLLAMA_REGISTRIES = ("registry.ollama.ai", "ollama.com")


class NotAModelName(ValueError):
    """A name Ollama would not read as a model to pull (or would read as something unexpected)."""


def registry_host(name: str) -> str:
    """The host `name` is pulled from, lowercased: Ollama's registry when the name has none."""
    if "://" in name:
        raise NotAModelName("a model's name has no scheme: write it without http:// or https://")
    parts = name.split("/")
    if len(parts) > 3 or any(not part for part in parts):
        raise NotAModelName("a model's name is [host/][namespace/]model[:tag]")
    if len(parts) == 3:
        return parts[0].lower()
    if len(parts) == 2 and ("." in parts[0] or ":" in parts[0]):
        # (a namespace has no dot: this is a host without a namespace, which Ollama does not take)
        raise NotAModelName(f"'{parts[0]}' is a registry's host: write host/namespace/model")
    return OLLAMA_REGISTRIES[0]


def pull_allowed(host: str, extra: tuple[str, ...]) -> bool:
    """Ollama's own registry, or one of the hosts VASK_PULL_REGISTRIES names."""
    return host in OLLAMA_REGISTRIES or host in {registry.lower().rstrip(".") for registry in extra}
