"""Several devices, in one process: device tokens, revocation without a restart, the failure limit,
the Host check with allowed names, TLS settings that cannot work, Ollama behind a proxy.
(Across real network namespaces: test_devices_netns.py.)"""

from __future__ import annotations

import json
import logging
import ssl
from pathlib import Path

import pytest

from tests.netns import make_certificates
from tests.web_helpers import TOKEN, running_app
from vask_server.adapters import token as tokens
from vask_server.adapters.ollama import OllamaGateway, display_host
from vask_server.adapters.tls import server_ssl_context
from vask_server.cli.command import main
from vask_server.config import load_settings
from vask_server.core.ratelimit import FailureLimiter
from vask_server.errors import ConfigError, OllamaFailed
from vask_server.web.server import check_bind


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_vask_token_add_list_revoke(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    where = ("--vault", str(tmp_path), "--index-dir", str(tmp_path / "index"))
    _, default, _ = run(capsys, "token", *where)
    code, added, _ = run(capsys, "token", "add", "phone", *where)
    phone = added.strip().splitlines()[-1]
    assert code == 0 and len(phone) >= 40 and phone != default.strip()
    stored = (tmp_path / "index" / "devices.json").read_text()
    assert phone not in stored and tokens.digest(phone) in stored  # only the hash is kept
    assert (tmp_path / "index" / "devices.json").stat().st_mode & 0o777 == 0o600
    code, _, err = run(capsys, "token", "add", "phone", *where)
    assert code == 2 and "exists already" in err and "vask token revoke phone" in err
    code, _, err = run(capsys, "token", "add", "../x", *where)
    assert code == 2 and "not a device name" in err
    code, listed, _ = run(capsys, "token", "list", *where)
    assert "default" in listed and "phone" in listed and phone not in listed and default.strip() not in listed
    code, _, _ = run(capsys, "token", "revoke", "phone", *where)
    assert code == 0 and [d.name for d in tokens.list_devices(tmp_path / "index")] == ["default"]
    code, _, err = run(capsys, "token", "revoke", "tablet", *where)
    assert code == 2 and "No device named 'tablet'" in err and "default" in err


def test_a_revoked_default_stays_revoked_when_the_server_starts_again(tmp_path: Path) -> None:
    index = tmp_path / "index"
    first = tokens.ensure_token(index)
    tokens.revoke_device(index, "default")
    tokens.ensure_first_token(index)  # what `vask serve` does at start
    assert tokens.read_token(index) is None
    assert tokens.TokenRegistry(index).match(first) is None
    # an index from before devices existed: its token keeps working, as device `default`
    legacy = tmp_path / "legacy"
    legacy.mkdir()
    (legacy / "token").write_text("an-old-token-from-an-earlier-version\n")
    tokens.ensure_first_token(legacy)
    assert tokens.TokenRegistry(legacy).match("an-old-token-from-an-earlier-version") == "default"


def test_the_registry_reads_a_change_at_the_next_check_and_writes_last_use_sparingly(tmp_path: Path) -> None:
    index = tmp_path / "index"
    now = [0.0]
    registry = tokens.TokenRegistry(index, fixed="fixed-default-token", clock=lambda: now[0])
    phone = tokens.add_device(index, "phone")
    assert registry.match(phone) == "phone" and registry.match("fixed-default-token") == "default"
    tokens.revoke_device(index, "phone")
    assert registry.match(phone) is None
    laptop = tokens.add_device(index, "laptop")
    used = index / tokens.USED_FILE
    registry.touch("laptop")  # first seen: written
    assert json.loads(used.read_text())["laptop"]
    written = used.stat().st_ino  # each write replaces the file (a new inode)
    for _ in range(1000):  # a burst within the minute: no write
        registry.touch("laptop")
    now[0] = 30.0
    registry.touch("laptop")
    assert used.stat().st_ino == written
    now[0] = 61.0
    registry.touch("laptop")
    assert used.stat().st_ino != written
    assert registry.match(laptop) == "laptop"
    assert {d.name: d.last_used for d in tokens.list_devices(index)}["laptop"] is not None


def test_the_failure_limiter_counts_per_address_in_a_sliding_window() -> None:
    limiter = FailureLimiter(limit=3, window=10.0)
    assert not limiter.fail("a", 0) and not limiter.fail("a", 1) and limiter.fail("a", 2)
    assert limiter.wait("a", 3) == pytest.approx(7.0) and limiter.wait("b", 3) == 0
    assert limiter.wait("a", 10.5) == 0  # the first failure left the window
    small = FailureLimiter(limit=2, window=10.0, max_addresses=100)
    for n in range(1000):
        small.fail(f"10.0.{n // 256}.{n % 256}", 0)
    assert len(small._failures) == 100  # bounded memory


async def test_devices_revocation_and_the_limit_through_the_app(fake_ollama, small_vault, settings_for, caplog):
    settings = settings_for(small_vault)
    phone = tokens.add_device(settings.resolved_index_dir(), "phone")
    caplog.set_level(logging.INFO)
    async with running_app(settings) as api:
        assert (await api.client.get("/v1/status", headers={"Authorization": f"Bearer {phone}"})).status == 200
        tokens.revoke_device(settings.resolved_index_dir(), "phone")
        assert (await api.client.get("/v1/status", headers={"Authorization": f"Bearer {phone}"})).status == 401
        assert (await api.get("/v1/status")).status == 200  # the default device still works
        statuses = [
            (await api.client.get("/v1/status", headers={"Authorization": "Bearer g-secret-guess"})).status
            for _ in range(20)
        ]
        assert statuses.count(401) == 19 and statuses[-1] == 429  # one failure was the revoked phone
        blocked = await api.get("/v1/status")
        assert blocked.status == 429 and int(blocked.headers["Retry-After"]) >= 1
        assert (await blocked.json())["error"]["code"] == "too_many_attempts"
    assert "g-secret-guess" not in caplog.text and phone not in caplog.text and TOKEN not in caplog.text
    assert "refused GET /v1/status from 127.0.0.1: a token no device has" in caplog.text


async def test_the_host_check_takes_allowed_names_and_cors_answers_obsidian_mobile(
    fake_ollama, small_vault, settings_for
):
    settings = settings_for(small_vault, allowed_hosts=("vask.home.arpa", "box.tail1234.ts.net"))
    async with running_app(settings) as api:
        for host in ("vask.home.arpa", "VASK.home.arpa:8765", "box.tail1234.ts.net", "127.0.0.1:8765", "[::1]:8765"):
            assert (await api.get("/v1/health", headers={"Host": host})).status == 200, host
        for host in ("evil.example", "vask.home.arpa.evil.example", "10.1.2.3:8765"):
            assert (await api.get("/v1/health", headers={"Host": host})).status == 403, host
        for origin in ("capacitor://localhost", "http://localhost"):
            preflight = await api.client.options(
                "/v1/ask",
                headers={
                    "Origin": origin,
                    "Access-Control-Request-Method": "POST",
                    "Access-Control-Request-Private-Network": "true",
                },
            )
            assert preflight.status == 204 and preflight.headers["Access-Control-Allow-Origin"] == origin
            assert preflight.headers["Access-Control-Allow-Private-Network"] == "true"
    # bound to every address: any IP literal (a rebinding attack needs a name), still no foreign name
    wide = settings_for(small_vault, host="0.0.0.0", allow_remote=True)
    async with running_app(wide) as api:
        assert (await api.get("/v1/health", headers={"Host": "192.168.1.20:8765"})).status == 200
        assert (await api.get("/v1/health", headers={"Host": "evil.example"})).status == 403


def test_tls_settings_that_cannot_work_stop_the_start_with_what_to_do(tmp_path: Path) -> None:
    certs = make_certificates(tmp_path, ["127.0.0.1"], ["127.0.0.1"])
    ok = server_ssl_context(load_settings(env={}, tls_cert=certs.server_cert, tls_key=certs.server_key))
    assert isinstance(ok, ssl.SSLContext) and ok.minimum_version == ssl.TLSVersion.TLSv1_2
    assert server_ssl_context(load_settings(env={})) is None
    cases = [
        ({"tls_cert": certs.server_cert}, "without --tls-key"),
        ({"tls_cert": tmp_path / "nope.pem", "tls_key": certs.server_key}, "no such file"),
        ({"tls_cert": certs.server_cert, "tls_key": certs.ollama_key}, "Cannot use"),  # another certificate's key
        ({"tls_cert": certs.server_key, "tls_key": certs.server_key}, "Cannot use"),  # a key is no certificate
    ]
    for values, fragment in cases:
        with pytest.raises(ConfigError) as caught:
            server_ssl_context(load_settings(env={}, **values))
        assert fragment in caught.value.message and "One server, several devices" in caught.value.hint


def test_remote_without_tls_warns_loudly(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    check_bind(load_settings(env={}, vault=tmp_path, host="0.0.0.0", allow_remote=True))
    assert "WITHOUT TLS" in capsys.readouterr().err
    check_bind(load_settings(env={}, vault=tmp_path, host="0.0.0.0", allow_remote=True), tls=True)
    assert capsys.readouterr().err == ""


async def test_ollama_behind_a_proxy_errors_name_the_host_and_never_show_the_headers(fake_ollama) -> None:
    from aiohttp import web

    from tests.fake_ollama import EMBED_MODEL, require_header

    app = fake_ollama.fake.app()
    app.middlewares.append(require_header("X-Proxy-Auth", "hush-42"))
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        without = OllamaGateway(f"http://user:pw@127.0.0.1:{port}", retries=0)
        with pytest.raises(OllamaFailed) as caught:
            await without.embed(EMBED_MODEL, ["x"])
        assert f"127.0.0.1:{port} refused" in caught.value.message and "user:pw" not in caught.value.message
        assert "VASK_OLLAMA_HEADERS" in caught.value.hint
        await without.close()
        gateway = OllamaGateway(f"http://127.0.0.1:{port}", retries=0, headers={"X-Proxy-Auth": "hush-42"})
        assert len(await gateway.embed(EMBED_MODEL, ["x"])) == 1
        await gateway.close()
    finally:
        await runner.cleanup()
    assert display_host("https://a:b@gpu.example:11434/x") == "https://gpu.example:11434/x"
    settings = load_settings(env={"VASK_OLLAMA_HEADERS": "X-Proxy-Auth: hush-42"})
    assert settings.ollama_headers == ("X-Proxy-Auth: hush-42",) and "hush-42" not in repr(settings)


async def test_ollama_over_https_with_an_untrusted_certificate_names_the_host(tmp_path: Path) -> None:
    from aiohttp import web

    from tests.fake_ollama import EMBED_MODEL, FakeOllama

    certs = make_certificates(tmp_path, ["127.0.0.1"], ["127.0.0.1"])
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(certs.ollama_cert, certs.ollama_key)
    runner = web.AppRunner(FakeOllama().app())
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0, ssl_context=context).start()
    port = runner.addresses[0][1]
    try:
        from vask_server.errors import OllamaUnavailable

        gateway = OllamaGateway(f"https://127.0.0.1:{port}", retries=0)
        with pytest.raises(OllamaUnavailable) as caught:
            await gateway.embed(EMBED_MODEL, ["x"])
        assert f"https://127.0.0.1:{port}" in caught.value.message and "not trusted" in caught.value.message
        await gateway.close()
    finally:
        await runner.cleanup()
