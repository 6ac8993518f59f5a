"""What choosing the keyword terms costs: the sample of the vault read at a whole sync
(`reading.vault_language`), alone, and whole syncs of a copy of a vault (first build, nothing changed,
one note edited) with a model server, in wall and CPU seconds. CPU seconds (`time.process_time`, all of
the process's threads) move little with the load of a shared machine; wall seconds do.

    uv run python -m scripts.bench_keyword_sample --vault $W/vault-100000
    uv run python -m scripts.bench_keyword_sample --vault $W/hub --index-dir $W/hub-index \
        --ollama-host http://127.0.0.1:11611 --rounds 5      # edits the vault: use a copy

Prints one JSON record.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

from scripts.benchkit import FAST_MODEL
from vask_server.adapters.vault import Vault
from vask_server.config import load_settings
from vask_server.services.context import open_services
from vask_server.services.sync.reading import vault_language


def sample_step(vault: Path, runs: int) -> dict[str, Any]:
    reader = Vault(vault)
    started = time.process_time()
    scan = reader.scan()
    scan_cpu = time.process_time() - started
    cpu, wall = [], []
    for _ in range(runs):
        started, clock = time.process_time(), time.perf_counter()
        language = vault_language(reader, scan.notes, "auto")
        cpu.append(time.process_time() - started)
        wall.append(time.perf_counter() - clock)
    return {
        "notes": len(scan.notes),
        "scan_cpu_ms": round(scan_cpu * 1000),
        "sample_cpu_ms_median": round(statistics.median(cpu) * 1000),
        "sample_wall_ms": [round(w * 1000) for w in wall],
        "choice": language.keyword.terms,
        "reason": language.keyword.reason(),
    }


async def whole_syncs(vault: Path, index_dir: Path, host: str, model: str, rounds: int) -> dict[str, Any]:
    settings = load_settings(
        env={}, vault=vault, index_dir=index_dir, ollama_host=host, embed_model=model, chat_model="extractive"
    )
    notes = sorted(p for p in vault.rglob("*.md") if ".obsidian" not in p.parts)
    record: dict[str, Any] = {}

    async def timed(name: str) -> None:
        started, clock = time.process_time(), time.perf_counter()
        await services.indexer.sync()
        record.setdefault(f"{name}_wall_s", []).append(round(time.perf_counter() - clock, 3))
        record.setdefault(f"{name}_cpu_s", []).append(round(time.process_time() - started, 3))

    async with open_services(settings) as services:
        await timed("first_build")
        for n in range(rounds):
            await timed("nothing_changed")
            with notes[(n * 997) % len(notes)].open("a", encoding="utf-8") as note:
                note.write(f"\nedited by the benchmark, round {n}\n")
            await timed("one_edit")
    return record


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vault", type=Path, required=True)
    parser.add_argument("--runs", type=int, default=9, help="times the sample is read")
    parser.add_argument("--index-dir", type=Path, help="also time whole syncs into this (new) index folder")
    parser.add_argument("--ollama-host", default="http://127.0.0.1:11611")
    parser.add_argument("--model", default=FAST_MODEL)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    record: dict[str, Any] = {"load": os.getloadavg()[0], "sample": sample_step(args.vault, args.runs)}
    if args.index_dir is not None:
        syncs = whole_syncs(args.vault, args.index_dir, args.ollama_host, args.model, args.rounds)
        record["syncs"] = asyncio.run(syncs)
    print(json.dumps(record))


if __name__ == "__main__":
    main()
