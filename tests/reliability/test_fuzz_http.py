"""Hostile and malformed HTTP input: property-based fuzzing of every endpoint from the OpenAPI document
(schemathesis, valid and invalid data), plus oversized bodies, invalid JSON, wrong types and odd Unicode.
Every answer must be a 2xx or a 4xx in the JSON error shape; never a 500; the server stays up."""

from __future__ import annotations

import asyncio
import json
import shutil
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests
import schemathesis
from aiohttp import web
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import SAMPLE_VAULT
from tests.fake_ollama import FakeOllama
from vask_server.config import load_settings
from vask_server.core.ratelimit import FailureLimiter
from vask_server.web.app import create_app
from vask_server.web.keys import LIVE
from vask_server.web.openapi import openapi_document

pytestmark = pytest.mark.reliability

TOKEN = "fuzz-token-0123456789abcdef"
# /v1/events: an endless stream. /mcp: the MCP SDK speaks its own protocol there (tests/test_mcp_*.py drive it
# with the SDK's client, wrong input included)
schema = schemathesis.openapi.from_dict(openapi_document()).exclude(path="/v1/events").exclude(path="/mcp")


@dataclass
class Served:
    url: str
    fake: FakeOllama
    requests_seen: int = 0


def _serve_in_thread(app: web.Application) -> tuple[asyncio.AbstractEventLoop, web.AppRunner, int]:
    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, daemon=True).start()

    async def start() -> tuple[web.AppRunner, int]:
        runner = web.AppRunner(app, handler_cancellation=True, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        return runner, runner.addresses[0][1]

    runner, port = asyncio.run_coroutine_threadsafe(start(), loop).result(30)
    return loop, runner, port


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    base = tmp_path_factory.mktemp("fuzz")
    vault = base / "vault"
    shutil.copytree(SAMPLE_VAULT, vault)
    fake = FakeOllama()
    fake_loop, fake_runner, fake_port = _serve_in_thread(fake.app())
    config = load_settings(
        env={},
        vault=vault,
        index_dir=base / "index",
        ollama_host=f"http://127.0.0.1:{fake_port}",
        embed_model="fake-embed",
        chat_model="fake-chat",
    )
    # Generated requests include wrong credentials on purpose (schemathesis' negative cases): with the
    # failure limit on, the server would rightly refuse everything from 127.0.0.1 after 20 of them and
    # the rest of the fuzzing would test only that. The limit has its own tests (test_devices*.py).
    app = create_app(config, watch=False, token=TOKEN, limiter=FailureLimiter(limit=1_000_000))
    loop, runner, port = _serve_in_thread(app)

    async def wait_idle() -> None:
        await app[LIVE].wait_idle(60)

    asyncio.run_coroutine_threadsafe(wait_idle(), loop).result(90)
    yield Served(f"http://127.0.0.1:{port}", fake)
    asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(30)
    asyncio.run_coroutine_threadsafe(fake_runner.cleanup(), fake_loop).result(30)
    loop.call_soon_threadsafe(loop.stop)
    fake_loop.call_soon_threadsafe(fake_loop.stop)


def assert_well_formed(response: requests.Response) -> None:
    """A 2xx, or a 4xx in the JSON error shape; an answer's stream (read to its end) is JSON lines
    with no internal error in them: /v1/ask answers 200 before it knows how the answer ends."""
    assert response.status_code < 500, (response.status_code, response.text[:500])
    if response.headers.get("Content-Type", "").startswith("application/x-ndjson"):
        events = [json.loads(line) for line in response.text.splitlines() if line.strip()]
        assert events, "an answer's stream said nothing"
        internal = [e for e in events if e.get("type") == "error" and e.get("code") == "internal"]
        assert not internal, internal
        assert events[-1].get("type") in ("done", "error"), events[-1]
    if response.status_code >= 400:
        body = response.json()
        assert set(body) == {"error"}, body
        error = body["error"]
        # code, message and hint always; an error about a question's mentions also says which missed
        extra = {"misses", "closest"} if error.get("code") == "scope_not_found" else set()
        assert {"code", "message", "hint"} <= set(error) <= {"code", "message", "hint", *extra}, body


def assert_still_up(served: Served) -> None:
    assert requests.get(f"{served.url}/v1/health", timeout=10).json() == {"status": "ok"}


@schema.parametrize()
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
def test_every_endpoint_survives_generated_requests(served: Served, case: schemathesis.Case) -> None:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    if case.headers:
        headers = {**case.headers, **headers}
    response = case.call(base_url=served.url, headers=headers, timeout=30)
    assert_well_formed(response)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4),
    max_leaves=12,
)
FIELDS = [
    "query",
    "question",
    "top_k",
    "min_similarity",
    "filters",
    "history",
    "current_note",
    "paths",
    "chat_model",
    "mode",
    "now",
    "read_time",
]


@pytest.mark.parametrize("path", ["/v1/search", "/v1/ask", "/v1/reindex"])
@pytest.mark.parametrize("shape", ["object", "anything"])
def test_wrong_types_and_odd_unicode_get_a_clean_4xx(served: Served, path: str, shape: str) -> None:
    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.dictionaries(st.sampled_from(FIELDS), JSON_VALUES, max_size=4) if shape == "object" else JSON_VALUES)
    def run(body: object) -> None:
        response = requests.post(
            f"{served.url}{path}",
            data=json.dumps(body, allow_nan=True),
            headers={"Authorization": f"Bearer {TOKEN}"},
            timeout=30,
        )
        assert_well_formed(response)

    run()
    assert_still_up(served)


# Days a question can name that the calendar has in some years or in none, and `now`s that decide which.
TIME_QUESTIONS = [
    "what did I write on 29 February this year?",
    "February 29 this year",
    "what happened on 31 April?",
    "29 de febrero del año pasado",
    "notes from 2025-02-29",
    "between 29 February and 31 April",
    "since 30 February last year",
    "in February last year",
    "the past 999 years",
]
NOWS = ["2025-03-10", "2100-03-01", "2024-02-29T23:30:00+01:00", "0001-01-01", "9999-12-31"]


@pytest.mark.parametrize("now", NOWS)
def test_questions_about_days_the_calendar_lacks_are_answered_on_any_day(served: Served, now: str) -> None:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    for question in TIME_QUESTIONS:
        for path, body in (("/v1/search", {"query": question}), ("/v1/ask", {"question": question})):
            response = requests.post(f"{served.url}{path}", json={**body, "now": now}, headers=headers, timeout=60)
            assert response.status_code == 200, (question, now, response.text[:300])
            assert_well_formed(response)
    assert_still_up(served)


@pytest.mark.parametrize(
    "raw",
    [
        b"{",
        b"\xff\xfe\x00garbage",
        b'{"query": "\\ud800"}',
        b'{"query": "a"}' * 3,
        b"null",
        b"[]",
        b'"text"',
        b'{"query": "' + "\U0001f9ea\u202e\u0000x".encode("utf-8", "surrogatepass") + b'"}',
        b'{"query": "x", "top_k": 1e309}',
        b'{"question": "' + b"a" * 5000 + b'"}',
    ],
)
def test_invalid_json_and_strange_bytes(served: Served, raw: bytes) -> None:
    for path in ("/v1/search", "/v1/ask", "/v1/reindex"):
        response = requests.post(
            f"{served.url}{path}", data=raw, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30
        )
        assert_well_formed(response)
    assert_still_up(served)


def test_oversized_bodies_and_query_strings(served: Served) -> None:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    big = requests.post(f"{served.url}/v1/search", data=b"x" * 3_000_000, headers=headers, timeout=60)
    assert big.status_code == 413
    assert_well_formed(big)
    long_path = requests.get(
        f"{served.url}/v1/related", params={"path": "a/" * 1000 + "x.md"}, headers=headers, timeout=30
    )
    assert_well_formed(long_path)
    # A request line over 8 KB is refused by aiohttp's HTTP parser itself, before any handler can
    # shape the answer: a plain 400, and the server carries on.
    too_long = requests.get(
        f"{served.url}/v1/related", params={"path": "a/" * 3000 + "x.md"}, headers=headers, timeout=30
    )
    assert too_long.status_code == 400
    for weird in ["%00.md", "..%2f..%2fetc%2fpasswd.md", "C:\\\\Windows\\\\win.ini", "\u202e.md", "a" * 300 + ".md"]:
        response = requests.get(f"{served.url}/v1/related?path={weird}&top_k=abc", headers=headers, timeout=30)
        assert_well_formed(response)
    assert_still_up(served)


def test_the_index_survived_the_fuzzing(served: Served) -> None:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    status = requests.get(f"{served.url}/v1/status", headers=headers, timeout=30).json()
    assert status["notes"] >= 40 and status["failed"] == []
    hits = requests.post(
        f"{served.url}/v1/search", json={"query": "sourdough starter"}, headers=headers, timeout=30
    ).json()["hits"]
    assert hits and Path(hits[0]["path"]).suffix == ".md"
