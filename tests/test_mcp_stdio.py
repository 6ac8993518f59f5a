"""`vask mcp` over stdio, launched as an agent launches it and driven by the MCP SDK's own client: every
tool, the notes as resources a page at a time, each kind of error (the server answering on after each),
and what a reader beside the index's writer must be: ready from the index as it stands, writing
nothing, saying when the index is behind or being built, keyword search when the model server is down."""

from __future__ import annotations

import asyncio
import hashlib
import json
import socket
from collections.abc import AsyncIterator, Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

from tests.conftest import RunningFake, _running_fake
from tests.mcp_helpers import held, index, make_vault, notes_of, settings_of, stdio_session, text_of
from vask_server import __version__
from vask_server.adapters.meta import META_FILE
from vask_server.config import Settings
from vask_server.mcp.shapes import ConnectionsOutput, DatedOutput, ReadOutput, SearchOutput, StatusOutput

pytestmark = pytest.mark.asyncio(loop_scope="module")

TIDEPOOL = "01 Projects/Launch Tidepool app.md"
TOOLS = {"search_notes", "read_note", "note_connections", "notes_in_range", "index_status"}


@pytest.fixture(scope="module")
def fake() -> Iterator[RunningFake]:
    yield from _running_fake()


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def indexed(fake: RunningFake, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    root = tmp_path_factory.mktemp("mcp-stdio")
    settings = settings_of(make_vault(root), root / "index", fake.url)
    await index(settings)
    (settings.resolved_index_dir() / "calibration.json").unlink(missing_ok=True)
    return settings


def _digests(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.rglob("*") if p.is_file()
    }


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def before(indexed: Settings) -> dict[str, str]:
    return _digests(indexed.resolved_index_dir())


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def client(indexed: Settings, before: dict[str, str]) -> AsyncIterator[Client]:
    async with held(stdio_session(indexed)) as session:
        yield session


async def test_the_server_says_who_it_is_and_speaks_the_sdks_protocol_revisions(client: Client) -> None:
    assert client.server_info is not None and client.server_info.name == "vask"
    assert client.server_info.version == __version__
    assert client.protocol_version in (*HANDSHAKE_PROTOCOL_VERSIONS, *MODERN_PROTOCOL_VERSIONS)
    assert "cite" in (client.instructions or "")


async def test_each_tool_is_read_only_and_described_for_a_model_with_its_schemas(client: Client) -> None:
    tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.annotations is not None and tool.annotations.read_only_hint is True
        assert tool.annotations.destructive_hint is False and tool.annotations.open_world_hint is False
        assert "Example" in (tool.description or "") and len(tool.description or "") < 700
        assert tool.output_schema is not None and tool.input_schema["type"] == "object"
    question = tools["search_notes"].input_schema["properties"]["question"]
    assert question["maxLength"] == 4000 and question["examples"]
    assert tools["search_notes"].input_schema["required"] == ["question"]
    assert tools["read_note"].input_schema["required"] == ["path"]
    assert tools["search_notes"].output_schema["properties"]["passages"]["type"] == "array"


async def test_search_gives_passages_with_citations_lines_dates_and_scores(client: Client) -> None:
    result = await client.call_tool("search_notes", {"question": "How much will the annual Tidepool Pro cost?"})
    assert not result.is_error
    found = SearchOutput.model_validate(result.structured_content)
    assert found.passages and found.mode == "hybrid" and found.index_state == "current"
    first = found.passages[0]
    assert first.path == TIDEPOOL and first.citation == "[[01 Projects/Launch Tidepool app#Pricing]]"
    assert first.line_start <= first.line_end and first.date and first.score > 0
    text = text_of(result)
    assert first.citation in text and f"lines {first.line_start}-{first.line_end}" in text and "19.99" in text


async def test_search_reads_time_words_and_takes_dates_folders_tags_and_notes(client: Client) -> None:
    timed = await client.call_tool(
        "search_notes", {"question": "what did I write about running last month?", "today": "2026-04-02"}
    )
    found = SearchOutput.model_validate(timed.structured_content)
    assert found.time_range is not None and found.time_range["from"] == "2026-03-01"
    assert found.searched and "last month" not in found.searched
    for passage in found.passages:
        assert passage.date and date.fromisoformat(passage.date_end or passage.date) >= date(2026, 3, 1)
    dated = await client.call_tool(
        "search_notes", {"question": "running", "date_from": "2026-03-01", "date_to": "2026-03-31", "limit": 3}
    )
    assert 0 < len(dated.structured_content["passages"]) <= 3
    assert all("2026-03" in (p["date_end"] or p["date"]) for p in dated.structured_content["passages"])
    folder = await client.call_tool("search_notes", {"question": "tide times", "folders": ["01 Projects"]})
    assert notes_of(folder.structured_content) and all(
        p.startswith("01 Projects/") for p in notes_of(folder.structured_content)
    )
    note = await client.call_tool("search_notes", {"question": "budget", "notes": [TIDEPOOL]})
    assert notes_of(note.structured_content) == [TIDEPOOL]
    tagged = await client.call_tool("search_notes", {"question": "swim", "tags": ["tidepool"]})
    assert notes_of(tagged.structured_content)
    named = await client.call_tool("search_notes", {"question": "what is the budget in [[Launch Tidepool app]]?"})
    assert notes_of(named.structured_content) == [TIDEPOOL] and named.structured_content["scope"]["notes"]


async def test_a_note_is_read_whole_by_section_and_in_parts(client: Client, indexed: Settings) -> None:
    whole = await client.call_tool("read_note", {"path": TIDEPOOL})
    note = ReadOutput.model_validate(whole.structured_content)
    raw = (indexed.vault / TIDEPOOL).read_text("utf-8")
    assert note.text.splitlines() == raw.splitlines() and note.next_line is None
    assert note.frontmatter["title"] == "Launch Tidepool app" and "tidepool" in note.tags
    assert note.links_to and note.linked_from and note.headings
    assert all(link.citation.startswith("[[") for link in note.links_to)
    assert "Linked from" in text_of(whole) and note.citation in text_of(whole)
    section = ReadOutput.model_validate(
        (await client.call_tool("read_note", {"path": TIDEPOOL, "heading": "Pricing"})).structured_content
    )
    assert section.section is not None and section.section.endswith("Pricing")
    assert "19.99" in section.text and len(section.text) < len(note.text)
    part = ReadOutput.model_validate(
        (await client.call_tool("read_note", {"path": TIDEPOOL, "max_chars": 400})).structured_content
    )
    assert part.next_line == part.last_line + 1 and len(part.text) <= 400
    rest = await client.call_tool("read_note", {"path": TIDEPOOL, "from_line": part.next_line, "max_chars": 400})
    assert rest.structured_content["first_line"] == part.next_line
    assert f"from_line={part.next_line}" in text_of(
        await client.call_tool("read_note", {"path": TIDEPOOL, "max_chars": 400})
    )


async def test_the_connections_of_a_note_linked_and_not_each_with_its_passage(client: Client) -> None:
    result = await client.call_tool("note_connections", {"path": TIDEPOOL, "limit": 8})
    found = ConnectionsOutput.model_validate(result.structured_content)
    kinds = {p.linked for p in found.connected}
    assert found.connected and "unlinked" in kinds and kinds - {"unlinked"}
    assert all(p.text and p.citation.startswith("[[") and p.path != TIDEPOOL for p in found.connected)
    assert "not linked yet" in text_of(result)
    within = await client.call_tool(
        "note_connections", {"path": TIDEPOOL, "date_from": "2026-03-01", "date_to": "2026-03-31"}
    )
    for passage in ConnectionsOutput.model_validate(within.structured_content).connected:
        assert passage.date and (passage.date_end or passage.date) >= "2026-03" and passage.date <= "2026-03-31"


async def test_notes_written_or_changed_in_a_range_given_in_words_or_dates(client: Client) -> None:
    week = await client.call_tool("notes_in_range", {"when": "last week", "today": "2026-03-16", "kind": "written"})
    found = DatedOutput.model_validate(week.structured_content)
    assert found.date_from == "2026-03-09" and found.date_to == "2026-03-15"
    assert "Daily/2026-03-09.md" in [n.path for n in found.notes] and "Daily/2026-03-14.md" in [
        n.path for n in found.notes
    ]
    day = await client.call_tool("notes_in_range", {"date_from": "2026-03-14", "date_to": "2026-03-14"})
    assert "Daily/2026-03-14.md" in [n["path"] for n in day.structured_content["notes"]]
    first = await client.call_tool("notes_in_range", {"when": "Q1 2026", "limit": 3})
    assert first.structured_content["next_offset"] == 3 and first.structured_content["total"] > 3
    second = await client.call_tool("notes_in_range", {"when": "Q1 2026", "limit": 3, "offset": 3})
    assert not {n["path"] for n in first.structured_content["notes"]} & {
        n["path"] for n in second.structured_content["notes"]
    }


async def test_the_index_status(client: Client) -> None:
    result = await client.call_tool("index_status", {})
    status = StatusOutput.model_validate(result.structured_content)
    assert status.state == "current" and status.notes > 60 and status.model == "fake-embed"
    assert status.excluded == {
        "VASK_EXCLUDE Private/**": 1,
        "Obsidian excluded files Journal/": 1,
        "frontmatter vask: exclude": 1,
    }
    assert "index current" in text_of(result)


async def test_the_notes_are_resources_listed_a_page_at_a_time_and_read_by_uri(client: Client) -> None:
    templates = (await client.list_resource_templates()).resource_templates
    assert [t.uri_template for t in templates] == ["vask://note/{+path}"]
    listed: list[str] = []
    cursor = None
    pages = 0
    while True:
        page = await client.list_resources(cursor=cursor)
        listed.extend(r.name for r in page.resources)
        assert all(r.uri.startswith("vask://note/") and r.mime_type == "text/markdown" for r in page.resources)
        pages += 1
        cursor = page.next_cursor
        if cursor is None:
            break
    assert TIDEPOOL in listed and listed == sorted(listed) and len(listed) == len(set(listed))
    uri = next(r.uri for r in (await client.list_resources()).resources if r.name == "Home.md")
    content = (await client.read_resource(uri)).contents[0]
    assert content.text.startswith("#") or content.text.startswith("---")
    spaced = await client.read_resource("vask://note/01%20Projects/Launch%20Tidepool%20app.md")
    assert "Tidepool Pro" in spaced.contents[0].text


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        ({"question": 3}, "'question': Input should be a valid string"),
        ({"question": "x" * 5000}, "at most 4000 characters"),
        ({"question": "tides", "limit": 500}, "'limit'"),
        ({"question": "tides", "folders": ["x"] * 500}, "'folders'"),
        ({"question": "tides", "date_from": "last Tuesday"}, "ISO date"),
        ({"question": "tides", "date_from": "2026-03-09", "date_to": "2026-03-01"}, "after"),
        ({"query": "tides"}, "takes no argument 'query'"),
        ({}, "'question': Field required"),
    ],
)
async def test_wrong_arguments_are_a_tool_error_with_a_hint(
    client: Client, arguments: dict[str, Any], said: str
) -> None:
    result = await client.call_tool("search_notes", arguments)
    assert result.is_error
    text = text_of(result)
    assert text.startswith("error: ") and said in text and "\nhint: " in text
    assert "x" * 100 not in text  # (a huge value is not echoed back)


@pytest.mark.parametrize(
    ("tool", "arguments", "said"),
    [
        ("read_note", {"path": "../outside.md"}, "Path leaves the vault"),
        ("read_note", {"path": "/etc/passwd"}, "Path leaves the vault"),
        ("read_note", {"path": "attachments"}, "must be the path of a note"),
        ("read_note", {"path": "No such note.md"}, "No note at this path"),
        ("read_note", {"path": TIDEPOOL, "heading": "Not a heading here"}, "no heading"),
        ("read_note", {"path": TIDEPOOL, "from_line": 100000}, "outside what was asked"),
        ("note_connections", {"path": "No such note.md"}, "No note at this path"),
        ("notes_in_range", {"when": "whenever"}, "No range of days"),
        ("notes_in_range", {}, "Say which days"),
        ("search_notes", {"question": "what is in [[No such note at all]]?"}, "No note"),
    ],
)
async def test_a_call_the_notes_cannot_answer_is_a_clear_tool_error(
    client: Client, tool: str, arguments: dict[str, Any], said: str
) -> None:
    result = await client.call_tool(tool, arguments)
    assert result.is_error and said in text_of(result) and "hint: " in text_of(result)


async def test_a_symlink_out_of_the_vault_is_refused(client: Client, indexed: Settings, tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("# Outside\n\nzqxoutside\n", "utf-8")
    link = indexed.vault / "Out link.md"
    link.symlink_to(outside)
    try:
        result = await client.call_tool("read_note", {"path": "Out link.md"})
        assert result.is_error and "leaves the vault" in text_of(result) and "zqxoutside" not in text_of(result)
        with pytest.raises(MCPError):
            await client.read_resource("vask://note/Out%20link.md")
    finally:
        link.unlink()


async def test_an_unknown_tool_a_bad_cursor_and_a_bad_resource_are_protocol_errors_with_hints(client: Client) -> None:
    with pytest.raises(MCPError, match=r"Unknown tool 'delete_everything'\. hint: vask's tools are"):
        await client.call_tool("delete_everything", {})
    with pytest.raises(MCPError, match="Invalid cursor"):
        await client.list_resources(cursor="not a cursor")
    with pytest.raises(MCPError, match="No note at this path"):
        await client.read_resource("vask://note/No%20such%20note.md")
    with pytest.raises(MCPError):
        await client.read_resource("vask://note/../../etc/passwd")
    with pytest.raises(MCPError):
        await client.read_resource("file:///etc/passwd")
    # and it answers on
    assert not (await client.call_tool("index_status", {})).is_error


async def test_the_reader_wrote_nothing_to_the_index(client: Client, indexed: Settings, before: dict[str, str]) -> None:
    await client.call_tool("search_notes", {"question": "sleep temperature"})
    assert _digests(indexed.resolved_index_dir()) == before  # (no calibration kept, no table version, no lock)


# -- launches of their own --------------------------------------------------------------------------


async def test_a_flood_of_calls_is_refused_with_a_hint_and_the_server_stays_up(indexed: Settings) -> None:
    async with stdio_session(indexed) as session:
        results = []
        for _ in range(42):  # (1,260 calls, 30 at a time: past the 1,200 a minute one client may make)
            calls = (session.call_tool("read_note", {"path": "not a note"}) for _ in range(30))
            results.extend(await asyncio.gather(*calls))
        refused = [r for r in results if "Too many calls" in text_of(r)]
        assert len(refused) >= 60 and len(refused) < len(results)
        assert "Too many calls from this client" in text_of(refused[0]) and "hint: Wait" in text_of(refused[0])
        # the server is up and still says so: other requests are answered meanwhile
        assert (await session.list_tools()).tools
        with pytest.raises(MCPError, match="Too many calls"):
            await session.read_resource("vask://note/Home.md")


async def test_with_the_model_server_down_search_falls_back_to_keywords_and_says_so(indexed: Settings) -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    async with stdio_session(indexed, OLLAMA_HOST=f"http://127.0.0.1:{port}") as session:
        result = await session.call_tool("search_notes", {"question": "Tidepool Pro subscription price"})
        assert not result.is_error
        found = SearchOutput.model_validate(result.structured_content)
        assert found.mode == "keyword" and TIDEPOOL in notes_of(result.structured_content)
        assert found.notice and "keyword" in found.notice.lower() and "Note:" in text_of(result)


async def test_an_index_behind_the_vault_is_said_in_results(fake: RunningFake, tmp_path: Path) -> None:
    settings = settings_of(make_vault(tmp_path, private=False), tmp_path / "index", fake.url)
    await index(settings)
    (settings.vault / "Written since.md").write_text("# Written since\n\nA new note about tides.\n", "utf-8")
    async with stdio_session(settings) as session:
        result = await session.call_tool("search_notes", {"question": "tides"})
        found = SearchOutput.model_validate(result.structured_content)
        assert found.index_state == "behind" and "1 note changed" in (found.notice or "")
        status = (await session.call_tool("index_status", {})).structured_content
        assert status["state"] == "behind" and status["changed_since_sync"] == 1


async def test_an_index_being_built_is_searched_as_far_as_it_goes_and_said_so(
    fake: RunningFake, tmp_path: Path
) -> None:
    settings = settings_of(make_vault(tmp_path, private=False), tmp_path / "index", fake.url)
    await index(settings)
    meta_file = settings.resolved_index_dir() / META_FILE
    meta = json.loads(meta_file.read_text("utf-8"))
    meta["building"], meta["active"] = meta["active"], None  # (as a first sync leaves it mid-way)
    meta_file.write_text(json.dumps(meta), "utf-8")
    async with stdio_session(settings) as session:
        result = await session.call_tool("search_notes", {"question": "Tidepool Pro annual price"})
        assert not result.is_error
        found = SearchOutput.model_validate(result.structured_content)
        assert found.index_state == "building" and "being built" in (found.notice or "")
        assert TIDEPOOL in notes_of(result.structured_content)


async def test_a_vault_never_indexed_is_answered_not_failed(fake: RunningFake, tmp_path: Path) -> None:
    settings = settings_of(make_vault(tmp_path, private=False), tmp_path / "index", fake.url)
    async with stdio_session(settings) as session:
        status = await session.call_tool("index_status", {})
        assert not status.is_error and status.structured_content["state"] == "not_indexed"
        search = await session.call_tool("search_notes", {"question": "tides"})
        assert search.is_error and "not been indexed" in text_of(search) and "hint: " in text_of(search)
    assert not (tmp_path / "index").exists()
