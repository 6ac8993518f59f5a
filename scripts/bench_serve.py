"""`scripts.bench restart`, `edits` and `memory`: a real `vask serve` subprocess restarted with nothing
changed, kept in step with many edits, and indexing a vault from scratch (its peak and idle RSS).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

from scripts.benchkit import (
    ROOT,
    Server,
    claim_bench_dir,
    cpu_seconds,
    disk_bytes,
    embed_inputs,
    free_port,
    http_json,
    make_queries,
    print_table,
    proc_status,
    settled_rss,
    start_server,
    summary_ms,
    timed_search,
    vault_questions,
    wait_current,
    wait_ready,
    wait_ready_sampling,
    write_json,
)


def run_restart(args: argparse.Namespace) -> dict[str, Any]:
    """Restart with nothing changed, as a person meets it: from the spawn of `vask serve` (through `uv
    run` unless `--launcher python`) until `/v1/health` says the vault is confirmed current, beside
    until the port answers; how many texts were embedded meanwhile; the first search right after;
    RSS 5 s after ready and after the searches; short (four words, as typed) and long (a pasted
    paragraph) hybrid searches as their client waits for them."""
    checkout: Path = getattr(args, "checkout", None) or ROOT
    launcher: str = getattr(args, "launcher", "python")
    short_n, long_n = getattr(args, "short", 0), getattr(args, "long", 0)
    shorts, longs = vault_questions(args.vault, max(1, short_n), long_n, seed=args.seed)
    runs = []
    for n in range(args.runs):
        one = _restart_once(args, checkout, launcher, shorts[:short_n] or shorts[:1], longs)
        runs.append(one)
        print(
            f"run {n + 1}: listening {one['listening_s']:.2f} s, ready {one['ready_s']:.2f} s "
            f"(CPU {one['cpu_at_ready_s']:.2f} s), "
            f"embeddings {one['embeddings']}, first search {one['first_search_ms']:.0f} ms, "
            f"idle {one['idle_rss_mib']} MiB, after {one['searches']} searches {one['rss_after_searches_mib']} MiB"
            + (f", short p50 {one['short']['median_ms']:.1f} ms" if one.get("short") else "")
            + (f", long p50 {one['long']['median_ms']:.1f} ms" if one.get("long") else "")
        )

    def median(key: str) -> float:
        return round(statistics.median(r[key] for r in runs), 3)

    record: dict[str, Any] = {
        "vault": args.vault.name,
        "model": args.model,
        "launcher": launcher,
        "checkout_commit": _commit(checkout),
        "runs": runs,
        "ready_median_s": median("ready_s"),
        "ready_max_s": round(max(r["ready_s"] for r in runs), 3),
        "listening_median_s": median("listening_s"),
        "cpu_at_ready_median_s": median("cpu_at_ready_s"),
        "first_search_median_s": round(median("first_search_ms") / 1000, 3),
        "embeddings_max": max((r["embeddings"] or 0) for r in runs),
        "idle_rss_mib": statistics.median(r["idle_rss_mib"] for r in runs),
        "searches": runs[0]["searches"],
        "rss_after_searches_mib": statistics.median(r["rss_after_searches_mib"] for r in runs),
    }
    for kind in ("short", "long"):
        if runs[0].get(kind):
            record[f"{kind}_median_ms"] = round(statistics.median(r[kind]["median_ms"] for r in runs), 2)
            record[f"{kind}_p95_ms"] = round(statistics.median(r[kind]["p95_ms"] for r in runs), 2)
    rows = [
        (
            "ready: vault confirmed current (median, max)",
            f"{record['ready_median_s']:.2f} s, {record['ready_max_s']:.2f} s",
        ),
        ("listening (median)", f"{record['listening_median_s']:.2f} s"),
        ("serve's CPU time until ready (median)", f"{record['cpu_at_ready_median_s']:.2f} s"),
        ("first search after ready", f"{record['first_search_median_s'] * 1000:.0f} ms"),
        ("embeddings made", str(record["embeddings_max"])),
        ("RSS 5 s after ready (median)", f"{record['idle_rss_mib']:.0f} MiB"),
        (f"RSS after {record['searches']} searches (median)", f"{record['rss_after_searches_mib']:.0f} MiB"),
    ]
    for kind, words in (("short", "4-word questions"), ("long", "pasted paragraphs")):
        if f"{kind}_median_ms" in record:
            rows.append(
                (
                    f"hybrid search, {words}: p50, p95",
                    f"{record[f'{kind}_median_ms']:.1f} ms, {record[f'{kind}_p95_ms']:.1f} ms",
                )
            )
    print_table(
        f"restart with nothing changed ({runs[0]['notes']} notes, {runs[0]['chunks']} chunks, {launcher})", rows
    )
    write_json(args.json, record)
    return record


def _restart_once(
    args: argparse.Namespace, checkout: Path, launcher: str, shorts: list[str], longs: list[str]
) -> dict[str, Any]:
    if getattr(args, "first_start", False):
        from vask_server.adapters.calibration import CALIBRATION_FILE

        # A start that must measure the search calibration (after an index whose `vask index` could not
        # ask the model for it, or made by a vask that kept none): the one kept goes.
        (args.index_dir / CALIBRATION_FILE).unlink(missing_ok=True)
    before = embed_inputs(args.ollama_host)
    server = start_server(
        args.vault, args.index_dir, args.ollama_host, args.model, free_port(), checkout=checkout, launcher=launcher
    )
    try:
        listening, ready = wait_current(server, poll=getattr(args, "poll", 0.1))
        ready_at = time.monotonic()
        cpu_at_ready = cpu_seconds(server.pid)
        after = embed_inputs(args.ollama_host)
        first = timed_search(server, shorts[0])
        time.sleep(max(0.0, ready_at + 5.0 - time.monotonic()))
        idle = proc_status(server.pid).get("VmRSS", 0)
        short = [timed_search(server, q) for q in shorts[1:]] if len(shorts) > 1 else []
        long = [timed_search(server, q) for q in longs]
        time.sleep(6)  # serve hands freed memory back once searches pause for 5 s (ReleaseWhenQuiet)
        searched = settled_rss(server.pid)
        status = server.status()
    finally:
        server.stop()
    return {
        "listening_s": round(listening, 3),
        "ready_s": round(ready, 3),
        "cpu_at_ready_s": cpu_at_ready,
        "first_search_ms": round(first * 1000, 1),
        "embeddings": None if before is None or after is None else after - before,
        "notes": status["notes"],
        "chunks": status["chunks"],
        "idle_rss_mib": round(idle / 2**20),
        "searches": 1 + len(short) + len(long),
        "rss_after_searches_mib": round(searched / 2**20),
        **({"short": summary_ms(short)} if short else {}),
        **({"long": summary_ms(long)} if long else {}),
    }


def _commit(checkout: Path) -> str:
    out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=checkout, capture_output=True, text=True)
    return out.stdout.strip()


def rss_at_rest_and_after_searching(server: Server, searches: int) -> tuple[int, int]:
    """Serve's RSS once the warm-up it starts with has settled, then after `searches` searches (what
    the caches and the heap keep of them), read once serve has handed freed memory back: it does
    when searches pause for 5 s (ReleaseWhenQuiet)."""
    idle = settled_rss(server.process.pid)
    for query in make_queries(searches, seed=3):
        http_json(server.base + "/v1/search", {"query": query}, server.token)
    time.sleep(6)
    return idle, settled_rss(server.process.pid)


def run_edits(args: argparse.Namespace) -> dict[str, Any]:
    """Save-to-searchable over many edits against a running server; index size as the edits go on."""
    from scripts.save_to_searchable import measure_edits

    server = start_server(
        args.vault, args.index_dir, args.ollama_host, args.model, free_port(), VASK_DEBOUNCE_MS=str(args.debounce_ms)
    )
    latencies: list[float] = []
    searches: list[int] = []
    sizes: list[tuple[int, int]] = []
    try:
        wait_ready(server)
        sizes.append((0, disk_bytes(args.index_dir)))
        embeds_before = embed_inputs(args.ollama_host)
        block = max(1, min(25, args.edits))
        while len(latencies) < args.edits:
            count = min(block, args.edits - len(latencies))
            latencies += measure_edits(
                server.base, server.token, args.vault, count, start=len(latencies), seed=args.seed, searches=searches
            )
            wait_ready(server)
            sizes.append((len(latencies), disk_bytes(args.index_dir)))
        embeds_after = embed_inputs(args.ollama_host)
        status = server.status()
        rss = proc_status(server.process.pid)
    finally:
        server.stop()
    compacted = asyncio.run(_compact(args.index_dir))
    record = {
        "vault": args.vault.name,
        "model": args.model,
        "debounce_ms": args.debounce_ms,
        "notes": status["notes"],
        "chunks": status["chunks"],
        "save_to_searchable": summary_ms(latencies),
        "latencies_s": [round(x, 3) for x in latencies],
        # Texts the model embedded for the edits: all it embedded, less one query per search.
        "embeddings_during_edits": (
            None if embeds_before is None or embeds_after is None else embeds_after - embeds_before - len(searches)
        ),
        "searches": len(searches),
        "index_bytes_by_edits": sizes,
        "index_bytes_before": sizes[0][1],
        "index_bytes_after": sizes[-1][1],
        "index_bytes_after_final_compaction": compacted,
        "server_rss_after_bytes": rss.get("VmRSS"),
    }
    s = record["save_to_searchable"]
    mib = 2**20
    print_table(
        f"save-to-searchable, {len(latencies)} edits ({status['notes']} notes, {status['chunks']} chunks)",
        [
            ("median", f"{s['median_ms']:.0f} ms (debounce {args.debounce_ms} ms included)"),
            ("p95", f"{s['p95_ms']:.0f} ms"),
            ("min / max", f"{s['min_ms']:.0f} / {s['max_ms']:.0f} ms"),
            ("texts embedded", str(record["embeddings_during_edits"])),
            ("index size by edits", ", ".join(f"{n}: {b / mib:.1f} MiB" for n, b in sizes)),
            ("after a final compaction", f"{compacted / mib:.1f} MiB"),
        ],
    )
    write_json(args.json, record)
    return record


async def _compact(index_dir: Path) -> int:
    """What the next compaction leaves: old versions dropped (the server keeps the last 10 s)."""
    from datetime import timedelta

    from vask_server.adapters.store import Store

    store = await Store.open(index_dir)
    await store.tables(store.read_meta().active).compact(keep=timedelta(seconds=0))
    return disk_bytes(index_dir)


def run_memory(args: argparse.Namespace) -> dict[str, Any]:
    """`vask serve` on an empty index: its peak RSS while it indexes the vault, then at rest."""
    claim_bench_dir(args.index_dir, fresh=True)
    args.work.mkdir(parents=True, exist_ok=True)
    log_path = args.work / "memory-serve.log"
    server = start_server(
        args.vault, args.index_dir, args.ollama_host, args.model, free_port(), VASK_LOG_LEVEL="info", log=log_path
    )
    samples: list[int] = []
    try:
        ready = wait_ready_sampling(server, samples)
        peak_sync = proc_status(server.process.pid).get("VmHWM", 0)
        # The ANN index is built in the background after the first sync: indexing ends when it is ready.
        from vask_server.adapters import store

        ann_wait = time.monotonic()
        large = server.status()["chunks"] >= getattr(store, "VECTOR_INDEX_MIN_ROWS", float("inf"))
        while large and "vector index of" not in log_path.read_text() and time.monotonic() - ann_wait < 600:
            rss = proc_status(server.process.pid).get("VmRSS")
            if rss:
                samples.append(rss)
            time.sleep(0.5)
        ann_s = time.monotonic() - ann_wait
        peak = proc_status(server.process.pid).get("VmHWM", 0)
        idle, searched = rss_at_rest_and_after_searching(server, 50)
        after = proc_status(server.process.pid)
        status = server.status()
    finally:
        server.stop()
    size = disk_bytes(args.index_dir)
    compacted = asyncio.run(_compact(args.index_dir))
    record = {
        "vault": args.vault.name,
        "model": args.model,
        "notes": status["notes"],
        "chunks": status["chunks"],
        "first_sync_s": round(ready, 2),
        "ann_index_after_sync_s": round(ann_s, 2),
        "peak_rss_first_sync_bytes": peak_sync,
        "peak_rss_indexing_bytes": peak,
        "idle_rss_bytes": idle,
        "rss_after_50_searches_bytes": searched,
        "peak_rss_overall_bytes": after.get("VmHWM"),
        "rss_samples_mib": [round(s / 2**20) for s in samples[:: max(1, len(samples) // 40)]],
        "index_bytes": size,
        "index_bytes_compacted": compacted,
        "bytes_per_1000_chunks": round(compacted / status["chunks"] * 1000) if status["chunks"] else None,
    }
    mib = 2**20
    print_table(
        f"memory and disk, vask serve indexing {status['notes']} notes ({status['chunks']} chunks) from scratch",
        [
            ("first sync", f"{ready:.1f} s, then the ANN index {ann_s:.1f} s"),
            ("peak RSS, first sync", f"{peak_sync / mib:.0f} MiB"),
            ("peak RSS, sync + ANN index", f"{peak / mib:.0f} MiB"),
            ("idle RSS afterwards", f"{idle / mib:.0f} MiB"),
            ("RSS after 50 searches", f"{searched / mib:.0f} MiB"),
            ("index size as the server left it", f"{size / mib:.1f} MiB (versions of the last 10 s kept)"),
            ("index size, old versions dropped", f"{compacted / mib:.1f} MiB"),
            ("per 1,000 chunks", f"{(record['bytes_per_1000_chunks'] or 0) / mib:.2f} MiB"),
        ],
    )
    write_json(args.json, record)
    return record
