"""An OpenAI-compatible model server: LM Studio, llama.cpp's llama-server, vLLM, LocalAI, Ollama's own
/v1. The same duties as `OllamaGateway` (embed, stream an answer, say which models it has), over
`/v1/embeddings`, `/v1/chat/completions` (server-sent events) and `/v1/models`, with httpx.

The API key, when set, goes only into the Authorization header: never into a message, a log line,
the index or its folder.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping, Sequence
from email.utils import parsedate_to_datetime
from typing import Any, TypeVar

import httpx

from vask_server.adapters.gateway import PullProgress
from vask_server.adapters.ollama import describe_failure, display_host
from vask_server.core.server_errors import SERVER_LOG_HINT, known_reason, with_reason
from vask_server.errors import ModelMissing, OllamaFailed, OllamaUnavailable, PullUnsupported

log = logging.getLogger(__name__)
T = TypeVar("T")

SERVER = "The OpenAI-compatible server"
_TRANSIENT_STATUS = {408, 429, 500, 502, 503, 504}
_MAX_RETRY_AFTER = 30.0  # a server asking to wait longer than this is not retried: it is said
_START = (
    "Start the server (LM Studio: Developer > Start server; llama-server -m MODEL --embeddings; "
    "vllm serve MODEL), or point VASK_OPENAI_BASE_URL (VASK_CHAT_BASE_URL for answers) at it."
)


class _Answered(Exception):
    """The server answered with an HTTP error status (kept for the retry loop to judge)."""

    def __init__(self, response: httpx.Response) -> None:
        super().__init__(response.status_code)
        self.response = response


class OpenAIGateway:
    """One OpenAI-compatible server, by its base URL (with its /v1)."""

    provider = "openai"
    server = SERVER

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str = "",
        key_setting: str = "VASK_OPENAI_API_KEY",
        timeout: float = 120.0,
        retries: int = 4,
        backoff: float = 0.5,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.host = display_host(self.base_url)
        self.key_setting = key_setting  # what a refusal tells the user to set
        self.retries = retries
        self.backoff = backoff
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = client or httpx.AsyncClient(timeout=timeout, headers=headers)
        self.reachable: bool | None = None  # as OllamaGateway's: what the last request found
        self.contacted = 0.0

    def _saw(self, reachable: bool) -> None:
        self.reachable, self.contacted = reachable, time.monotonic()

    async def close(self) -> None:
        await self._client.aclose()

    async def _call(self, what: str, model: str, call: Callable[[], Awaitable[T]]) -> T:
        for attempt in range(self.retries + 1):
            try:
                result = await call()
            except _Answered as answered:
                self._saw(True)
                response = answered.response
                status = response.status_code
                if status in (401, 403):
                    raise OllamaFailed(
                        f"{SERVER} at {self.host} refused the request (HTTP {status}): a wrong or missing API key.",
                        f"Set {self.key_setting} to the key the server was started with (vLLM's --api-key, "
                        "LM Studio's or the proxy's); it is never shown.",
                    ) from None
                if status == 404 or _says_no_model(response):
                    raise _missing(model, self.host) from None
                wait = _retry_after(response)
                if status not in _TRANSIENT_STATUS or attempt == self.retries or wait > _MAX_RETRY_AFTER:
                    busy = f" and asked to wait {wait:.0f} s" if status == 429 and wait else ""
                    raise OllamaFailed(
                        with_reason(
                            f"HTTP {status} from {SERVER[0].lower()}{SERVER[1:]} at {self.host} ({what} with '{model}')"
                            f"{busy}",
                            known_reason(_error_text(response)),
                        ),
                        f"{SERVER_LOG_HINT} The request is retried on the next sync.",
                    ) from None
                reason = f"HTTP {status}"
                delay = wait or min(8.0, self.backoff * (2**attempt)) * (0.75 + random.random() / 2)
            except httpx.TransportError as exc:
                refused = isinstance(exc, httpx.ConnectError | httpx.RemoteProtocolError)
                if attempt >= (min(self.retries, 2) if refused else self.retries):
                    self._saw(False)
                    raise OllamaUnavailable(self.host, describe_failure(exc), server=SERVER, start=_START) from None
                reason = type(exc).__name__
                delay = min(8.0, self.backoff * (2**attempt)) * (0.75 + random.random() / 2)
            else:
                self._saw(True)
                return result
            log.warning(
                "%s %s failed (%s); retry %d/%d in %.1fs", SERVER, what, reason, attempt + 1, self.retries, delay
            )
            await asyncio.sleep(delay)
        raise AssertionError("unreachable")

    async def embed(self, model: str, texts: Sequence[str]) -> list[list[float]]:
        async def call() -> list[list[float]]:
            response = await self._client.post(
                f"{self.base_url}/embeddings", json={"model": model, "input": list(texts)}
            )
            if response.status_code >= 400:
                raise _Answered(response)
            try:
                data = sorted(response.json()["data"], key=lambda item: int(item.get("index", 0)))
                return [list(map(float, item["embedding"])) for item in data]
            except (ValueError, KeyError, TypeError):
                raise OllamaFailed(
                    f"{SERVER} at {self.host} answered embeddings with something that is not the OpenAI shape",
                    "Check that VASK_OPENAI_BASE_URL ends in /v1 and that the model is an embedding model.",
                ) from None

        vectors = await self._call("embeddings", model, call)
        if len(vectors) != len(texts):
            raise OllamaFailed(f"{SERVER} returned {len(vectors)} embeddings for {len(texts)} texts")
        return vectors

    async def chat_stream(
        self, model: str, messages: list[dict[str, str]], options: Mapping[str, Any] | None = None
    ) -> AsyncIterator[str]:
        """Streams the answer's text from server-sent events. Only the opening is retried; closing the
        stream closes the response, which is how the server learns to stop generating."""
        options = options or {}
        body: dict[str, Any] = {"model": model, "messages": messages, "stream": True}
        if "temperature" in options:
            body["temperature"] = options["temperature"]
        if "num_predict" in options:  # (Ollama's name for it; the context window is the server's own)
            body["max_tokens"] = options["num_predict"]

        async def open_stream() -> httpx.Response:
            request = self._client.build_request("POST", f"{self.base_url}/chat/completions", json=body)
            response = await self._client.send(request, stream=True)
            if response.status_code >= 400:
                await response.aread()
                await response.aclose()
                raise _Answered(response)
            return response

        response = await self._call("chat", model, open_stream)
        try:
            async for line in response.aiter_lines():
                if not line.startswith("data:"):
                    continue
                data = line[5:].strip()
                if data == "[DONE]":
                    break
                try:
                    event = json.loads(data)
                except ValueError:
                    continue
                if "error" in event:
                    raise OllamaFailed(
                        with_reason(
                            f"{SERVER} at {self.host} stopped the answer with '{model}' half-way",
                            known_reason(_message(event["error"])),
                        ),
                        SERVER_LOG_HINT,
                    )
                for choice in event.get("choices") or ():
                    text = (choice.get("delta") or {}).get("content")
                    if text:
                        yield text
        except httpx.TransportError as exc:
            self._saw(False)
            raise OllamaUnavailable(self.host, describe_failure(exc), server=SERVER, start=_START) from None
        finally:
            await response.aclose()

    async def models(self, timeout: float = 5.0) -> list[str]:
        """The models the server serves (`/v1/models`), by the names requests take."""
        try:
            # (asyncio.timeout, not wait_for: on Python 3.11 wait_for can swallow a cancellation that
            # arrives as the request ends, and a server stopping then waited forever for this check)
            async with asyncio.timeout(timeout):
                response = await self._client.get(f"{self.base_url}/models")
        except (httpx.TransportError, TimeoutError) as exc:
            self._saw(False)
            raise OllamaUnavailable(self.host, describe_failure(exc), server=SERVER, start=_START) from None
        self._saw(True)
        if response.status_code >= 400:
            raise OllamaFailed(
                f"{SERVER} at {self.host} did not list its models (HTTP {response.status_code})",
                f"Check {self.key_setting} and the server's log.",
            )
        try:
            return sorted({str(item["id"]) for item in response.json().get("data", [])})
        except (ValueError, KeyError, TypeError, AttributeError):
            raise OllamaFailed(f"{SERVER} at {self.host} listed its models in a shape not OpenAI's") from None

    async def pull(self, model: str) -> AsyncGenerator[PullProgress, None]:
        """The OpenAI API has no way to download a model: the server's own app or flags load it."""
        raise PullUnsupported(
            f"{SERVER} at {self.host} cannot pull '{model}': only Ollama downloads models on request.",
            "Load the model in the server itself (LM Studio: download and load it; llama-server: -m; "
            "vLLM: serve it), or set the model's name to one it serves.",
        )
        yield  # pragma: no cover  (an async generator, as the protocol's pull is)

    async def probe(self, models: Sequence[str], timeout: float = 2.0) -> tuple[bool, list[str]]:
        """One quick look, no retries: is the server up, and which of `models` it does not serve."""
        try:
            # (asyncio.timeout, not wait_for: on Python 3.11 wait_for can swallow a cancellation that
            # arrives as the request ends, and a server stopping then waited forever for this check)
            async with asyncio.timeout(timeout):
                response = await self._client.get(f"{self.base_url}/models")
            available = {str(item.get("id")) for item in response.json().get("data", [])}
        except (httpx.TransportError, TimeoutError, ValueError, AttributeError):
            self._saw(False)
            return False, []
        self._saw(True)
        if response.status_code >= 400:
            return True, []  # (it answers, but will not list: the models are checked when used)
        return True, [m for m in models if m not in available]


def _missing(model: str, host: str) -> ModelMissing:
    return ModelMissing(
        model,
        host,
        server=SERVER,
        fix=(
            f"Load '{model}' in the server (LM Studio: load it, with its API identifier as the name; "
            "llama-server: start it with -m; vLLM: serve it, its name as --served-model-name)"
        ),
    )


def _says_no_model(response: httpx.Response) -> bool:
    text = _error_text(response).lower()
    return response.status_code in (400, 422) and "model" in text and ("not found" in text or "does not exist" in text)


def _error_text(response: httpx.Response) -> str:
    """The server's error message, to recognise (core/server_errors.py), never to repeat."""
    try:
        body = response.json()
    except ValueError:
        return response.text[:200]
    return _message(body.get("error", body) if isinstance(body, dict) else body)[:200]


def _message(error: Any) -> str:
    if isinstance(error, dict):
        return str(error.get("message") or error)
    return str(error)


def _retry_after(response: httpx.Response) -> float:
    """Seconds the server asks to wait (Retry-After: seconds or an HTTP date); 0 when it says nothing."""
    value = response.headers.get("retry-after")
    if not value:
        return 0.0
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return 0.0
