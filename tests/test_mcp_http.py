"""`/mcp` on `vask serve`: the MCP door over Streamable HTTP, driven by the MCP SDK's own client through the
same app as the HTTP API: the same tokens (a device's works, a revoked one gets 401, none gets 401), the
Origin check against DNS rebinding (a foreign page gets 403), each session its device's own, TLS when the
server has it, and the SDK imported only once /mcp is called."""

from __future__ import annotations

import asyncio
import os
import ssl
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
import pytest_asyncio
from aiohttp import web
from aiohttp.test_utils import TestServer
from mcp import Client

from tests.conftest import RunningFake, _running_fake
from tests.mcp_helpers import ROOT, held, http_session, index, make_vault, notes_of, settings_of, text_of
from tests.web_helpers import TOKEN
from vask_server.adapters.token import add_device, revoke_device
from vask_server.config import Settings
from vask_server.mcp.http import McpMount
from vask_server.mcp.shapes import SearchOutput
from vask_server.web.app import create_app
from vask_server.web.keys import LIVE

pytestmark = pytest.mark.asyncio(loop_scope="module")

TIDEPOOL = "01 Projects/Launch Tidepool app.md"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.fixture(scope="module")
def fake() -> Iterator[RunningFake]:
    yield from _running_fake()


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def settings(fake: RunningFake, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    root = tmp_path_factory.mktemp("mcp-http")
    settings = settings_of(make_vault(root), root / "index", fake.url)
    await index(settings)
    return settings


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def served(settings: Settings) -> AsyncIterator[tuple[str, web.Application]]:
    app = create_app(settings, watch=False, token=TOKEN, mounts=[McpMount()])
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    await app[LIVE].wait_idle(60)
    try:
        yield str(server.make_url("/mcp")), app
    finally:
        await server.close()


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def url(served: tuple[str, web.Application]) -> str:
    return served[0]


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def client(url: str) -> AsyncIterator[Client]:
    async with held(http_session(url, TOKEN)) as session:
        yield session


async def test_every_tool_and_the_resources_answer_over_http(client: Client) -> None:
    assert {t.name for t in (await client.list_tools()).tools} == {
        "search_notes",
        "read_note",
        "note_connections",
        "notes_in_range",
        "index_status",
    }
    search = await client.call_tool("search_notes", {"question": "How much will the annual Tidepool Pro cost?"})
    assert notes_of(search.structured_content)[0] == TIDEPOOL
    read = await client.call_tool("read_note", {"path": TIDEPOOL, "heading": "Pricing"})
    assert "19.99" in read.structured_content["text"]
    connected = await client.call_tool("note_connections", {"path": TIDEPOOL})
    assert connected.structured_content["connected"]
    dated = await client.call_tool("notes_in_range", {"when": "2026-03-14"})
    assert "Daily/2026-03-14.md" in [n["path"] for n in dated.structured_content["notes"]]
    status = await client.call_tool("index_status", {})
    assert status.structured_content["state"] == "current"
    listed = await client.list_resources()
    assert listed.resources and (await client.read_resource(listed.resources[0].uri)).contents[0].text
    bad = await client.call_tool("read_note", {"path": "../etc/passwd.md"})
    assert bad.is_error and "leaves the vault" in text_of(bad)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_both_protocol_eras_of_the_sdk(url: str, mode: str) -> None:
    async with http_session(url, TOKEN, mode=mode) as session:
        result = await session.call_tool("search_notes", {"question": "bedroom temperature for sleep"})
        assert not result.is_error and result.structured_content["passages"]


async def test_no_token_or_a_wrong_one_gets_401(url: str) -> None:
    async with httpx2.AsyncClient() as http:
        bare = await http.post(url, json=INITIALIZE, headers=ACCEPT)
        assert bare.status_code == 401 and bare.json()["error"]["code"] == "unauthorized"
        assert "hint" in bare.json()["error"]
        wrong = await http.post(url, json=INITIALIZE, headers={**ACCEPT, "Authorization": "Bearer nope-nope-nope"})
        assert wrong.status_code == 401
    with pytest.raises(Exception):  # noqa: B017  (the SDK's client fails to connect: what error it raises is its own)
        async with http_session(url, None):
            pass


async def test_a_device_token_works_and_once_revoked_gets_401(url: str, settings: Settings) -> None:
    index_dir = settings.resolved_index_dir()
    phone = add_device(index_dir, "phone-mcp")
    async with http_session(url, phone) as session:
        assert not (await session.call_tool("index_status", {})).is_error
        revoke_device(index_dir, "phone-mcp")
        await asyncio.sleep(0.05)
        async with httpx2.AsyncClient() as http:
            refused = await http.post(url, json=INITIALIZE, headers={**ACCEPT, "Authorization": f"Bearer {phone}"})
            assert refused.status_code == 401
        with pytest.raises(Exception):  # noqa: B017  (its open session is refused too)
            await session.call_tool("index_status", {})


async def test_a_session_belongs_to_the_device_that_opened_it(url: str, settings: Settings) -> None:
    laptop = add_device(settings.resolved_index_dir(), "laptop-mcp")
    async with httpx2.AsyncClient() as http:
        opened = await http.post(url, json=INITIALIZE, headers={**ACCEPT, "Authorization": f"Bearer {TOKEN}"})
        assert opened.status_code == 200
        session_id = opened.headers["mcp-session-id"]
        listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
        other = {
            **ACCEPT,
            "Authorization": f"Bearer {laptop}",
            "Mcp-Session-Id": session_id,
            "Mcp-Protocol-Version": "2025-11-25",
        }
        assert (await http.post(url, json=listing, headers=other)).status_code == 404
        own = {**other, "Authorization": f"Bearer {TOKEN}"}
        await http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=own)
        assert (await http.post(url, json=listing, headers=own)).status_code == 200


@pytest.mark.parametrize(
    ("origin", "status"),
    [
        ("https://evil.example", 403),
        ("http://evil.example:8765", 403),
        ("null", 403),
        ("http://127.0.0.1.evil.example", 403),
        (None, 200),
        ("app://obsidian.md", 200),
        ("http://localhost:3000", 200),
        ("http://127.0.0.1", 200),
        ("https://[::1]:8443", 200),
    ],
)
async def test_the_origin_check_refuses_pages_of_other_sites(url: str, origin: str | None, status: int) -> None:
    headers = {**ACCEPT, "Authorization": f"Bearer {TOKEN}", **({"Origin": origin} if origin else {})}
    async with httpx2.AsyncClient() as http:
        response = await http.post(url, json=INITIALIZE, headers=headers)
    assert response.status_code == status
    if status == 403:
        assert (
            response.json()["error"]["code"] == "forbidden_origin"
            and "DNS-rebinding" in response.json()["error"]["hint"]
        )


async def test_a_foreign_host_is_refused_as_on_the_rest_of_the_api(url: str) -> None:
    async with httpx2.AsyncClient() as http:
        response = await http.post(
            url, json=INITIALIZE, headers={**ACCEPT, "Authorization": f"Bearer {TOKEN}", "Host": "evil.example"}
        )
    assert response.status_code == 403 and response.json()["error"]["code"] == "forbidden_host"


async def test_a_body_too_large_is_refused_and_the_endpoint_answers_on(url: str, client: Client) -> None:
    async with httpx2.AsyncClient() as http:
        response = await http.post(
            url, content=b"[" + b"1," * 600_000 + b"1]", headers={**ACCEPT, "Authorization": f"Bearer {TOKEN}"}
        )
    assert response.status_code == 413
    assert not (await client.call_tool("index_status", {})).is_error


async def test_the_search_tool_says_what_v1_search_says(client: Client, url: str) -> None:
    question = "What temperature do I keep the bedroom at for sleep?"
    result = SearchOutput.model_validate(
        (await client.call_tool("search_notes", {"question": question, "today": "2026-04-01"})).structured_content
    )
    async with httpx2.AsyncClient() as http:
        api = await http.post(
            url.replace("/mcp", "/v1/search"),
            json={"query": question, "now": "2026-04-01"},
            headers={"Authorization": f"Bearer {TOKEN}"},
        )
    hits = api.json()["hits"]
    assert [(p.path, p.line_start, p.score) for p in result.passages] == [
        (h["path"], h["line_start"], h["score"]) for h in hits
    ]


async def test_over_https_when_the_server_has_tls(settings: Settings, tmp_path: Path) -> None:
    from tests.netns import make_certificates
    from vask_server.adapters.tls import server_ssl_context
    from vask_server.config import load_settings

    certs = make_certificates(tmp_path, ["127.0.0.1"], ["127.0.0.1"])
    context = server_ssl_context(load_settings(env={}, tls_cert=certs.server_cert, tls_key=certs.server_key))
    app = create_app(settings, watch=False, token=TOKEN, mounts=[McpMount()])
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0, ssl_context=context).start()
    try:
        address = f"https://127.0.0.1:{runner.addresses[0][1]}/mcp"
        trust = ssl.create_default_context(cafile=str(certs.ca))
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, verify=trust) as http,
            Client(_transport(address, http)) as session,
        ):
            assert not (await session.call_tool("index_status", {})).is_error
    finally:
        await runner.cleanup()


def _transport(address: str, http: Any) -> Any:
    from mcp.client.streamable_http import streamable_http_client

    return streamable_http_client(address, http_client=http)


async def test_vask_serve_imports_nothing_of_the_mcp_sdk_until_mcp_is_called(settings: Settings) -> None:
    """(in a process of its own: this one has the SDK loaded by the other tests)"""
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from vask_server.config import load_settings\n"
        "from vask_server.mcp.http import McpMount\n"
        "from vask_server.web.app import create_app\n"
        f"settings = load_settings(env={{}}, vault=Path({str(settings.vault)!r}), "
        f"index_dir=Path({str(settings.resolved_index_dir())!r}))\n"
        "create_app(settings, watch=False, token='t' * 20, mounts=[McpMount()])\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'mcp_types', 'starlette', 'uvicorn'))\n"
        "print(loaded)\n"
    )
    run = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-c", script],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ),
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"
