"""The OpenAI-compatible API (what LM Studio, llama-server and vLLM serve) over the same fake models as
tests/fake_ollama.py: `/v1/models`, `/v1/embeddings`, `/v1/chat/completions` (server-sent events when
`"stream": true`, ending `data: [DONE]`), OpenAI's error shape, an optional API key, and a scripted 429
with Retry-After. Served by the fake Ollama's own app, so one fake answers both APIs: its URL + "/v1"."""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from aiohttp import web

from tests.fake_ollama import embed_text, extractive_answer

if TYPE_CHECKING:
    from tests.fake_ollama import FakeOllama


def _error(status: int, message: str, kind: str) -> web.Response:
    return web.json_response({"error": {"message": message, "type": kind, "code": None}}, status=status)


def add_openai_routes(app: web.Application, fake: FakeOllama) -> None:
    async def authorized(request: web.Request) -> web.Response | None:
        if fake.openai_api_key and request.headers.get("Authorization") != f"Bearer {fake.openai_api_key}":
            return _error(401, "Incorrect API key provided.", "invalid_request_error")
        if fake.rate_limit_next > 0:
            fake.rate_limit_next -= 1
            response = _error(429, "Rate limit reached.", "rate_limit_error")
            response.headers["Retry-After"] = str(fake.retry_after)
            return response
        return None

    async def models(request: web.Request) -> web.Response:
        refused = await authorized(request)
        if refused is not None:
            return refused
        names = [*fake.embed_models, *sorted(fake.chat_models)]
        return web.json_response(
            {"object": "list", "data": [{"id": n, "object": "model", "owned_by": "fake"} for n in names]}
        )

    async def admitted(request: web.Request, known: Collection[str]) -> tuple[dict[str, Any], web.Response | None]:
        """The request's body, or the error the server answers first: the key, the model, a failure."""
        refused = await authorized(request)
        if refused is not None:
            return {}, refused
        body = await request.json()
        model = str(body.get("model", ""))
        if model not in known:
            return body, _error(404, f"The model `{model}` does not exist.", "invalid_request_error")
        given = body.get("input", body.get("messages"))
        if await fake._maybe_fail(given) is not None:
            if fake.echo_errors:  # (as FastAPI answers a request its pydantic model refuses)
                detail = [{"type": "value_error", "loc": ["body"], "msg": "invalid", "input": given}]
                fake.error_bodies.append(json.dumps(detail, ensure_ascii=False))
                return body, web.json_response({"detail": detail}, status=422)
            return body, _error(500, "fake failure", "server_error")
        return body, None

    async def embeddings(request: web.Request) -> web.Response:
        body, refused = await admitted(request, fake.embed_models)
        if refused is not None:
            return refused
        model = str(body["model"])
        inputs = body.get("input", "")
        texts = [inputs] if isinstance(inputs, str) else list(inputs)
        fake.embed_calls += 1
        fake.embed_inputs += len(texts)
        fake.embedded_texts.extend(texts)
        dimension = fake.embed_models[model]
        data = [{"object": "embedding", "index": i, "embedding": embed_text(t, dimension)} for i, t in enumerate(texts)]
        return web.json_response({"object": "list", "model": model, "data": data[::-1]})  # (order by index, not place)

    async def chat(request: web.Request) -> web.StreamResponse:
        body, refused = await admitted(request, fake.chat_models)
        if refused is not None:
            return refused
        model = str(body["model"])
        fake.chat_calls += 1
        fake.chat_requests.append(body)
        answer = fake.chat_reply if fake.chat_reply is not None else extractive_answer(body.get("messages", []))
        created = int(time.time())
        if not body.get("stream"):
            message = {"role": "assistant", "content": answer}
            return web.json_response(
                {
                    "object": "chat.completion",
                    "created": created,
                    "model": model,
                    "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                }
            )
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        try:
            for piece in re.findall(r"\S+\s*", answer):
                chunk = {
                    "object": "chat.completion.chunk",
                    "created": created,
                    "model": model,
                    "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}],
                }
                await response.write(f"data: {json.dumps(chunk)}\n\n".encode())
                if fake.fail_mid_answer:
                    error = {"error": {"message": fake.error_text(body.get("messages")), "type": "server_error"}}
                    await response.write(f"data: {json.dumps(error)}\n\n".encode())
                    await response.write_eof()
                    return response
                if fake.token_delay:
                    await asyncio.sleep(fake.token_delay)
            await response.write(b"data: [DONE]\n\n")
            await response.write_eof()
            fake.chat_streams_completed += 1
        except (ConnectionResetError, asyncio.CancelledError):
            fake.chat_streams_cancelled += 1
            raise
        return response

    app.router.add_get("/v1/models", models)
    app.router.add_post("/v1/embeddings", embeddings)
    app.router.add_post("/v1/chat/completions", chat)


def openai_settings(fake_url: str) -> dict[str, Any]:
    """Settings that make vask speak the OpenAI-compatible API to the fake (for load_settings)."""
    return {"provider": "openai", "openai_base_url": f"{fake_url}/v1"}
