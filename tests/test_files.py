"""Canvas boards and PDFs: read into the same notes and chunks as Markdown, found and cited where
they say it, and every broken file reported with a reason while the rest of the vault is indexed.
Real LanceDB on disk, the fake Ollama over HTTP, real PDF files read by the real worker process."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest
from pypdf import PdfReader as PypdfReader
from pypdf import PdfWriter

from scripts.make_sample_pdf import OUTPUT as SAMPLE_PDF
from scripts.pdfwriter import build_pdf, text_pdf
from tests.web_helpers import running_app
from vask_server.adapters.pdf import PdfReader
from vask_server.adapters.vault import NoteUnreadable, Vault, is_note_path
from vask_server.core.canvas import CanvasError, canvas_chunks, canvas_note
from vask_server.core.links import LinkResolver
from vask_server.core.models import Hit
from vask_server.core.paged import document_title, paged_chunks, paged_note
from vask_server.services.context import index_status, open_services
from vask_server.services.query.ranking_variants import RankingVariant

# A search that declines nothing (a fixed line at cosine 0): what a test of what is indexed looks through.
EVERYTHING = RankingVariant(decline="fixed")


def count_pdf_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the PDFs the reader opens from now on, in order."""
    reads: list[str] = []
    real_read = PdfReader.read

    def counting(self, path):  # type: ignore[no-untyped-def]
        reads.append(path.name)
        return real_read(self, path)

    monkeypatch.setattr(PdfReader, "read", counting)
    return reads


def card(id_: str, kind: str, x: int, y: int, **fields: object) -> dict[str, object]:
    return {"id": id_, "type": kind, "x": x, "y": y, "width": 200, "height": 80, **fields}


BOARD = {
    "nodes": [
        {"id": "g1", "type": "group", "label": "Now", "x": 0, "y": 0, "width": 500, "height": 400},
        {"id": "g2", "type": "group", "label": "Later", "x": 600, "y": 0, "width": 500, "height": 400},
        {"id": "g3", "type": "group", "label": "Someday", "x": 620, "y": 200, "width": 400, "height": 180},
        card("t1", "text", 20, 20, text="Ship the zorbling widget"),
        card("t2", "text", 20, 200, text="Tag #roadmap and [[Plan]]"),
        card("t3", "text", 620, 20, text="# Quarkle port\nonly if asked"),
        card("t4", "text", 640, 220, text="---\nnot frontmatter"),
        card("f1", "file", 1200, 0, file="Plan.md"),
        card("u1", "link", 1200, 200, url="https://example.org/spec"),
    ],
    "edges": [
        {"id": "e1", "fromNode": "t1", "toNode": "t3", "label": "unblocks"},
        {"id": "e2", "fromNode": "t1", "toNode": "f1"},
    ],
}


def board_note():
    return canvas_note("Boards/Roadmap.canvas", BOARD, LinkResolver(["Plan.md", "Boards/Roadmap.canvas"]))


def test_a_board_becomes_headed_sections_in_reading_order_with_links_and_edge_labels():
    note = board_note()
    assert note.title == "Roadmap"
    assert [(h.level, h.text) for h in note.headings] == [
        (1, "Roadmap"),
        (1, "Now"),
        (1, "Later"),
        (2, "Quarkle port"),  # a card's own heading sits below its group's
        (2, "Someday"),  # a group inside a group, one level deeper
    ]
    text = "\n".join(note.lines)
    assert "Ship the zorbling widget → unblocks → Quarkle port" in text
    assert "not frontmatter" in text and "https://example.org/spec" in text
    assert {link.resolved for link in note.links} == {"Plan.md"}  # the text card's link and the file card
    assert note.tags == ("roadmap",)


def test_board_chunks_follow_its_groups_and_open_the_board():
    note = board_note()
    everything = canvas_chunks(note)
    chunks = [c for c in everything if c.kind == "chunk"]
    by_heading = {chunk.heading: chunk.text for chunk in chunks}
    # small groups are not merged into their neighbours: each is its own chunk
    # ("Later" holds nothing but a card with a heading of its own: its chunk is named by that heading)
    later = "Roadmap > Later > Quarkle port"
    assert set(by_heading) == {"Roadmap", "Roadmap > Now", later, "Roadmap > Later > Someday"}
    assert "zorbling" in by_heading["Roadmap > Now"] and "zorbling" not in by_heading[later]
    assert "not frontmatter" in by_heading["Roadmap > Later > Someday"]
    assert all(chunk.anchor == "" and chunk.page is None for chunk in everything)
    # the board's note-level record follows its chunks, unless records are off
    assert [c.kind for c in everything] == ["chunk"] * len(chunks) + ["note"] and "Roadmap" in everything[-1].text
    assert canvas_chunks(note, with_record=False) == chunks
    # an empty board has nothing to search: not even a record of its title
    assert canvas_chunks(canvas_note("Empty.canvas", {"nodes": [], "edges": []})) == []


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        ([1, 2], "JSON list, not an object"),
        ({"nodes": {"a": 1}}, "'nodes' and 'edges' must be lists"),
    ],
)
def test_json_that_is_not_a_board_is_refused_with_why(data, reason):
    with pytest.raises(CanvasError, match=reason):
        canvas_note("Bad.canvas", data)


def test_pdf_pages_become_chunks_that_never_span_two_pages():
    pages = ["Tiny first page.", "", "Second page about glimmerfish.\n\nMore on glimmerfish.", "Last page."]
    note = paged_note("Docs/Guide.pdf", "Guide", pages)
    chunks = paged_chunks(note)
    passages = [c for c in chunks if c.kind == "chunk"]
    # a small page is not merged into the next; the empty page has none
    assert [c.page for c in passages] == [1, 3, 4]
    assert "glimmerfish" in passages[1].text and "Tiny" not in passages[1].text
    assert all(c.anchor == "" for c in chunks)
    record = next(c for c in chunks if c.kind == "note")
    assert record.page == 1 and "Page 3" not in record.text
    hit = Hit("x", "Docs/Guide.pdf", "Guide", "Guide > Page 3", "", 5, 7, 0.5, "", page=3)
    assert hit.link == "Docs/Guide.pdf#page=3" and hit.to_dict()["page"] == 3


def test_a_pdf_title_comes_from_its_metadata_else_its_file_name():
    assert document_title("a/Scan 12.pdf", "Tide handbook") == "Tide handbook"
    assert document_title("a/Scan 12.pdf", "  ") == "Scan 12"
    assert document_title("a/Scan 12.pdf", "untitled") == "Scan 12"


def test_the_sample_pdf_is_what_its_script_writes():
    from scripts.make_sample_pdf import PAGES, TITLE

    assert SAMPLE_PDF.read_bytes() == text_pdf(PAGES, title=TITLE)


def test_the_watcher_and_scan_take_the_new_types_and_only_those_turned_on(tmp_path):
    assert is_note_path("Boards/Plan.canvas") and is_note_path("Docs/Manual.PDF")
    assert not is_note_path(".obsidian/x.canvas") and not is_note_path("img.png")
    (tmp_path / "a.md").write_text("x")
    (tmp_path / "b.canvas").write_text("{}")
    (tmp_path / "c.pdf").write_bytes(b"%PDF-1.4")
    vault = Vault(tmp_path)
    assert sorted(vault.scan(types=("md", "canvas", "pdf")).notes) == ["a.md", "b.canvas", "c.pdf"]
    assert sorted(vault.scan(types=("md", "pdf")).notes) == ["a.md", "c.pdf"]
    # the watcher asks the same question: a save of a type turned off starts no sync
    assert is_note_path("a.md", ("md",)) and not is_note_path("Docs/Manual.pdf", ("md", "canvas"))


# -- PDF files the reader must survive ------------------------------------------------------------


def encrypted_pdf() -> bytes:
    writer = PdfWriter(clone_from=PypdfReader(io.BytesIO(text_pdf([["the secret zanzibar"]]))))
    writer.encrypt("a password", algorithm="RC4-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def stalling_pdf(operations: int = 2_000_000) -> bytes:
    """A 90 KB PDF whose one page is two million text operations: seconds of parsing per file
    (~6 s per million on this machine), the shape of a hostile or pathological document."""
    return build_pdf([b"BT /F1 1 Tf " + b"(ab) Tj 0.01 0 Td " * operations + b"ET"])


def scanned_pdf() -> bytes:
    """Pages with nothing but a drawn rectangle: no text layer, as a scan without OCR."""
    return build_pdf([b"0 0 m 100 100 l S", b"10 10 50 50 re f"])


def corrupt_pdf() -> bytes:
    good = text_pdf([["fine text"]])
    return good[:20] + b"\x00garbage" * 50  # the header survives, nothing else


def read(data: bytes, tmp_path: Path, **limits: float) -> NoteUnreadable:
    path = tmp_path / "file.pdf"
    path.write_bytes(data)
    reader = PdfReader(limits.get("timeout", 30.0), int(limits.get("max_bytes", 50_000_000)))
    try:
        with pytest.raises(NoteUnreadable) as raised:
            reader.read(path)
    finally:
        reader.close()
    return raised.value


def test_the_reader_says_why_a_pdf_cannot_be_read(tmp_path):
    assert (read(b"", tmp_path).status, read(b"", tmp_path).reason) == ("failed", "empty file (0 bytes): not a PDF")
    encrypted = read(encrypted_pdf(), tmp_path)
    assert encrypted.status == "failed" and "password" in encrypted.reason
    corrupt = read(corrupt_pdf(), tmp_path)
    assert corrupt.status == "failed" and "not a readable PDF" in corrupt.reason
    not_pdf = read(b"<html>saved web page</html>", tmp_path)
    assert not_pdf.status == "failed" and "no PDF header" in not_pdf.reason
    scan = read(scanned_pdf(), tmp_path)
    assert scan.status == "skipped" and "no text layer" in scan.reason
    big = read(text_pdf([["x"]]), tmp_path, max_bytes=100)
    assert big.status == "skipped" and "VASK_MAX_PDF_BYTES" in big.reason


def test_a_pdf_that_stalls_the_parser_is_stopped_at_the_time_limit_and_the_next_one_is_read(tmp_path):
    stall, good = tmp_path / "stall.pdf", tmp_path / "good.pdf"
    stall.write_bytes(stalling_pdf())
    good.write_bytes(text_pdf([["after the stall"]], title="Good"))
    reader = PdfReader(1.0, 50_000_000)
    try:
        with pytest.raises(NoteUnreadable) as raised:
            reader.read(stall)
        assert raised.value.status == "skipped" and "1 s limit (VASK_PDF_TIMEOUT)" in raised.value.reason
        assert reader.read(good).pages == ("after the stall",)  # a fresh worker
    finally:
        reader.close()


# -- in the index ---------------------------------------------------------------------------------


def write_files(root: Path) -> None:
    (root / "Boards").mkdir(exist_ok=True)
    (root / "Boards" / "Roadmap.canvas").write_text(json.dumps(BOARD), "utf-8")
    (root / "Docs").mkdir(exist_ok=True)
    pages = [["# Handbook", "Welcome aboard."], ["Page two explains the flonkwise procedure in detail."]]
    (root / "Docs" / "Handbook.pdf").write_bytes(text_pdf(pages, title="Crew handbook"))


async def sync(settings):
    async with open_services(settings) as services:
        return await services.indexer.sync()


async def test_canvas_and_pdf_are_found_and_cited_where_they_say_it(fake_ollama, small_vault, settings_for):
    write_files(small_vault)
    (small_vault / "Plan.md").write_text("# Plan\n\nSee the board.\n", "utf-8")
    settings = settings_for(small_vault)
    report = await sync(settings)
    assert report.failed == [] and report.skipped == [] and report.scanned == 6
    async with running_app(settings) as api:
        pdf = await api.search("flonkwise procedure", top_k=3, min_similarity=0.0)
        board = await api.search("zorbling widget", top_k=3, min_similarity=0.0)
        related = await (await api.get("/v1/related?path=Plan.md")).json()
        status = await (await api.get("/v1/status")).json()
        queued = await api.post("/v1/reindex", {"paths": ["Docs/Handbook.pdf", "Boards/Roadmap.canvas"]})
        refused = await api.post("/v1/reindex", {"paths": ["Docs/diagram.png"]})
        assert (queued.status, (await queued.json())["queued"]) == (202, 2)
        assert refused.status == 400 and ".canvas" in (await refused.json())["error"]["message"]
        await api.live.wait_idle(60)
    top = pdf["hits"][0]
    assert (top["path"], top["page"], top["title"]) == ("Docs/Handbook.pdf", 2, "Crew handbook")
    assert top["link"] == "Docs/Handbook.pdf#page=2"
    top = board["hits"][0]
    assert (top["path"], top["page"], top["link"]) == ("Boards/Roadmap.canvas", None, "Boards/Roadmap.canvas")
    assert top["heading"] == "Roadmap > Now"
    # the board's file card and link make it related to the note it shows
    assert any(r["path"] == "Boards/Roadmap.canvas" and r["reason"] == "linked from" for r in related["related"])
    assert status["notes"] == 6 and status["failed"] == [] and status["skipped"] == []


async def test_unchanged_files_are_not_read_again_and_moves_reuse_their_vectors(
    fake_ollama, small_vault, settings_for, monkeypatch
):
    write_files(small_vault)
    settings = settings_for(small_vault)
    await sync(settings)
    reads = count_pdf_reads(monkeypatch)
    fake_ollama.fake.reset_counters()
    again = await sync(settings)
    assert again.changed == 0 and fake_ollama.fake.embedded_texts == [] and reads == []

    # a PDF moved to another folder keeps its title (from its metadata): nothing is embedded
    (small_vault / "Archive").mkdir()
    shutil.move(small_vault / "Docs" / "Handbook.pdf", small_vault / "Archive" / "Handbook.pdf")
    (small_vault / "Boards" / "Roadmap.canvas").unlink()
    moved = await sync(settings)
    assert reads == ["Handbook.pdf"] and moved.chunks_embedded == 0 and moved.deleted == 2
    async with open_services(settings) as services:
        hits = (await services.searcher.search("flonkwise", top_k=5, min_similarity=0.0)).hits
        zorbling = (await services.searcher.search("zorbling", top_k=5, min_similarity=0.0)).hits
    assert hits[0].path == "Archive/Handbook.pdf" and hits[0].page == 2
    assert all(h.path != "Docs/Handbook.pdf" for h in hits)
    assert all("Roadmap" not in h.path for h in zorbling)


async def test_broken_files_are_reported_with_a_reason_and_the_rest_is_indexed(fake_ollama, small_vault, settings_for):
    write_files(small_vault)
    broken = small_vault / "Broken"
    broken.mkdir()
    (broken / "corrupt.pdf").write_bytes(corrupt_pdf())
    (broken / "encrypted.pdf").write_bytes(encrypted_pdf())
    (broken / "empty.pdf").write_bytes(b"")
    (broken / "stalls.pdf").write_bytes(stalling_pdf())
    (broken / "scan.pdf").write_bytes(scanned_pdf())
    (broken / "invalid.canvas").write_text('{"nodes": [ {"id": "a", ', "utf-8")
    (broken / "list.canvas").write_text("[]", "utf-8")
    settings = settings_for(small_vault, pdf_timeout=1.0)
    report = await sync(settings)
    async with running_app(settings) as api:
        status = await (await api.get("/v1/status")).json()
        hits = (await api.search("flonkwise procedure", top_k=3, min_similarity=0.0))["hits"]
    failed = {f["path"]: f["reason"] for f in status["failed"]}
    skipped = {f["path"]: f["reason"] for f in status["skipped"]}
    assert set(failed) == {
        "Broken/corrupt.pdf",
        "Broken/encrypted.pdf",
        "Broken/empty.pdf",
        "Broken/invalid.canvas",
        "Broken/list.canvas",
    }
    assert "not a readable PDF" in failed["Broken/corrupt.pdf"]
    assert "password" in failed["Broken/encrypted.pdf"]
    assert failed["Broken/empty.pdf"] == "empty file (0 bytes): not a PDF"
    assert (
        failed["Broken/invalid.canvas"].startswith("invalid canvas: not JSON (")
        and "line 1" in failed["Broken/invalid.canvas"]
    )
    assert "not a JSON Canvas board" in failed["Broken/list.canvas"]
    assert set(skipped) == {"Broken/stalls.pdf", "Broken/scan.pdf"}
    assert "VASK_PDF_TIMEOUT" in skipped["Broken/stalls.pdf"] and "no text layer" in skipped["Broken/scan.pdf"]
    # the same words in the sync's own report; and everything else is indexed
    assert dict(report.failed) == failed and dict(report.skipped) == skipped
    assert status["notes"] == 5 and hits[0]["path"] == "Docs/Handbook.pdf"
    # a file that failed is not read again until it changes
    again = await sync(settings)
    assert again.changed == 0


async def test_exclusions_and_the_type_settings_keep_files_out_and_remove_them_once_indexed(
    fake_ollama, small_vault, settings_for, monkeypatch
):
    write_files(small_vault)
    reads = count_pdf_reads(monkeypatch)
    excluded = settings_for(small_vault, exclude=("Docs/**",))
    await sync(excluded)
    async with open_services(excluded) as services:
        status = await index_status(services)
        # (every passage that comes near, declined or not: the excluded PDF is none of them)
        hits = (await services.searcher.search("flonkwise", top_k=5, min_similarity=0.0, config=EVERYTHING)).hits
        assert hits and all(hit.path != "Docs/Handbook.pdf" for hit in hits)
    assert reads == [] and status["excluded"] == {"VASK_EXCLUDE Docs/**": 1} and status["notes"] == 4

    await sync(settings_for(small_vault))
    assert reads == ["Handbook.pdf"]
    off = settings_for(small_vault, index_pdf=False, index_canvas=False)
    report = await sync(off)
    assert report.deleted == 2
    async with open_services(off) as services:
        status = await index_status(services)
        result = await services.searcher.search("flonkwise zorbling", top_k=9, min_similarity=0.0, config=EVERYTHING)
        paths = {h.path for h in result.hits}
    assert status["notes"] == 3 and paths and not paths & {"Docs/Handbook.pdf", "Boards/Roadmap.canvas"}
