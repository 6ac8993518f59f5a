"""Who may make the model server download a model, and from where: `POST /v1/models/pull` takes the default
device's token only (the computer vask runs on, not a phone), and names from Ollama's own registry only,
unless VASK_PULL_REGISTRIES names another. What is refused never reaches Ollama (the fake counts its pulls)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.web_helpers import Api, running_app
from vask_server.adapters.token import add_device
from vask_server.core.model_names import NotAModelName, pull_allowed, registry_host

ELSEWHERE = [
    "registry.evil.example/ns/m:tag",
    "REGISTRY.EVIL.EXAMPLE/ns/m:tag",
    "hf.co/bartowski/Llama-3.2-1B-Instruct-GGUF:Q4_K_M",
    "registry.ollama.ai.evil.example/library/m",
]
NOT_NAMES = [
    "https://registry.evil.example/ns/m:tag",
    "http://registry.ollama.ai/library/fake-chat-2",
    "registry.evil.example/m:tag",  # (a host without a namespace: Ollama takes no such name)
    "a/b/c/d",
    "ns//m",
]


async def pull(api: Api, model: str, **headers: str) -> tuple[int, Any]:
    response = await api.post("/v1/models/pull", {"model": model}, headers=headers)
    text = await response.text()
    if response.headers["Content-Type"].startswith("application/x-ndjson"):
        return response.status, [json.loads(line) for line in text.splitlines() if line.strip()]
    return response.status, json.loads(text)


def test_the_registry_a_name_pulls_from_is_read_as_ollama_reads_it() -> None:
    assert registry_host("qwen2.5:14b") == "registry.ollama.ai"
    assert registry_host("library/qwen2.5:14b") == registry_host("someone/model:v1") == "registry.ollama.ai"
    assert registry_host("ollama.com/library/qwen2.5") == "ollama.com"
    assert registry_host("HF.co/user/repo:Q4_K_M") == "hf.co"
    for name in NOT_NAMES:
        with pytest.raises(NotAModelName):
            registry_host(name)
    assert pull_allowed("registry.ollama.ai", ()) and pull_allowed("ollama.com", ())
    assert not pull_allowed("hf.co", ()) and pull_allowed("hf.co", ("HF.co",))


async def test_only_ollamas_registry_unless_allowed_and_a_refused_pull_never_reaches_ollama(
    fake_ollama, small_vault, settings_for
):
    fake = fake_ollama.fake
    async with running_app(settings_for(small_vault)) as api:
        for name in ELSEWHERE:
            status, body = await pull(api, name)
            assert status == 403, (name, body)
            error = body["error"]
            assert error["code"] == "registry_not_allowed" and "not Ollama's registry" in error["message"]
            assert "VASK_PULL_REGISTRIES=" in error["hint"] and f"`ollama pull {name}`" in error["hint"]
        for name in NOT_NAMES:
            status, body = await pull(api, name)
            assert status == 400 and body["error"]["code"] == "bad_request", (name, body)
        assert fake.pulls == []  # nothing refused reached Ollama
        # Ollama's own registry, written any of the ways Ollama takes: pulled
        for name in ("fake-chat-2", "library/fake-embed-2", "registry.ollama.ai/library/x", "ollama.com/library/y"):
            status, events = await pull(api, name)
            assert status == 200 and events[0]["type"] == "progress", (name, events)
    assert fake.pulls == ["fake-chat-2", "library/fake-embed-2", "registry.ollama.ai/library/x", "ollama.com/library/y"]


async def test_a_registry_the_setting_names_is_allowed(fake_ollama, small_vault, settings_for):
    fake = fake_ollama.fake
    async with running_app(settings_for(small_vault, pull_registries=("hf.co",))) as api:
        status, events = await pull(api, "hf.co/user/repo:Q4_K_M")
        assert status == 200 and events[-1]["type"] == "error"  # (reached Ollama, which has no such model)
        status, body = await pull(api, "registry.evil.example/ns/m:tag")
        assert status == 403 and body["error"]["code"] == "registry_not_allowed"
    assert fake.pulls == ["hf.co/user/repo:Q4_K_M"]


async def test_only_the_default_devices_token_may_pull(fake_ollama, small_vault, settings_for):
    settings = settings_for(small_vault, chat_model="fake-chat-2")
    phone = add_device(settings.resolved_index_dir(), "phone")
    async with running_app(settings) as api:
        as_phone = {"Authorization": f"Bearer {phone}"}
        status, body = await pull(api, "fake-chat-2", **as_phone)
        assert status == 403 and body["error"]["code"] == "device_not_allowed"
        assert "(phone)" in body["error"]["message"] and "ollama pull" in body["error"]["hint"]
        assert fake_ollama.fake.pulls == []
        # the phone is told so before it offers a download (and can still ask and search)
        health = await (await api.get("/v1/health", headers=as_phone)).json()
        assert health["device"] == {"name": "phone", "can_pull": False, "can_apply": False}
        assert health["models"]["missing"] == ["fake-chat-2"]
        health = await (await api.get("/v1/health")).json()
        assert health["device"] == {"name": "default", "can_pull": True, "can_apply": True}
        status, events = await pull(api, "fake-chat-2")
        assert status == 200 and events[-1] == {"type": "done", "model": "fake-chat-2"}
    assert fake_ollama.fake.pulls == ["fake-chat-2"]
