"""Every unlinked connection the related-notes pane shows for the notes of one folder, linked as the pane's
"Link" links it (a proposal, then approved), then the index synced again and asked whether each is now
counted as linked. On a copy of the vault: the vault itself is never changed.

    uv run python -m scripts.link_unlinked --vault sample_vault --folder "02 Areas/Cooking"
    OLLAMA_HOST=http://127.0.0.1:11435 VASK_EMBED_MODEL=all-minilm uv run python -m scripts.link_unlinked \\
        --vault sample_vault --folder "03 Resources/Books" --json out.json

Prints, for the folder: its notes, the unlinked connections the pane shows (its first 10 related notes of
each), how many were linked at the note's own words (a mention) and how many under a heading, how many
could not be, and after the sync: how many the link graph counts as linked, and of those the pane still
shows, how many it shows as linked. Needs Ollama (or the stand-in) with VASK_EMBED_MODEL, or `--fake`
for the test suite's fake model server.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from vask_server.config import load_settings
from vask_server.core.filetypes import MARKDOWN
from vask_server.errors import VaskError
from vask_server.services.context import Services, open_services
from vask_server.services.query.related import related_notes

PANE_COUNT = 10  # what the plugin's related pane asks for (RELATED_COUNT in RelatedView.ts)


async def link_folder(services: Services, folder: str) -> dict[str, Any]:
    """Links every unlinked connection the pane shows for the notes directly or deeper in `folder`."""
    await services.indexer.sync()
    index = services.searcher.active()
    graph = await services.searcher.graphs.get(index)
    prefix = folder.strip("/") + "/"
    notes = sorted(p for p in graph if p.startswith(prefix) and p.lower().endswith(f".{MARKDOWN}"))
    shown: list[tuple[str, str]] = []
    for note in notes:
        for row in await related_notes(services.searcher, index, note, PANE_COUNT):
            if not row["linked"]:
                shown.append((note, row["path"]))
    linked: list[dict[str, Any]] = []
    failed: list[dict[str, str]] = []
    for note, target in shown:  # one at a time: each link changes the note the next is proposed against
        try:
            view, _ = await asyncio.to_thread(services.proposals.propose_link, note, target, device="default")
            applied = await asyncio.to_thread(services.proposals.apply, view.proposal.id, by="default")
        except VaskError as exc:
            failed.append({"note": note, "target": target, "error": exc.message})
            continue
        link = applied.proposal.link or {}
        linked.append(
            {"note": note, "target": target, "placement": link.get("placement"), "markup": link.get("markup")}
        )
    await services.indexer.sync()  # what the running server's watcher does after each save
    index = services.searcher.active()
    graph = await services.searcher.graphs.get(index)
    counted = [row for row in linked if row["target"] in graph.links_to(row["note"])]
    still_shown = still_linked = 0
    for note in sorted({row["note"] for row in linked}):
        rows = {r["path"]: r for r in await related_notes(services.searcher, index, note, PANE_COUNT)}
        for row in linked:
            if row["note"] == note and row["target"] in rows:
                still_shown += 1
                still_linked += bool(rows[row["target"]]["linked"])
    return {
        "folder": folder,
        "notes": len(notes),
        "unlinked_shown": len(shown),
        "linked": len(linked),
        "at_mention": sum(1 for row in linked if row["placement"] == "mention"),
        "under_heading": sum(1 for row in linked if row["placement"] == "heading"),
        "not_linked": failed,
        "counted_linked_after_sync": len(counted),
        "still_in_pane": still_shown,
        "shown_linked_in_pane": still_linked,
        "links": linked,
    }


def describe(result: dict[str, Any]) -> str:
    return (
        f"{result['folder']}: {result['notes']} notes; the pane shows {result['unlinked_shown']} connections not "
        f"linked yet; linked {result['linked']} ({result['at_mention']} at the note's own words, "
        f"{result['under_heading']} under a heading), {len(result['not_linked'])} could not be; after the sync the "
        f"link graph counts {result['counted_linked_after_sync']} of {result['linked']} as linked, and of the "
        f"{result['still_in_pane']} the pane still shows, {result['shown_linked_in_pane']} are shown linked."
    )


async def run(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="vask-link-") as tmp:
        vault = Path(tmp) / "vault"
        shutil.copytree(args.vault, vault)
        flags: dict[str, Any] = {"vault": str(vault), "index_dir": str(Path(tmp) / "index")}
        fake = None
        if args.fake:  # (the test suite's fake, served from this process's loop)
            from aiohttp import web

            from tests.fake_ollama import EMBED_MODEL, FakeOllama

            fake = web.AppRunner(FakeOllama().app())
            await fake.setup()
            await web.TCPSite(fake, "127.0.0.1", 0).start()
            flags |= {"ollama_host": f"http://127.0.0.1:{fake.addresses[0][1]}", "embed_model": EMBED_MODEL}
        try:
            async with open_services(load_settings(flags=flags)) as services:
                return await link_folder(services, args.folder)
        finally:
            if fake is not None:
                await fake.cleanup()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vault", type=Path, default=Path("sample_vault"))
    parser.add_argument("--folder", required=True, help="the folder whose notes are linked (vault-relative)")
    parser.add_argument("--fake", action="store_true", help="the test suite's fake model server instead of Ollama")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures and every link here")
    args = parser.parse_args(argv)
    result = asyncio.run(run(args))
    print(describe(result))
    for row in result["not_linked"]:
        print(f"  not linked: {row['note']} -> {row['target']}: {row['error']}", file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps(result, ensure_ascii=False, indent=2) + "\n", "utf-8")
    ok = not result["not_linked"] and result["counted_linked_after_sync"] == result["linked"]
    return 0 if ok and result["still_in_pane"] == result["shown_linked_in_pane"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
