"""What travels to and from the model servers: each server is sent only the key given for it (embeddings
and answers may come from two servers, each with its own), and a server's error text, which can quote the
notes and the question, is never repeated in a log line, `/v1/status` or an error sent to a client."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import RunningFake
from tests.fake_openai import openai_settings
from tests.web_helpers import running_app
from vask_server.cli.command import main
from vask_server.config import load_settings
from vask_server.core.server_errors import known_pull_reason, known_reason
from vask_server.services.context import UNSENT_OPENAI_KEY, open_services

EMBED_KEY = "sk-embed-0123456789"
CHAT_KEY = "sk-chat-9876543210"
QUESTION = "How do I feed my sourdough starter?"


def seen(fake: RunningFake, path_part: str = "") -> set[str]:
    """The Authorization headers a fake server received (on paths holding `path_part`)."""
    return {auth for path, auth in fake.fake.authorizations if path_part in path}


async def answer(api: Any) -> dict[str, Any]:
    events = await api.ask_events({"question": QUESTION})
    return events[-1]


# -- which key goes where -------------------------------------------------------------------------


def test_the_key_rule_for_each_set_up() -> None:
    """VASK_OPENAI_API_KEY is VASK_OPENAI_BASE_URL's, VASK_CHAT_API_KEY the answers' server's."""
    a, b = "http://127.0.0.1:8001/v1", "http://127.0.0.1:8002/v1"

    def access(**env: str) -> tuple[tuple[str, str], tuple[str, str]]:
        settings = load_settings(env=env)
        embed, chat = settings.embed_access(), settings.chat_access()
        return (embed.api_key, embed.key_setting), (chat.api_key, chat.key_setting)

    keys = {"VASK_OPENAI_API_KEY": "K1"}
    one = {"VASK_PROVIDER": "openai", "VASK_OPENAI_BASE_URL": a}
    assert access(**one, **keys) == (("K1", "VASK_OPENAI_API_KEY"), ("K1", "VASK_OPENAI_API_KEY"))
    # the same server written another way is the same server
    assert access(**one, **keys, VASK_CHAT_BASE_URL=a + "/")[1] == ("K1", "VASK_OPENAI_API_KEY")
    # answers from another address: its own key, or none; never the embeddings' key
    two = {**one, "VASK_CHAT_BASE_URL": b}
    assert access(**two, **keys) == (("K1", "VASK_OPENAI_API_KEY"), ("", "VASK_CHAT_API_KEY"))
    assert access(**two, **keys, VASK_CHAT_API_KEY="K2")[1] == ("K2", "VASK_CHAT_API_KEY")
    # one server, a key for answers: answers send it, embeddings their own
    assert access(**one, **keys, VASK_CHAT_API_KEY="K2") == (("K1", "VASK_OPENAI_API_KEY"), ("K2", "VASK_CHAT_API_KEY"))
    # embeddings from Ollama, answers from VASK_OPENAI_BASE_URL: the key is that address's
    assert access(VASK_CHAT_PROVIDER="openai", VASK_OPENAI_BASE_URL=a, **keys)[1] == ("K1", "VASK_OPENAI_API_KEY")
    # ...and from an address of their own: not
    elsewhere = {"VASK_CHAT_PROVIDER": "openai", "VASK_CHAT_BASE_URL": b, **keys}
    assert access(**elsewhere)[1] == ("", "VASK_CHAT_API_KEY")
    assert load_settings(env=elsewhere).unsent_openai_key()
    assert not load_settings(env={**elsewhere, "VASK_CHAT_API_KEY": "K2"}).unsent_openai_key()
    # Ollama's proxy headers go to OLLAMA_HOST only
    proxied = {"OLLAMA_HOST": "127.0.0.1:11434", "VASK_OLLAMA_HEADERS": "X-Auth: s"}  # (Ollama's shorthand)
    settings = load_settings(env={**proxied, "VASK_CHAT_BASE_URL": "http://127.0.0.1:11434/"})
    assert settings.chat_access().headers == settings.embed_access().headers == ("X-Auth: s",)
    settings = load_settings(env={**proxied, "VASK_CHAT_BASE_URL": "http://127.0.0.1:11435"})
    assert settings.chat_access().headers == () and settings.chat_access().api_key == ""


async def test_two_servers_each_get_their_own_key(fake_ollama, other_fake, vault, settings_for):
    fake_ollama.fake.openai_api_key, other_fake.fake.openai_api_key = EMBED_KEY, CHAT_KEY
    settings = settings_for(
        vault,
        **openai_settings(fake_ollama.url),
        openai_api_key=EMBED_KEY,
        chat_provider="openai",
        chat_base_url=f"{other_fake.url}/v1",
        chat_api_key=CHAT_KEY,
    )
    assert CHAT_KEY not in repr(settings)
    async with running_app(settings) as api:
        assert (await answer(api))["type"] == "done"
        status = await (await api.get("/v1/status")).json()
    assert seen(fake_ollama) == {f"Bearer {EMBED_KEY}"} and seen(other_fake) == {f"Bearer {CHAT_KEY}"}
    assert status["servers"]["embed"]["api_key"] == status["servers"]["chat"]["api_key"] == "set"
    assert CHAT_KEY not in json.dumps(status) and EMBED_KEY not in json.dumps(status)


async def test_the_embeddings_key_is_not_sent_to_another_answers_server(
    fake_ollama, other_fake, vault, settings_for, caplog
):
    """The answers' server wants a key and was given none: it is sent none (not the embeddings' key),
    and the refusal names the setting that gives it one."""
    other_fake.fake.openai_api_key = CHAT_KEY
    settings = settings_for(
        vault,
        **openai_settings(fake_ollama.url),
        openai_api_key=EMBED_KEY,
        chat_provider="openai",
        chat_base_url=f"{other_fake.url}/v1",
    )
    async with running_app(settings) as api:
        refused = await answer(api)
        status = await (await api.get("/v1/status")).json()
    assert seen(other_fake) == {""}  # (asked, with no key at all)
    assert refused["type"] == "error" and "HTTP 401" in refused["message"]
    assert "VASK_CHAT_API_KEY" in refused["hint"]
    assert seen(fake_ollama) == {f"Bearer {EMBED_KEY}"}  # (and the embeddings' server still gets its own)
    assert status["servers"]["chat"]["api_key"] == "not set"


async def test_one_server_with_a_key_for_answers(fake_ollama, vault, settings_for):
    settings = settings_for(vault, **openai_settings(fake_ollama.url), openai_api_key=EMBED_KEY, chat_api_key=CHAT_KEY)
    async with running_app(settings) as api:
        assert (await answer(api))["type"] == "done"
    assert seen(fake_ollama, "/v1/embeddings") == {f"Bearer {EMBED_KEY}"}
    assert seen(fake_ollama, "/v1/chat/completions") == {f"Bearer {CHAT_KEY}"}


async def test_ollamas_proxy_headers_stay_with_ollama_host(fake_ollama, other_fake, vault, settings_for):
    """Answers from an Ollama at another address: not sent VASK_OLLAMA_HEADERS (they are OLLAMA_HOST's
    proxy's), and sent VASK_CHAT_API_KEY as a bearer token when it is set."""
    proxy = "Authorization: Bearer proxy-secret"
    settings = settings_for(vault, ollama_headers=(proxy,), chat_base_url=other_fake.url)
    async with running_app(settings) as api:
        assert (await answer(api))["type"] == "done"
    assert seen(fake_ollama) == {"Bearer proxy-secret"} and seen(other_fake) == {""}
    other_fake.fake.authorizations.clear()
    settings = settings_for(vault, ollama_headers=(proxy,), chat_base_url=other_fake.url, chat_api_key=CHAT_KEY)
    async with running_app(settings) as api:
        assert (await answer(api))["type"] == "done"
        status = await (await api.get("/v1/status")).json()
    assert seen(other_fake) == {f"Bearer {CHAT_KEY}"}
    assert status["servers"]["chat"] == {"provider": "ollama", "url": other_fake.url, "api_key": "set"}


def test_doctor_and_the_log_say_when_the_openai_key_is_sent_nowhere(
    cli_env, vault, capsys, monkeypatch, other_fake, caplog
):
    """The set-up in which VASK_OPENAI_API_KEY used to reach the answers' server: said, with the fix."""
    monkeypatch.setenv("VASK_OPENAI_API_KEY", EMBED_KEY)
    monkeypatch.setenv("VASK_CHAT_PROVIDER", "openai")
    monkeypatch.setenv("VASK_CHAT_BASE_URL", f"{other_fake.url}/v1")
    main(["doctor", "--json", "--vault", str(vault)])
    checks = {check["name"]: check for check in json.loads(capsys.readouterr().out)["checks"]}
    keys = checks["API keys"]
    assert keys["level"] == "warn" and "VASK_CHAT_API_KEY" in keys["fix"] and EMBED_KEY not in json.dumps(checks)
    assert seen(other_fake) == {""}

    async def start() -> None:
        async with open_services(load_settings(vault=vault)):
            pass

    asyncio.run(start())
    assert UNSENT_OPENAI_KEY in caplog.text and EMBED_KEY not in caplog.text
    monkeypatch.setenv("VASK_CHAT_API_KEY", CHAT_KEY)
    main(["doctor", "--json", "--vault", str(vault)])
    checks = {check["name"]: check for check in json.loads(capsys.readouterr().out)["checks"]}
    assert "API keys" not in checks and seen(other_fake) == {"", f"Bearer {CHAT_KEY}"}


# -- a server's error text -------------------------------------------------------------------------

NOTE_WORDS = "Orchid greenhouse humidity ledger"
ASKED = "What did I decide about the orchid greenhouse humidity?"


async def wait_for_error(api: Any) -> dict[str, Any]:
    for _ in range(600):
        status: dict[str, Any] = await (await api.get("/v1/status")).json()
        if status["last_error"] is not None:
            return status
        await asyncio.sleep(0.05)
    raise AssertionError("the sync never failed")


@pytest.mark.parametrize("provider", ["ollama", "openai"])
async def test_a_servers_error_text_is_never_repeated(provider, fake_ollama, vault: Path, settings_for, caplog):
    """The server answers every embedding and answer with an error that quotes its input (as pydantic-style
    servers do): the note's words and the question reach no log record, `/v1/status` or error event."""
    caplog.set_level("DEBUG")
    fake = fake_ollama.fake
    note = vault / "Greenhouse.md"
    note.write_text(f"# Greenhouse\n\n{NOTE_WORDS}: keep the orchids at 70 percent humidity.\n")
    extra = openai_settings(fake_ollama.url) if provider == "openai" else {}
    async with running_app(settings_for(vault, **extra, ollama_retries=0)) as api:
        fake.echo_errors, fake.fail_next = True, 10_000
        note.write_text(f"# Greenhouse\n\n{NOTE_WORDS}: keep the orchids at 60 percent humidity now.\n")
        assert (await api.post("/v1/reindex", {"paths": ["Greenhouse.md"]})).status == 202
        status = await wait_for_error(api)
        searched = await api.post("/v1/search", {"query": ASKED})  # (the question's embedding fails)
        searched_body = await searched.json()
        refused = await answer_of(api)
        fake.fail_next, fake.fail_mid_answer = 0, True
        cut = await answer_of(api)
    assert fake.error_bodies and any(NOTE_WORDS in body for body in fake.error_bodies)  # the server did quote them
    assert any(ASKED in body for body in fake.error_bodies)
    said = json.dumps([status["last_error"], searched_body, refused, cut]) + caplog.text
    for words in (NOTE_WORDS, "60 percent", ASKED):
        assert words not in said
    assert "cannot process input" not in said and "value_error" not in said  # (nothing of the body at all)
    # what is said instead: the status code and the server, and where to read more
    error = status["last_error"]
    assert error["code"] == "ollama_error" and ("HTTP 500" if provider == "ollama" else "HTTP 422") in error["message"]
    assert fake_ollama.url in error["message"] and "own log" in error["hint"]
    assert searched.status == 502 and searched_body["error"]["code"] == "ollama_error"
    assert refused["type"] == "error" and "HTTP" in refused["message"]
    assert cut["type"] == "error" and "half-way" in cut["message"]


async def answer_of(api: Any) -> dict[str, Any]:
    events = await api.ask_events({"question": ASKED})
    return events[-1]


def test_known_errors_are_said_in_vasks_words() -> None:
    assert (
        known_reason("input length exceeds the context length") == "the text is longer than the model's context window"
    )
    assert known_reason('"all-minilm" does not support chat').startswith("the model does not do this kind")
    assert known_reason("model requires more system memory (12 GiB) than is available") == (
        "the model server ran out of memory"
    )
    assert known_reason("anything else the server says") == ""
    assert known_reason("too long: " + "my private note " * 40) == ""  # (long: likely to quote the input)
    assert known_pull_reason("pull model manifest: file does not exist") == "the registry has no model by that name"
    assert known_pull_reason('Get "https://registry.ollama.ai/v2/": dial tcp: lookup: no such host') == (
        "Ollama could not reach the registry"
    )
