"""100 edits across 20 notes (one every 0.1 s at most, with searches answered between each two) while 5 clients
query: no errors, and the index ends equal to the disk."""

import asyncio
import random

import pytest

from tests.reliability.helpers import clean_build, describe, index_fingerprint
from tests.test_watcher import converged
from tests.web_helpers import running_app
from vask_server.adapters.vault import Vault
from vask_server.core.filetypes import MARKDOWN

pytestmark = pytest.mark.reliability

EDITS = 100
SECONDS = 10.0
NOTES = 20
CLIENTS = 5
QUERIES_BETWEEN = 2  # searches answered between one edit and the next, at least


async def test_edits_under_query_load(fake_ollama, vault, settings_for, tmp_path):
    config = settings_for(vault, debounce_ms=100)
    # Markdown notes, edited as text (a line appended to a board's JSON would make it invalid)
    notes = sorted(p for p, stat in Vault(vault).scan(types=(MARKDOWN,)).notes.items() if stat.size > 0)[:NOTES]
    rng = random.Random(42)
    statuses: list[int] = []
    async with running_app(config, watch=True) as api:
        stop = asyncio.Event()

        async def client(number: int) -> None:
            words = ["sourdough", "half marathon", "tidepool launch", "spanish exam", "sleep", "homelab"]
            while not stop.is_set():
                response = await api.post("/v1/search", {"query": words[number % len(words)], "top_k": 5})
                await response.read()
                statuses.append(response.status)
                await asyncio.sleep(0.01)

        async def editor() -> None:
            for n in range(EDITS):
                path = vault / notes[n % NOTES]
                text = path.read_text(encoding="utf-8")
                if rng.random() < 0.5:
                    text += f"\nLoad edit {n}: line added while five clients query.\n"
                else:  # rewrite a line in the middle, as an editor would
                    lines = text.splitlines()
                    lines[len(lines) // 2] = f"Load edit {n} replaced this line."
                    text = "\n".join(lines) + "\n"
                await asyncio.to_thread(path.write_text, text, encoding="utf-8")
                # The next edit comes after the pace's pause and after the clients have been answered
                # QUERIES_BETWEEN more times: edits and queries interleave however fast the machine is.
                answered = len(statuses)
                await asyncio.sleep(SECONDS / EDITS)
                while len(statuses) < answered + QUERIES_BETWEEN:
                    assert not any(task.done() for task in clients), "a client stopped querying"
                    await asyncio.sleep(0.01)

        clients = [asyncio.create_task(client(n)) for n in range(CLIENTS)]
        await editor()
        await converged(api, vault, timeout=60)
        stop.set()
        await asyncio.gather(*clients)
        after = await index_fingerprint(api.live.services)

    assert statuses and set(statuses) == {200}, {s: statuses.count(s) for s in set(statuses)}
    expected = await clean_build(config, tmp_path / "clean")
    assert after == expected, f"{describe(after)} != {describe(expected)}"
