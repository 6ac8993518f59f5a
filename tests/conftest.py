"""Fixtures: a real fake-Ollama HTTP server on 127.0.0.1, a temporary vault, settings that use both."""

from __future__ import annotations

import asyncio
import shutil
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from aiohttp import web

from tests.fake_ollama import CHAT_MODEL, EMBED_MODEL, FakeOllama
from vask_server.config import Settings, load_settings

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_VAULT = ROOT / "sample_vault"


@dataclass
class RunningFake:
    fake: FakeOllama
    url: str


@pytest.fixture
def fake_ollama() -> Iterator[RunningFake]:
    """The fake runs on its own thread and loop, so both async tests and the synchronous CLI
    (which calls asyncio.run) can talk to it."""
    yield from _running_fake()


@pytest.fixture
def other_fake() -> Iterator[RunningFake]:
    """A second model server at another address (answers from another server than embeddings)."""
    yield from _running_fake()


def _running_fake() -> Iterator[RunningFake]:
    fake = FakeOllama()
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    holder: dict[str, object] = {}

    async def start() -> None:
        runner = web.AppRunner(fake.app())
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        holder["runner"] = runner
        holder["port"] = runner.addresses[0][1]
        ready.set()

    def run() -> None:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(start())
        loop.run_forever()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert ready.wait(10), "fake Ollama did not start"
    yield RunningFake(fake, f"http://127.0.0.1:{holder['port']}")
    runner = holder["runner"]
    assert isinstance(runner, web.AppRunner)
    asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(10)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(10)
    loop.close()


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    """A private copy of sample_vault that a test may change."""
    target = tmp_path / "vault"
    shutil.copytree(SAMPLE_VAULT, target)
    return target


@pytest.fixture
def small_vault(tmp_path: Path) -> Path:
    """A handful of notes, for tests that count embeddings exactly."""
    root = tmp_path / "small"
    (root / "Projects").mkdir(parents=True)
    (root / "Projects" / "Plan.md").write_text(
        "# Plan\n\n"
        + "".join(
            f"## Section {n}\n\nSection {n} talks about topic number {n}: budgets, timelines and risks "
            f"for milestone {n}, with enough words to stand alone as a chunk of its own when split "
            f"at headings, because each part of the plan matters on its own terms. Owners, dates and "
            f"open questions for milestone {n} are tracked here and reviewed every Friday afternoon.\n\n"
            for n in range(1, 11)
        ),
        encoding="utf-8",
    )
    (root / "Sourdough.md").write_text(
        "---\ntags: [cooking]\n---\n# Sourdough\n\nFeed the starter at 1:5:5 the night before. Bake at 250 C "
        "with the lid on for twenty minutes, then uncovered until the crust is dark.\n",
        encoding="utf-8",
    )
    (root / "Running.md").write_text(
        "# Running\n\nEasy runs at conversational pace, one long run on Sunday, intervals on Wednesday. "
        "See [[Sourdough]] for the post-run breakfast.\n",
        encoding="utf-8",
    )
    return root


@pytest.fixture
def settings_for(fake_ollama: RunningFake, tmp_path: Path):  # type: ignore[no-untyped-def]
    def make(vault_path: Path, **overrides: object) -> Settings:
        values: dict[str, object] = {
            "vault": vault_path,
            "index_dir": tmp_path / "index",
            "ollama_host": fake_ollama.url,
            "embed_model": EMBED_MODEL,
            "chat_model": CHAT_MODEL,
            "ollama_retries": 2,
        }
        values.update(overrides)
        return load_settings(env={}, **values)

    return make


@pytest.fixture
def cli_env(monkeypatch: pytest.MonkeyPatch, fake_ollama: RunningFake, tmp_path: Path) -> Path:
    """Environment for running `vask` in-process against the fake; returns the index folder."""
    index_dir = tmp_path / "index"
    for name in ("VASK_VAULT", "VASK_TOP_K", "VASK_MIN_SIMILARITY", "VASK_QUERY_PREFIX", "VASK_DOCUMENT_PREFIX"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
    monkeypatch.setenv("VASK_EMBED_MODEL", EMBED_MODEL)
    monkeypatch.setenv("VASK_CHAT_MODEL", CHAT_MODEL)
    monkeypatch.setenv("VASK_INDEX_DIR", str(index_dir))
    monkeypatch.setenv("VASK_OLLAMA_RETRIES", "1")
    return index_dir
