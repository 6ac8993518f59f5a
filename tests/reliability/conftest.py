"""Fixtures for the reliability suite: an Ollama stand-in that can go down and come back."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterator

import pytest
from aiohttp import web

from tests.fake_ollama import FakeOllama


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class SwitchableOllama:
    """The fake Ollama on a fixed port, on its own thread, that tests can stop and start again."""

    def __init__(self) -> None:
        self.fake = FakeOllama()
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.loop = asyncio.new_event_loop()
        self._runner: web.AppRunner | None = None
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()

    def _run(self, coroutine) -> None:  # type: ignore[no-untyped-def]
        asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(15)

    def start(self) -> None:
        async def start() -> None:
            # (stopped like a killed process: requests in flight are not waited for, which could take
            # aiohttp's default 60 s and outlast `_run`'s 15)
            runner = web.AppRunner(self.fake.app(), shutdown_timeout=0.5)
            await runner.setup()
            await web.TCPSite(runner, "127.0.0.1", self.port, reuse_address=True).start()
            self._runner = runner

        self._run(start())

    def stop(self) -> None:
        """Like Ollama being killed: the port refuses connections."""
        runner = self._runner
        if runner is not None:
            self._run(runner.cleanup())
            self._runner = None

    def close(self) -> None:
        self.stop()
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)
        self.loop.close()


@pytest.fixture
def switchable_ollama() -> Iterator[SwitchableOllama]:
    server = SwitchableOllama()
    server.start()
    yield server
    server.close()
