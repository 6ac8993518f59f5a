"""What the plugin's one-step setup needs of the server: `vask serve --pair-file` writes where it listens and
the token for the program that started it (this user only, removed on exit, stopped when that program's
pipe closes), `POST /v1/models/pull` downloads a model with its progress, and `GET /v1/doctor` serves
`vask doctor --json`'s checklist."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import stat
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, RunningFake
from tests.fake_ollama import CHAT_MODEL, EMBED_MODEL
from tests.web_helpers import TOKEN, Api, running_app
from vask_server.cli.command import main

NONCE = "-nonce-0123456789abcdef"  # (a leading "-", as one random nonce in 64 has)


async def pull_events(api: Api, body: dict[str, Any]) -> list[dict[str, Any]]:
    response = await api.post("/v1/models/pull", body)
    assert response.status == 200, await response.text()
    assert response.headers["Content-Type"].startswith("application/x-ndjson")
    return [json.loads(line) for line in (await response.text()).splitlines() if line.strip()]


async def test_a_missing_model_is_pulled_with_its_progress_and_then_served(fake_ollama, small_vault, settings_for):
    async with running_app(settings_for(small_vault, chat_model="fake-chat-2")) as api:
        health = await (await api.get("/v1/health")).json()
        assert health["models"]["missing"] == ["fake-chat-2"]
        events = await pull_events(api, {"model": "fake-chat-2"})
        progress = [e for e in events if e["type"] == "progress"]
        assert events[-1] == {"type": "done", "model": "fake-chat-2"}
        sized = [e for e in progress if e["total"]]
        assert [e["completed"] for e in sized] == [0, 750_000, 1_500_000, 2_250_000, 3_000_000]
        assert progress[-1]["status"] == "success"
        assert fake_ollama.fake.pulls == ["fake-chat-2"]
        health = await (await api.get("/v1/health")).json()
        assert health["models"]["missing"] == []


async def test_a_name_ollama_does_not_know_ends_the_stream_with_an_error(fake_ollama, small_vault, settings_for):
    async with running_app(settings_for(small_vault)) as api:
        events = await pull_events(api, {"model": "no-such-model:7b"})
    assert events[0]["type"] == "progress"
    assert events[-1]["type"] == "error" and events[-1]["code"] == "ollama_error"
    # (Ollama's words recognised, said in vask's: its own text is never repeated)
    assert events[-1]["message"] == "Ollama could not pull 'no-such-model:7b': the registry has no model by that name"
    assert events[-1]["hint"]


async def test_a_pull_that_stops_half_way_is_not_called_done(fake_ollama, small_vault, settings_for):
    fake_ollama.fake.pull_fail_after = 3
    async with running_app(settings_for(small_vault)) as api:
        events = await pull_events(api, {"model": "fake-embed-2"})
    assert events[-1]["type"] == "error" and events[-1]["code"] == "ollama_error", events[-1]
    assert "before it finished" in events[-1]["message"]
    assert not any(e["type"] == "done" for e in events)
    assert "fake-embed-2" not in fake_ollama.fake.embed_models


async def test_the_role_chooses_the_server_and_bad_bodies_are_refused(fake_ollama, small_vault, settings_for):
    async with running_app(settings_for(small_vault)) as api:
        events = await pull_events(api, {"model": "fake-embed-2", "role": "embed"})
        assert events[-1]["type"] == "done" and "fake-embed-2" in fake_ollama.fake.embed_models
        names: list[Any] = [None, "", "two words", "x;rm -rf", 7, "a" * 300, "-flag"]
        for body in [{"model": name} for name in names]:
            response = await api.post("/v1/models/pull", body)
            assert response.status == 400, body
        response = await api.post("/v1/models/pull", {"model": "fake-chat-2", "role": "both"})
        assert response.status == 400 and "role" in (await response.json())["error"]["message"]
        response = await api.post("/v1/models/pull", {"model": "fake-chat-2", "extra": 1})
        assert response.status == 400


async def test_an_openai_compatible_server_cannot_pull_and_says_so(fake_ollama, small_vault, settings_for):
    settings = settings_for(
        small_vault, provider="openai", openai_base_url=f"{fake_ollama.url}/v1", index_dir=small_vault.parent / "oa"
    )
    async with running_app(settings, wait=False) as api:
        response = await api.post("/v1/models/pull", {"model": "fake-chat-2"})
        body = await response.json()
    assert response.status == 501 and body["error"]["code"] == "pull_unsupported"
    assert "only Ollama" in body["error"]["message"] and "Load the model" in body["error"]["hint"]
    assert fake_ollama.fake.pulls == []


async def test_the_doctor_endpoint_serves_the_cli_checklist(cli_env, fake_ollama, small_vault, settings_for, capsys):
    async with running_app(settings_for(small_vault, index_dir=cli_env)) as api:
        response = await api.get("/v1/doctor")
        assert response.status == 200
        served = await response.json()
        assert (await api.client.get("/v1/doctor")).status == 401  # (a token, as every endpoint but health)
    assert await asyncio.to_thread(main, ["doctor", "--json", "--vault", str(small_vault)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert served["ok"] is True and printed["ok"] is True
    assert [c["name"] for c in served["checks"]] == [c["name"] for c in printed["checks"]]
    port = next(c for c in served["checks"] if c["name"] == "port")
    assert port["ok"] and "`vask serve` answers at http://127.0.0.1:" in port["detail"]
    for check in served["checks"]:
        assert set(check) == {"name", "level", "ok", "detail", "fix"}
        assert check["level"] in ("ok", "info", "warn", "fail") and check["ok"] == (check["level"] != "fail")
    assert {c["name"]: c["level"] for c in served["checks"]}["Obsidian plugin"] == "info"
    assert served["level"] == printed["level"] == "info"
    assert TOKEN not in json.dumps(served)


async def test_the_doctor_endpoint_says_what_is_missing_with_its_fix(fake_ollama, small_vault, settings_for):
    async with running_app(settings_for(small_vault, chat_model="fake-chat-2")) as api:
        served = await (await api.get("/v1/doctor")).json()
    assert served["ok"] is False
    chat = next(c for c in served["checks"] if c["name"] == "chat model")
    assert chat["level"] == "fail" and not chat["ok"] and "`ollama pull fake-chat-2`" in chat["fix"]
    assert served["level"] == "fail"


# --- pairing: a real `vask serve` process ---------------------------------------------------------------


def start_paired(
    vault: Path, fake: RunningFake, tmp_path: Path, pair: Path, extra_env: dict[str, str] | None = None
) -> subprocess.Popen[str]:
    env = {
        **os.environ,
        "OLLAMA_HOST": fake.url,
        "VASK_EMBED_MODEL": EMBED_MODEL,
        "VASK_CHAT_MODEL": CHAT_MODEL,
        "VASK_INDEX_DIR": str(tmp_path / "index"),
        **(extra_env or {}),
    }
    argv = [sys.executable, "-m", "vask_server.cli", "serve", "--vault", str(vault), "--port", "0"]
    # As the plugin's supervisor passes them: `--name=value`, which a nonce starting with "-" needs.
    argv += [f"--pair-file={pair}", f"--pair-nonce={NONCE}", "--stop-with-stdin"]
    return subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT, env=env
    )


def wait_for(path: Path, seconds: float = 30.0) -> dict[str, Any]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.exists():
            data: dict[str, Any] = json.loads(path.read_text("utf-8"))
            return data
        time.sleep(0.05)
    raise AssertionError(f"no pair file at {path}")


@pytest.mark.skipif(sys.platform == "win32", reason="file modes")
def test_serve_writes_a_private_pair_file_and_stops_when_its_starter_goes(fake_ollama, small_vault, tmp_path):
    pair = tmp_path / "run" / "vask" / "pair.json"
    process = start_paired(small_vault, fake_ollama, tmp_path, pair)
    try:
        paired = wait_for(pair)
        assert stat.S_IMODE(pair.stat().st_mode) == 0o600
        assert stat.S_IMODE(pair.parent.stat().st_mode) == 0o700
        assert paired["nonce"] == NONCE and paired["pid"] == process.pid and paired["pair_version"] == 1
        assert paired["url"].startswith("http://127.0.0.1:") and not paired["url"].endswith(":0")
        token = (tmp_path / "index" / "token").read_text().strip()
        assert paired["token"] == token
        request = urllib.request.Request(f"{paired['url']}/v1/health", headers={"Authorization": f"Bearer {token}"})
        with urllib.request.urlopen(request, timeout=10) as response:
            assert json.loads(response.read())["vault"] == str(small_vault)
        assert process.stdin is not None
        process.stdin.close()  # the starter is gone: its end of the pipe closed
        assert process.wait(30) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)
    assert not pair.exists()
    assert process.stdout is not None
    output = process.stdout.read()
    assert "paired:" in output and token not in output


def listening_addresses(port: int) -> set[str]:
    """The addresses this machine listens on at `port`, read from Linux's socket tables."""
    found: set[str] = set()
    for table, family in (("/proc/net/tcp", socket.AF_INET), ("/proc/net/tcp6", socket.AF_INET6)):
        with contextlib.suppress(FileNotFoundError), open(table, encoding="ascii") as rows:
            for row in list(rows)[1:]:
                local, state = row.split()[1], row.split()[3]
                address, port_hex = local.split(":")
                if state != "0A" or int(port_hex, 16) != port:  # (0A: LISTEN)
                    continue
                raw = bytes.fromhex(address)
                # (each 32-bit word in the machine's order: little-endian on the machines tests run on)
                packed = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
                found.add(socket.inet_ntop(family, packed))
    return found


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="reads Linux's socket tables")
def test_a_paired_server_stays_on_loopback_over_http_whatever_its_environment_says(fake_ollama, small_vault, tmp_path):
    """The plugin's server inherits Obsidian's environment, where variables meant for a server run by hand
    (the whole network, with TLS) may be set: it listens on 127.0.0.1 over plain HTTP all the same."""
    pair = tmp_path / "pair.json"
    remote = {
        "VASK_HOST": "0.0.0.0",
        "VASK_ALLOW_REMOTE": "true",
        "VASK_TLS_CERT": str(tmp_path / "no-such-cert.pem"),
        "VASK_TLS_KEY": str(tmp_path / "no-such-key.pem"),
    }
    process = start_paired(small_vault, fake_ollama, tmp_path, pair, remote)
    try:
        paired = wait_for(pair)
        assert paired["url"].startswith("http://127.0.0.1:")
        port = int(paired["url"].rsplit(":", 1)[1])
        assert listening_addresses(port) == {"127.0.0.1"}
        request = urllib.request.Request(
            f"{paired['url']}/v1/health", headers={"Authorization": f"Bearer {paired['token']}"}
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            assert response.status == 200
        assert process.stdin is not None
        process.stdin.close()
        assert process.wait(30) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)
    assert process.stdout is not None
    output = process.stdout.read()
    assert "note: the address 0.0.0.0 (VASK_HOST, --host) set aside" in output
    assert "note: VASK_ALLOW_REMOTE (--allow-remote) set aside" in output
    assert "note: VASK_TLS_CERT and VASK_TLS_KEY (--tls-cert, --tls-key) set aside" in output
    assert "WITHOUT TLS" not in output


def test_a_vault_named_in_letters_the_outputs_code_page_lacks_still_pairs(fake_ollama, tmp_path):
    """Windows' pipes are in the ANSI code page (cp1252 in the West): the line naming the vault used
    to stop the server there, before it paired."""
    vault = tmp_path / "笔记 Ελληνικά"
    vault.mkdir()
    (vault / "Note.md").write_text("# Note\n\nA few words.\n", encoding="utf-8")
    pair = tmp_path / "pair.json"
    process = start_paired(vault, fake_ollama, tmp_path, pair, {"PYTHONIOENCODING": "cp1252"})
    try:
        paired = wait_for(pair)
        assert paired["url"].startswith("http://127.0.0.1:")
        assert process.stdin is not None
        process.stdin.close()
        assert process.wait(30) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)
    assert process.stdout is not None
    assert "\\u7b14\\u8bb0 \\u0395" in process.stdout.read()  # (the name, escaped)


def test_loopback_only_keeps_a_loopback_literal_and_sets_the_rest_aside(tmp_path):
    from vask_server.config import load_settings, loopback_only

    env = {"VASK_HOST": "0.0.0.0", "VASK_ALLOW_REMOTE": "true", "VASK_TLS_CERT": "c.pem", "VASK_TLS_KEY": "k.pem"}
    local, notes = loopback_only(load_settings(env=env, vault=tmp_path))
    assert (local.host, local.allow_remote, local.tls_cert, local.tls_key) == ("127.0.0.1", False, None, None)
    assert len(notes) == 3 and all("--pair-file" in note for note in notes)
    for host, bound in [
        ("::1", "::1"),
        ("127.0.0.1", "127.0.0.1"),
        ("localhost", "127.0.0.1"),
        ("192.168.1.5", "127.0.0.1"),
    ]:
        local, notes = loopback_only(load_settings(env={"VASK_HOST": host}, vault=tmp_path))
        assert local.host == bound
        assert bool(notes) == (host == "192.168.1.5")  # (localhost becomes a literal without a word)


def test_a_pair_file_a_newer_run_wrote_is_left_alone(tmp_path):
    from vask_server.adapters.pairing import Pairing, remove_pair_file, write_pair_file

    pair = tmp_path / "pair.json"
    write_pair_file(pair, Pairing("http://127.0.0.1:1", "t", "newer-run-nonce-0000", 1, "0"))
    remove_pair_file(pair, NONCE)
    assert pair.exists()
    remove_pair_file(pair, "newer-run-nonce-0000")
    assert not pair.exists()


def test_a_bad_nonce_or_a_revoked_default_token_stops_the_start(cli_env, small_vault, tmp_path, capsys):
    assert main(["serve", "--vault", str(small_vault), "--port", "0", "--pair-file", str(tmp_path / "p.json")]) == 2
    assert "--pair-nonce" in capsys.readouterr().err
    assert main(["token", "revoke", "default", "--vault", str(small_vault)]) == 2  # (no index folder yet)
    assert "no devices yet" in capsys.readouterr().err
    assert main(["token", "--vault", str(small_vault)]) == 0
    assert main(["token", "revoke", "default", "--vault", str(small_vault)]) == 0
    argv = ["serve", "--vault", str(small_vault), "--port", "0", "--pair-file", str(tmp_path / "p.json")]
    assert main([*argv, f"--pair-nonce={NONCE}"]) == 2
    err = capsys.readouterr().err
    assert "revoked" in err and "vask token" in err
    assert not (tmp_path / "p.json").exists()
