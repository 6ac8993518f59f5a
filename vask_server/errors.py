"""Domain errors: each has a stable code, an HTTP status and a hint that says what to do.

Core and adapters raise these; the web layer maps them to one JSON shape
(`{"error": {"code", "message", "hint"}}`) and the CLI prints message and hint.
"""

from __future__ import annotations

from typing import Any, ClassVar


class VaskError(Exception):
    code: ClassVar[str] = "internal"
    status: ClassVar[int] = 500

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "hint": self.hint}


class BadRequest(VaskError):
    code = "bad_request"
    status = 400


class Unauthorized(VaskError):
    code = "unauthorized"
    status = 401


class ForbiddenHost(VaskError):
    code = "forbidden_host"
    status = 403


class NotFound(VaskError):
    code = "not_found"
    status = 404


class NotIndexed(VaskError):
    code = "not_indexed"
    status = 409


class PayloadTooLarge(VaskError):
    code = "payload_too_large"
    status = 413


class ConfigError(VaskError):
    code = "config_error"
    status = 400


class OllamaUnavailable(VaskError):
    code = "ollama_unavailable"
    status = 503

    def __init__(self, host: str, detail: str = "") -> None:
        message = f"Ollama is not reachable at {host}"
        if detail:
            message += f" ({detail})"
        super().__init__(
            message,
            "Start Ollama with `ollama serve` (or open the Ollama app), "
            "or point OLLAMA_HOST at the host where it runs.",
        )
        self.host = host


class ModelMissing(VaskError):
    code = "model_missing"
    status = 503

    def __init__(self, model: str, host: str = "") -> None:
        where = f" on {host}" if host else ""
        super().__init__(
            f"The model '{model}' is not available in Ollama{where}",
            f"Pull it with `ollama pull {model}`, or choose another model (VASK_EMBED_MODEL / VASK_CHAT_MODEL).",
        )
        self.model = model


class IndexBroken(VaskError):
    """A read of the index on disk failed: damaged or missing files, not anything the user typed."""

    code = "index_error"
    status = 500


class OllamaFailed(VaskError):
    """Ollama answered, but with an error that retries did not cure."""

    code = "ollama_error"
    status = 502
