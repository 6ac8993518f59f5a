"""Domain errors: each has a stable code, an HTTP status and a hint that says what to do.

Core and adapters raise these; the web layer maps them to one JSON shape
(`{"error": {"code", "message", "hint"}}`) and the CLI prints message and hint.
These classes are the one list of error codes: the OpenAPI document is built from them, and a
test holds docs/REFERENCE.md's table and the server's behaviour to them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal


class VaskError(Exception):
    """An unexpected failure; the server log has the details."""

    code: ClassVar[str] = "internal"
    status: ClassVar[int] = 500
    summary: ClassVar[str] = "Unexpected server error"  # a few words for the API's documentation
    http: ClassVar[bool] = True  # False: raised before any server runs (settings), never an HTTP answer

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "hint": self.hint}


class BadRequest(VaskError):
    code = "bad_request"
    status = 400
    summary = "Invalid request: body, field or path (a path leaving the vault included)"


ScopeKind = Literal["note", "tag", "folder"]  # what a scope mention names


@dataclass(frozen=True)
class ScopeMiss:
    """One mention in a question that names nothing in the index, as a client receives it."""

    kind: ScopeKind
    written: str  # as in the question: "[[Projct X]]", "#runing", 'path:"Projcts"'
    closest: tuple[str, ...]  # how to write the nearest names the index holds, closest first

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "written": self.written, "closest": list(self.closest)}


class ScopeNotFound(VaskError):
    code = "scope_not_found"
    status = 400
    summary = "A [[Note]], #tag or path:Folder in the question names nothing in the index"

    def __init__(self, message: str, hint: str, misses: Sequence[ScopeMiss] = ()) -> None:
        super().__init__(message, hint)
        # Each miss with its own closest names, so a client can offer them without reading the hint.
        self.misses = tuple(misses)

    @property
    def closest(self) -> list[str]:
        """Every miss's closest names in one list: what clients read before `misses` existed."""
        return [name for miss in self.misses for name in miss.closest]

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "misses": [miss.to_dict() for miss in self.misses], "closest": self.closest}


class Unauthorized(VaskError):
    code = "unauthorized"
    status = 401
    summary = "Missing or wrong bearer token"


class ForbiddenHost(VaskError):
    code = "forbidden_host"
    status = 403
    summary = "Host header is neither a loopback name, the bound address nor an allowed host (DNS-rebinding protection)"


class ForbiddenOrigin(VaskError):
    code = "forbidden_origin"
    status = 403
    summary = "CORS preflight from an origin other than Obsidian's"


class DeviceNotAllowed(VaskError):
    code = "device_not_allowed"
    status = 403
    summary = "Only the default device's token (the computer vask runs on) may do this: download a model"


class RegistryNotAllowed(VaskError):
    code = "registry_not_allowed"
    status = 403
    summary = "The model's name points at a registry other than Ollama's that VASK_PULL_REGISTRIES does not name"


class ApplyNotAllowed(VaskError):
    code = "apply_not_allowed"
    status = 403
    summary = (
        "Only the default device, or one allowed with `vask token allow-apply NAME`, may apply, reject or undo "
        "a proposed change"
    )


class NoteExcluded(VaskError):
    code = "note_excluded"
    status = 403
    summary = "The note is excluded (VASK_EXCLUDE, Obsidian's Excluded files, `vask: exclude`): never read or changed"


class NotFound(VaskError):
    code = "not_found"
    status = 404
    summary = "Note not in the index, or no such endpoint"


class MethodNotAllowed(VaskError):
    code = "method_not_allowed"
    status = 405
    summary = "The endpoint does not take this method"


class NotIndexed(VaskError):
    code = "not_indexed"
    status = 409
    summary = "The vault has not been indexed yet"


class StaleProposal(VaskError):
    code = "stale_proposal"
    status = 409
    summary = "The note changed since the change was proposed (or, for undo, since it was applied): nothing written"


class ProposalClosed(VaskError):
    code = "proposal_closed"
    status = 409
    summary = "The proposal was decided already (applied, rejected or undone)"


class QueueFull(VaskError):
    code = "queue_full"
    status = 409
    summary = "Too many proposed changes wait for a decision: approve or reject some first"


class PayloadTooLarge(VaskError):
    code = "payload_too_large"
    status = 413
    summary = "Request body over 1 MB"


class TooManyAttempts(VaskError):
    code = "too_many_attempts"
    status = 429
    summary = "Too many failed token checks from this address: wait and try again"

    def __init__(self, message: str, hint: str = "", retry_after: float = 0.0) -> None:
        super().__init__(message, hint)
        self.retry_after = retry_after


class ConfigError(VaskError):
    code = "config_error"
    status = 400
    summary = "Invalid setting"
    http = False  # settings are read when the server starts; a request cannot change them


class OllamaUnavailable(VaskError):
    """The model server (Ollama, or an OpenAI-compatible one) cannot be reached."""

    code = "ollama_unavailable"
    status = 503
    summary = "The model server (Ollama or an OpenAI-compatible one) is not reachable"

    def __init__(self, host: str, detail: str = "", *, server: str = "Ollama", start: str = "") -> None:
        message = f"{server} is not reachable at {host}"
        if detail:
            message += f" ({detail})"
        hint = start or (
            "Start Ollama with `ollama serve` (or open the Ollama app), or point OLLAMA_HOST at the host where it runs."
        )
        if "certificate" in detail:
            hint = (
                "Give vask the CA that signed Ollama's certificate (SSL_CERT_FILE=/path/to/ca.pem), or use a "
                "publicly trusted certificate on that host."
            )
        elif "https" in detail:
            setting = "OLLAMA_HOST" if server == "Ollama" else "the server's URL"
            hint = f"Check {setting}'s scheme: https:// for a server (or proxy) that speaks TLS, http:// otherwise."
        super().__init__(message, hint)
        self.host = host


class ModelMissing(VaskError):
    code = "model_missing"
    status = 503
    summary = "A model is not pulled in Ollama, or not served by the OpenAI-compatible server"

    def __init__(self, model: str, host: str = "", *, server: str = "Ollama", fix: str = "") -> None:
        where = f" on {host}" if host else ""
        super().__init__(
            f"The model '{model}' is not available in {server}{where}",
            (fix or f"Pull it with `ollama pull {model}`")
            + ", or choose another model (VASK_EMBED_MODEL / VASK_CHAT_MODEL).",
        )
        self.model = model


class PullUnsupported(VaskError):
    """Only Ollama pulls models on request; an OpenAI-compatible server loads what it is given."""

    code = "pull_unsupported"
    status = 501
    summary = "The model server cannot pull models (only Ollama can): load the model in it instead"


class IndexBroken(VaskError):
    """A read of the index on disk failed: damaged or missing files, not anything the user typed."""

    code = "index_error"
    status = 500
    summary = "a read of the index on disk failed (damaged or missing files)"
    # The search catches it: a notice on the answer and `store_errors` in the status say it, so no
    # endpoint answers with it.
    http = False


class OllamaFailed(VaskError):
    """Ollama answered, but with an error that retries did not cure."""

    code = "ollama_error"
    status = 502
    summary = "Ollama answered with an error that retries did not cure"


def error_classes() -> list[type[VaskError]]:
    """Every error class, VaskError first, then in definition order."""
    found: list[type[VaskError]] = [VaskError]
    for cls in found:  # grows while walking: subclasses of subclasses too
        found.extend(sub for sub in cls.__subclasses__() if sub not in found)
    return found


def http_errors() -> list[type[VaskError]]:
    """The errors an HTTP client can receive, one class per code."""
    return [cls for cls in error_classes() if cls.http]


# aiohttp's own refusals (no such route, wrong method, body over client_max_size), by status
_FOR_STATUS: dict[int, type[VaskError]] = {
    cls.status: cls for cls in (BadRequest, Unauthorized, NotFound, MethodNotAllowed, PayloadTooLarge)
}


def error_for_status(status: int) -> type[VaskError]:
    """The error class an aiohttp HTTP exception of this status is answered as. A status with no
    class of its own (none is raised today) becomes bad_request or internal, so that every code a
    client can receive is one of the documented ones."""
    return _FOR_STATUS.get(status, BadRequest if status < 500 else VaskError)
