"""One code path with the HTTP API: on every question of sample_vault's question sets, the MCP search tool
returns the same first six notes as `/v1/search`, over /mcp and over `vask mcp` (stdio, its own process
reading the same index), with the fake Ollama (scripts/mcp_parity.py runs the same with a real model)."""

from __future__ import annotations

from pathlib import Path

from scripts.mcp_parity import QUESTION_SETS, compare, questions
from tests.conftest import RunningFake
from tests.mcp_helpers import index, make_vault, settings_of


async def test_the_search_tool_returns_the_first_six_notes_v1_search_does_for_every_question(
    fake_ollama: RunningFake, tmp_path: Path
) -> None:
    settings = settings_of(make_vault(tmp_path, private=False), tmp_path / "index", fake_ollama.url, exclude=())
    await index(settings)
    asked = questions()
    assert len(QUESTION_SETS) >= 11 and len(asked) > 400
    parity = await compare(settings, asked, stdio=True)
    assert parity.questions == len(asked)
    assert parity.differ == []
    assert parity.same_http == parity.same_stdio == len(asked)
