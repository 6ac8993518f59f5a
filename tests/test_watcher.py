"""The live index follows real file operations in a temporary vault and converges to the disk."""

import asyncio
import os
import time
from pathlib import Path

from scripts.pdfwriter import text_pdf
from tests.web_helpers import Api, running_app
from vask_server.adapters.vault import Vault


async def indexed_state(api: Api) -> dict[str, set[str]]:
    """path → set of chunk texts, as stored."""
    services = api.live.services
    active = services.store.read_meta().active
    assert active is not None
    rows = await services.store.tables(active).all_chunk_rows(["path", "text"])
    state: dict[str, set[str]] = {}
    for path, text in zip(rows["path"].to_pylist(), rows["text"].to_pylist(), strict=True):
        state.setdefault(path, set()).add(text)
    return state


async def converged(api: Api, vault: Path, must_contain: dict[str, str] | None = None, timeout: float = 15) -> None:
    """Waits until the indexed notes are exactly the notes on disk (and hold the given text)."""
    deadline = time.monotonic() + timeout
    while True:
        await api.live.wait_idle(timeout)
        on_disk = {p for p, stat in Vault(vault).scan().notes.items() if stat.size > 0}
        state = await indexed_state(api)
        texts_ok = all(
            any(fragment in text for text in state.get(path, ())) for path, fragment in (must_contain or {}).items()
        )
        if set(state) == on_disk and texts_ok:
            return
        if time.monotonic() > deadline:
            missing, extra = on_disk - set(state), set(state) - on_disk
            raise AssertionError(f"index did not converge: missing {missing}, extra {extra}, texts_ok={texts_ok}")
        await asyncio.sleep(0.05)


async def test_edit_create_atomic_save_rename_folder_rename_and_delete(fake_ollama, vault, settings_for):
    async with running_app(settings_for(vault, debounce_ms=50), watch=True) as api:
        await converged(api, vault)

        note = vault / "Daily" / "2026-03-14.md"
        note.write_text(note.read_text() + "\nThe heron came back to the canal today.\n")
        await converged(api, vault, {"Daily/2026-03-14.md": "heron came back"})

        (vault / "00 Inbox" / "New idea.md").write_text("# New idea\n\nA tide clock made from a cheap e-ink panel.\n")
        await converged(api, vault, {"00 Inbox/New idea.md": "e-ink panel"})

        # an editor's atomic save: write a temporary file, then rename it over the note
        temp = vault / "00 Inbox" / ".New idea.md.tmp"
        temp.write_text("# New idea\n\nA tide clock made from an old Kindle instead.\n")
        os.replace(temp, vault / "00 Inbox" / "New idea.md")
        await converged(api, vault, {"00 Inbox/New idea.md": "old Kindle"})

        (vault / "00 Inbox" / "New idea.md").rename(vault / "00 Inbox" / "Tide clock.md")
        await converged(api, vault, {"00 Inbox/Tide clock.md": "old Kindle"})

        (vault / "02 Areas" / "Cooking").rename(vault / "02 Areas" / "Kitchen")
        await converged(api, vault, {"02 Areas/Kitchen/Weeknight dal.md": "Lentils"})
        state = await indexed_state(api)
        assert not any(path.startswith("02 Areas/Cooking/") for path in state)

        (vault / "00 Inbox" / "Tide clock.md").unlink()
        await converged(api, vault)
        assert "00 Inbox/Tide clock.md" not in await indexed_state(api)

        # a board saved, a PDF dropped into the vault, then moved: the same incremental path
        board = vault / "01 Projects" / "Tidepool roadmap.canvas"
        board.write_text(board.read_text().replace("never on a Friday", "never on a Friday or in August"))
        await converged(api, vault, {"01 Projects/Tidepool roadmap.canvas": "or in August"})
        handout = vault / "00 Inbox" / "Tide handout.pdf"
        handout.write_bytes(text_pdf([["Neap tides are the weak ones."]], title="Tide handout"))
        await converged(api, vault, {"00 Inbox/Tide handout.pdf": "Neap tides"})
        handout.rename(vault / "attachments" / "Tide handout.pdf")
        await converged(api, vault, {"attachments/Tide handout.pdf": "Neap tides"})
        assert "00 Inbox/Tide handout.pdf" not in await indexed_state(api)


async def test_ignored_files_do_not_trigger_work(fake_ollama, vault, settings_for):
    async with running_app(settings_for(vault, debounce_ms=50), watch=True) as api:
        await converged(api, vault)
        syncs = api.live.syncs
        (vault / ".obsidian" / "workspace.json").write_text("{}")
        (vault / "attachments" / "notes.txt").write_text("not markdown")
        (vault / ".trash" / "gone.md").write_text("deleted note")
        (vault / "Daily" / "scratch.md~").write_text("editor backup")
        await asyncio.sleep(0.5)
        assert api.live.syncs == syncs
        assert api.live.pending == 0
