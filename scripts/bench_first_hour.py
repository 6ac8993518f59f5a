"""The first hour with a large vault, measured as a new user meets it: `vask serve` starts on a vault it
has never seen, with an embedder as slow as a real model on a laptop's CPU, and a client asks about
what the person wrote most recently and about a rare word in an old note while the first sync runs.

It measures, from the server's spawn:
- when each of the 20 most recently modified notes is found by a search of its own title with a
  passage whose vector is stored (a hit not marked `keyword_only`);
- when a word that only the oldest note holds is found (by any means);
- what `/v1/status` says of progress (notes and chunks done, `eta_seconds`), and, at the first status
  past half the chunks, how the time left it gave compares with the time the rest actually took;
- when the first sync ends.

    uv run python -m scripts.bench_first_hour --notes 3000 --rate 40 --json docs/bench/first-hour.json

The vault is `scripts/synth_vault.py`'s (same seed, same bytes), its notes' file times spread over
three years in an order unrelated to their paths; the embedder is `scripts.hash_ollama --rate`.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
from pathlib import Path
from typing import Any

from scripts.benchkit import (
    FAST_MODEL,
    ROOT,
    Server,
    free_port,
    http_json,
    machine,
    print_table,
    start_server,
    write_json,
)
from scripts.synth_vault import generate

RARE_WORD = "quillwortian"
RECENT = 20


def prepare_vault(out: Path, notes: int, seed: int) -> tuple[list[tuple[str, str]], str]:
    """The synthetic vault with file times spread over three years (a shuffled order): returns the
    most recent notes' (path, title) and the path of the oldest note, which gets the rare word."""
    generate(out, notes, seed)
    paths = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.md"))
    rng = random.Random(seed)
    order = paths[:]
    rng.shuffle(order)  # order[0] is the newest
    now = time.time()
    step = 3 * 365 * 86400 / len(order)
    oldest = order[-1]
    with (out / oldest).open("a", encoding="utf-8") as handle:
        handle.write(f"\n\nA note on the {RARE_WORD} meadow, seen once.\n")
    for rank, path in enumerate(order):
        when = now - rank * step
        os.utime(out / path, (when, when))
    recent = [(path, Path(path).stem) for path in order[:RECENT]]
    return recent, oldest


def search(server: Server, query: str) -> list[dict[str, Any]]:
    try:
        body = http_json(server.base + "/v1/search", {"query": query, "top_k": 6}, token=server.token, timeout=30)
    except (OSError, urllib.error.URLError):
        return []
    return list(body.get("hits", [])) if isinstance(body, dict) else []


def run(args: argparse.Namespace) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="vask-first-hour-"))
    vault, index_dir = work / "vault", work / "index"
    recent, oldest = prepare_vault(vault, args.notes, args.seed)
    port, embed_port = free_port(), free_port()
    embedder = subprocess.Popen(
        [sys.executable, "-m", "scripts.hash_ollama", "--port", str(embed_port), "--rate", str(args.rate)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.STDOUT,
    )
    time.sleep(1.5)
    host = f"http://127.0.0.1:{embed_port}"
    server = start_server(vault, index_dir, host, FAST_MODEL, port, log=work / "serve.log", VASK_LOG_LEVEL="info")
    found_recent: dict[str, float] = {}
    rare_at: float | None = None
    halfway: dict[str, Any] | None = None
    statuses: list[dict[str, Any]] = []
    done_at: float | None = None
    try:
        while time.monotonic() - server.started < args.timeout:
            if server.process.poll() is not None:
                raise SystemExit(f"vask serve exited with {server.process.returncode}; see {work / 'serve.log'}")
            elapsed = time.monotonic() - server.started
            try:
                status = server.status()
            except (OSError, urllib.error.URLError):
                time.sleep(0.5)
                continue
            progress = status.get("progress") or {}
            statuses.append(
                {
                    "t": round(elapsed, 1),
                    "state": status.get("state"),
                    "done": status.get("done"),
                    "total": status.get("total"),
                    "notes": status.get("notes"),
                    "chunks": status.get("chunks"),
                    "eta_seconds": status.get("eta_seconds", progress.get("eta_seconds")),
                    "chunks_done": progress.get("chunks_done"),
                    "chunks_total": progress.get("chunks_total"),
                }
            )
            fraction = _fraction(status)
            if halfway is None and fraction is not None and fraction >= 0.5:
                halfway = {**statuses[-1], "fraction": round(fraction, 3)}
            if status.get("state") == "idle" and status.get("pending") == 0 and status.get("model"):
                done_at = elapsed
                break
            if rare_at is None and any(hit.get("path") == oldest for hit in search(server, RARE_WORD)):
                rare_at = time.monotonic() - server.started
            for path, title in recent:
                if path in found_recent:
                    continue
                hits = search(server, title)
                if any(hit.get("path") == path and not hit.get("keyword_only") for hit in hits):
                    found_recent[path] = time.monotonic() - server.started
            time.sleep(args.poll)
        if done_at is not None:
            # (after the sync: what was not found during it, found now, at its end)
            if rare_at is None and any(hit.get("path") == oldest for hit in search(server, RARE_WORD)):
                rare_at = done_at
            for path, title in recent:
                if path not in found_recent and any(hit.get("path") == path for hit in search(server, title)):
                    found_recent[path] = done_at
    finally:
        server.stop()
        embedder.terminate()
        embedder.wait(10)
    times = sorted(found_recent.values())
    eta_check = None
    if halfway is not None and done_at is not None:
        actual = done_at - halfway["t"]
        told = halfway.get("eta_seconds")
        eta_check = {
            "at_s": halfway["t"],
            "eta_seconds": told,
            "actual_rest_s": round(actual, 1),
            "ratio": round(told / actual, 3) if told is not None and actual > 0 else None,
        }
    log_lines = (work / "serve.log").read_text().splitlines()
    keyword_line = next((line for line in log_lines if "by keyword (" in line), None)
    record = {
        "benchmark": "first-hour",
        "keyword_table_log": keyword_line,
        "notes": args.notes,
        "embed_rate": args.rate,
        "model": f"{FAST_MODEL} via scripts.hash_ollama --rate {args.rate}",
        "machine": machine(),
        "recent_found": len(times),
        "recent_all_found_s": round(times[-1], 1) if len(times) == RECENT else None,
        "recent_median_s": round(statistics.median(times), 1) if times else None,
        "rare_word_found_s": None if rare_at is None else round(rare_at, 1),
        "first_sync_s": None if done_at is None else round(done_at, 1),
        "eta_at_halfway": eta_check,
        "statuses": statuses[:: max(1, len(statuses) // 200)],
    }
    print_table(
        f"first hour: {args.notes} notes, embedder at {args.rate} texts/s",
        [
            ("20 most recent notes found (vector)", f"{len(times)}; all by {record['recent_all_found_s']} s"),
            ("median of them", f"{record['recent_median_s']} s"),
            ("rare word in the oldest note", f"{record['rare_word_found_s']} s"),
            ("eta at halfway vs actual", str(eta_check)),
            ("first sync", f"{record['first_sync_s']} s"),
        ],
    )
    write_json(args.json, record)
    return record


def _fraction(status: dict[str, Any]) -> float | None:
    progress = status.get("progress") or {}
    if progress.get("chunks_total"):
        return float(progress["chunks_done"]) / float(progress["chunks_total"])
    if status.get("total"):
        return float(status["done"]) / float(status["total"])
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rate", type=float, default=40.0, help="the embedder's texts a second")
    parser.add_argument("--poll", type=float, default=2.0, help="seconds between rounds of searches")
    parser.add_argument("--timeout", type=float, default=3600.0)
    parser.add_argument("--json", type=Path, default=None)
    run(parser.parse_args())


if __name__ == "__main__":
    main()
