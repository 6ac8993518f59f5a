"""What vask asks of a model server, whichever API it speaks."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True)
class PullProgress:
    """One step of a model's download, as Ollama reports it ("pulling 8eeb52dfb3bb", bytes so far)."""

    status: str
    completed: int | None = None
    total: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status, "completed": self.completed, "total": self.total}


class ModelGateway(Protocol):
    """Ollama's API (adapters/ollama.py) or an OpenAI-compatible one (adapters/openai_api.py)."""

    provider: str  # "ollama" or "openai"
    server: str  # what messages call it: "Ollama", "The OpenAI-compatible server"
    host: str  # its address as messages show it (no credentials)
    reachable: bool | None  # what the last request found; None before any
    contacted: float  # when (time.monotonic())

    async def embed(self, model: str, texts: Sequence[str]) -> list[list[float]]: ...

    def chat_stream(
        self, model: str, messages: list[dict[str, str]], options: Mapping[str, Any] | None = None
    ) -> AsyncIterator[str]: ...

    async def probe(self, models: Sequence[str], timeout: float = 2.0) -> tuple[bool, list[str]]: ...

    async def models(self, timeout: float = 5.0) -> list[str]: ...

    def pull(self, model: str) -> AsyncGenerator[PullProgress, None]: ...

    async def close(self) -> None: ...
