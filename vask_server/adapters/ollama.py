"""Ollama through the official `ollama` AsyncClient: embeddings in batches, streamed chat, clear errors.

Transient failures (connection refused, timeouts, 5xx, 429) are retried with exponential backoff;
a missing model fails at once with `ollama pull NAME`; an unreachable host names the host tried.
Ollama may run on another machine, over https, behind a reverse proxy that wants its own headers
(`VASK_OLLAMA_HEADERS`): those are sent with every call and never appear in a message or a log.
"""

from __future__ import annotations

import asyncio
import logging
import random
import re
import time
import urllib.parse
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import httpx
import numpy as np
import ollama

from vask_server.adapters.embed_turns import EmbedTurns
from vask_server.adapters.gateway import PullProgress
from vask_server.core.embed_prompts import EmbedPrompts
from vask_server.core.server_errors import SERVER_LOG_HINT, known_pull_reason, known_reason, with_reason
from vask_server.errors import ModelMissing, OllamaFailed, OllamaUnavailable

if TYPE_CHECKING:
    from vask_server.adapters.gateway import ModelGateway

log = logging.getLogger(__name__)
T = TypeVar("T")

_TRANSIENT_STATUS = {408, 429, 500, 502, 503, 504}
_PROXY_REFUSED = {401, 403, 407}  # Ollama itself has no authentication: a proxy in front of it said no


def display_host(host: str) -> str:
    """The host as messages show it: without any user:password@ written into the URL."""
    split = urllib.parse.urlsplit(host if "://" in host else f"http://{host}")
    if split.username is None and split.password is None:
        return host
    netloc = split.hostname or ""
    if split.port:
        netloc += f":{split.port}"
    return urllib.parse.urlunsplit((split.scheme, netloc, split.path, "", ""))


def _chain_text(exc: BaseException) -> str:
    """The messages of an error and of what it replaced: the ollama client turns httpx's TLS
    failure into a bare ConnectionError ("Failed to connect"), keeping the reason as its context."""
    parts, seen = [], 0
    current: BaseException | None = exc
    while current is not None and seen < 5:
        parts.append(str(current))
        current = current.__cause__ or current.__context__
        seen += 1
    return " | ".join(parts)


def describe_failure(exc: BaseException) -> str:
    """Why a request to a model server failed, in a few words a person can act on."""
    if isinstance(exc, ollama.ResponseError):  # (it answered: its text is never repeated)
        return f"it answered HTTP {exc.status_code}"
    text = _chain_text(exc)
    lowered = text.lower()
    if "certificate" in lowered or "ssl" in lowered or "tls" in lowered:
        if "verify failed" in lowered or "certificate_verify_failed" in lowered:
            reason = re.sub(r"\s*\(_ssl\.c:\d+\)", "", text.split("certificate verify failed:")[-1])
            reason = reason.split("|")[0].strip(" )]")
            return (
                f"its TLS certificate is not trusted here: {reason}" if reason else "its TLS certificate is not trusted"
            )
        if "wrong version number" in lowered or "record layer failure" in lowered:
            return "it does not speak https on that port (use http://, or check the port)"
        return f"TLS failed: {text[:160]}"
    if isinstance(exc, httpx.RemoteProtocolError):
        return "the connection closed without an answer (an http:// address for a server that wants https?)"
    if isinstance(exc, ConnectionError | httpx.ConnectError):
        return "connection refused"
    if isinstance(exc, httpx.TimeoutException):
        return "timed out"
    return type(exc).__name__


def _is_missing_model(exc: ollama.ResponseError) -> bool:
    return exc.status_code == 404 or "not found" in _error_text(exc).lower()


def _error_text(exc: ollama.ResponseError) -> str:
    """The server's error text, to recognise (core/server_errors.py), never to repeat."""
    return str(exc.error or "")


class OllamaGateway:
    """One Ollama host. Takes its client as an argument so tests can point it anywhere."""

    provider = "ollama"
    server = "Ollama"

    def __init__(
        self,
        host: str,
        *,
        timeout: float = 120.0,
        retries: int = 4,
        backoff: float = 0.5,
        headers: Mapping[str, str] | None = None,
        key_setting: str = "VASK_OLLAMA_HEADERS",
        client: ollama.AsyncClient | None = None,
    ) -> None:
        self.host = display_host(host)
        self.key_setting = key_setting  # what a proxy's refusal tells the user to set
        self.retries = retries
        self.backoff = backoff
        # https is verified against the system's CA store (or SSL_CERT_FILE, for a private CA)
        self._client = client or ollama.AsyncClient(host=host, timeout=timeout, headers=dict(headers or {}))
        # What the last request to the host found (any caller's: a sync, a search, an answer, a
        # probe): True when it answered, even with an error; False when it could not be reached;
        # None before the first. `contacted` is when (time.monotonic()).
        self.reachable: bool | None = None
        self.contacted = 0.0

    def _saw(self, reachable: bool) -> None:
        self.reachable, self.contacted = reachable, time.monotonic()

    def _credentials_hint(self) -> str:
        if self.key_setting == "VASK_CHAT_API_KEY":
            return "Set VASK_CHAT_API_KEY to the key it expects (sent as 'Authorization: Bearer'), or check it."
        return "Set the headers it expects with VASK_OLLAMA_HEADERS ('Name: value'), or check them."

    async def close(self) -> None:
        await self._client._client.aclose()

    async def _call(self, what: str, model: str, call: Callable[[], Awaitable[T]]) -> T:
        for attempt in range(self.retries + 1):
            try:
                result = await call()
            except ollama.ResponseError as exc:
                self._saw(True)  # (it answered)
                if exc.status_code in _PROXY_REFUSED:
                    raise OllamaFailed(
                        f"{self.host} refused the Ollama {what} request (HTTP {exc.status_code}).",
                        "Ollama itself asks for no password: a reverse proxy in front of it did. "
                        + self._credentials_hint(),
                    ) from None
                if _is_missing_model(exc):
                    raise ModelMissing(model, self.host) from None
                if exc.status_code not in _TRANSIENT_STATUS or attempt == self.retries:
                    raise OllamaFailed(
                        with_reason(
                            f"HTTP {exc.status_code} from Ollama at {self.host} ({what} with '{model}')",
                            known_reason(_error_text(exc)),
                        ),
                        f"{SERVER_LOG_HINT} The request is retried on the next sync.",
                    ) from None
                reason = f"HTTP {exc.status_code}"
            except (ConnectionError, httpx.TransportError) as exc:
                # Refused connections mean "not running" far more often than "blip": give up sooner.
                refused = isinstance(exc, ConnectionError | httpx.ConnectError | httpx.RemoteProtocolError)
                if attempt >= (min(self.retries, 2) if refused else self.retries):
                    self._saw(False)
                    raise OllamaUnavailable(self.host, describe_failure(exc)) from None
                reason = type(exc).__name__
            else:
                self._saw(True)
                return result
            delay = min(8.0, self.backoff * (2**attempt)) * (0.75 + random.random() / 2)
            log.warning("ollama %s failed (%s); retry %d/%d in %.1fs", what, reason, attempt + 1, self.retries, delay)
            await asyncio.sleep(delay)
        raise AssertionError("unreachable")

    async def embed(self, model: str, texts: Sequence[str]) -> list[list[float]]:
        async def call() -> list[list[float]]:
            response = await self._client.embed(model=model, input=list(texts))
            return [list(vector) for vector in response.embeddings]

        vectors = await self._call("embed", model, call)
        if len(vectors) != len(texts):
            raise OllamaFailed(f"Ollama returned {len(vectors)} embeddings for {len(texts)} texts")
        return vectors

    async def chat_stream(
        self, model: str, messages: list[dict[str, str]], options: Mapping[str, Any] | None = None
    ) -> AsyncIterator[str]:
        """Streams the answer's text. Only the opening of the stream is retried: once tokens have
        been shown, a retry would repeat them."""

        async def open_stream() -> tuple[str, AsyncIterator[Any]]:
            stream = await self._client.chat(model=model, messages=messages, stream=True, options=options)
            iterator = stream.__aiter__()
            try:
                first = await iterator.__anext__()
            except StopAsyncIteration:
                return "", _empty()
            return first.message.content or "", iterator

        first_text, iterator = await self._call("chat", model, open_stream)
        try:
            if first_text:
                yield first_text
            async for part in iterator:
                if part.message.content:
                    yield part.message.content
        except ollama.ResponseError as exc:
            raise OllamaFailed(
                with_reason(
                    f"Ollama at {self.host} stopped the answer with '{model}' half-way", known_reason(_error_text(exc))
                ),
                SERVER_LOG_HINT,
            ) from None
        except (ConnectionError, httpx.TransportError) as exc:
            self._saw(False)
            raise OllamaUnavailable(self.host, describe_failure(exc)) from None
        finally:
            # Closing the stream closes the HTTP response, which is how Ollama learns to stop
            # generating when our own client went away.
            close = getattr(iterator, "aclose", None)
            if close is not None:
                await close()

    async def models(self, timeout: float = 5.0) -> list[str]:
        """The models Ollama has, by the names vask's settings take (":latest" left off)."""
        try:
            async with asyncio.timeout(timeout):  # (not wait_for: see OpenAIGateway.probe)
                response = await self._client.list()
        except (ConnectionError, httpx.TransportError, TimeoutError, ollama.ResponseError) as exc:
            self._saw(False)
            raise OllamaUnavailable(self.host, describe_failure(exc)) from None
        self._saw(True)
        return sorted({m.model.removesuffix(":latest") for m in response.models if m.model})

    async def pull(self, model: str) -> AsyncGenerator[PullProgress, None]:
        """Downloads a model into Ollama (`ollama pull`), yielding its progress as Ollama streams it. Not
        retried: a pull resumes where it stopped, so the user's next try costs nothing twice."""
        last = ""
        try:
            stream = await self._client.pull(model, stream=True)
            async for part in stream:
                self._saw(True)
                last = str(part.status or "")
                yield PullProgress(last, part.completed, part.total)
        except ollama.ResponseError as exc:
            self._saw(True)
            if exc.status_code in _PROXY_REFUSED:
                raise OllamaFailed(
                    f"{self.host} refused the pull of '{model}' (HTTP {exc.status_code}).",
                    "Ollama itself asks for no password: a reverse proxy in front of it did. "
                    + self._credentials_hint(),
                ) from None
            status = f" (HTTP {exc.status_code})" if exc.status_code > 0 else ""
            raise OllamaFailed(
                with_reason(f"Ollama could not pull '{model}'{status}", known_pull_reason(_error_text(exc))),
                "Check the name (https://ollama.com/library lists the models), and Ollama's free disk space and log.",
            ) from None
        except (ConnectionError, httpx.TransportError) as exc:
            self._saw(False)
            raise OllamaUnavailable(self.host, describe_failure(exc)) from None
        if last != "success":  # (Ollama ends every finished pull so; anything else stopped half-way)
            raise OllamaFailed(
                f"Ollama stopped pulling '{model}' before it finished (last step: {last or 'none'}).",
                "Pull it again: Ollama resumes where it stopped. Its log says why it stopped.",
            )

    async def probe(self, models: Sequence[str], timeout: float = 2.0) -> tuple[bool, list[str]]:
        """One quick look, no retries: is Ollama up, and which of `models` are missing."""
        try:
            async with asyncio.timeout(timeout):  # (not wait_for: see OpenAIGateway.probe)
                response = await self._client.list()
        except (ConnectionError, httpx.TransportError, TimeoutError, ollama.ResponseError):
            self._saw(False)
            return False, []
        self._saw(True)
        available = {m.model for m in response.models if m.model}
        short = {name.removesuffix(":latest") for name in available}
        return True, [m for m in models if m not in available and m.removesuffix(":latest") not in short]


async def _empty() -> AsyncIterator[Any]:
    return
    yield  # pragma: no cover


class Embedder:
    """Turns texts into unit vectors with one model: batching and bounded concurrency live here.
    `prompts`: the instructions put before passages and questions, chosen by the caller
    (core/embed_prompts.py); the gateway is sent the finished texts, whatever its server."""

    def __init__(
        self,
        gateway: ModelGateway,
        model: str,
        *,
        prompts: EmbedPrompts,
        batch_size: int = 32,
        concurrency: int = 2,
        turns: EmbedTurns | None = None,
    ):
        self.gateway = gateway
        self.model = model
        self.prompts = prompts
        self.batch_size = batch_size
        self.concurrency = concurrency
        self._semaphore = asyncio.Semaphore(concurrency)
        # (shared by every embedder of this model server: questions go before a sync's passages)
        self.turns = turns or EmbedTurns.of(gateway)
        self._dimension: int | None = None

    async def dimension(self) -> int:
        """Asked of the model itself, never assumed."""
        if self._dimension is None:
            vectors = await self.embed(["dimension probe"])
            self._dimension = int(vectors.shape[1])
        return self._dimension

    async def embed(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray:
        """Notes' passages by default; `query=True` for what a user asks. Each is sent with its
        instruction in front (`prompts`), when there is one."""
        if not texts:
            return np.zeros((0, self._dimension or 0), dtype=np.float32)
        prompt = self.prompts.query if query else self.prompts.document
        if prompt:
            texts = [prompt + text for text in texts]
        if query:
            async with self.turns.question():
                results = await self._gathered(
                    [self._call(texts[i : i + self.batch_size]) for i in range(0, len(texts), self.batch_size)]
                )
        else:
            results = await self._passages(texts)
        matrix = np.asarray([v for batch in results for v in batch], dtype=np.float32)
        if self._dimension is None:
            self._dimension = int(matrix.shape[1])
        elif matrix.shape[1] != self._dimension:
            raise OllamaFailed(
                f"'{self.model}' returned {matrix.shape[1]}-d vectors, expected {self._dimension}",
                "The model changed under the same name; run `vask index` to rebuild.",
            )
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        unit: np.ndarray = matrix / norms
        return unit

    async def _call(self, batch: Sequence[str]) -> list[list[float]]:
        async with self._semaphore:
            return await self.gateway.embed(self.model, batch)

    async def _passages(self, texts: Sequence[str]) -> list[list[list[float]]]:
        """Notes' passages in calls of `batch_size`, `concurrency` at a time, each when its turn
        comes (adapters/embed_turns.py: smaller and one at a time while questions are asked)."""
        parts: dict[int, list[list[float]]] = {}
        taken = 0

        async def worker() -> None:
            nonlocal taken
            while taken < len(texts):
                async with self._semaphore, self.turns.passages(self.batch_size) as turn:
                    if taken >= len(texts):
                        return
                    start = taken
                    end = taken = min(len(texts), start + turn.size)
                    parts[start] = await self.gateway.embed(self.model, texts[start:end])
                    turn.sent = end - start

        calls = -(-len(texts) // self.batch_size)
        await self._gathered([worker() for _ in range(min(self.concurrency, calls))])
        return [parts[start] for start in sorted(parts)]

    @staticmethod
    async def _gathered(calls: list[Awaitable[T]]) -> list[T]:
        tasks = [asyncio.ensure_future(call) for call in calls]
        try:
            return list(await asyncio.gather(*tasks))
        except BaseException:
            for task in tasks:  # one call failed for good: stop the others instead of orphaning them
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
