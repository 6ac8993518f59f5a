"""For the MCP door's tests: a vault indexed with notes kept out three ways, `vask mcp` launched over stdio
and `/mcp` reached over HTTP, both driven by the MCP SDK's own client (not code written here)."""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult

from tests.conftest import SAMPLE_VAULT
from tests.fake_ollama import CHAT_MODEL, EMBED_MODEL
from vask_server.config import Settings, load_settings
from vask_server.services.context import open_services

ROOT = Path(__file__).resolve().parent.parent

# The notes of tests/test_exclusions.py, kept out by VASK_EXCLUDE (Private/), Obsidian's Excluded files
# (Journal/) and their own frontmatter (Health/)
MARKERS = {
    "Private/Therapy.md": "zqxtherapyword",
    "Journal/Salary talk.md": "zqxsalaryword",
    "Health/Results.md": "zqxhealthword",
}
EXCLUDE = ("Private/**",)
SECRETS = [*MARKERS.values(), *MARKERS, "Therapy", "Salary talk", "Results.md"]


def write_private_notes(vault: Path) -> None:
    for path, marker in MARKERS.items():
        note = vault / path
        note.parent.mkdir(parents=True, exist_ok=True)
        front = "---\nvask: exclude\n---\n" if path.startswith("Health/") else ""
        note.write_text(f"{front}# {note.stem}\n\nOnly for me: {marker} and how I felt about it.\n", "utf-8")
    (vault / "Links to private.md").write_text(
        "# Index of feelings\n\nSee [[Therapy]] and [[Salary talk]]; how I felt about work, and the "
        "[[Launch Tidepool app]] worries.\n",
        "utf-8",
    )
    (vault / ".obsidian").mkdir(exist_ok=True)
    (vault / ".obsidian" / "app.json").write_text(json.dumps({"userIgnoreFilters": ["Journal/"]}), "utf-8")


def make_vault(root: Path, *, private: bool = True) -> Path:
    vault = root / "vault"
    shutil.copytree(SAMPLE_VAULT, vault)
    if private:
        write_private_notes(vault)
    return vault


def settings_of(vault: Path, index_dir: Path, ollama: str, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "vault": vault,
        "index_dir": index_dir,
        "ollama_host": ollama,
        "embed_model": EMBED_MODEL,
        "chat_model": CHAT_MODEL,
        "ollama_retries": 1,
        "exclude": EXCLUDE,
    }
    values.update(overrides)
    return load_settings(env={}, **values)


async def index(settings: Settings) -> None:
    async with open_services(settings) as services:
        await services.indexer.sync()


def env_of(settings: Settings, **extra: str) -> dict[str, str]:
    """The environment `vask mcp` is launched with: what an agent's configuration would set."""
    return {
        "VASK_VAULT": str(settings.vault),
        "VASK_INDEX_DIR": str(settings.resolved_index_dir()),
        "OLLAMA_HOST": settings.ollama_host,
        "VASK_EMBED_MODEL": settings.embed_model,
        "VASK_CHAT_MODEL": settings.chat_model,
        "VASK_OLLAMA_RETRIES": "1",
        "VASK_EXCLUDE": ",".join(settings.exclude),
        **extra,
    }


@asynccontextmanager
async def stdio_session(settings: Settings, errlog: Any = None, **env: str) -> AsyncIterator[Client]:
    """`vask mcp` as an agent launches it (`python -m vask_server.cli.command mcp`, the same entry point as the
    `vask` script), over its standard input and output."""
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "vask_server.cli", "mcp"], env=env_of(settings, **env), cwd=str(ROOT)
    )
    client = Client(params, read_timeout_seconds=120)
    if errlog is not None:
        from mcp.client.stdio import stdio_client

        client = Client(stdio_client(params, errlog=errlog), read_timeout_seconds=120)
    async with client:
        yield client


@asynccontextmanager
async def http_session(url: str, token: str | None, *, mode: str = "auto", **headers: str) -> AsyncIterator[Client]:
    sent = {**({"Authorization": f"Bearer {token}"} if token else {}), **headers}
    async with (
        httpx2.AsyncClient(headers=sent, timeout=120) as http,
        Client(streamable_http_client(url, http_client=http), mode=mode) as client,
    ):
        yield client


def text_of(result: CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


def notes_of(structured: dict[str, Any] | None, key: str = "passages") -> list[str]:
    """Distinct note paths in the order they first come."""
    return list(dict.fromkeys(item["path"] for item in (structured or {}).get(key, [])))


@asynccontextmanager
async def held(session: Any) -> AsyncIterator[Client]:
    """A client session entered and left by a task of its own, so that a fixture shared by several
    tests (each its own task) can hold it: the SDK's task groups must be left by the task that
    entered them."""
    ready: asyncio.Future[Client] = asyncio.get_running_loop().create_future()
    stop = asyncio.Event()

    async def hold() -> None:
        try:
            async with session as client:
                ready.set_result(client)
                await stop.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc)
            raise

    task = asyncio.create_task(hold())
    try:
        yield await ready
    finally:
        stop.set()
        await task
