"""The MCP door's search against `/v1/search`: on sample_vault's question sets (tests/eval/questions*.jsonl),
the first six notes the search tool returns, over `/mcp` on the same `vask serve` app and over `vask mcp`
(stdio, its own process reading the same index), against those `/v1/search` returns, question by question.

    uv run python -m scripts.mcp_parity --ollama-host http://127.0.0.1:11520 --embed-model all-minilm

With a model server at that address (the stand-in: `../shared/ollama-shim/run --port 11520 &`); the test
suite runs the same comparison with the fake Ollama (tests/test_mcp_parity.py).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
from aiohttp.test_utils import TestServer

from vask_server.config import Settings, load_settings

ROOT = Path(__file__).resolve().parent.parent
QUESTION_SETS = sorted((ROOT / "tests" / "eval").glob("questions*.jsonl"))
ASKED = "2026-04-01"  # the day a question without its own asked_at is asked (both doors alike)
TOKEN = "parity-token-0123456789"
FIRST = 6


@dataclass
class Parity:
    questions: int = 0
    same_http: int = 0
    same_stdio: int = 0
    differ: list[dict[str, Any]] = field(default_factory=list)


def questions(files: Iterable[Path] = QUESTION_SETS) -> list[dict[str, Any]]:
    found = []
    for file in files:
        for line in file.read_text("utf-8").splitlines():
            if line.strip():
                item = json.loads(line)
                found.append({"id": item["id"], "question": item["question"], "now": item.get("asked_at") or ASKED})
    return found


def first_notes(paths: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(paths))[:FIRST]


async def compare(settings: Settings, asked: list[dict[str, Any]], *, stdio: bool = True) -> Parity:
    """Each question through /v1/search, the search tool over /mcp, and (`stdio`) over `vask mcp`."""
    from tests.mcp_helpers import http_session, stdio_session
    from vask_server.mcp.http import McpMount
    from vask_server.web.app import create_app
    from vask_server.web.keys import LIVE

    app = create_app(settings, watch=False, token=TOKEN, mounts=[McpMount()])
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    await app[LIVE].wait_idle(600)
    parity = Parity()
    try:
        async with (
            httpx2.AsyncClient(timeout=120, headers={"Authorization": f"Bearer {TOKEN}"}) as http,
            http_session(str(server.make_url("/mcp")), TOKEN) as over_http,
            _maybe(stdio_session(settings) if stdio else None) as over_stdio,
        ):
            for item in asked:
                api = await http.post(
                    str(server.make_url("/v1/search")), json={"query": item["question"], "now": item["now"]}
                )
                wanted = first_notes(h["path"] for h in api.json().get("hits", [])) if api.status_code == 200 else None
                tool = {"question": item["question"], "today": item["now"]}
                got_http = await _tool_notes(over_http, tool)
                got_stdio = await _tool_notes(over_stdio, tool) if over_stdio is not None else None
                parity.questions += 1
                parity.same_http += got_http == wanted
                parity.same_stdio += got_stdio == wanted
                if got_http != wanted or (over_stdio is not None and got_stdio != wanted):
                    parity.differ.append({**item, "v1_search": wanted, "mcp_http": got_http, "mcp_stdio": got_stdio})
    finally:
        await server.close()
    return parity


async def _tool_notes(client: Any, arguments: dict[str, Any]) -> list[str] | None:
    """The first notes the search tool returns; None when it answers an error (as /v1/search's 400)."""
    result = await client.call_tool("search_notes", arguments)
    if result.is_error:
        return None
    return first_notes(p["path"] for p in result.structured_content["passages"])


class _maybe:
    """`async with` over a context manager, or over nothing (yields None)."""

    def __init__(self, manager: Any) -> None:
        self.manager = manager

    async def __aenter__(self) -> Any:
        return await self.manager.__aenter__() if self.manager is not None else None

    async def __aexit__(self, *exc: Any) -> Any:
        return await self.manager.__aexit__(*exc) if self.manager is not None else None


async def _main(args: argparse.Namespace) -> int:
    from vask_server.services.context import open_services

    with tempfile.TemporaryDirectory() as folder:
        vault = Path(folder) / "vault"
        shutil.copytree(ROOT / "sample_vault", vault)
        settings = load_settings(
            env={},
            vault=vault,
            index_dir=Path(folder) / "index",
            ollama_host=args.ollama_host,
            embed_model=args.embed_model,
            chat_model="extractive",
        )
        async with open_services(settings) as services:
            await services.indexer.sync()
        asked = questions()
        parity = await compare(settings, asked, stdio=not args.no_stdio)
    report = {
        "model": args.embed_model,
        "questions": parity.questions,
        "same_first_six_http": parity.same_http,
        "same_first_six_stdio": None if args.no_stdio else parity.same_stdio,
        "differ": parity.differ,
    }
    print(json.dumps(report, ensure_ascii=False, indent=2))
    return 0 if not parity.differ else 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ollama-host", default="http://127.0.0.1:11434")
    parser.add_argument("--embed-model", default="all-minilm")
    parser.add_argument("--no-stdio", action="store_true", help="compare over /mcp only")
    raise SystemExit(asyncio.run(_main(parser.parse_args())))


if __name__ == "__main__":
    main()
