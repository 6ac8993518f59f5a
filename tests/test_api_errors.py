"""Every error the server sends is documented where a client looks for it: in the OpenAPI responses
of the endpoint that sent it and in docs/REFERENCE.md's table, both built from or held to the error
classes. Each code is provoked here for real, and each documented (status, code) must be one the
endpoint was seen to send, so the documents can neither miss a code nor claim one."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from tests.web_helpers import Api, running_app
from vask_server.adapters.gateway import PullProgress
from vask_server.adapters.token import add_device
from vask_server.core.ratelimit import FailureLimiter
from vask_server.errors import http_errors
from vask_server.mcp.http import McpMount
from vask_server.services import proposals as proposals_service
from vask_server.web import proposal_routes, routes
from vask_server.web.keys import SERVICES
from vask_server.web.middleware import errors_middleware
from vask_server.web.openapi import openapi_document

REFERENCE = (Path(__file__).resolve().parent.parent / "docs" / "REFERENCE.md").read_text("utf-8")
DOCUMENT = openapi_document()
OPERATIONS = [(path, method) for path, item in DOCUMENT["paths"].items() for method in item]
STREAMED = "stream"  # the status-like key of an error event in /v1/ask's stream


class Seen:
    """Errors provoked, by operation: {(path, method): {(status, code)}}."""

    def __init__(self) -> None:
        self.by_operation: dict[tuple[str, str], set[tuple[int | str, str]]] = {}

    async def expect(self, api: Api, method: str, path: str, code: str, *, token: bool = True, **kwargs: Any) -> None:
        headers = {**(api.auth if token else {}), **kwargs.pop("headers", {})}
        response = await api.client.request(method, path, headers=headers, **kwargs)
        body = await response.json()
        assert body["error"]["code"] == code, (method, path, response.status, body)
        assert body["error"]["message"], body
        self.by_operation.setdefault((path, method.lower()), set()).add((response.status, code))

    async def expect_event(self, api: Api, body: dict[str, Any], code: str, path: str = "/v1/ask") -> None:
        response = await api.post(path, body)
        assert response.status == 200, await response.text()
        events = [json.loads(line) for line in (await response.text()).splitlines() if line.strip()]
        assert events[-1]["type"] == "error" and events[-1]["code"] == code, events[-1]
        self.by_operation.setdefault((path, "post"), set()).add((STREAMED, code))


PROPOSAL_POSTS = (
    "/v1/proposals",
    "/v1/proposals/link",
    "/v1/proposals/apply-all",
    "/v1/proposals/{id}/apply",
    "/v1/proposals/{id}/reject",
    "/v1/proposals/{id}/undo",
)


async def proposal_errors(
    seen: Seen, api: Api, vault: Path, phone: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each refusal of /v1/proposals, provoked (the bodies and lengths are checked above with the others)."""

    async def proposed(body: dict[str, Any], path: str = "/v1/proposals/link") -> str:
        response = await api.post(path, body)
        assert response.status == 201, await response.text()
        proposal_id: str = (await response.json())["proposal"]["id"]
        return proposal_id

    def op(proposal_id: str, action: str) -> str:
        return f"/v1/proposals/{proposal_id}/{action}"

    async def decided(path: str, code: str, **kwargs: Any) -> None:
        await seen.expect(api, "POST", path, code, json={}, **kwargs)
        key = (path.split("/")[-1], "post")
        seen.by_operation.setdefault((f"/v1/proposals/{{id}}/{key[0]}", "post"), set()).update(
            seen.by_operation.pop((path, "post"))
        )

    await seen.expect(api, "GET", "/v1/proposals", "bad_request", params={"state": "someday"})
    await seen.expect(api, "GET", "/v1/proposals/{id}", "not_found")
    missing = {"kind": "edit", "path": "Nowhere/Missing.md", "content": "x"}
    await seen.expect(api, "POST", "/v1/proposals", "not_found", json=missing)
    await seen.expect(api, "POST", "/v1/proposals/link", "not_found", json={"path": SEED, "target": "Gone.md"})
    private = "03 Resources/Private diary.md"
    (vault / private).write_text("---\nvask: exclude\n---\n# Diary\n\nsourdough\n", encoding="utf-8")
    await seen.expect(api, "POST", "/v1/proposals", "note_excluded", json={"path": private, "content": "x"})
    await seen.expect(api, "POST", "/v1/proposals/link", "note_excluded", json={"path": SEED, "target": private})
    monkeypatch.setattr(proposals_service, "MAX_PENDING", 0)
    await seen.expect(
        api, "POST", "/v1/proposals", "queue_full", json={"kind": "create", "path": "N.md", "content": "x"}
    )
    await seen.expect(api, "POST", "/v1/proposals/link", "queue_full", json={"path": SEED, "target": TARGET})
    monkeypatch.setattr(proposals_service, "MAX_PENDING", 500)
    await seen.expect(
        api, "POST", "/v1/proposals/apply-all", "apply_not_allowed", json={"source": "links"}, headers=phone
    )
    for action in ("apply", "reject", "undo"):
        await decided(op("000000000000", action), "not_found")
        await decided(op("000000000000", action), "apply_not_allowed", headers=phone)
    first = await proposed({"path": SEED, "target": TARGET})
    await decided(op(first, "undo"), "proposal_closed")  # nothing applied yet
    assert (await api.post(op(first, "apply"), {})).status == 200
    await decided(op(first, "apply"), "proposal_closed")
    await decided(op(first, "reject"), "proposal_closed")
    seed = vault / SEED
    seed.write_text(seed.read_text("utf-8") + "\nA line of my own.\n", encoding="utf-8")
    await decided(op(first, "undo"), "stale_proposal")  # changed since it was applied
    stale = await proposed({"path": SEED, "target": "Daily/2026-01-05.md"})
    seed.write_text(seed.read_text("utf-8") + "\nAnother.\n", encoding="utf-8")
    await decided(op(stale, "apply"), "stale_proposal")
    excluded_later = await proposed({"path": "Home.md", "target": "Daily/2026-01-05.md"})
    applied = await proposed({"kind": "create", "path": "Later private.md", "content": "# Later\n"}, "/v1/proposals")
    assert (await api.post(op(applied, "apply"), {})).status == 200
    home, later = vault / "Home.md", vault / "Later private.md"
    home.write_text("---\nvask: exclude\n---\n" + home.read_text("utf-8"), encoding="utf-8")
    await decided(op(excluded_later, "apply"), "note_excluded")
    later.write_text("---\nvask: exclude\n---\n# Later\n", encoding="utf-8")
    await decided(op(applied, "undo"), "note_excluded")


SEED = "02 Areas/Cooking/Sourdough starter log.md"
TARGET = "02 Areas/Running/Running log 2026.md"


def declared(path: str, method: str) -> set[tuple[int | str, str]]:
    """The (status, code) pairs the OpenAPI document gives an operation, and its stream's codes."""
    operation = DOCUMENT["paths"][path][method]
    pairs: set[tuple[int | str, str]] = set()
    for status, response in operation["responses"].items():
        if int(status) < 400:
            continue
        narrowed = response["content"]["application/json"]["schema"]["allOf"][1]
        pairs |= {(int(status), code) for code in narrowed["properties"]["error"]["properties"]["code"]["enum"]}
    for content in operation["responses"].get("200", {}).get("content", {}).values():
        if "code" in content["schema"].get("properties", {}):
            pairs |= {(STREAMED, code) for code in content["schema"]["properties"]["code"]["enum"]}
    return pairs


def documented_codes() -> set[tuple[str, int]]:
    section = REFERENCE.split("\n## HTTP API\n", 1)[1].split("\n## ", 1)[0]
    return {(code, int(status)) for code, status in re.findall(r"^\| `(\w+)` \| (\d{3}) \|", section, re.M)}


async def test_every_error_the_server_sends_is_documented(fake_ollama, vault, settings_for, tmp_path, monkeypatch):
    seen = Seen()
    down = {"ollama_host": "http://127.0.0.1:9", "ollama_retries": 0}

    # Before the first index is built (and Ollama down, so that it stays unbuilt)
    async with running_app(settings_for(vault, index_dir=tmp_path / "unbuilt", **down), wait=False) as api:
        await seen.expect(api, "POST", "/v1/search", "not_indexed", json={"query": "sourdough"})
        await seen.expect(api, "GET", "/v1/related", "not_indexed", params={"path": "Daily/2026-02-14.md"})
        await seen.expect_event(api, {"question": "sourdough"}, "not_indexed")

    limiter = FailureLimiter()
    async with running_app(settings_for(vault, ollama_retries=0), mounts=[McpMount()], limiter=limiter) as api:
        for path, method in OPERATIONS:
            if method == "options":
                preflight = {"Access-Control-Request-Method": "POST"}
                await seen.expect(
                    api, "OPTIONS", path, "forbidden_origin", headers={**preflight, "Origin": "https://evil.example"}
                )
                await seen.expect(api, "OPTIONS", path, "forbidden_host", headers={**preflight, "Host": "evil.example"})
                continue
            await seen.expect(api, method, path, "unauthorized", token=False, headers={"Authorization": "Bearer no"})
            await seen.expect(api, method, path, "forbidden_host", headers={"Host": "evil.example"})
            limiter._failures.clear()  # (one wrong token an endpoint, more than the limit: it is tested below)
        posts = ("/v1/search", "/v1/ask", "/v1/reindex", "/v1/index/first", "/v1/models/pull", *PROPOSAL_POSTS)
        for path in posts:
            await seen.expect(api, "POST", path, "bad_request", data="{broken")
            await seen.expect(api, "POST", path, "payload_too_large", data=b"x" * 1_100_000)
        for method in ("POST", "GET", "DELETE"):  # the MCP door's own checks, before the MCP SDK answers
            await seen.expect(api, method, "/mcp", "forbidden_origin", headers={"Origin": "https://evil.example"})
            await seen.expect(api, method, "/mcp", "payload_too_large", data=b"x" * 1_100_000)
        await seen.expect(api, "POST", "/v1/search", "scope_not_found", json={"query": "in [[Nowhere at all]]?"})
        await seen.expect(api, "POST", "/v1/ask", "scope_not_found", json={"question": "pricing #no-such-tag"})
        await seen.expect(api, "GET", "/v1/related", "bad_request")
        await seen.expect(api, "GET", "/v1/related", "not_found", params={"path": "Nowhere/Missing.md"})
        fake_ollama.fake.fail_next = 1  # the query's embedding fails with HTTP 500, no retries left
        await seen.expect(api, "POST", "/v1/search", "ollama_error", json={"query": "sourdough"})
        fake_ollama.fake.fail_next = 1
        await seen.expect_event(api, {"question": "sourdough"}, "ollama_error")
        await seen.expect_event(api, {"question": "sourdough starter", "chat_model": "llama9:400b"}, "model_missing")
        await seen.expect(api, "POST", "/v1/models/pull", "bad_request", json={"model": "not a name"})
        other_registry = {"model": "registry.evil.example/ns/m:tag"}
        await seen.expect(api, "POST", "/v1/models/pull", "registry_not_allowed", json=other_registry)
        phone = {"Authorization": f"Bearer {add_device(tmp_path / 'index', 'phone')}"}
        await seen.expect(api, "POST", "/v1/models/pull", "device_not_allowed", json={"model": "x"}, headers=phone)
        await seen.expect_event(api, {"model": "llama9:400b"}, "ollama_error", path="/v1/models/pull")  # (unknown)
        fake_ollama.fake.pull_fail_after = 2  # Ollama stops half-way
        await seen.expect_event(api, {"model": "fake-chat-2"}, "ollama_error", path="/v1/models/pull")
        fake_ollama.fake.pull_fail_after = None
        fake_ollama.fake.fail_next = 1  # Ollama refuses the pull outright (HTTP 500): before the stream begins
        await seen.expect(api, "POST", "/v1/models/pull", "ollama_error", json={"model": "fake-chat-2"})
        await proposal_errors(seen, api, vault, phone, monkeypatch)
        # routing: no such endpoint, no such method (documented once, for the whole API)
        await seen.expect(api, "GET", "/v1/nothing", "not_found")
        await seen.expect(api, "GET", "/v1/search", "method_not_allowed")

        def broken(*_: object) -> Any:
            raise RuntimeError("a bug")

        monkeypatch.setattr(api.client.app[SERVICES].qa, "_ask", broken)
        await seen.expect_event(api, {"question": "sourdough"}, "internal")

        async def pull_then_break(_: str) -> Any:
            yield PullProgress("pulling manifest")
            raise RuntimeError("a bug")

        monkeypatch.setattr(api.client.app[SERVICES].chat_gateway, "pull", pull_then_break)
        await seen.expect_event(api, {"model": "fake-chat-2"}, "internal", path="/v1/models/pull")
        for name in ("_services", "_live", "openapi_document"):
            monkeypatch.setattr(routes, name, broken)
        monkeypatch.setattr(proposal_routes, "_proposals", broken)

        async def mcp_broken(*_: object) -> None:
            raise RuntimeError("a bug")

        monkeypatch.setattr(McpMount, "__call__", mcp_broken)
        for path, method in OPERATIONS:
            if method != "options":
                await seen.expect(api, method, path, "internal", json={})
        monkeypatch.undo()
        # failed token checks from one address, up to the limit: then every request from it waits
        statuses = [
            (await api.client.get("/v1/status", headers={"Authorization": "Bearer guess"})).status for _ in range(21)
        ]
        assert statuses[-1] == 429 and set(statuses) == {401, 429}, statuses
        for path, method in OPERATIONS:
            if method != "options":
                await seen.expect(api, method, path, "too_many_attempts")  # the right token too

    # Ollama down after the index was built: a search falls back to keywords, an answer cannot be written
    async with running_app(settings_for(vault, **down), wait=False) as api:
        assert (await api.search("sourdough starter"))["mode"] == "keyword"
        await seen.expect_event(api, {"question": "sourdough starter"}, "ollama_unavailable")
        await seen.expect(api, "GET", "/v1/models", "ollama_unavailable")
        await seen.expect(api, "POST", "/v1/models/pull", "ollama_unavailable", json={"model": "fake-chat-2"})

    # Ollama gone mid-pull: the connection drops after the first steps
    async with running_app(settings_for(vault, ollama_retries=0), wait=False) as api:
        fake_ollama.fake.pull_fail_after, fake_ollama.fake.pull_drop = 2, True
        await seen.expect_event(api, {"model": "fake-chat-2"}, "ollama_unavailable", path="/v1/models/pull")
        fake_ollama.fake.pull_fail_after, fake_ollama.fake.pull_drop = None, False

    # An OpenAI-compatible server that wants a key and is given a wrong one: it will not list its models
    fake_ollama.fake.openai_api_key = "sk-right"
    try:
        wrong_key = {"provider": "openai", "openai_base_url": f"{fake_ollama.url}/v1", "openai_api_key": "sk-wrong"}
        async with running_app(settings_for(vault, **wrong_key), wait=False) as api:
            await seen.expect(api, "GET", "/v1/models", "ollama_error")
            await seen.expect(api, "POST", "/v1/models/pull", "pull_unsupported", json={"model": "fake-chat-2"})
    finally:
        fake_ollama.fake.openai_api_key = ""

    routing = seen.by_operation.pop(("/v1/nothing", "get")) | seen.by_operation.pop(("/v1/search", "get"))
    assert {code for _, code in routing} <= set(DOCUMENT["components"]["schemas"]["ErrorCode"]["enum"])
    assert all(code in DOCUMENT["info"]["description"] for _, code in routing)
    # each operation documents exactly the errors it was seen to send
    for path, method in OPERATIONS:
        assert declared(path, method) == seen.by_operation.get((path, method), set()), (path, method)
    # every code a client can receive was provoked, and the reference's table has each with its status
    codes = {(cls.code, cls.status) for cls in http_errors()}
    provoked = {code for pairs in seen.by_operation.values() for _, code in pairs} | {c for _, c in routing}
    assert provoked == {code for code, _ in codes}
    assert documented_codes() == codes
    assert DOCUMENT["components"]["schemas"]["ErrorCode"]["enum"] == [cls.code for cls in http_errors()]


@pytest.mark.parametrize(
    ("raised", "code"),
    [
        (web.HTTPUnsupportedMediaType, "bad_request"),
        (web.HTTPTooManyRequests, "bad_request"),
        (web.HTTPBadGateway, "internal"),
    ],
)
async def test_an_aiohttp_error_without_a_class_still_gets_a_documented_code(raised, code):
    """aiohttp raises only 404, 405 and 413 today; any other status must not invent a code."""

    async def handler(_: web.Request) -> web.Response:
        raise raised()

    app = web.Application(middlewares=[errors_middleware])
    app.router.add_get("/", handler)
    async with TestClient(TestServer(app, host="127.0.0.1")) as client:
        response = await client.get("/")
        body = await response.json()
    documented = {cls.code: cls.status for cls in http_errors()}
    assert body["error"]["code"] == code and response.status == documented[code]
