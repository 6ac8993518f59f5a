"""The link graph's cost: reading an index's links into the graph that related notes, connection
questions and scope mentions use, each run in a fresh process (time, peak RSS above the process before
it, RSS kept after it with freed memory handed back), then the notes directory a question that names
a note needs on top of it. With `--serve-vault`, instead: a `vask serve` of the index, its RSS after
five searches, then its first `GET /v1/related` (time, peak RSS, RSS 7 s later).

    uv run python -m scripts.bench_graph --index-dir INDEX --runs 5 --json docs/bench/graph-100k.json
    uv run python -m scripts.bench_graph --index-dir INDEX --serve-vault VAULT --ollama-host URL \
        --embed-model hash-embed-1024 --runs 2 --against WORKTREE

Runs alternate with `--against DIR` (another checkout's source, e.g. a `git worktree` of the commit
before a change), so both are measured on the same machine in the same minutes.
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import gc
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any


def _status(key: str) -> int:
    for line in Path(f"/proc/{os.getpid()}/status").read_text().splitlines():
        if line.startswith(key):
            return int(line.split()[1]) // 1024
    raise KeyError(key)


def _release() -> None:
    import pyarrow as pa

    gc.collect()
    pa.default_memory_pool().release_unused()
    ctypes.CDLL("libc.so.6").malloc_trim(0)


def _reset_peak() -> None:
    Path(f"/proc/{os.getpid()}/clear_refs").write_text("5")  # VmHWM from here


async def _one(index_dir: Path) -> dict[str, Any]:
    from vask_server.adapters.memory import set_process_memory_policy

    set_process_memory_policy()  # as `vask serve` runs
    from vask_server.adapters.store import Store
    from vask_server.services.query.graph import LinkGraphs

    store = await Store.open(index_dir)
    index = store.read_meta().searched()
    _release()
    _reset_peak()
    before = _status("VmRSS")
    started = time.perf_counter()
    graph = await LinkGraphs(store).get(index)
    source = sys.modules[LinkGraphs.__module__].__file__
    seconds = time.perf_counter() - started
    peak = _status("VmHWM") - before
    _release()
    kept = _status("VmRSS") - before
    _reset_peak()
    before_directory = _status("VmRSS")
    started = time.perf_counter()
    names = len(graph.directory.by_name)
    directory_seconds = time.perf_counter() - started
    directory_peak = _status("VmHWM") - before_directory
    _release()
    return {
        "source": source,
        "notes": len(graph),
        "names": names,
        "graph_s": round(seconds, 3),
        "graph_peak_mib": peak,
        "graph_kept_mib": kept,
        "directory_s": round(directory_seconds, 3),
        "directory_peak_mib": directory_peak,
        "directory_kept_mib": _status("VmRSS") - before_directory,
    }


def _serve_once(
    index_dir: Path, vault: Path, ollama_host: str, embed_model: str, source: Path | None
) -> dict[str, Any]:
    """A `vask serve` (of `source`'s code, else this checkout's) of the index, idle after five
    searches, then asked for one note's related notes."""
    import urllib.parse

    from scripts.benchkit import free_port, http_json, proc_status

    port = free_port()
    env = dict(os.environ) | ({"PYTHONPATH": str(source)} if source else {})
    command = [sys.executable, "-m", "vask_server.cli", "serve", "--vault", str(vault), "--index-dir", str(index_dir)]
    command += ["--port", str(port), "--no-watch", "--ollama-host", ollama_host, "--embed-model", embed_model]
    # (the working directory comes first on the module path: `source`'s own, to run its code)
    server = subprocess.Popen(command, env=env, cwd=source, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    token = (index_dir / "token").read_text().strip()

    def call(path: str, body: dict[str, Any] | None = None) -> Any:
        return http_json(f"http://127.0.0.1:{port}{path}", body, token, timeout=120)

    def status(key: str) -> int:
        return proc_status(server.pid)[key] // 2**20

    try:
        for _ in range(600):
            try:
                if call("/v1/status").get("state") == "idle":
                    break
            except OSError:
                pass
            time.sleep(0.5)
        for query in ["tide tables", "budget review", "garden compost", "running shoes", "project plan"]:
            call("/v1/search", {"query": query})
        time.sleep(7)  # (searches hand freed memory back after 5 s without one)
        idle = status("VmRSS")
        Path(f"/proc/{server.pid}/clear_refs").write_text("5")
        note = next(p for p in sorted(vault.rglob("*.md")))
        started = time.perf_counter()
        related = call("/v1/related?path=" + urllib.parse.quote(note.relative_to(vault).as_posix()))
        seconds = time.perf_counter() - started
        peak = status("VmHWM")
        time.sleep(7)
        return {
            "source": str(source or "this checkout"),
            "idle_after_searches_mib": idle,
            "related_s": round(seconds, 3),
            "related_peak_mib": peak,
            "rss_7s_after_mib": status("VmRSS"),
            "related": len(related["related"]),
        }
    finally:
        server.terminate()
        server.wait(30)


def _run(index_dir: Path, source: Path | None) -> dict[str, Any]:
    env = dict(os.environ)
    if source is not None:
        env["PYTHONPATH"] = str(source)
    # (run as a file, not -m: the working directory would come before PYTHONPATH's source)
    command = [sys.executable, __file__, "--index-dir", str(index_dir), "--one"]
    out = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def _medians(runs: list[dict[str, Any]]) -> dict[str, Any]:
    skip = ("source", "notes", "names", "related")
    return {key: statistics.median(r[key] for r in runs) for key in runs[0] if key not in skip}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--index-dir", type=Path, required=True)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--against", type=Path, default=None, help="another checkout's source to alternate with")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--serve-vault", type=Path, default=None, help="measure a vask serve of the index instead")
    parser.add_argument("--ollama-host", default="http://127.0.0.1:11620", help="with --serve-vault")
    parser.add_argument("--embed-model", default="hash-embed-1024", help="with --serve-vault")
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(asyncio.run(_one(args.index_dir))))
        return
    sides: dict[str, list[dict[str, Any]]] = {"this": []} | ({"against": []} if args.against else {})
    for _ in range(args.runs):
        for side, runs in sides.items():
            source = args.against if side == "against" else None
            if args.serve_vault:
                runs.append(_serve_once(args.index_dir, args.serve_vault, args.ollama_host, args.embed_model, source))
            else:
                runs.append(_run(args.index_dir, source))
            print(side, runs[-1], flush=True)
    from scripts.benchkit import write_json

    record = {
        "index_dir": args.index_dir.name,
        "notes": sides["this"][0].get("notes"),
        "runs": args.runs,
        "median": {side: _medians(runs) for side, runs in sides.items()},
        "all": sides,
    }
    print(json.dumps(record["median"], indent=2))
    write_json(args.json, record)


if __name__ == "__main__":
    main()
