"""The MCP twins of the excluded-note tests of the HTTP API (tests/test_exclusions.py, tests/test_exclude.py,
tests/test_files.py's exclusions): a note kept out by VASK_EXCLUDE, Obsidian's Excluded files or its own
frontmatter is unreachable through every tool and resource, over stdio and over /mcp: not searched, read,
connected, dated, listed or attached, not named in any error or log, never sent to the model server; an
Excluded files entry added while vask runs takes effect at once for reads, and for searches after the
sync; a path kept out is answered exactly as a path that holds no note."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio
from aiohttp.test_utils import TestServer
from mcp import Client
from mcp.shared.exceptions import MCPError

from tests.conftest import RunningFake, _running_fake
from tests.mcp_helpers import (
    MARKERS,
    SECRETS,
    held,
    http_session,
    index,
    make_vault,
    notes_of,
    settings_of,
    stdio_session,
    text_of,
)
from tests.web_helpers import TOKEN
from vask_server.config import Settings
from vask_server.mcp.http import McpMount
from vask_server.web.app import create_app
from vask_server.web.keys import LIVE

pytestmark = pytest.mark.asyncio(loop_scope="module")

NO_NOTE = "error: No note at this path in the index."
LINKS = "Links to private.md"

# tests/test_exclude.py's paths, each with whether its rule keeps it out (globs and Obsidian filters)
RULE_CASES = {
    "Rules/Private/therapy.md": True,
    "Rules/Private/2026/salary.md": True,
    "Work/offer.secret.md": True,
    "Journal2/Secret diary.md": True,
    "Journal2/Public diary.md": False,
    "Privateer.md": False,
    "health/Blood tests.md": True,
    "Archive/2019/old.md": True,
    "Archive/notes.md": False,
}
GLOBS = ("Private/**", "Rules/Private/**", "**/*.secret.md", "Journal2/Secret*")
OBSIDIAN = ["Journal/", "Health/", "/^Archive/\\d{4}//"]
# A note's own opt-out in its frontmatter, in the forms tests/test_exclude.py holds
OPT_OUTS = {
    "Opt/Capital.md": ("Vask: Private", True),
    "Opt/False.md": ("vask: false", True),
    "Opt/Never.md": ("vask: never", True),
    "Opt/Include.md": ("vask: include", False),
    "Opt/Broken yaml.md": ("vask: exclude\nbad: [unclosed", True),
}


def _write_rule_notes(vault: Path) -> None:
    for path in RULE_CASES:
        note = vault / path
        note.parent.mkdir(parents=True, exist_ok=True)
        note.write_text(f"# {note.stem}\n\nzqxrule{abs(hash(path)) % 10_000} about a garden bench.\n", "utf-8")
    for path, (front, out) in OPT_OUTS.items():
        note = vault / path
        note.parent.mkdir(parents=True, exist_ok=True)
        word = "zqxoptword" if out else "zqxkeptword"
        note.write_text(f"---\n{front}\n---\n# {note.stem}\n\n{word} about a garden bench.\n", "utf-8")
    (vault / ".obsidian" / "app.json").write_text(json.dumps({"userIgnoreFilters": OBSIDIAN}), "utf-8")


def _kept_out() -> list[str]:
    return [
        *MARKERS,
        *(path for path, out in RULE_CASES.items() if out),
        *(path for path, (_, out) in OPT_OUTS.items() if out),
    ]


def _kept_in() -> list[str]:
    return [*(p for p, out in RULE_CASES.items() if not out), *(p for p, (_, out) in OPT_OUTS.items() if not out)]


@pytest.fixture(scope="module")
def fake() -> Iterator[RunningFake]:
    yield from _running_fake()


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def settings(fake: RunningFake, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    root = tmp_path_factory.mktemp("mcp-privacy")
    vault = make_vault(root)
    _write_rule_notes(vault)
    settings = settings_of(vault, root / "index", fake.url, exclude=GLOBS)
    await index(settings)
    return settings


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def stderr_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("mcp-log") / "stderr.log"


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def stdio(settings: Settings, stderr_file: Path, fake: RunningFake) -> AsyncIterator[Client]:
    fake.fake.reset_counters()
    with stderr_file.open("w") as errlog:
        async with held(stdio_session(settings, errlog=errlog, VASK_LOG_LEVEL="debug")) as session:
            yield session


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def http(settings: Settings) -> AsyncIterator[Client]:
    app = create_app(settings, watch=False, token=TOKEN, mounts=[McpMount()])
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    await app[LIVE].wait_idle(60)
    try:
        async with held(http_session(str(server.make_url("/mcp")), TOKEN)) as session:
            yield session
    finally:
        await server.close()


@pytest.fixture(params=["stdio", "http"])
def door(request: pytest.FixtureRequest) -> Client:
    return request.getfixturevalue(request.param)  # type: ignore[no-any-return]


def _clean(text: str, *, allow: tuple[str, ...] = ()) -> bool:
    """No marker of an excluded note's text, and no excluded note's path. (A note's own words naming
    one, "See [[Therapy]]", are that note's: SECRETS' bare names are checked only where nothing else
    could say them.)"""
    private = [*MARKERS.values(), "zqxoptword", *_kept_out()]
    return not any(secret in text for secret in private if secret not in allow)


async def test_no_search_finds_an_excluded_note_whatever_it_asks(door: Client) -> None:
    for marker in [*MARKERS.values(), "zqxoptword", "garden bench", "therapy and how I felt about it"]:
        result = await door.call_tool("search_notes", {"question": marker, "limit": 20})
        found = notes_of(result.structured_content)
        assert not set(found) & set(_kept_out()), marker
        said = json.dumps(result.structured_content["passages"]) + text_of(result).replace(marker, "")
        assert _clean(said)  # (the question, said back as what was searched, aside)


async def test_a_question_naming_an_excluded_note_hears_no_closest_name_that_gives_it_away(door: Client) -> None:
    result = await door.call_tool("search_notes", {"question": "how did [[Therapy]] go?"})
    assert result.is_error and "No note [[Therapy]] in the index" in text_of(result)
    said = text_of(result).replace("[[Therapy]]", "")  # (only the user's own word, said back)
    assert _clean(said) and not any(name in said for name in SECRETS)


async def test_an_excluded_note_is_answered_as_a_path_that_holds_no_note(door: Client) -> None:
    nothing = text_of(await door.call_tool("read_note", {"path": "Nothing here at all.md"}))
    assert nothing.startswith(NO_NOTE)
    for path in _kept_out():
        for tool, arguments in (
            ("read_note", {"path": path}),
            ("read_note", {"path": path, "heading": "Anything"}),
            ("note_connections", {"path": path}),
        ):
            result = await door.call_tool(tool, arguments)
            assert result.is_error and text_of(result) == nothing, (tool, path)
        with pytest.raises(MCPError) as refused:
            await door.read_resource("vask://note/" + path.replace(" ", "%20"))
        assert NO_NOTE.removeprefix("error: ") in str(refused.value) and path not in str(refused.value)
    for path in _kept_in():
        assert not (await door.call_tool("read_note", {"path": path})).is_error, path


async def test_no_listing_names_an_excluded_note(door: Client) -> None:
    listed: list[str] = []
    cursor = None
    while True:
        page = await door.list_resources(cursor=cursor)
        listed.extend(r.name for r in page.resources)
        cursor = page.next_cursor
        if cursor is None:
            break
    assert not set(listed) & set(_kept_out()) and set(_kept_in()) <= set(listed)
    dated = await door.call_tool("notes_in_range", {"date_from": "2000-01-01", "date_to": "2100-01-01", "limit": 100})
    every = [n["path"] for n in dated.structured_content["notes"]]
    assert dated.structured_content["total"] == len(every) and not set(every) & set(_kept_out())
    status = await door.call_tool("index_status", {})
    assert _clean(text_of(status)) and status.structured_content["excluded"]


async def test_the_connections_of_a_note_linking_to_excluded_ones_leave_them_out(door: Client) -> None:
    result = await door.call_tool("note_connections", {"path": LINKS, "limit": 30})
    connected = notes_of(result.structured_content, "connected")
    assert connected and not set(connected) & set(_kept_out())
    read = await door.call_tool("read_note", {"path": LINKS})
    links = [link["path"] for link in read.structured_content["links_to"]]
    assert "01 Projects/Launch Tidepool app.md" in links and not set(links) & set(_kept_out())
    assert "See [[Therapy]]" in read.structured_content["text"]  # (the note's own words, as it wrote them)


async def test_nothing_excluded_reached_the_model_server_or_the_log(
    stdio: Client, fake: RunningFake, stderr_file: Path
) -> None:
    fake.fake.reset_counters()
    for question in ("what did I write about therapy, and how I felt about it?", "salary talk", "garden bench"):
        await stdio.call_tool("search_notes", {"question": question})
        await stdio.call_tool("read_note", {"path": "Private/Therapy.md"})
    sent = json.dumps(fake.fake.embedded_texts)
    assert fake.fake.embed_calls  # (the questions were embedded: what was sent is what a search sends)
    assert not any(marker in sent for marker in [*MARKERS.values(), "zqxoptword"])
    await asyncio.sleep(0.2)
    logged = stderr_file.read_text("utf-8")
    assert "Tool 'read_note' failed" in logged  # (the log was written, at debug level, refusals and all)
    assert _clean(logged) and "Salary" not in logged


# -- an exclusion added while vask runs ------------------------------------------------------------------


async def test_an_excluded_files_entry_added_while_serving_takes_effect_over_mcp(
    fake: RunningFake, tmp_path: Path
) -> None:
    vault = make_vault(tmp_path)
    (vault / ".obsidian" / "app.json").unlink()  # (nothing excluded by Obsidian at first)
    settings = settings_of(vault, tmp_path / "index", fake.url, exclude=())
    app = create_app(settings, watch=True, token=TOKEN, mounts=[McpMount()])
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    live = app[LIVE]
    await live.wait_idle(60)
    try:
        async with http_session(str(server.make_url("/mcp")), TOKEN) as session:
            before = await session.call_tool("search_notes", {"question": "zqxtherapyword", "limit": 5})
            assert "Private/Therapy.md" in notes_of(before.structured_content)
            syncs = live.syncs
            (vault / ".obsidian" / "app.json").write_text(json.dumps({"userIgnoreFilters": ["Private/"]}), "utf-8")
            # a read is refused at once, before any sync: the rules are read anew
            assert text_of(await session.call_tool("read_note", {"path": "Private/Therapy.md"})).startswith(NO_NOTE)
            for _ in range(100):
                if live.syncs > syncs and live.state == "idle":
                    break
                await asyncio.sleep(0.1)
            after = await session.call_tool("search_notes", {"question": "zqxtherapyword", "limit": 5})
            assert "Private/Therapy.md" not in notes_of(after.structured_content)
            status = (await session.call_tool("index_status", {})).structured_content
            assert status["excluded"]["Obsidian excluded files Private/"] == 1
    finally:
        await server.close()


async def test_a_reader_applies_an_exclusion_added_after_the_index_was_built(fake: RunningFake, tmp_path: Path) -> None:
    """`vask mcp` reads an index a writer keeps: an Excluded files entry added since its last sync keeps
    the note out of reads and search results at once."""
    vault = make_vault(tmp_path)
    (vault / ".obsidian" / "app.json").unlink()
    settings = settings_of(vault, tmp_path / "index", fake.url, exclude=())
    await index(settings)
    async with stdio_session(settings) as session:
        assert not (await session.call_tool("read_note", {"path": "Private/Therapy.md"})).is_error
        (vault / ".obsidian" / "app.json").write_text(json.dumps({"userIgnoreFilters": ["Private/"]}), "utf-8")
        assert text_of(await session.call_tool("read_note", {"path": "Private/Therapy.md"})).startswith(NO_NOTE)
        found = await session.call_tool("search_notes", {"question": "zqxtherapyword", "limit": 5})
        assert "Private/Therapy.md" not in notes_of(found.structured_content)
        listed = [r.name for r in (await session.list_resources()).resources]
        assert "Private/Therapy.md" not in listed
    # and an exclusion given to `vask mcp` alone (the index was built without it) holds as well
    async with stdio_session(settings, VASK_EXCLUDE="Journal/**") as session:
        assert text_of(await session.call_tool("read_note", {"path": "Journal/Salary talk.md"})).startswith(NO_NOTE)
        found = await session.call_tool("search_notes", {"question": "zqxsalaryword", "limit": 5})
        assert "Journal/Salary talk.md" not in notes_of(found.structured_content)


async def test_an_excluded_pdf_and_canvas_are_unreachable(fake: RunningFake, tmp_path: Path) -> None:
    settings = settings_of(
        make_vault(tmp_path, private=False), tmp_path / "index", fake.url, exclude=("attachments/**", "**/*.canvas")
    )
    await index(settings)
    kept_out = ["attachments/Wirral Sea Swimmers handbook 2026.pdf", "01 Projects/Tidepool roadmap.canvas"]
    async with stdio_session(settings) as session:
        for path in kept_out:
            assert text_of(await session.call_tool("read_note", {"path": path})).startswith(NO_NOTE)
        found = await session.call_tool("search_notes", {"question": "swim club handbook membership fee", "limit": 20})
        assert not set(notes_of(found.structured_content)) & set(kept_out)
        listed = [r.name for r in (await session.list_resources()).resources]
        assert not set(listed) & set(kept_out)


async def test_a_pdf_and_a_canvas_read_from_their_indexed_text(fake: RunningFake, tmp_path: Path) -> None:
    settings = settings_of(make_vault(tmp_path, private=False), tmp_path / "index", fake.url)
    await index(settings)
    async with stdio_session(settings) as session:
        pdf = await session.call_tool("read_note", {"path": "attachments/Wirral Sea Swimmers handbook 2026.pdf"})
        assert not pdf.is_error and pdf.structured_content["kind"] == "pdf"
        assert any(h["text"].startswith("Page ") for h in pdf.structured_content["headings"])
        canvas = await session.call_tool(
            "read_note", {"path": "01 Projects/Tidepool roadmap.canvas", "max_chars": 100_000}
        )
        assert (
            not canvas.is_error and canvas.structured_content["kind"] == "canvas" and canvas.structured_content["text"]
        )
