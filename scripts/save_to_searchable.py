"""Save-to-searchable latency: edit a note on disk, time until `vask serve` returns the new text.

Starts `vask serve` on a private copy of a vault, waits for the first sync, then makes N edits (each
appends a sentence with a unique word to a different note, as an editor's save would) and polls
POST /v1/search until the new sentence comes back. Prints each latency, the median and p95, and writes
a JSON record. Needs Ollama (or ../shared/ollama-shim) at OLLAMA_HOST.

    uv run python scripts/save_to_searchable.py --vault sample_vault --edits 20

`measure_edits` is also used by `scripts.bench edits` (scripts/bench_serve.py) against a larger vault.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from scripts.benchkit import http_json, percentile, write_json


def request(url: str, token: str, body: dict[str, Any] | None = None) -> Any:
    return http_json(url, body, token, timeout=30)


def measure_edits(
    base: str,
    token: str,
    vault: Path,
    edits: int,
    *,
    start: int = 0,
    seed: int = 7,
    timeout: float = 60.0,
    searches: list[int] | None = None,
) -> list[float]:
    """Makes `edits` edits (numbered from `start`), each appending a sentence with a unique word to a
    different note; returns the seconds from each save until /v1/search returns the new sentence.
    The number of searches made is appended to `searches` when given (each embeds its query)."""
    notes = sorted(p for p in vault.rglob("*.md") if ".trash" not in p.parts and p.stat().st_size > 0)
    random.Random(seed).shuffle(notes)
    run = f"{time.time_ns() % 10**9:09d}"  # so that a vault edited before has no such word yet
    latencies: list[float] = []
    for n in range(start, start + edits):
        note = notes[n % len(notes)]
        word = f"quillfeather{run}r{n}x{random.Random(n).randint(1000, 9999)}"
        relative = note.relative_to(vault).as_posix()
        saved = time.monotonic()
        with note.open("a", encoding="utf-8") as handle:
            handle.write(f"\n\nSaved remark: {word} marks edit {n}.\n")
        while True:
            hits = request(f"{base}/v1/search", token, {"query": word, "top_k": 3, "filters": {"paths": [relative]}})[
                "hits"
            ]
            if searches is not None:
                searches.append(1)
            if any(word in hit["text"] for hit in hits):
                latencies.append(time.monotonic() - saved)
                break
            if time.monotonic() - saved > timeout:
                raise SystemExit(f"edit {n} of {relative} not searchable after {timeout} s")
            time.sleep(0.02)
        print(f"edit {n + 1:>2}: {latencies[-1] * 1000:7.0f} ms  {relative}")
        time.sleep(0.3)  # let the previous edit's sync settle, as a person typing would
    return latencies


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vault", type=Path, default=Path("sample_vault"))
    parser.add_argument("--edits", type=int, default=20)
    parser.add_argument("--port", type=int, default=8791)
    parser.add_argument("--debounce-ms", type=int, default=250)
    parser.add_argument("--json", type=Path, default=None, help="write the record here")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for one edit")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="vask-save-bench-"))
    vault = work / "vault"
    shutil.copytree(args.vault, vault)
    index_dir = work / "index"
    env = {**os.environ, "VASK_INDEX_DIR": str(index_dir), "VASK_DEBOUNCE_MS": str(args.debounce_ms)}
    server = subprocess.Popen(
        [sys.executable, "-m", "vask_server.cli", "serve", "--vault", str(vault), "--port", str(args.port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    base = f"http://127.0.0.1:{args.port}"
    try:
        assert server.stdout is not None
        for line in server.stdout:
            if "listening on" in line:
                break
        else:
            raise SystemExit("vask serve did not start")
        token = (index_dir / "token").read_text().strip()
        started = time.monotonic()
        while True:
            health = request(f"{base}/v1/health", token)
            if health["index"]["pending"] == 0 and health["index"]["notes"] > 0:
                break
            if time.monotonic() - started > 600:
                raise SystemExit(f"first sync did not finish: {health}")
            time.sleep(0.2)
        print(
            f"first sync: {time.monotonic() - started:.1f} s, {health['index']['notes']} notes, "
            f"model {health['index']['model']}"
        )
        latencies = measure_edits(base, token, vault, args.edits, timeout=args.timeout)
        record = {
            "edits": len(latencies),
            "debounce_ms": args.debounce_ms,
            "model": health["index"]["model"],
            "median_s": round(statistics.median(latencies), 3),
            "p95_s": round(percentile(latencies, 0.95), 3),
            "min_s": round(min(latencies), 3),
            "max_s": round(max(latencies), 3),
            "latencies_s": [round(x, 3) for x in latencies],
        }
        print(
            f"save-to-searchable over {len(latencies)} edits: median {record['median_s'] * 1000:.0f} ms, "
            f"p95 {record['p95_s'] * 1000:.0f} ms (debounce {args.debounce_ms} ms included)"
        )
        write_json(args.json, record)
        return 0
    finally:
        server.terminate()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
