"""On sample_vault, every connection the related pane shows as not linked yet, for the notes of one folder,
is linked through a proposal, and the next sync counts each as linked (scripts/link_unlinked.py)."""

from __future__ import annotations

from pathlib import Path

from scripts.link_unlinked import link_folder
from tests.conftest import SAMPLE_VAULT
from vask_server.services.context import open_services


async def test_every_unlinked_connection_of_a_folder_is_linked_and_counted_so(fake_ollama, vault: Path, settings_for):
    async with open_services(settings_for(vault)) as services:
        result = await link_folder(services, "03 Resources/Books")
    assert result["notes"] == 8 and result["unlinked_shown"] > 0
    assert result["not_linked"] == [] and result["linked"] == result["unlinked_shown"]
    assert result["counted_linked_after_sync"] == result["linked"]  # every link read back as a link
    assert result["still_in_pane"] > 0 and result["shown_linked_in_pane"] == result["still_in_pane"]
    assert result["at_mention"] >= 1 and result["under_heading"] >= 1
    # the copy was changed, the sample vault never
    changed = [row["note"] for row in result["links"]]
    assert all((vault / note).read_bytes() != (SAMPLE_VAULT / note).read_bytes() for note in changed)
    for row in result["links"]:
        assert row["markup"] in (vault / row["note"]).read_text("utf-8")
