"""An OpenAI-compatible model server (LM Studio, llama-server, vLLM): the whole path through it, answers
from another server than the embeddings, and errors as clear as Ollama's, each naming the server and
never the key."""

from __future__ import annotations

import json

import pytest

from tests.fake_ollama import CHAT_MODEL, EMBED_MODEL
from tests.fake_openai import openai_settings
from tests.web_helpers import running_app
from vask_server.adapters.openai_api import OpenAIGateway
from vask_server.cli.command import main
from vask_server.errors import ModelMissing, OllamaFailed, OllamaUnavailable
from vask_server.services.context import open_services

KEY = "sk-test-0123456789abcdef"


async def test_index_search_and_answer_through_an_openai_compatible_server(fake_ollama, vault, settings_for):
    settings = settings_for(vault, **openai_settings(fake_ollama.url))
    async with open_services(settings) as services:
        assert services.gateway.provider == "openai" and services.chat_gateway is services.gateway
        report = await services.indexer.sync()
        assert report.chunks_embedded > 40 and report.dimension == 96
    async with running_app(settings) as api:
        hits = (await api.search("sourdough starter feeding"))["hits"]
        assert hits and hits[0]["path"].endswith(".md")
        fake_ollama.fake.chat_requests.clear()
        events = await api.ask_events({"question": "How do I feed my sourdough starter?"})
        assert events[-1]["type"] == "done" and events[-1]["answer"]
        request = fake_ollama.fake.chat_requests[-1]
        assert request["stream"] is True and request["model"] == CHAT_MODEL and request["max_tokens"] == 1024
        health = await (await api.get("/v1/health")).json()
        servers = health["servers"]
        assert servers["embed"] == {"provider": "openai", "url": f"{fake_ollama.url}/v1", "reachable": True}
        assert servers["chat"] == servers["embed"] and health["models"]["missing"] == []


async def test_embeddings_from_ollama_and_answers_from_an_openai_compatible_server(fake_ollama, vault, settings_for):
    settings = settings_for(vault, chat_provider="openai", chat_base_url=f"{fake_ollama.url}/v1")
    async with running_app(settings) as api:
        fake_ollama.fake.chat_requests.clear()
        events = await api.ask_events({"question": "How do I feed my sourdough starter?"})
        assert events[-1]["type"] == "done"
        assert "max_tokens" in fake_ollama.fake.chat_requests[-1]  # (OpenAI's field: it went to /v1)
        servers = (await (await api.get("/v1/health")).json())["servers"]
        assert servers["embed"]["provider"] == "ollama" and servers["embed"]["url"] == fake_ollama.url
        assert servers["chat"] == {"provider": "openai", "url": f"{fake_ollama.url}/v1", "reachable": True}


async def test_the_api_key_is_sent_and_never_shown_logged_or_kept(fake_ollama, vault, settings_for, caplog):
    caplog.set_level("DEBUG")
    fake_ollama.fake.openai_api_key = KEY
    try:
        wrong = settings_for(vault, **openai_settings(fake_ollama.url), openai_api_key="sk-wrong")
        async with open_services(wrong) as services:
            with pytest.raises(OllamaFailed) as refused:
                await services.indexer.sync()
        assert "HTTP 401" in refused.value.message and "VASK_OPENAI_API_KEY" in refused.value.hint
        assert "sk-wrong" not in refused.value.message + refused.value.hint
        settings = settings_for(vault, **openai_settings(fake_ollama.url), openai_api_key=KEY)
        assert KEY not in repr(settings)
        async with running_app(settings) as api:
            status = await (await api.get("/v1/status")).json()
            health = await (await api.get("/v1/health")).json()
            assert status["notes"] > 40
        assert KEY not in json.dumps(status) + json.dumps(health)
        assert status["servers"]["embed"] == {"provider": "openai", "url": f"{fake_ollama.url}/v1", "api_key": "set"}
        index_files = [p for p in settings.resolved_index_dir().rglob("*") if p.is_file()]
        assert index_files and not any(KEY.encode() in p.read_bytes() for p in index_files)
        assert KEY not in caplog.text
    finally:
        fake_ollama.fake.openai_api_key = ""


async def test_errors_name_the_server_and_say_what_to_do():
    down = OpenAIGateway("http://127.0.0.1:9/v1", retries=0)
    with pytest.raises(OllamaUnavailable) as unreachable:
        await down.embed(EMBED_MODEL, ["x"])
    assert unreachable.value.message == (
        "The OpenAI-compatible server is not reachable at http://127.0.0.1:9/v1 (connection refused)"
    )
    assert "VASK_OPENAI_BASE_URL" in unreachable.value.hint and down.reachable is False
    assert await down.probe([EMBED_MODEL]) == (False, [])
    await down.close()


async def test_a_missing_model_a_busy_server_and_a_failing_one(fake_ollama):
    gateway = OpenAIGateway(f"{fake_ollama.url}/v1", retries=2, backoff=0.01)
    try:
        with pytest.raises(ModelMissing) as missing:
            await gateway.embed("no-such-model", ["x"])
        assert "no-such-model" in missing.value.message and "OpenAI-compatible server" in missing.value.message
        assert "ollama pull" not in missing.value.hint and "llama-server" in missing.value.hint
        assert await gateway.probe([EMBED_MODEL, "no-such-model"]) == (True, ["no-such-model"])
        # 429 with Retry-After: waited for, then answered
        fake_ollama.fake.rate_limit_next, fake_ollama.fake.retry_after = 2, 0.05
        vectors = await gateway.embed(EMBED_MODEL, ["a", "b c"])
        assert len(vectors) == 2 and len(vectors[0]) == 96 and fake_ollama.fake.rate_limit_next == 0
        # embeddings come back in the order asked, whatever order the server lists them in
        single = [await gateway.embed(EMBED_MODEL, [t]) for t in ("a", "b c")]
        assert vectors == [single[0][0], single[1][0]]
        # a server asking to wait longer than vask will: said, not waited for
        fake_ollama.fake.rate_limit_next, fake_ollama.fake.retry_after = 1, 3600
        with pytest.raises(OllamaFailed) as busy:
            await gateway.embed(EMBED_MODEL, ["x"])
        assert "HTTP 429" in busy.value.message and "wait 3600 s" in busy.value.message
        fake_ollama.fake.rate_limit_next = 0
        # 5xx: retried; every retry failing: a clear error
        fake_ollama.fake.fail_next = 1
        assert len(await gateway.embed(EMBED_MODEL, ["x"])) == 1
        fake_ollama.fake.fail_next = 3
        with pytest.raises(OllamaFailed) as failed:
            await gateway.embed(EMBED_MODEL, ["x"])
        # (the status and the server named; its own text never: it can quote the input)
        assert failed.value.message == f"HTTP 500 from the OpenAI-compatible server at {fake_ollama.url}/v1 " + (
            f"(embeddings with '{EMBED_MODEL}')"
        )
        assert "fake failure" not in failed.value.message + failed.value.hint
        fake_ollama.fake.fail_next = 0
        text = "".join([part async for part in gateway.chat_stream(CHAT_MODEL, [{"role": "user", "content": "hi"}])])
        assert text
    finally:
        fake_ollama.fake.fail_next = fake_ollama.fake.rate_limit_next = 0
        await gateway.close()


def test_the_settings_are_checked_and_documented(cli_env, vault, capsys, monkeypatch):
    monkeypatch.setenv("VASK_PROVIDER", "lmstudio")
    assert main(["status", "--vault", str(vault)]) == 2
    assert "must be one of ollama, openai" in capsys.readouterr().err
    monkeypatch.setenv("VASK_PROVIDER", "openai")
    monkeypatch.setenv("VASK_OPENAI_BASE_URL", "localhost:1234")
    assert main(["status", "--vault", str(vault)]) == 2
    assert "OpenAI-compatible base URL" in capsys.readouterr().err
    monkeypatch.setenv("VASK_OPENAI_API_KEY", "two words")
    monkeypatch.setenv("VASK_OPENAI_BASE_URL", "http://127.0.0.1:1234/v1")
    assert main(["status", "--vault", str(vault)]) == 2
    err = capsys.readouterr().err
    assert "(value not shown)" in err and "two words" not in err


@pytest.mark.parametrize("provider", ["ollama", "openai"])
async def test_the_models_each_server_serves(fake_ollama, vault, settings_for, provider):
    extra = openai_settings(fake_ollama.url) if provider == "openai" else {}
    async with running_app(settings_for(vault, **extra)) as api:
        body = await (await api.get("/v1/models")).json()
        assert body["chat"]["provider"] == provider and body["chat"]["configured"] == CHAT_MODEL
        assert CHAT_MODEL in body["chat"]["models"] and EMBED_MODEL in body["embed"]["models"]
        assert all(not name.endswith(":latest") for name in body["chat"]["models"])


async def test_the_models_of_a_server_that_is_down_are_a_clear_503(fake_ollama, vault, settings_for):
    down = settings_for(vault, ollama_host="http://127.0.0.1:9", ollama_retries=0)
    async with running_app(down, wait=False) as api:
        response = await api.get("/v1/models")
        body = await response.json()
        assert response.status == 503 and body["error"]["code"] == "ollama_unavailable"
        assert "http://127.0.0.1:9" in body["error"]["message"] and "ollama serve" in body["error"]["hint"]
