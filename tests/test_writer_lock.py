"""One writer an index: `vask serve` and `vask index` hold an OS lock on the index folder for their
lifetime; a second writer is refused (exit 2, naming the holder), readers work beside it, a killed
holder leaves no lock, and `vask pause` / `vask resume` go through the running server's API."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, RunningFake
from tests.fake_ollama import CHAT_MODEL, EMBED_MODEL
from tests.web_helpers import TOKEN, running_app
from vask_server.adapters.meta import read_meta, write_meta
from vask_server.adapters.running_server import local_url
from vask_server.adapters.store import UNDROPPED_TABLES
from vask_server.adapters.writer_lock import HOLDER_FILE, INDEX, SERVE, IndexBusy, WriterLock, read_holder
from vask_server.cli.command import main
from vask_server.services.context import open_services

# --- real processes --------------------------------------------------------------------------------


def _env(fake: RunningFake, index_dir: Path) -> dict[str, str]:
    return {
        **os.environ,
        "OLLAMA_HOST": fake.url,
        "VASK_EMBED_MODEL": EMBED_MODEL,
        "VASK_CHAT_MODEL": CHAT_MODEL,
        "VASK_INDEX_DIR": str(index_dir),
        "VASK_LOG_LEVEL": "warning",
    }


def _vask(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "vask_server.cli", *args]
    return subprocess.run(argv, env=env, cwd=ROOT, capture_output=True, text=True, timeout=120)


def _start_server(env: dict[str, str], vault: Path) -> tuple[subprocess.Popen[str], str]:
    argv = [sys.executable, "-m", "vask_server.cli", "serve", "--vault", str(vault), "--port", "0"]
    server = subprocess.Popen(argv, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert server.stdout is not None
    line = server.stdout.readline()
    assert "listening on http://127.0.0.1:" in line, line
    return server, line.strip().rsplit(" ", 1)[-1]


def _status(url: str, index_dir: Path) -> dict[str, Any]:
    token = (index_dir / "token").read_text().strip()
    request = urllib.request.Request(f"{url}/v1/status", headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        status: dict[str, Any] = json.loads(response.read())
    return status


def _until(check: Any, what: str, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, f"not {what} within {seconds} s"
        time.sleep(0.05)


def _stop(server: subprocess.Popen[str]) -> None:
    if server.poll() is None:
        server.terminate()
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(10)


@pytest.mark.reliability
def test_a_second_writer_is_refused_naming_the_server_and_readers_and_pause_work_beside_it(
    fake_ollama: RunningFake, small_vault: Path, tmp_path: Path
) -> None:
    index_dir = tmp_path / "index"
    env = _env(fake_ollama, index_dir)
    server, url = _start_server(env, small_vault)
    try:
        _until(lambda: _status(url, index_dir)["state"] == "idle", "indexed")
        held_by = f"vask serve (pid {server.pid}) on {url.removeprefix('http://')} holds this index"

        for second in (["index"], ["index", "--full"], ["serve", "--port", "0"]):
            result = _vask(env, *second, "--vault", str(small_vault))
            assert result.returncode == 2, (second, result.stdout, result.stderr)
            assert f"error: {held_by}" in result.stderr, result.stderr
            assert "\nhint: " in result.stderr and "Traceback" not in result.stderr
        assert server.poll() is None and _status(url, index_dir)["state"] == "idle"

        # readers take no lock
        found = _vask(env, "search", "sourdough starter", "--vault", str(small_vault), "--json")
        assert found.returncode == 0, found.stderr
        assert any(hit["path"] == "Sourdough.md" for hit in json.loads(found.stdout)["hits"])
        assert _vask(env, "status", "--vault", str(small_vault)).returncode == 0
        asked = _vask(env, "ask", "when do I feed the starter?", "--vault", str(small_vault))
        assert asked.returncode == 0, asked.stderr

        # pause and resume go through the server
        paused = _vask(env, "pause", "--vault", str(small_vault))
        assert paused.returncode == 0, paused.stderr
        assert f"vask serve (pid {server.pid})" in paused.stdout
        assert _status(url, index_dir)["paused"] is True
        assert read_meta(index_dir).paused  # (written by the server: kept over a restart)
        status = _vask(env, "status", "--vault", str(small_vault))
        assert "indexing is paused" in status.stdout

        # the server's own later writes of index.json keep the pause: a deleted note is synced while
        # paused (nothing to embed), and the sync records itself in index.json
        syncs = int(read_meta(index_dir).extra["syncs"])
        (small_vault / "Running.md").unlink()
        _until(lambda: int(read_meta(index_dir).extra.get("syncs", 0)) > syncs, "synced")
        assert read_meta(index_dir).paused and _status(url, index_dir)["paused"] is True

        resumed = _vask(env, "resume", "--vault", str(small_vault))
        assert resumed.returncode == 0, resumed.stderr
        assert _status(url, index_dir)["paused"] is False and not read_meta(index_dir).paused
    finally:
        _stop(server)
    assert server.returncode == 0
    assert not (index_dir / HOLDER_FILE).exists()  # a clean stop says no one holds it
    result = _vask(env, "index", "--vault", str(small_vault))
    assert result.returncode == 0, result.stderr


@pytest.mark.reliability
def test_a_killed_server_leaves_no_lock(fake_ollama: RunningFake, small_vault: Path, tmp_path: Path) -> None:
    index_dir = tmp_path / "index"
    env = _env(fake_ollama, index_dir)
    server, url = _start_server(env, small_vault)
    try:
        _until(lambda: _status(url, index_dir)["state"] == "idle", "indexed")
        assert _vask(env, "index", "--vault", str(small_vault)).returncode == 2
    finally:
        server.kill()  # SIGKILL: no handler, no clean-up
        server.wait(10)
    stale = read_holder(index_dir)
    assert stale is not None and stale.pid == server.pid  # (left behind, and not believed: the lock is free)
    result = _vask(env, "index", "--vault", str(small_vault))
    assert result.returncode == 0, result.stderr
    second, _url = _start_server(env, small_vault)
    try:
        holder = read_holder(index_dir)
        assert holder is not None and holder.pid == second.pid and holder.url
    finally:
        _stop(second)


# --- the lock itself ---------------------------------------------------------------------------------


def test_the_lock_names_its_holder_and_is_free_once_released(tmp_path: Path) -> None:
    index_dir = tmp_path / "index"
    with WriterLock(index_dir, SERVE) as first:
        first.announce("http://127.0.0.1:8765")
        with pytest.raises(IndexBusy) as busy:
            WriterLock(index_dir, INDEX).acquire()
        assert busy.value.message.startswith(f"vask serve (pid {os.getpid()}) on 127.0.0.1:8765 holds this index")
        assert "vask pause" in busy.value.hint
        assert busy.value.holder is not None and busy.value.holder.url == "http://127.0.0.1:8765"
    with WriterLock(index_dir, INDEX) as second:
        assert second.held
        with pytest.raises(IndexBusy, match=r"vask index \(pid \d+\) holds this index") as busy:
            WriterLock(index_dir, SERVE).acquire()
        assert "Wait for it to finish" in busy.value.hint


def test_a_server_bound_to_every_address_is_asked_on_loopback() -> None:
    assert local_url("http://0.0.0.0:8765") == "http://127.0.0.1:8765"
    assert local_url("https://[::]:8765") == "https://[::1]:8765"
    assert local_url("http://[::1]:9") == "http://[::1]:9"
    assert local_url("https://vask.example:443") == "https://vask.example:443"


def test_vask_index_or_pause_beside_a_running_vask_index_is_refused(cli_env: Path, small_vault: Path, capsys) -> None:
    (cli_env).mkdir(parents=True)
    write_meta(cli_env, read_meta(cli_env))  # (an index.json: there is an index to pause)
    with WriterLock(cli_env, INDEX):
        assert main(["index", "--vault", str(small_vault)]) == 2
        err = capsys.readouterr().err
        assert f"error: vask index (pid {os.getpid()}) holds this index" in err and "hint:" in err
        assert main(["pause", "--vault", str(small_vault)]) == 2
        err = capsys.readouterr().err
        assert "error: vask index" in err and "hint: `vask pause` pauses `vask serve`" in err
    assert not read_meta(cli_env).paused
    assert main(["pause", "--vault", str(small_vault)]) == 0  # no writer: written here, under the lock
    assert "no `vask serve` runs on this index" in capsys.readouterr().out
    assert read_meta(cli_env).paused


# --- `vask pause` through the server, and the server keeping it -----------------------------------------


async def test_vask_pause_beside_a_server_asks_it_through_its_api(
    settings_for: Any, small_vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    index_dir = tmp_path / "index"
    settings = settings_for(small_vault)
    async with running_app(settings) as api:
        heard: list[bool] = []
        pause = api.live.pause

        def noted_pause(paused: bool) -> None:
            heard.append(paused)
            pause(paused)

        monkeypatch.setattr(api.live, "pause", noted_pause)
        (index_dir / "token").write_text(TOKEN + "\n")  # (the app's default device's token)
        url = str(api.client.make_url("")).rstrip("/")
        with WriterLock(index_dir, SERVE) as lock:
            lock.announce(url)
            argv = ["--vault", str(small_vault), "--index-dir", str(index_dir)]
            assert await asyncio.to_thread(main, ["pause", *argv]) == 0
            assert heard == [True]
            assert (await (await api.get("/v1/status")).json())["paused"] is True
            assert read_meta(index_dir).paused
            assert await asyncio.to_thread(main, ["resume", *argv]) == 0
            assert heard == [True, False] and not read_meta(index_dir).paused
            out = capsys.readouterr().out
            assert f"indexing paused: vask serve (pid {os.getpid()})" in out and "indexing resumed" in out

            (index_dir / "token").write_text("not-the-token\n")
            assert await asyncio.to_thread(main, ["pause", *argv]) == 2
            err = capsys.readouterr().err
            assert "error: vask serve" in err and "unauthorized" in err and "hint:" in err
            assert heard == [True, False]


async def test_a_pause_set_while_a_sync_drops_a_table_is_kept(settings_for: Any, small_vault: Path) -> None:
    """A sync writes index.json after a table drop from a copy it read before it: the pause set
    meanwhile (through the API, in the server's own process) must not be lost."""
    settings = settings_for(small_vault)
    async with open_services(settings) as services:
        await services.indexer.sync()
        meta = services.store.read_meta()
        meta.extra[UNDROPPED_TABLES] = {"chunks_old_model_8": "in use"}  # an old index's table to remove
        services.store.write_meta(meta)

        dropping, release = asyncio.Event(), asyncio.Event()
        drop = services.store.drop

        async def held_drop(suffix: str) -> dict[str, str]:
            dropping.set()
            await release.wait()
            return await drop(suffix)

        services.store.drop = held_drop  # type: ignore[method-assign]
        sync = asyncio.create_task(services.indexer.sync())
        await dropping.wait()
        services.indexer.set_paused(True)  # what POST /v1/index/pause does
        release.set()
        await sync
        after = services.store.read_meta()
        assert after.extra[UNDROPPED_TABLES] == {}  # written by the sync after the drop
        assert after.paused
        assert services.indexer.paused


async def test_pause_reaches_a_server_over_https_pinned_to_its_own_certificate(tmp_path: Path) -> None:
    """A certificate for another name than the loopback address asked, signed by a CA this machine does
    not trust: accepted as the server's own (pinned), and a different one refused."""
    import ssl

    from aiohttp import web

    from tests.netns import make_certificates
    from vask_server.adapters.running_server import post
    from vask_server.adapters.writer_lock import Holder
    from vask_server.errors import VaskError

    certs = make_certificates(tmp_path, ["vask.example"], ["other.example"])
    index_dir = tmp_path / "index"
    index_dir.mkdir()
    (index_dir / "token").write_text(TOKEN + "\n")
    asked: list[str] = []

    async def pause(request: web.Request) -> web.Response:
        asked.append(request.headers.get("Authorization", ""))
        return web.json_response({"paused": True})

    app = web.Application()
    app.router.add_post("/v1/index/pause", pause)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(certs.server_cert, certs.server_key)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0, ssl_context=context).start()
    url = f"https://127.0.0.1:{runner.addresses[0][1]}"
    try:
        holder = Holder(os.getpid(), SERVE, "", url, str(certs.server_cert))
        assert await asyncio.to_thread(post, holder, index_dir, "/v1/index/pause") == {"paused": True}
        assert asked == [f"Bearer {TOKEN}"]
        impostor = Holder(os.getpid(), SERVE, "", url, str(certs.ollama_cert))
        with pytest.raises(VaskError, match="Could not reach vask serve") as refused:
            await asyncio.to_thread(post, impostor, index_dir, "/v1/index/pause")
        assert "still running" in refused.value.hint
        assert asked == [f"Bearer {TOKEN}"]  # (the token never went to a server it could not verify)
    finally:
        await runner.cleanup()
