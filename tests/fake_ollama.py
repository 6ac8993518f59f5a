"""A small, real HTTP server that speaks enough of Ollama's API for vask's tests.

The official `ollama` client talks to it over 127.0.0.1, so the real client code runs. Embeddings
are deterministic and similar texts land near each other (signed hashing of word stems); the chat
model quotes the source sentence that shares most words with the question and cites its `[Title]`.
Tests script it through attributes (fail the next N calls, slow down, forget a model) and read its
counters (how many texts were embedded). Run it alone for the plugin's browser test:
`python -m tests.fake_ollama --port 11555`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import math
import random
import re
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web

EMBED_MODEL = "fake-embed"
CHAT_MODEL = "fake-chat"
DIMENSION = 96

_WORD_RE = re.compile(r"[^\W_]+", re.UNICODE)
_STOP = frozenset(
    "a an the and or of to in on for with about what which who how when where why is are was were be been "
    "do does did have has had i my me we our you your it its this that these those from at by as not no "
    "into than then there their they them he she his her so if but can could would should will just".split()
)


def stem(word: str) -> str:
    word = word.lower()
    for suffix in ("ingly", "edly", "ing", "ed", "es", "s", "ly"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def content_words(text: str) -> list[str]:
    return [stem(w) for w in _WORD_RE.findall(text) if w.lower() not in _STOP]


def embed_text(text: str, dimension: int = DIMENSION) -> list[float]:
    vector = [0.0] * dimension
    words = content_words(text)
    for word in words:
        digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
        index = int.from_bytes(digest[:4], "little") % dimension
        sign = 1.0 if digest[4] & 1 else -1.0
        vector[index] += sign
    vector[0] += 0.05  # never the zero vector, even for text with no words
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    return [v / norm for v in vector]


def extractive_answer(messages: list[dict[str, Any]]) -> str:
    """Quotes the source sentence sharing most words with the question (the last user message),
    citing the title on the nearest `Source:` line above it."""
    question = next((m["content"] for m in reversed(messages) if m.get("role") == "user"), "")
    context = "\n".join(m.get("content", "") for m in messages if m.get("role") == "system")
    wanted = set(content_words(question))
    best: tuple[int, str, str] = (0, "", "")
    title = ""
    for line in context.splitlines():
        source = re.match(r"^Source:\s*(.+)$", line)
        if source:
            title = source.group(1).strip()
            continue
        for sentence in re.split(r"(?<=[.!?])\s+", line.strip()):
            overlap = len(wanted & set(content_words(sentence)))
            if overlap > best[0] and title:
                best = (overlap, sentence.strip(), title)
    if not best[0]:
        return "Your notes don't say."
    return f"According to [{best[2]}], {best[1]}"


@dataclass
class FakeOllama:
    embed_models: dict[str, int] = field(default_factory=lambda: {EMBED_MODEL: DIMENSION})
    chat_models: set[str] = field(default_factory=lambda: {CHAT_MODEL})
    fail_next: int = 0  # answer this many embed/chat calls with HTTP 500
    fail_rate: float = 0.0  # and this share of the others (seeded, so runs repeat)
    failures: int = 0
    # A failure's body quotes the request's input, as a pydantic-style server's validation error does
    # (the notes' text, the question): what vask must never repeat. Each such body is kept here.
    echo_errors: bool = False
    error_bodies: list[str] = field(default_factory=list)
    fail_mid_answer: bool = False  # a chat stream sends one token, then an error line that quotes the input
    # (path, Authorization header or "") of every request: which secret reached which server
    authorizations: list[tuple[str, str]] = field(default_factory=list)
    delay: float = 0.0  # seconds added to every embed/chat call
    slow_next: int = 0  # this many embed/chat calls take `slow_seconds` (to outlast a client timeout)
    slow_seconds: float = 0.0
    token_delay: float = 0.0  # seconds between streamed chat tokens
    # A chat stream that starts while `<hold_dir>/hold` exists sends its first token, then waits until
    # `<hold_dir>/release` exists (a client that saw that token makes it) and writes `<hold_dir>/outcome`:
    # "released", or "timed out" after HOLD_LIMIT seconds. A test tells a stream from an answer sent whole.
    hold_dir: str | None = None
    # The same over HTTP (for tests that reach the fake): POST /fake/control {"hold_next": true} holds the next
    # chat stream after its first token until POST /fake/release.
    hold_next: bool = False
    _releases: list[asyncio.Event] = field(default_factory=list)
    # Embed calls of more than 2 texts (a sync's, not a search's question), from this one on (1-based),
    # wait until `released` is set: a first sync held mid-way, for a test to look at.
    hold_from_call: int | None = None
    released: threading.Event = field(default_factory=threading.Event)
    _sync_calls: int = 0
    chat_reply: str | None = None  # a fixed answer instead of the extractive one
    embed_calls: int = 0
    embed_inputs: int = 0
    embedded_texts: list[str] = field(default_factory=list)
    chat_calls: int = 0
    chat_requests: list[dict[str, Any]] = field(default_factory=list)
    chat_streams_cancelled: int = 0
    chat_streams_completed: int = 0
    # What /api/pull can download: name -> (kind "embed" or "chat", size in bytes); a pulled model is served after
    library: dict[str, tuple[str, int]] = field(
        default_factory=lambda: {"fake-chat-2": ("chat", 3_000_000), "fake-embed-2": ("embed", 1_000_000)}
    )
    pull_step_delay: float = 0.0  # seconds between a pull's progress lines
    pull_fail_after: int | None = None  # end a pull's stream after this many lines, unfinished
    pull_drop: bool = False  # and then drop the connection instead of ending the stream (Ollama killed)
    pulls: list[str] = field(default_factory=list)
    # The OpenAI-compatible API (tests/fake_openai.py): a key it requires, and 429s it answers first
    openai_api_key: str = ""
    rate_limit_next: int = 0
    retry_after: float = 0.2

    def __post_init__(self) -> None:
        self._rng = random.Random(1234)

    def reset_counters(self) -> None:
        self.embed_calls = self.embed_inputs = self.chat_calls = 0
        self.embedded_texts.clear()
        self.chat_requests.clear()

    def app(self) -> web.Application:
        @web.middleware
        async def record(request: web.Request, handler: Any) -> web.StreamResponse:
            self.authorizations.append((request.path, request.headers.get("Authorization", "")))
            response: web.StreamResponse = await handler(request)
            return response

        app = web.Application(middlewares=[record])
        app.router.add_get("/", self._root)
        app.router.add_get("/api/version", self._version)
        app.router.add_get("/api/tags", self._tags)
        app.router.add_get("/api/ps", self._ps)
        app.router.add_post("/api/show", self._show)
        app.router.add_post("/api/embed", self._embed)
        app.router.add_post("/api/embeddings", self._embeddings)
        app.router.add_post("/api/chat", self._chat)
        app.router.add_post("/api/pull", self._pull)
        app.router.add_get("/fake/stats", self._stats)
        app.router.add_post("/fake/control", self._control)
        app.router.add_post("/fake/release", self._release_stream)
        from tests.fake_openai import add_openai_routes  # (it imports this module)

        add_openai_routes(app, self)
        return app

    async def _root(self, _: web.Request) -> web.Response:
        return web.Response(text="Ollama is running")

    async def _version(self, _: web.Request) -> web.Response:
        return web.json_response({"version": "0.12.0-fake"})

    async def _ps(self, _: web.Request) -> web.Response:
        return web.json_response({"models": []})

    async def _maybe_fail(self, given: Any = None) -> web.Response | None:
        """A scripted failure (HTTP 500), or None. `given`: the request's input, which an echoing
        failure quotes."""
        if self.delay:
            await asyncio.sleep(self.delay)
        if self.slow_next > 0:
            self.slow_next -= 1
            await asyncio.sleep(self.slow_seconds)
        if self.fail_next > 0 or (self.fail_rate and self._rng.random() < self.fail_rate):
            self.fail_next = max(0, self.fail_next - 1)
            self.failures += 1
            return web.json_response({"error": self.error_text(given)}, status=500)
        return None

    def error_text(self, given: Any) -> str:
        if not self.echo_errors:
            return "fake failure"
        text = f"cannot process input {json.dumps(given, ensure_ascii=False)}"
        self.error_bodies.append(text)
        return text

    @staticmethod
    def _missing(model: str) -> web.Response:
        return web.json_response({"error": f"model '{model}' not found, try pulling it first"}, status=404)

    async def _tags(self, _: web.Request) -> web.Response:
        names = [*self.embed_models, *sorted(self.chat_models)]
        return web.json_response(
            {"models": [{"name": f"{n}:latest", "model": f"{n}:latest", "size": 1, "digest": "0"} for n in names]}
        )

    async def _show(self, request: web.Request) -> web.Response:
        body = await request.json()
        model = str(body.get("model") or body.get("name") or "").removesuffix(":latest")
        if model in self.embed_models:
            info = {"general.architecture": "bert", "bert.embedding_length": self.embed_models[model]}
            return web.json_response({"modelfile": "", "model_info": info, "capabilities": ["embedding"]})
        if model in self.chat_models:
            return web.json_response({"modelfile": "", "model_info": {}, "capabilities": ["completion"]})
        return self._missing(model)

    async def _embed(self, request: web.Request) -> web.Response:
        body = await request.json()
        model = str(body.get("model", "")).removesuffix(":latest")
        if model not in self.embed_models:
            return self._missing(model)
        failure = await self._maybe_fail(body.get("input"))
        if failure is not None:
            return failure
        inputs = body.get("input", "")
        texts = [inputs] if isinstance(inputs, str) else list(inputs)
        if len(texts) > 2 and self.hold_from_call is not None:
            self._sync_calls += 1
            if self._sync_calls >= self.hold_from_call:
                await asyncio.to_thread(self.released.wait)
        self.embed_calls += 1
        self.embed_inputs += len(texts)
        self.embedded_texts.extend(texts)
        dimension = self.embed_models[model]
        return web.json_response({"model": model, "embeddings": [embed_text(t, dimension) for t in texts]})

    async def _embeddings(self, request: web.Request) -> web.Response:
        body = await request.json()
        model = str(body.get("model", "")).removesuffix(":latest")
        if model not in self.embed_models:
            return self._missing(model)
        self.embed_calls += 1
        self.embed_inputs += 1
        return web.json_response({"embedding": embed_text(str(body.get("prompt", "")), self.embed_models[model])})

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        model = str(body.get("model", "")).removesuffix(":latest")
        if model not in self.chat_models:
            return self._missing(model)
        failure = await self._maybe_fail(body.get("messages"))
        if failure is not None:
            return failure
        self.chat_calls += 1
        self.chat_requests.append(body)
        answer = self.chat_reply if self.chat_reply is not None else extractive_answer(body.get("messages", []))
        created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        if body.get("stream") is False:
            return web.json_response(
                {
                    "model": model,
                    "created_at": created,
                    "message": {"role": "assistant", "content": answer},
                    "done": True,
                    "done_reason": "stop",
                }
            )
        response = web.StreamResponse(headers={"Content-Type": "application/x-ndjson"})
        await response.prepare(request)
        hold = self._hold_for_stream()
        try:
            for number, piece in enumerate(re.findall(r"\S+\s*", answer)):
                if number == 1 and hold is not None:
                    await hold()
                line = {
                    "model": model,
                    "created_at": created,
                    "message": {"role": "assistant", "content": piece},
                    "done": False,
                }
                await response.write((json.dumps(line) + "\n").encode())
                if self.fail_mid_answer:
                    error = {"error": self.error_text(body.get("messages"))}
                    await response.write((json.dumps(error) + "\n").encode())
                    await response.write_eof()
                    return response
                if self.token_delay:
                    await asyncio.sleep(self.token_delay)
            final = {
                "model": model,
                "created_at": created,
                "message": {"role": "assistant", "content": ""},
                "done": True,
                "done_reason": "stop",
            }
            await response.write((json.dumps(final) + "\n").encode())
            await response.write_eof()
            self.chat_streams_completed += 1
        except (ConnectionResetError, asyncio.CancelledError):
            self.chat_streams_cancelled += 1
            raise
        return response

    async def _pull(self, request: web.Request) -> web.StreamResponse:
        """Ollama's pull: NDJSON progress lines, then {"status": "success"}; a name the library lacks gets an
        {"error"} line after the manifest step, as Ollama sends it (HTTP 200, the stream already begun)."""
        body = await request.json()
        name = str(body.get("model") or body.get("name") or "").removesuffix(":latest")
        self.pulls.append(name)
        failure = await self._maybe_fail()
        if failure is not None:
            return failure
        response = web.StreamResponse(headers={"Content-Type": "application/x-ndjson"})
        await response.prepare(request)
        lines: list[dict[str, Any]] = [{"status": "pulling manifest"}]
        entry = self.library.get(name)
        if entry is None:
            lines.append({"error": "pull model manifest: file does not exist"})
        else:
            size = entry[1]
            digest = "sha256:" + hashlib.sha256(name.encode()).hexdigest()
            lines += [
                {"status": f"pulling {digest[7:19]}", "digest": digest, "total": size, "completed": size * step // 4}
                for step in range(5)
            ]
            lines += [{"status": "verifying sha256 digest"}, {"status": "writing manifest"}, {"status": "success"}]
        for number, line in enumerate(lines):
            if self.pull_fail_after is not None and number >= self.pull_fail_after:
                if self.pull_drop and request.transport is not None:
                    request.transport.abort()  # (the chunked body never ends: the client's read fails)
                return response
            await response.write((json.dumps(line) + "\n").encode())
            if self.pull_step_delay:
                await asyncio.sleep(self.pull_step_delay)
        if entry is not None:
            if entry[0] == "embed":
                self.embed_models[name] = DIMENSION
            else:
                self.chat_models.add(name)
        await response.write_eof()
        return response

    def _hold_for_stream(self) -> Callable[[], Awaitable[None]] | None:
        """What a chat stream starting now waits on after its first token, if anything."""
        if self.hold_dir and (Path(self.hold_dir) / "hold").exists():
            folder = Path(self.hold_dir)
            return lambda: _held(folder)
        if self.hold_next:
            self.hold_next = False
            released = asyncio.Event()
            self._releases.append(released)

            async def wait() -> None:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(released.wait(), HOLD_LIMIT)

            return wait
        return None

    async def _release_stream(self, _: web.Request) -> web.Response:
        for event in self._releases:
            event.set()
        self._releases.clear()
        return web.json_response({"ok": True})

    async def _stats(self, _: web.Request) -> web.Response:
        return web.json_response(
            {
                "embed_calls": self.embed_calls,
                "embed_inputs": self.embed_inputs,
                "chat_calls": self.chat_calls,
                "chat_streams_cancelled": self.chat_streams_cancelled,
            }
        )

    async def _control(self, request: web.Request) -> web.Response:
        body = await request.json()
        for key in ("fail_next", "fail_rate", "delay", "token_delay", "chat_reply", "pull_step_delay", "hold_next"):
            if key in body:
                setattr(self, key, body[key])
        if "chat_models" in body:
            self.chat_models = {str(name) for name in body["chat_models"]}
        if "embed_models" in body:
            self.embed_models = {str(k): int(v) for k, v in body["embed_models"].items()}
        if body.get("reset"):
            self.reset_counters()
        return web.json_response({"ok": True})


HOLD_LIMIT = 60.0  # seconds a held stream waits for its release


async def _held(hold: Path) -> None:
    deadline = time.monotonic() + HOLD_LIMIT
    while not (hold / "release").exists() and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    (hold / "outcome").write_text("released" if (hold / "release").exists() else "timed out")
    for name in ("hold", "release"):
        (hold / name).unlink(missing_ok=True)


def require_header(name: str, value: str) -> Any:
    """Middleware: a reverse proxy in front of Ollama that wants this header (401 without it)."""

    @web.middleware
    async def check(request: web.Request, handler: Any) -> web.StreamResponse:
        if request.headers.get(name) != value:
            return web.json_response({"error": "proxy: authentication required"}, status=401)
        response: web.StreamResponse = await handler(request)
        return response

    return check


async def _serve(
    port: int,
    delay: float = 0.0,
    *,
    host: str = "127.0.0.1",
    ssl_context: Any = None,
    header: tuple[str, str] | None = None,
    token_delay: float = 0.0,
    hold_dir: str | None = None,
) -> None:
    fake = FakeOllama(delay=delay, token_delay=token_delay, hold_dir=hold_dir)
    app = fake.app()
    if header:
        app.middlewares.append(require_header(*header))
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, host, port, ssl_context=ssl_context)
    await site.start()
    actual = runner.addresses[0][1]
    print(f"listening on {'https' if ssl_context else 'http'}://{host}:{actual}", flush=True)
    await asyncio.Event().wait()


def main() -> None:
    parser = argparse.ArgumentParser(description="A fake Ollama server for tests.")
    parser.add_argument("--port", type=int, default=11555)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds added to every embed/chat call")
    parser.add_argument("--token-delay", type=float, default=0.0, help="seconds between streamed chat tokens")
    parser.add_argument("--tls-cert", default=None, help="serve https with this PEM certificate (and --tls-key)")
    parser.add_argument("--tls-key", default=None)
    parser.add_argument("--require-header", default=None, help="'Name: value' a proxy in front of it wants")
    parser.add_argument(
        "--hold-dir", default=None, help="hold a chat stream after its first token (FakeOllama.hold_dir)"
    )
    args = parser.parse_args()
    ssl_context = None
    if args.tls_cert:
        import ssl

        ssl_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ssl_context.load_cert_chain(args.tls_cert, args.tls_key)
    header = None
    if args.require_header:
        name, _, value = args.require_header.partition(":")
        header = (name.strip(), value.strip())
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(
            _serve(
                args.port,
                args.delay,
                host=args.host,
                ssl_context=ssl_context,
                header=header,
                token_delay=args.token_delay,
                hold_dir=args.hold_dir,
            )
        )


if __name__ == "__main__":
    main()
