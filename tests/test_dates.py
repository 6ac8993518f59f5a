"""When each note, and each part of it, was written: the rules of core/time/dates.py, and every date of sample_vault."""

from datetime import date, datetime
from pathlib import Path

import pytest

from vask_server.adapters.vault import Vault
from vask_server.core.chunk import chunk_note
from vask_server.core.filetypes import MARKDOWN
from vask_server.core.links import LinkResolver
from vask_server.core.parse import parse_note
from vask_server.core.time.dates import (
    DateOptions,
    PeriodicFormat,
    chunk_dates,
    date_note,
    parse_moment,
    periodic_date,
    periodic_formats,
    value_as_date,
)

SAMPLE_VAULT = Path(__file__).resolve().parents[1] / "sample_vault"
FILE_TIME = datetime(2030, 1, 2, 9, 0)  # stands for the file's modification time

# Every note of sample_vault: (its date, where it comes from, [(line, date, source) where a line's own
# date begins: a dated heading or table row]). "file-time" notes say nothing of when they were written.
SAMPLE_DATES = {
    "00 Inbox/Quick capture.md": ("file-time", "file-time", []),
    # (its frontmatter is broken YAML; the lenient reading keeps its date)
    "00 Inbox/Standing desk research.md": ("2026-03-10", "frontmatter:date", []),
    "00 Inbox/Talk idea - Tides are a caching problem.md": ("file-time", "file-time", []),
    "00 Inbox/Untitled.md": ("file-time", "file-time", []),
    "00 Inbox/京都旅行メモ.md": ("2025-11-24", "frontmatter:date", []),
    "01 Projects/家庭相册数字化.md": ("2025-09-02", "frontmatter:created", []),
    "02 Areas/中文/日记 - 杭州周末.md": ("2025-10-19", "frontmatter:date", []),
    "02 Areas/中文/读书笔记 - 活着.md": ("2025-11-16", "frontmatter:created", []),
    "01 Projects/Half marathon sub-1h45.md": ("file-time", "file-time", []),
    "01 Projects/Ideas.md": ("file-time", "file-time", []),
    # (its timeline's target dates are what the rows are about, not when they were written)
    "01 Projects/Launch Tidepool app.md": ("2026-01-04", "frontmatter:created", []),
    "01 Projects/Newsletter - Small Batch.md": ("file-time", "file-time", []),
    "01 Projects/Tidepool API design.md": ("file-time", "file-time", []),
    "01 Projects/Tidepool beta feedback.md": ("file-time", "file-time", []),
    "02 Areas/Cooking/Cooking MOC.md": ("file-time", "file-time", []),
    "02 Areas/Cooking/Sourdough starter log.md": (
        "file-time",
        "file-time",
        [
            (18, "2026-01-04", "table-row"),
            (19, "2026-01-07", "table-row"),
            (20, "2026-01-10", "table-row"),
            (21, "2026-01-12", "table-row"),
            (22, "2026-01-18", "table-row"),
            (23, "2026-01-25", "table-row"),
            (24, "2026-02-08", "table-row"),
            (25, "2026-03-10", "table-row"),
        ],
    ),
    "02 Areas/Cooking/Weeknight dal.md": ("file-time", "file-time", []),
    "02 Areas/Español/Diario en español.md": (
        "file-time",
        "file-time",
        [
            (10, "2026-02-01", "heading"),
            (14, "2026-02-12", "heading"),
            (22, "2026-02-22", "heading"),
            (26, "2026-03-03", "heading"),
            (32, "2026-03-15", "heading"),
        ],
    ),
    "02 Areas/Español/Spanish learning plan.md": ("file-time", "file-time", []),
    "02 Areas/Español/Vocabulario - cocina y correr.md": ("file-time", "file-time", []),
    "02 Areas/Finances/Indie finances 2026.md": (
        "file-time",
        "file-time",
        [
            (16, "2026-01-01..2026-03-31", "heading"),
            (20, "2026-01-01..2026-01-31", "table-row"),
            (21, "2026-02-01..2026-02-28", "table-row"),
            (22, "2026-03-01..2026-03-31", "table-row"),
            (23, "2026-01-01..2026-03-31", "heading"),
        ],
    ),
    "02 Areas/Health MOC.md": ("file-time", "file-time", []),
    "02 Areas/Health/Knee pain - physio notes.md": ("file-time", "file-time", [(11, "2026-03-03", "heading")]),
    "02 Areas/Health/Sleep experiments.md": (
        "file-time",
        "file-time",
        [
            (19, "2025-12-01..2025-12-31", "heading"),
            (23, "2026-01-01..2026-01-31", "heading"),
            (26, "2026-01-01..2026-02-28", "heading"),
            (29, "2026-02-01..2026-02-28", "heading"),
            (32, "2026-03-01..2026-03-31", "heading"),
        ],
    ),
    "02 Areas/Running/Running log 2026.md": (
        "file-time",
        "file-time",
        [
            (11, "2026-01-03", "table-row"),
            (12, "2026-01-06", "table-row"),
            (13, "2026-01-08", "table-row"),
            (14, "2026-01-11", "table-row"),
            (15, "2026-01-13", "table-row"),
            (16, "2026-01-15", "table-row"),
            (17, "2026-01-18", "table-row"),
            (18, "2026-01-20", "table-row"),
            (19, "2026-01-25", "table-row"),
            (20, "2026-01-27", "table-row"),
            (21, "2026-02-01", "table-row"),
            (22, "2026-02-03", "table-row"),
            (23, "2026-02-05", "table-row"),
            (24, "2026-02-08", "table-row"),
            (25, "2026-02-10", "table-row"),
            (26, "2026-02-14", "table-row"),
            (27, "2026-02-15", "table-row"),
            (28, "2026-02-17", "table-row"),
            (29, "2026-02-22", "table-row"),
            (30, "2026-02-24", "table-row"),
            (31, "2026-02-28", "table-row"),
            (32, "2026-03-01", "table-row"),
            (33, "2026-03-04", "table-row"),
            (34, "2026-03-06", "table-row"),
            (35, "2026-03-08", "table-row"),
            (36, "2026-03-11", "table-row"),
            (37, "2026-03-15", "table-row"),
            (38, "2026-03-18", "table-row"),
            (39, "2026-03-20", "table-row"),
            (40, "2026-03-22", "table-row"),
            (41, "2026-03-25", "table-row"),
        ],
    ),
    "02 Areas/Running/Shoe rotation.md": ("file-time", "file-time", []),
    "02 Areas/Tech/Homelab.md": ("file-time", "file-time", []),
    "02 Areas/Work/Consulting - Harbourline.md": ("file-time", "file-time", []),
    "03 Resources/Articles/Ink & Switch - Local-first software.md": ("file-time", "file-time", []),
    "03 Resources/Articles/Julia Evans - Get your work recognized.md": ("file-time", "file-time", []),
    "03 Resources/Articles/Patrick McKenzie - Don't Call Yourself A Programmer.md": ("file-time", "file-time", []),
    "03 Resources/Articles/Paul Graham - Do Things That Don't Scale.md": ("file-time", "file-time", []),
    "03 Resources/Books/Books MOC.md": ("file-time", "file-time", []),
    "03 Resources/Books/Born to Run.md": ("file-time", "file-time", []),
    "03 Resources/Books/Deep Work.md": ("file-time", "file-time", []),
    "03 Resources/Books/Four Thousand Weeks.md": ("file-time", "file-time", []),
    "03 Resources/Books/Salt Fat Acid Heat.md": ("file-time", "file-time", []),
    "03 Resources/Books/Shape Up.md": ("file-time", "file-time", []),
    "03 Resources/Books/Show Your Work.md": ("file-time", "file-time", []),
    "03 Resources/Books/The Mom Test.md": ("file-time", "file-time", []),
    "03 Resources/Zettelkasten/202601081215 Spaced repetition beats rereading.md": ("2026-01-08", "file-name", []),
    "03 Resources/Zettelkasten/202601101930 Retrieval practice is desirable difficulty.md": (
        "2026-01-10",
        "file-name",
        [],
    ),
    "03 Resources/Zettelkasten/202601221045 Fixed time variable scope.md": ("2026-01-22", "file-name", []),
    "03 Resources/Zettelkasten/202602031410 Ship the smallest lovable version.md": ("2026-02-03", "file-name", []),
    "03 Resources/Zettelkasten/202602111800 Short feedback loops compound.md": ("2026-02-11", "file-name", []),
    "03 Resources/Zettelkasten/202602150920 Easy runs should feel too easy.md": ("2026-02-15", "file-name", []),
    "03 Resources/Zettelkasten/202602201130 Comprehensible input over grammar drills.md": (
        "2026-02-20",
        "file-name",
        [],
    ),
    "03 Resources/Zettelkasten/202603011000 Habits attach to existing cues.md": ("2026-03-01", "file-name", []),
    "03 Resources/Zettelkasten/202603051545 Local-first means the network is optional.md": (
        "2026-03-05",
        "file-name",
        [],
    ),
    "03 Resources/Zettelkasten/202603141020 Compounding small bets.md": ("2026-03-14", "file-name", []),
    "03 Resources/Zettelkasten/202603180830 Salt early, acid late.md": ("2026-03-18", "file-name", []),
    "04 Archive/Habit tracker CLI (2024).md": ("file-time", "file-time", [(11, "2024-06-01..2024-09-30", "heading")]),
    "04 Archive/Ideas.md": ("file-time", "file-time", []),
    "04 Archive/Portfolio site rebuild 2025.md": ("file-time", "file-time", []),
    "04 Archive/Valencia 10K 2025.md": ("file-time", "file-time", []),
    "Daily/2026-01-05.md": ("2026-01-05", "daily-note", []),
    "Daily/2026-01-19.md": ("2026-01-19", "daily-note", []),
    "Daily/2026-02-02.md": ("2026-02-02", "daily-note", []),
    "Daily/2026-02-14.md": ("2026-02-14", "daily-note", []),
    "Daily/2026-02-23.md": ("2026-02-23", "daily-note", []),
    "Daily/2026-03-02.md": ("2026-03-02", "daily-note", []),
    "Daily/2026-03-09.md": ("2026-03-09", "daily-note", []),
    "Daily/2026-03-14.md": ("2026-03-14", "daily-note", []),
    "Daily/2026-03-23.md": ("2026-03-23", "daily-note", []),
    "Daily/2026-03-28.md": ("2026-03-28", "daily-note", []),
    "Home.md": ("file-time", "file-time", []),
}


def _dated(path: str) -> tuple[object, list[tuple[int, str, str]]]:
    vault = Vault(SAMPLE_VAULT)
    resolver = LinkResolver(vault.scan().all_files)
    note = parse_note(path, (SAMPLE_VAULT / path).read_text("utf-8"), resolver)
    dates = date_note(note, FILE_TIME, DateOptions())
    sections, previous = [], None
    for line, span in enumerate(dates.lines, start=1):
        own = span is not None and span.source in ("heading", "table-row") and span != previous
        if own and span.start != dates.note.start:
            when = span.start.isoformat() if span.end == span.start else f"{span.start}..{span.end}"
            sections.append((line, when, span.source))
        previous = span
    return dates, sections


def test_every_note_and_dated_section_of_sample_vault_has_its_date():
    notes = sorted(Vault(SAMPLE_VAULT).scan(types=(MARKDOWN,)).notes)  # (the board and the PDF: file time)
    assert notes == sorted(SAMPLE_DATES)
    for path in notes:
        dates, sections = _dated(path)
        day, source, expected_sections = SAMPLE_DATES[path]
        assert dates.note.source == source, path
        assert dates.note.start == (FILE_TIME.date() if day == "file-time" else date.fromisoformat(day)), path
        assert sections == expected_sections, path


def test_a_chunk_takes_the_span_of_its_dated_lines_else_the_notes():
    path = "02 Areas/Español/Diario en español.md"
    note = parse_note(path, (SAMPLE_VAULT / path).read_text("utf-8"))
    dates = date_note(note, FILE_TIME, DateOptions())
    spans = chunk_dates(chunk_note(note), dates)
    by_heading = {chunk.heading: span for chunk, span in zip(chunk_note(note), spans, strict=True)}
    assert by_heading["Diario en español > 22 de febrero de 2026"].start == date(2026, 2, 22)
    intro = next(span for chunk, span in zip(chunk_note(note), spans, strict=True) if chunk.line_start < 8)
    # the introduction is merged with the first dated section: the chunk takes that section's day
    assert intro.start == date(2026, 2, 1) and intro.source == "heading"


@pytest.mark.parametrize(
    ("text", "fmt", "first", "last"),
    [
        ("2026-03-14", "YYYY-MM-DD", "2026-03-14", "2026-03-14"),
        ("14.03.2026", "DD.MM.YYYY", "2026-03-14", "2026-03-14"),
        ("2026/03/2026-03-14", "YYYY/MM/YYYY-MM-DD", "2026-03-14", "2026-03-14"),
        ("Saturday, March 14th 2026", "dddd, MMMM Do YYYY", "2026-03-14", "2026-03-14"),
        ("2026-W11", "gggg-[W]ww", "2026-03-08", "2026-03-14"),  # moment's locale weeks start on Sunday
        ("2026-W11", "GGGG-[W]WW", "2026-03-09", "2026-03-15"),  # ISO weeks on Monday
        ("2026-03", "YYYY-MM", "2026-03-01", "2026-03-31"),
        ("2026-Q1", "YYYY-[Q]Q", "2026-01-01", "2026-03-31"),
        ("2026", "YYYY", "2026-01-01", "2026-12-31"),
    ],
)
def test_moment_formats_are_read_as_obsidian_writes_them(text, fmt, first, last):
    assert parse_moment(text, fmt) == (date.fromisoformat(first), date.fromisoformat(last))


@pytest.mark.parametrize(
    ("text", "fmt"), [("2026-02-30", "YYYY-MM-DD"), ("Meeting notes", "YYYY-MM-DD"), ("14-03-2026", "YYYY-MM-DD")]
)
def test_names_that_do_not_fit_the_format_are_not_periodic_notes(text, fmt):
    assert parse_moment(text, fmt) is None


def test_the_vaults_periodic_note_settings_decide_which_notes_are_daily():
    formats = periodic_formats(
        {"format": "DD-MM-YYYY", "folder": "Journal/"},
        {"weekly": {"enabled": True, "format": "gggg-[W]ww", "folder": "Weekly"}, "monthly": {"enabled": False}},
    )
    assert [f.kind for f in formats] == ["weekly", "daily"]
    daily = periodic_date("Journal/14-03-2026.md", formats)
    assert daily is not None and daily.start == date(2026, 3, 14) and daily.source == "daily-note"
    assert periodic_date("Elsewhere/14-03-2026.md", formats) is None  # outside the daily folder
    weekly = periodic_date("Weekly/2026-W11.md", formats)
    assert weekly is not None and (weekly.start, weekly.end, weekly.source) == (
        date(2026, 3, 8),
        date(2026, 3, 14),
        "weekly-note",
    )
    assert periodic_formats(None, None) == (PeriodicFormat("daily", "YYYY-MM-DD"),)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (date(2026, 2, 14), "2026-02-14"),
        (datetime(2026, 2, 14, 22, 30), "2026-02-14"),
        ("2026-02-14T10:00:00+01:00", "2026-02-14"),
        ("2026-02-14 10:00", "2026-02-14"),
        ("[[2026-02-14]]", "2026-02-14"),
        ("14 February 2026", "2026-02-14"),
        ("February 14, 2026", "2026-02-14"),
        ("14 de febrero de 2026", "2026-02-14"),
        ("someday", None),
        (20260214, None),
    ],
)
def test_frontmatter_dates_in_the_usual_shapes(value, expected):
    assert value_as_date(value) == (date.fromisoformat(expected) if expected else None)


def _note(path: str, text: str) -> object:
    return date_note(parse_note(path, text), FILE_TIME, DateOptions())


def test_the_order_of_sources_periodic_name_then_frontmatter_then_file_name_then_file_time():
    assert _note("Daily/2026-03-14.md", "---\ncreated: 2025-01-01\n---\nx").note.source == "daily-note"
    keyed = _note("Notes/Plan.md", "---\nCreation Date: 2025-01-01\n---\nx").note
    assert (keyed.start, keyed.source) == (date(2025, 1, 1), "frontmatter:Creation Date")
    assert _note("Notes/202501011200 Idea.md", "x").note.source == "file-name"
    assert _note("Notes/Idea.md", "x").note.source == "file-time"
    assert _note("Notes/Idea.md", "---\nupdated: 2025-05-05\n---\nx").modified == date(2025, 5, 5)


def test_a_running_log_dates_each_section_and_a_heading_without_a_year_takes_the_notes():
    text = "---\ndate: 2026-01-01\n---\n# Log\n## Mon 3 Feb\nrode\n### notes\nslow\n## 2026-03-14 kickoff\nmet\n"
    dates = _note("Work/Log.md", text)
    assert [str(d.start) if d else None for d in dates.lines][4:] == [
        "2026-02-03",
        "2026-02-03",
        "2026-02-03",
        "2026-02-03",
        "2026-03-14",
        "2026-03-14",
    ]


def test_custom_date_keys():
    options = DateOptions(date_keys=("written",))
    note = parse_note("A.md", "---\nwritten: 2024-06-01\ndate: 2020-01-01\n---\nx")
    assert date_note(note, FILE_TIME, options).note.start == date(2024, 6, 1)


def test_periods_date_a_section_or_a_row_month_by_month():
    text = (
        "# Money 2026\n## Q1 2026\n| Month | In |\n| --- | --- |\n| March | 10 |\n### Magnesium (Jan–Feb 2026)\nslept\n"
    )
    dates = _note("Money.md", text)
    spans = [(str(d.start), str(d.end)) if d else None for d in dates.lines]
    assert spans[1] == ("2026-01-01", "2026-03-31")  # the quarter
    assert spans[4] == ("2026-03-01", "2026-03-31")  # the row led by a month, in the title's year
    assert spans[6] == ("2026-01-01", "2026-02-28")  # the bracketed run of months
