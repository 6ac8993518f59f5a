"""A reader of the index (`vask mcp`) beside its writer: it opens the index as it stands, writes nothing
(no table, no format step, no calibration file, not the writer's lock), and the services it answers
with: a note or a section read with its links, the notes of a range of days, how far the index is
behind the vault."""

from __future__ import annotations

import hashlib
from datetime import date
from pathlib import Path

import pytest

from vask_server.adapters.writer_lock import SERVE, WriterLock
from vask_server.core.question import Question
from vask_server.errors import BadRequest, NotFound, NotIndexed
from vask_server.services.context import open_reader_services, open_services
from vask_server.services.query.notes import list_notes, read_note
from vask_server.services.query.timeline import notes_in_range
from vask_server.services.sync.freshness import measure


def _files(folder: Path) -> dict[str, str]:
    """Every file of the index folder with a digest of its bytes."""
    return {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


@pytest.fixture
async def indexed(fake_ollama, vault, settings_for):
    settings = settings_for(vault)
    async with open_services(settings) as services:
        await services.indexer.sync()
    (settings.resolved_index_dir() / "calibration.json").unlink(missing_ok=True)
    return settings


async def test_a_reader_writes_nothing_and_leaves_the_writers_lock_free(indexed):
    index_dir = indexed.resolved_index_dir()
    before = _files(index_dir)
    reader = await open_reader_services(indexed)
    try:
        asked = Question("how much does Tidepool Pro cost?", today=date(2026, 3, 1), top_k=6, min_similarity=0.0)
        result = await reader.searcher.search_question(asked)
        assert result.hits  # (it searched, calibration and all)
        await read_note(reader, "01 Projects/Launch Tidepool app.md")
        # a writer can start beside it: the reader holds no lock
        with WriterLock(index_dir, SERVE):
            pass
    finally:
        await reader.close()
    after = {name: digest for name, digest in _files(index_dir).items() if name != "writer.lock"}  # (the test's writer)
    assert after == before  # no calibration.json, no new table version, no index.json change


async def test_a_reader_of_a_vault_never_indexed_says_so_and_makes_no_folder(
    fake_ollama, vault, settings_for, tmp_path
):
    settings = settings_for(vault, index_dir=tmp_path / "never")
    reader = await open_reader_services(settings)
    try:
        with pytest.raises(NotIndexed):
            await reader.searcher.search("anything", top_k=3, min_similarity=0.0)
        freshness = await measure(settings, reader.vault, reader.store)
        assert freshness.state == "not_indexed" and "not indexed" in (freshness.notice() or "")
    finally:
        await reader.close()
    assert not (tmp_path / "never").exists()


async def test_a_read_only_store_refuses_to_write(indexed):
    reader = await open_reader_services(indexed)
    try:
        index = reader.searcher.active()
        with pytest.raises(RuntimeError, match="read-only"):
            await reader.store.tables(index).delete_notes(["Home.md"])
    finally:
        await reader.close()


async def test_a_note_is_read_with_its_frontmatter_outline_and_links_both_ways(indexed):
    reader = await open_reader_services(indexed)
    try:
        note = await read_note(reader, "01 Projects/Launch Tidepool app.md")
        raw = (indexed.vault / "01 Projects/Launch Tidepool app.md").read_text("utf-8")
        assert note.text.splitlines() == raw.splitlines()
        assert note.first_line == 1 and note.last_line == note.total_lines and note.next_line is None
        assert note.frontmatter and note.headings
        assert note.links_to_total == len(note.links_to) > 0
        assert all(link.path.endswith((".md", ".canvas", ".pdf")) for link in note.links_to)
        # the other end of a link sees it from its side
        other = await read_note(reader, note.links_to[0].path)
        assert "01 Projects/Launch Tidepool app.md" in {link.path for link in other.linked_from}
    finally:
        await reader.close()


async def test_one_section_by_its_heading_and_a_capped_read_goes_on_where_it_stopped(indexed):
    reader = await open_reader_services(indexed)
    try:
        whole = await read_note(reader, "01 Projects/Launch Tidepool app.md")
        _level, heading, line = whole.headings[1]
        section = await read_note(reader, "01 Projects/Launch Tidepool app.md", heading=heading.upper())
        assert section.first_line == line and section.text.splitlines()[0].lstrip("#").strip() == heading
        assert section.section is not None and section.section.endswith(heading)
        lines = whole.text.splitlines()
        pieces, start = [], None
        while True:
            part = await read_note(reader, "01 Projects/Launch Tidepool app.md", from_line=start, max_chars=300)
            assert len(part.text) <= 300
            pieces.extend(part.text.splitlines() or [""])
            if part.next_line is None:
                break
            assert part.next_line == part.last_line + 1
            start = part.next_line
        assert [p for p in pieces if p] == [line for line in lines if line]
        with pytest.raises(BadRequest, match="no heading") as missing:
            await read_note(reader, "01 Projects/Launch Tidepool app.md", heading="Nothing like this")
        assert heading in missing.value.hint
    finally:
        await reader.close()


@pytest.mark.parametrize("path", ["../outside.md", "/etc/passwd.md", "01 Projects/../../x.md"])
async def test_a_path_out_of_the_vault_is_the_callers_error(indexed, path):
    reader = await open_reader_services(indexed)
    try:
        with pytest.raises(BadRequest, match="leaves the vault"):
            await read_note(reader, path)
    finally:
        await reader.close()


async def test_a_symlink_out_of_the_vault_and_a_name_that_is_no_note_are_refused(indexed, tmp_path):
    outside = tmp_path / "secret.md"
    outside.write_text("# Secret\n\nzqxoutsideword\n", "utf-8")
    (indexed.vault / "Linked.md").symlink_to(outside)
    reader = await open_reader_services(indexed)
    try:
        with pytest.raises(BadRequest, match="leaves the vault"):
            await read_note(reader, "Linked.md")
        with pytest.raises(BadRequest, match="must be the path of a note"):
            await read_note(reader, "attachments")
        with pytest.raises(NotFound):
            await read_note(reader, "No such note.md")
    finally:
        await reader.close()


async def test_notes_of_the_index_are_listed_a_page_at_a_time(indexed):
    reader = await open_reader_services(indexed)
    try:
        first = await list_notes(reader, 0, 5)
        assert len(first.notes) == 5 and first.next_offset == 5 and first.total > 5
        seen = []
        offset: int | None = 0
        while offset is not None:
            page = await list_notes(reader, offset, 7)
            seen.extend(note.path for note in page.notes)
            offset = page.next_offset
        assert seen == sorted(seen) and len(seen) == len(set(seen)) == first.total
    finally:
        await reader.close()


async def test_notes_written_in_a_week_of_daily_notes_latest_first(indexed):
    daily = sorted(p.name for p in (indexed.vault / "Daily").glob("*.md"))
    day = date.fromisoformat(daily[len(daily) // 2][:10])
    reader = await open_reader_services(indexed)
    try:
        page = await notes_in_range(reader, day, day, changed=False)
        assert any(note.path == f"Daily/{day.isoformat()}.md" for note in page.notes)
        for note in page.notes:
            assert note.written is not None and note.written[0] <= day <= note.written[1]
        week = await notes_in_range(reader, date.fromordinal(day.toordinal() - 6), day, changed=False, limit=100)
        assert len(week.notes) >= len(page.notes)
        assert [n.latest for n in week.notes] == sorted((n.latest for n in week.notes), reverse=True)
    finally:
        await reader.close()


async def test_freshness_counts_the_notes_changed_since_the_last_sync(indexed):
    reader = await open_reader_services(indexed)
    try:
        assert (await measure(indexed, reader.vault, reader.store)).state == "current"
        (indexed.vault / "New idea.md").write_text("# New idea\n\nSomething written after the sync.\n", "utf-8")
        (indexed.vault / "Opted out.md").write_text("---\nvask: exclude\n---\n# Private\n", "utf-8")
        later = await measure(indexed, reader.vault, reader.store)
        assert later.state == "behind" and later.changed == 1  # (the opted-out note is not behind: never indexed)
        assert "1 note changed" in (later.notice() or "") and "Opted out" not in (later.notice() or "")
    finally:
        await reader.close()


async def test_a_reader_sees_what_the_writer_syncs_after_it_opened(indexed):
    """A long-lived reader (an agent's `vask mcp`) beside `vask serve`: a note synced after the reader
    opened the index is found and read by it, without a restart."""
    reader = await open_reader_services(indexed)
    try:
        before = await reader.searcher.search("zqxlaterword", top_k=5, min_similarity=0.0)
        assert all(hit.path != "Later.md" for hit in before.hits)
        (indexed.vault / "Later.md").write_text("# Later\n\nWritten after the reader opened: zqxlaterword.\n", "utf-8")
        async with open_services(indexed) as writer:
            await writer.indexer.sync()
        after = await reader.searcher.search("zqxlaterword", top_k=5, min_similarity=0.0)
        assert after.hits and after.hits[0].path == "Later.md"
        assert "zqxlaterword" in (await read_note(reader, "Later.md")).text
    finally:
        await reader.close()
