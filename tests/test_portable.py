"""`vask serve` on Windows and macOS, by the pieces that differ there, simulated on Linux: a loop without
signal handlers (Windows' asyncio has none), Ctrl+Break, the per-user data folder, `localhost` naming both
::1 and 127.0.0.1 (macOS), and the Host check for every way of writing a loopback address; a server bound
to ::1 for real where this machine has IPv6 loopback. The plugin's side: obsidian-plugin/test/unit."""

from __future__ import annotations

import asyncio
import errno
import json
import signal
import socket
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.web_helpers import running_app
from vask_server.config import Settings, default_index_dir
from vask_server.web.server import Launch, listen, serve, stop_on_signals

NONCE = "portable-nonce-0123456789"


class LoopWithoutSignals(asyncio.SelectorEventLoop):
    """As Windows' event loops are: `add_signal_handler` is not implemented (asyncio's base loop's)."""

    def add_signal_handler(self, sig: int, callback: Callable[..., object], *args: Any) -> None:
        raise NotImplementedError

    def remove_signal_handler(self, sig: int) -> bool:
        raise NotImplementedError


def ipv6_loopback() -> bool:
    try:
        with socket.create_server(("::1", 0), family=socket.AF_INET6):
            return True
    except OSError:
        return False


# --- signals ----------------------------------------------------------------------------------------------


def test_without_loop_signal_handlers_ctrl_c_and_ctrl_break_stop_through_signal_signal(monkeypatch):
    monkeypatch.setattr(signal, "SIGBREAK", signal.SIGUSR1, raising=False)  # (Windows' Ctrl+Break, simulated)
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGUSR1)}

    async def stopped_by(sig: int) -> bool:
        stop = asyncio.Event()
        restore = stop_on_signals(asyncio.get_running_loop(), stop)
        try:
            assert signal.getsignal(sig) is not before[sig]  # (ours, not the loop's: it has none)
            signal.raise_signal(sig)
            await asyncio.wait_for(stop.wait(), 10)
            return stop.is_set()
        finally:
            restore()

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGUSR1):
        with asyncio.Runner(loop_factory=LoopWithoutSignals) as runner:
            assert runner.run(stopped_by(sig))
    assert {sig: signal.getsignal(sig) for sig in before} == before  # each put back as it was


def test_on_unix_the_loops_own_handlers_are_used_and_removed():
    async def check() -> None:
        loop = asyncio.get_running_loop()
        stop = asyncio.Event()
        restore = stop_on_signals(loop, stop)
        signal.raise_signal(signal.SIGINT)
        await asyncio.wait_for(stop.wait(), 10)
        restore()
        assert not loop.remove_signal_handler(signal.SIGINT)  # (it was the loop's, and restore removed it)

    asyncio.run(check())


def test_serve_starts_pairs_and_stops_on_ctrl_c_on_a_loop_without_signal_handlers(fake_ollama, small_vault, tmp_path):
    """The whole `vask serve` as on Windows (where it used to stop at `add_signal_handler`)."""
    from tests.conftest import RunningFake

    assert isinstance(fake_ollama, RunningFake)
    settings = _settings(fake_ollama.url, small_vault, tmp_path)
    pair = tmp_path / "pair.json"

    async def main() -> dict[str, Any]:
        async def stop_when_paired() -> dict[str, Any]:
            while not pair.exists():
                await asyncio.sleep(0.05)
            paired: dict[str, Any] = json.loads(pair.read_text("utf-8"))
            headers = {"Authorization": f"Bearer {paired['token']}"}
            async with (
                aiohttp.ClientSession() as session,
                session.get(f"{paired['url']}/v1/health", headers=headers) as response,
            ):
                paired["health"] = response.status
            signal.raise_signal(signal.SIGINT)  # Ctrl+C in the console it runs in
            return paired

        checker = asyncio.ensure_future(stop_when_paired())
        await asyncio.wait_for(serve(settings, watch=False, launch=Launch(pair, NONCE)), 60)
        return await checker

    with asyncio.Runner(loop_factory=LoopWithoutSignals) as runner:
        paired = runner.run(main())
    assert paired["health"] == 200 and paired["url"].startswith("http://127.0.0.1:")
    assert not pair.exists()  # it shut down cleanly: its pair file went with it


# --- the index's folder -------------------------------------------------------------------------------------


def test_the_index_folder_defaults_to_each_systems_per_user_data_folder(monkeypatch, tmp_path):
    vault = tmp_path / "My Vault"
    vault.mkdir()
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))  # (Path.home() on Linux and macOS)
    name = default_index_dir(vault, env={"XDG_DATA_HOME": str(tmp_path / "x")}).name
    assert name.startswith("My-Vault-")

    monkeypatch.setattr(sys, "platform", "darwin")
    assert default_index_dir(vault, env={}) == home / ".local" / "share" / "vask" / "indexes" / name

    monkeypatch.setattr(sys, "platform", "win32")
    local = tmp_path / "AppData" / "Local"
    windows = default_index_dir(vault, env={"LOCALAPPDATA": str(local)})
    assert windows == local / "vask" / "indexes" / name
    assert default_index_dir(vault, env={}) == home / "AppData" / "Local" / "vask" / "indexes" / name
    # a folder set on purpose wins everywhere
    assert default_index_dir(vault, env={"XDG_DATA_HOME": str(tmp_path / "x"), "LOCALAPPDATA": str(local)}) == (
        tmp_path / "x" / "vask" / "indexes" / name
    )
    # an index `vask index` made on Windows before, under ~/.local/share, is still found
    legacy = home / ".local" / "share" / "vask" / "indexes" / name
    legacy.mkdir(parents=True)
    assert default_index_dir(vault, env={"LOCALAPPDATA": str(local)}) == legacy
    windows.mkdir(parents=True)
    assert default_index_dir(vault, env={"LOCALAPPDATA": str(local)}) == windows


# --- addresses ----------------------------------------------------------------------------------------------


def test_localhost_with_both_addresses_is_bound_on_one_port(monkeypatch):
    """macOS names ::1 and 127.0.0.1 `localhost`: with --port 0 both must get the same port."""
    if not ipv6_loopback():
        pytest.skip("no IPv6 loopback on this machine")
    real = socket.getaddrinfo

    def macos(host: str, port: int, *args: Any, **kwargs: Any) -> Any:
        if host != "localhost":
            return real(host, port, *args, **kwargs)
        return [
            (socket.AF_INET6, socket.SOCK_STREAM, 6, "", ("::1", port, 0, 0)),
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port)),
        ]

    monkeypatch.setattr(socket, "getaddrinfo", macos)
    sockets = listen("localhost", 0)
    try:
        ports = {sock.getsockname()[1] for sock in sockets}
        assert len(sockets) == 2 and len(ports) == 1
        port = ports.pop()
        for address in ("::1", "127.0.0.1"):
            with socket.create_connection((address, port), timeout=5):
                pass
    finally:
        for sock in sockets:
            sock.close()


def test_when_the_first_addresss_free_port_is_taken_on_the_other_another_is_picked(monkeypatch):
    real_create = socket.create_server
    refused: list[Any] = []

    def create(address: Any, **kwargs: Any) -> socket.socket:
        if address[1] != 0 and not refused:  # (the second address, at the first one's port: taken once)
            refused.append(address)
            raise OSError(errno.EADDRINUSE, "Address already in use")
        return real_create(address, **kwargs)

    monkeypatch.setattr(socket, "create_server", create)
    addresses = [(socket.AF_INET, ("127.0.0.1", 0)), (socket.AF_INET, ("127.0.0.2", 0))]
    monkeypatch.setattr(
        socket, "getaddrinfo", lambda *a, **k: [(f, socket.SOCK_STREAM, 6, "", s) for f, s in addresses]
    )
    sockets = listen("localhost", 0)
    try:
        assert len(refused) == 1
        assert len({sock.getsockname()[1] for sock in sockets}) == 1 and len(sockets) == 2
    finally:
        for sock in sockets:
            sock.close()


@pytest.mark.parametrize(
    "host",
    ["localhost:8765", "LocalHost.:8765", "127.0.0.1:8765", "127.0.0.1", "[::1]:8765", "[0:0:0:0:0:0:0:1]:8765", "::1"],
)
async def test_every_way_of_writing_a_loopback_address_passes_the_host_check(fake_ollama, vault, settings_for, host):
    async with running_app(settings_for(vault)) as api:
        response = await api.get("/v1/health", headers={"Host": host})
        assert response.status == 200, host


async def test_a_server_bound_to_another_loopback_address_answers_requests_addressed_to_it(
    fake_ollama, vault, settings_for
):
    async with running_app(settings_for(vault, host="127.0.0.2")) as api:
        assert (await api.get("/v1/health", headers={"Host": "127.0.0.2:8765"})).status == 200
        refused = await api.get("/v1/health", headers={"Host": "127.0.0.3:8765"})
        assert refused.status == 403 and (await refused.json())["error"]["code"] == "forbidden_host"
        assert (await api.get("/v1/health", headers={"Host": "localhost.attacker.example"})).status == 403


def test_a_server_bound_to_ipv6_loopback_pairs_there_and_answers_by_every_loopback_name(
    fake_ollama, small_vault, tmp_path
):
    if not ipv6_loopback():
        pytest.skip("no IPv6 loopback on this machine")
    settings = _settings(fake_ollama.url, small_vault, tmp_path, host="::1")
    pair = tmp_path / "pair.json"

    async def main() -> tuple[str, list[int]]:
        task = asyncio.ensure_future(serve(settings, watch=False, launch=Launch(pair, NONCE)))
        while not pair.exists():
            assert not task.done(), task.exception()
            await asyncio.sleep(0.05)
        paired = json.loads(pair.read_text("utf-8"))
        port = int(paired["url"].rsplit(":", 1)[1])
        statuses = []
        async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {paired['token']}"}) as session:
            for host in (f"[::1]:{port}", f"localhost:{port}", f"127.0.0.1:{port}"):
                async with session.get(f"{paired['url']}/v1/health", headers={"Host": host}) as response:
                    statuses.append(response.status)
        signal.raise_signal(signal.SIGTERM)
        await asyncio.wait_for(task, 60)
        return paired["url"], statuses

    url, statuses = asyncio.run(main())
    assert url.startswith("http://[::1]:")
    assert statuses == [200, 200, 200]


def _settings(ollama: str, vault: Path, tmp_path: Path, **more: Any) -> Settings:
    from tests.fake_ollama import CHAT_MODEL, EMBED_MODEL
    from vask_server.config import load_settings

    return load_settings(
        env={},
        vault=vault,
        index_dir=tmp_path / "index",
        ollama_host=ollama,
        embed_model=EMBED_MODEL,
        chat_model=CHAT_MODEL,
        port=0,
        **more,
    )
