"""Proposed changes to notes, against a real vault on disk (services/proposals.py and the vault adapter's
atomic write): a change is written exactly as shown, never over a note edited since, undone to the exact
bytes, and never written to an excluded note or outside the vault."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from vask_server.adapters.atomic import leftover_temporaries, replace_file, temporary_name
from vask_server.adapters.vault import Vault
from vask_server.config import load_settings
from vask_server.core.proposals import ChangeRequest, bytes_hash, content_hash, unified_diff
from vask_server.errors import (
    BadRequest,
    NoteExcluded,
    NotFound,
    ProposalClosed,
    QueueFull,
    StaleProposal,
    VaskError,
)
from vask_server.services import proposals as proposals_module
from vask_server.services.options import index_options
from vask_server.services.proposals import ProposalService


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    (root / "Projects").mkdir(parents=True)
    (root / "Projects" / "Plan.md").write_text(
        "---\ntags: [work]\n---\n# Plan\n\nWe store references in zotero for now.\n", encoding="utf-8"
    )
    (root / "Zotero 101.md").write_text("---\naliases: [Zotero]\n---\n# Zotero 101\n\nA reference manager.\n")
    (root / "Sourdough.md").write_text("# Sourdough\n\nFlour, water, salt.\n", encoding="utf-8")
    return root


def service_for(vault: Path, tmp_path: Path, **settings: object) -> ProposalService:
    config = load_settings(env={}, vault=vault, index_dir=tmp_path / "index", **settings)  # type: ignore[arg-type]
    return ProposalService(Vault(vault), tmp_path / "index", index_options(config))


def no_temporaries(folder: Path) -> bool:
    return not any(".vask-" in p.name for p in folder.rglob("*"))


def test_a_link_suggestion_applied_changes_exactly_the_shown_text(notes: Path, tmp_path: Path) -> None:
    service = service_for(notes, tmp_path)
    note = notes / "Projects" / "Plan.md"
    before = note.read_bytes()
    view, new = service.propose_link("Projects/Plan.md", "Zotero 101.md", device="default")
    shown = view.detail()
    assert new and view.state == "pending" and note.read_bytes() == before  # nothing written yet
    assert shown["link"]["placement"] == "mention" and shown["link"]["markup"] == "[[Zotero 101|zotero]]"
    assert (
        "-We store references in zotero for now.\n+We store references in [[Zotero 101|zotero]] for now.\n"
        in (shown["diff"])
    )
    applied = service.apply(view.proposal.id, by="default")
    after = note.read_bytes()
    assert applied.state == "applied" and applied.undoable
    assert after == shown["after"].encode("utf-8")  # the whole note is what was shown, byte for byte
    assert unified_diff("Projects/Plan.md", before.decode(), after.decode()) == shown["diff"]
    assert before.decode().replace("zotero", "[[Zotero 101|zotero]]", 1).encode() == after
    assert no_temporaries(notes)
    # proposing the same link again while it waits gives the one already queued
    second, _ = service.propose_link("Sourdough.md", "Zotero 101.md", device="default")
    again, new = service.propose_link("Sourdough.md", "Zotero 101.md", device="phone")
    assert not new and again.proposal.id == second.proposal.id


def test_a_note_edited_after_the_proposal_is_never_overwritten(notes: Path, tmp_path: Path) -> None:
    service = service_for(notes, tmp_path)
    view, _ = service.propose_link("Sourdough.md", "Zotero 101.md", device="default")
    note = notes / "Sourdough.md"
    edited = "# Sourdough\n\nFlour, water, salt. And patience.\n"
    note.write_text(edited, encoding="utf-8")
    assert service.get(view.proposal.id).state == "stale"
    with pytest.raises(StaleProposal, match="changed since"):
        service.apply(view.proposal.id, by="default")
    assert note.read_text("utf-8") == edited and no_temporaries(notes)
    assert service.get(view.proposal.id).state == "stale"  # still there, to reject or propose again
    # the note put back as it was: the proposal applies again
    note.write_text("# Sourdough\n\nFlour, water, salt.\n", encoding="utf-8")
    assert service.apply(view.proposal.id, by="default").state == "applied"
    with pytest.raises(ProposalClosed):
        service.apply(view.proposal.id, by="default")


def test_a_save_landing_while_the_new_text_is_written_wins(tmp_path: Path) -> None:
    """The note is checked once the new bytes are on disk, right before the rename: a save between the
    proposal's read and the write is kept, and the temporary file goes."""
    vault = Vault(tmp_path)
    note = tmp_path / "N.md"
    note.write_bytes(b"old\n")
    original = replace_file

    def save_meanwhile(path: Path, data: bytes, **kwargs: object) -> None:
        check = kwargs["check"]

        def user_saves_then_check() -> None:
            note.write_bytes(b"typed by the user\n")
            check()  # type: ignore[operator]

        original(path, data, check=user_saves_then_check, create=kwargs.get("create", False))  # type: ignore[arg-type]

    import vask_server.adapters.vault as vault_module

    vault_module.replace_file = save_meanwhile  # type: ignore[assignment]
    try:
        from vask_server.adapters.vault import NoteChanged

        with pytest.raises(NoteChanged):
            vault.write_note("N.md", b"proposed\n", expected=bytes_hash(b"old\n"))
    finally:
        vault_module.replace_file = original
    assert note.read_bytes() == b"typed by the user\n" and leftover_temporaries(note) == []


def test_undo_restores_the_exact_bytes_and_only_while_the_note_is_unchanged(notes: Path, tmp_path: Path) -> None:
    odd = "\ufeff# Crème brûlée\r\n\r\nCaramel, then Zotero notes\r\nno newline at the end"
    note = notes / "Odd.md"
    note.write_bytes(odd.encode("utf-8"))
    note.chmod(0o640)
    original = note.read_bytes()
    service = service_for(notes, tmp_path)
    view, _ = service.propose_link("Odd.md", "Sourdough.md", device="default")
    assert view.proposal.link and view.proposal.link["placement"] == "heading"
    service.apply(view.proposal.id, by="default")
    changed = note.read_bytes()
    assert changed.endswith(b"no newline at the end\r\n\r\n## Related\r\n- [[Sourdough]]\r\n")  # its own CRLF
    assert stat.S_IMODE(note.stat().st_mode) == 0o640  # its mode kept
    undone = service.undo(view.proposal.id, by="default")
    assert undone.state == "undone" and note.read_bytes() == original
    assert stat.S_IMODE(note.stat().st_mode) == 0o640
    with pytest.raises(ProposalClosed):
        service.undo(view.proposal.id, by="default")
    # applied, then edited by the person: undo would lose the edit, so it is refused
    view, _ = service.propose_link("Sourdough.md", "Zotero 101.md", device="default")
    service.apply(view.proposal.id, by="default")
    sourdough = notes / "Sourdough.md"
    sourdough.write_text(sourdough.read_text("utf-8") + "A later thought.\n", encoding="utf-8")
    kept = sourdough.read_bytes()
    assert not service.get(view.proposal.id).undoable
    with pytest.raises(StaleProposal, match="changed since this change was applied"):
        service.undo(view.proposal.id, by="default")
    assert sourdough.read_bytes() == kept


@pytest.mark.parametrize(
    ("rule", "path"),
    [
        ({"exclude": ("Private/**",)}, "Private/Diary.md"),
        ({}, "Obsidian excluded/Diary.md"),
        ({}, "Opted out.md"),
    ],
    ids=["VASK_EXCLUDE", "Obsidian Excluded files", "frontmatter vask: exclude"],
)
def test_excluded_notes_are_never_proposed_for_nor_written(
    notes: Path, tmp_path: Path, rule: dict[str, object], path: str
) -> None:
    (notes / ".obsidian").mkdir()
    (notes / ".obsidian" / "app.json").write_text(json.dumps({"userIgnoreFilters": ["Obsidian excluded/"]}))
    for folder in ("Private", "Obsidian excluded"):
        (notes / folder).mkdir()
        (notes / folder / "Diary.md").write_text("# Diary\n\nZotero and sourdough.\n")
    (notes / "Opted out.md").write_text("---\nvask: exclude\n---\n# Secret\n\nZotero and sourdough.\n")
    before = (notes / path).read_bytes()
    service = service_for(notes, tmp_path, **rule)
    with pytest.raises(NoteExcluded):
        service.propose_link(path, "Sourdough.md", device="default")
    with pytest.raises(NoteExcluded):
        service.propose_link("Sourdough.md", path, device="default")  # nor linked to: its name would show
    with pytest.raises(NoteExcluded):
        service.propose(ChangeRequest("edit", path, content="overwritten\n"), device="default")
    assert (notes / path).read_bytes() == before
    if not path.startswith("Opted"):  # a new note under an excluded folder
        with pytest.raises(NoteExcluded):
            service.propose(ChangeRequest("create", path.replace("Diary", "New"), content="x\n"), device="default")
    # a change that would opt the note out is not kept either: vask keeps no copy of such a note
    with pytest.raises(NoteExcluded):
        service.propose(ChangeRequest("edit", "Sourdough.md", content="---\nvask: private\n---\nx\n"), device="d")
    assert service.select() == []


def test_a_note_excluded_after_the_proposal_is_left_alone_and_the_proposal_deleted(notes: Path, tmp_path: Path) -> None:
    service = service_for(notes, tmp_path)
    view, _ = service.propose_link("Projects/Plan.md", "Sourdough.md", device="default")
    linked, _ = service.propose_link("Sourdough.md", "Zotero 101.md", device="default")
    service.apply(linked.proposal.id, by="default")
    (notes / ".obsidian").mkdir()
    (notes / ".obsidian" / "app.json").write_text(json.dumps({"userIgnoreFilters": ["Projects/", "Sourdough"]}))
    before = (notes / "Projects" / "Plan.md").read_bytes()
    with pytest.raises(NoteExcluded):
        service.apply(view.proposal.id, by="default")
    assert (notes / "Projects" / "Plan.md").read_bytes() == before
    with pytest.raises(NotFound):
        service.get(view.proposal.id)
    assert service.select() == []  # the applied one, about an excluded note now, is gone too
    assert list((tmp_path / "index" / "proposals").glob("*.json")) == []  # with the texts it held


@pytest.mark.parametrize(
    "path",
    ["../outside.md", "/etc/passwd.md", "Projects/../../outside.md", "Out/Note.md", "Link out.md", ".obsidian/x.md"],
)
def test_paths_outside_the_vault_are_refused(notes: Path, tmp_path: Path, path: str) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "Note.md").write_text("outside Zotero\n")
    (notes / "Out").symlink_to(outside, target_is_directory=True)
    (notes / "Link out.md").symlink_to(outside / "Note.md")
    service = service_for(notes, tmp_path)
    for attempt in (
        lambda: service.propose(ChangeRequest("edit", path, content="x\n"), device="default"),
        lambda: service.propose(ChangeRequest("create", path, content="x\n"), device="default"),
        lambda: service.propose_link(path, "Sourdough.md", device="default"),
        lambda: service.propose_link("Sourdough.md", path, device="default"),
    ):
        with pytest.raises(BadRequest):
            attempt()
    assert (outside / "Note.md").read_text() == "outside Zotero\n"
    assert sorted(p.name for p in outside.iterdir()) == ["Note.md"]
    assert not (tmp_path / "outside.md").exists()
    for bad in ("Sourdough.canvas", "attachments/x.pdf"):
        with pytest.raises(BadRequest):
            service.propose(ChangeRequest("create", bad, content="{}"), device="default")


def test_a_note_that_links_elsewhere_in_the_vault_is_written_where_it_points(notes: Path, tmp_path: Path) -> None:
    (notes / "Alias of plan.md").symlink_to(notes / "Projects" / "Plan.md")
    service = service_for(notes, tmp_path)
    view, _ = service.propose(
        ChangeRequest("edit", "Alias of plan.md", edits=(("for now", "for good"),)), device="default"
    )
    service.apply(view.proposal.id, by="default")
    assert (notes / "Alias of plan.md").is_symlink()
    assert "in zotero for good." in (notes / "Projects" / "Plan.md").read_text()


def test_edits_new_notes_and_their_undo(notes: Path, tmp_path: Path) -> None:
    service = service_for(notes, tmp_path)
    with pytest.raises(BadRequest, match="is not in the note"):
        service.propose(ChangeRequest("edit", "Sourdough.md", edits=(("rye", "spelt"),)), device="agent")
    with pytest.raises(NotFound):
        service.propose(ChangeRequest("edit", "Nowhere.md", content="x"), device="agent")
    with pytest.raises(BadRequest, match="nothing to change"):
        service.propose(ChangeRequest("edit", "Sourdough.md", edits=(("salt", "salt"),)), device="agent")
    edit, _ = service.propose(
        ChangeRequest("edit", "Sourdough.md", edits=(("salt.", "salt, time."),), source="claude", reason="fuller"),
        device="agent",
    )
    assert edit.proposal.source == "claude" and edit.proposal.reason == "fuller"
    created, _ = service.propose(
        ChangeRequest("create", "Ideas/Bread ideas.md", content="# Bread ideas\n"), device="agent"
    )
    with pytest.raises(BadRequest, match="exists already"):
        service.propose(ChangeRequest("create", "Sourdough.md", content="x"), device="agent")
    assert created.detail()["diff"].startswith("--- /dev/null\n")
    result = service.apply_all("claude", by="default")
    assert [row["id"] for row in result["applied"]] == [edit.proposal.id] and result["not_applied"] == []
    service.apply(created.proposal.id, by="default")
    new_note = notes / "Ideas" / "Bread ideas.md"
    assert new_note.read_text() == "# Bread ideas\n"
    assert (notes / "Sourdough.md").read_text() == "# Sourdough\n\nFlour, water, salt, time.\n"
    service.undo(created.proposal.id, by="default")  # a new note goes to Obsidian's trash
    assert not new_note.exists() and (notes / ".trash" / "Bread ideas.md").read_text() == "# Bread ideas\n"
    # a new note where one was made meanwhile: stale, never replaced
    again, _ = service.propose(ChangeRequest("create", "Ideas/Bread ideas.md", content="mine\n"), device="agent")
    new_note.write_text("the person's own\n")
    with pytest.raises(StaleProposal):
        service.apply(again.proposal.id, by="default")
    assert new_note.read_text() == "the person's own\n"
    assert service.reject(again.proposal.id, by="default").state == "rejected"


def test_the_queue_is_bounded_and_keeps_a_history_of_decisions(
    notes: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(proposals_module, "MAX_PENDING", 3)
    monkeypatch.setattr(proposals_module, "KEEP_DECIDED", 2)
    service = service_for(notes, tmp_path)
    made = [service.propose(ChangeRequest("create", f"New {n}.md", content=f"{n}\n"), device="a")[0] for n in range(3)]
    with pytest.raises(QueueFull):
        service.propose(ChangeRequest("create", "New 9.md", content="9\n"), device="a")
    for view in made:
        service.reject(view.proposal.id, by="default")
    kept = service.select()
    assert [v.state for v in kept] == ["rejected", "rejected"]  # the newest two decisions
    assert kept[0].proposal.events[-1]["action"] == "rejected" and kept[0].proposal.decided_by == "default"
    assert service.counts()["rejected"] == 2


def test_a_change_the_plugin_wrote_itself_is_recorded_only_when_the_note_has_it(notes: Path, tmp_path: Path) -> None:
    service = service_for(notes, tmp_path)
    view, _ = service.propose_link("Sourdough.md", "Zotero 101.md", device="default")
    with pytest.raises(StaleProposal, match="does not have the proposed text"):
        service.apply(view.proposal.id, by="default", written=True)
    (notes / "Sourdough.md").write_text(view.proposal.after, encoding="utf-8")  # as Vault.process would
    applied = service.apply(view.proposal.id, by="default", written=True)
    assert applied.proposal.written_by == "plugin" and applied.undoable
    (notes / "Sourdough.md").write_text(view.proposal.before, encoding="utf-8")
    assert service.undo(view.proposal.id, by="default", written=True).state == "undone"


def test_a_killed_write_leaves_a_temporary_file_the_next_write_removes(tmp_path: Path) -> None:
    note = tmp_path / "N.md"
    note.write_bytes(b"whole\n")
    left = tmp_path / temporary_name("N.md")
    left.write_bytes(b"half of a")
    assert leftover_temporaries(note) == [left]
    replace_file(note, b"new\n")
    assert note.read_bytes() == b"new\n" and sorted(os.listdir(tmp_path)) == ["N.md"]


def test_a_check_that_fails_leaves_the_note_and_no_temporary_file(tmp_path: Path) -> None:
    note = tmp_path / "N.md"
    note.write_bytes(b"kept\n")

    def refuse() -> None:
        raise RuntimeError("changed")

    with pytest.raises(RuntimeError):
        replace_file(note, b"new\n", check=refuse)
    assert note.read_bytes() == b"kept\n" and sorted(os.listdir(tmp_path)) == ["N.md"]
    with pytest.raises(FileExistsError):
        replace_file(note, b"new\n", create=True)
    assert note.read_bytes() == b"kept\n" and sorted(os.listdir(tmp_path)) == ["N.md"]
    assert content_hash("kept\n") == bytes_hash(b"kept\n")


def test_a_note_that_became_a_link_out_of_the_vault_drops_its_proposal(notes: Path, tmp_path: Path) -> None:
    service = service_for(notes, tmp_path)
    view, _ = service.propose_link("Sourdough.md", "Zotero 101.md", device="default")
    outside = tmp_path / "elsewhere.md"
    outside.write_text("# Sourdough\n\nFlour, water, salt.\n")
    (notes / "Sourdough.md").unlink()
    (notes / "Sourdough.md").symlink_to(outside)
    assert service.select() == []  # listed without an error, and gone
    with pytest.raises(NotFound):
        service.apply(view.proposal.id, by="default")
    assert outside.read_text() == "# Sourdough\n\nFlour, water, salt.\n"


def test_a_read_only_note_is_left_as_it_is_and_said_so(notes: Path, tmp_path: Path) -> None:
    service = service_for(notes, tmp_path)
    view, _ = service.propose_link("Sourdough.md", "Zotero 101.md", device="default")
    note = notes / "Sourdough.md"
    note.chmod(0o444)
    before = note.read_bytes()
    try:
        with pytest.raises(VaskError, match="could not be written") as refused:
            service.apply(view.proposal.id, by="default")
        assert "read-only" in refused.value.hint
        assert note.read_bytes() == before and service.get(view.proposal.id).state == "pending"
    finally:
        note.chmod(0o644)
