"""The ASGI-in-aiohttp bridge (web/asgi.py) that carries the MCP door's Streamable HTTP in `vask serve`,
held to the ASGI HTTP spec with small applications of its own: the body as it arrives, the answer as
it is sent (repeated headers kept, streamed parts in order), `http.disconnect` once a client leaves
(and the application let to end by itself, not cancelled), a failure said in vask's JSON error shape,
an oversized body refused before the application sees it."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from vask_server.web.asgi import answer_with
from vask_server.web.middleware import errors_middleware


class Recorder:
    """An ASGI application whose behaviour each test sets, recording what it received."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self.scope: dict[str, Any] = {}
        self.ended = asyncio.Event()
        self.cancelled = False

    async def echo(self, scope: Any, receive: Any, send: Any) -> None:
        self.scope = dict(scope)
        body = b""
        while True:
            message = await receive()
            self.messages.append(message)
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = [(b"content-type", b"application/json"), (b"set-cookie", b"a=1"), (b"set-cookie", b"b=2")]
        await send({"type": "http.response.start", "status": 201, "headers": headers})
        await send({"type": "http.response.body", "body": json.dumps({"got": len(body)}).encode()})
        self.ended.set()

    async def stream_until_gone(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            await receive()  # (the empty body)
            await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
            await send({"type": "http.response.body", "body": b"first\n", "more_body": True})
            await send({"type": "http.response.body", "body": b"second\n", "more_body": True})
            self.messages.append(await receive())  # waits until the client leaves
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        finally:
            self.ended.set()


async def _client(app_fn: Any, max_body: int = 1000) -> TestClient[Any, Any]:
    async def handle(request: web.Request) -> web.StreamResponse:
        return await answer_with(app_fn, request, max_body=max_body, scope_extra={"vask.device": "laptop"})

    app = web.Application(middlewares=[errors_middleware])
    app.router.add_route("*", "/asgi", handle)
    client = TestClient(TestServer(app, host="127.0.0.1"))
    await client.start_server()
    return client


async def test_the_body_arrives_whole_and_the_answer_keeps_status_and_repeated_headers():
    recorder = Recorder()
    client = await _client(recorder.echo)
    try:

        async def chunks() -> Any:
            for part in (b"a" * 300, b"b" * 300, b"c" * 100):
                yield part

        response = await client.post("/asgi?x=1", data=chunks(), headers={"X-Test": "yes"})
        assert response.status == 201
        assert await response.json() == {"got": 700}
        assert response.headers.getall("Set-Cookie") == ["a=1", "b=2"]
        assert not recorder.messages[-1]["more_body"] and all(m["type"] == "http.request" for m in recorder.messages)
        scope = recorder.scope
        assert (scope["method"], scope["path"], scope["query_string"]) == ("POST", "/asgi", b"x=1")
        assert (b"x-test", b"yes") in [(k.lower(), v) for k, v in scope["headers"]]
        assert scope["vask.device"] == "laptop" and scope["client"][0] == "127.0.0.1"
    finally:
        await client.close()


async def test_a_stream_goes_out_as_sent_and_a_client_that_leaves_is_heard_as_a_disconnect():
    recorder = Recorder()
    client = await _client(recorder.stream_until_gone)
    try:
        response = await client.get("/asgi")
        assert await response.content.readline() == b"first\n"
        assert await response.content.readline() == b"second\n"
        response.close()  # the client leaves mid-stream
        await asyncio.wait_for(recorder.ended.wait(), 10)
        assert recorder.messages == [{"type": "http.disconnect"}]
        assert not recorder.cancelled  # (it ended by itself, as an ASGI server lets it)
    finally:
        await client.close()


async def test_a_failing_application_is_a_json_error_and_a_silent_one_too():
    async def fails(scope: Any, receive: Any, send: Any) -> None:
        raise ValueError("boom with a secret")

    async def silent(scope: Any, receive: Any, send: Any) -> None:
        await receive()

    for app_fn in (fails, silent):
        client = await _client(app_fn)
        try:
            response = await client.post("/asgi", data=b"{}")
            assert response.status == 500
            body = await response.json()
            assert body["error"]["code"] == "internal" and "secret" not in json.dumps(body)
        finally:
            await client.close()


async def test_a_body_over_the_limit_is_refused_before_the_application_reads_it():
    recorder = Recorder()
    client = await _client(recorder.echo, max_body=100)
    try:
        response = await client.post("/asgi", data=b"x" * 101)
        assert response.status == 413 and (await response.json())["error"]["code"] == "payload_too_large"
        assert recorder.messages == []

        async def chunks() -> Any:  # (no length said: counted as it comes)
            for _ in range(5):
                yield b"y" * 60

        response = await client.post("/asgi", data=chunks())
        assert response.status == 413
    finally:
        await client.close()


async def test_a_server_keeps_answering_after_clients_leave_mid_stream():
    recorder = Recorder()
    client = await _client(recorder.stream_until_gone)
    try:
        for _ in range(5):
            response = await client.get("/asgi")
            await response.content.readline()
            response.close()
        async with aiohttp.ClientSession() as session, session.get(client.make_url("/asgi")) as again:
            assert await again.content.readline() == b"first\n"
    finally:
        await client.close()
