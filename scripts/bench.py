"""vask benchmarks: indexing cost, restart, save-to-searchable, query latency, memory and disk.

Every step prints a table and writes JSON; `all` runs them in order on synthetic vaults (made by
scripts/synth_vault.py, deterministic from a seed) and writes one combined record. Vaults and indexes
live under --work (default /tmp/vask-bench), never in the repository. Needs an Ollama API at
--ollama-host with `hash-embed` (instant) and `all-minilm` (real): ../shared/ollama-shim is started on
that port when nothing answers there.

    uv run python -m scripts.bench all --json docs/bench/results.json    # the full run (~11 min)
    uv run python -m scripts.bench all --quick                           # small vaults (~3 min)

Single steps (see `--help` of each): `index`, `overhead`, `restart`, `query`, `edits`, `memory`; and
`related`, `responsive` and `sizes` (not part of `all`). This module is the command line and `all`; each
kind of step lives in its own module (`bench_index`: index, overhead; `bench_serve`: restart, edits,
memory; `bench_query`: query, related; `bench_responsive`; `bench_sizes`), and what they share in
`benchkit`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scripts.bench_index import run_index, run_index_subprocess, run_overhead
from scripts.bench_query import run_query, run_related
from scripts.bench_responsive import run_responsive
from scripts.bench_serve import run_edits, run_memory, run_restart
from scripts.bench_sizes import run_sizes
from scripts.benchkit import (
    DEFAULT_HOST,
    DIMENSIONS,
    FAST_MODEL,
    LAUNCHERS,
    LOCAL_HASH,
    REAL_MODEL,
    check_bench_dir,
    machine,
    ollama_running,
    print_table,
    write_json,
)

# -- everything ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    small_notes: int
    large_notes: int
    overhead_notes: int
    restarts: int
    queries: int
    edits: int


FULL = Plan(small_notes=1000, large_notes=10000, overhead_notes=100, restarts=5, queries=300, edits=100)
QUICK = Plan(small_notes=100, large_notes=300, overhead_notes=5, restarts=2, queries=30, edits=5)


def run_all(args: argparse.Namespace) -> dict[str, Any]:
    from scripts.synth_vault import generate

    plan = QUICK if args.quick else FULL
    work: Path = args.work
    # Every index folder the steps will replace, checked before the minutes of work that precede some.
    repeats = 1 if args.quick else args.repeat
    for name in ("instant", "large", "small", "memory", *(f"overhead-{n}" for n in range(repeats))):
        check_bench_dir(work / f"index-{name}")
    work.mkdir(parents=True, exist_ok=True)
    host = args.ollama_host
    started = time.monotonic()
    record: dict[str, Any] = {"machine": machine(), "quick": args.quick, "plan": plan.__dict__, "steps": {}}
    steps = record["steps"]
    print(json.dumps(record["machine"], indent=2))

    vaults = {}
    for name, notes in (("small", plan.small_notes), ("large", plan.large_notes), ("overhead", plan.overhead_notes)):
        vaults[name] = work / f"vault-{notes}"
        counts = generate(vaults[name], notes, seed=args.seed)
        print(f"vault {vaults[name]}: {counts}")
        steps.setdefault("vaults", {})[name] = {"path": vaults[name].name, **counts}

    def ns(**kw: Any) -> argparse.Namespace:
        base = {"ollama_host": host, "json": None, "seed": args.seed, "work": work}
        return argparse.Namespace(**{**base, **kw})

    with ollama_running(host, start=not args.no_shim):
        # 1. the pipeline's own throughput: zero-cost in-process embedder, and hash-embed over HTTP
        steps["index_instant"] = run_index_subprocess(vaults["large"], work / "index-instant", host, "instant")
        steps["index_fast"] = run_index_subprocess(vaults["large"], work / "index-large", host, FAST_MODEL)
        steps["index_fast_small"] = run_index_subprocess(vaults["small"], work / "index-small", host, FAST_MODEL)
        # 2. the real model's overhead ratio
        steps["overhead"] = run_overhead(
            ns(
                vault=vaults["overhead"],
                model=REAL_MODEL,
                batch_size=None,
                concurrency=None,
                repeat=repeats,
                provider="ollama",
            )
        )
        # 3. restart with nothing changed
        steps["restart"] = run_restart(
            ns(
                vault=vaults["large"],
                index_dir=work / "index-large",
                model=FAST_MODEL,
                runs=plan.restarts,
                short=30,
                long=20,
            )
        )
        # 4. query latency at both sizes
        for size in ("small", "large"):
            steps[f"query_{size}"] = run_query(
                ns(
                    vault=vaults[size],
                    index_dir=work / f"index-{size}",
                    model=FAST_MODEL,
                    queries=plan.queries,
                    mode="hybrid",
                )
            )
        # 5. edits: save-to-searchable and disk growth
        steps["edits"] = run_edits(
            ns(
                vault=vaults["large"],
                index_dir=work / "index-large",
                model=FAST_MODEL,
                edits=plan.edits,
                debounce_ms=250,
            )
        )
        # 6. memory: vask serve indexing the large vault from scratch
        steps["memory"] = run_memory(ns(vault=vaults["large"], index_dir=work / "index-memory", model=FAST_MODEL))
    record["seconds"] = round(time.monotonic() - started, 1)
    record["figures"] = figures(record)
    print_figures(record["figures"])
    write_json(args.json, record)
    return record


TARGETS = {
    "pipeline_chunks_per_s": (">=", 2000.0),
    "overhead_ratio": ("<=", 1.15),
    "restart_ready_s": ("<", 3.0),
    "restart_embeddings": ("==", 0),
    "save_to_searchable_median_s": ("<=", 1.0),
    "search_100k_median_ms": ("<=", 30.0),
    "search_100k_p95_ms": ("<=", 80.0),
    "peak_rss_indexing_mib": ("<=", 500.0),
    "idle_rss_mib": ("<=", 300.0),
}


def figures(record: dict[str, Any]) -> list[dict[str, Any]]:
    s = record["steps"]
    mib = 2**20
    measured: dict[str, Any] = {
        "pipeline_chunks_per_s": s["index_instant"]["chunks_per_s"],
        "pipeline_chunks_per_s_hash_embed": s["index_fast"]["chunks_per_s"],
        "overhead_ratio": s["overhead"]["ratio_median"],
        "restart_ready_s": s["restart"]["ready_median_s"],
        "restart_ready_max_s": s["restart"]["ready_max_s"],
        "restart_embeddings": s["restart"]["embeddings_max"],
        "restart_first_search_s": s["restart"]["first_search_median_s"],
        "save_to_searchable_median_s": round(s["edits"]["save_to_searchable"]["median_ms"] / 1000, 3),
        "save_to_searchable_p95_s": round(s["edits"]["save_to_searchable"]["p95_ms"] / 1000, 3),
        "search_10k_chunks": s["query_small"]["chunks"],
        "search_10k_median_ms": s["query_small"]["server"]["median_ms"],
        "search_10k_p95_ms": s["query_small"]["server"]["p95_ms"],
        "search_100k_chunks": s["query_large"]["chunks"],
        "search_100k_median_ms": s["query_large"]["server"]["median_ms"],
        "search_100k_p95_ms": s["query_large"]["server"]["p95_ms"],
        "search_100k_vector_recall_at_50": s["query_large"]["vector_recall_at_50"]["mean"],
        "peak_rss_first_sync_mib": round(s["memory"]["peak_rss_first_sync_bytes"] / mib),
        "peak_rss_indexing_mib": round(s["memory"]["peak_rss_indexing_bytes"] / mib),
        "idle_rss_mib": round(s["memory"]["idle_rss_bytes"] / mib),
        "rss_after_50_searches_mib": round(s["memory"]["rss_after_50_searches_bytes"] / mib),
        "index_mib_per_1000_chunks": round(s["memory"]["bytes_per_1000_chunks"] / mib, 2),
        "index_mib_before_edits": round(s["edits"]["index_bytes_before"] / mib, 1),
        "index_mib_after_edits": round(s["edits"]["index_bytes_after"] / mib, 1),
        "index_mib_after_edits_compacted": round(s["edits"]["index_bytes_after_final_compaction"] / mib, 1),
    }
    out = []
    for name, value in measured.items():
        op, target = TARGETS.get(name, ("", None))
        met = None
        if target is not None:
            met = {
                ">=": value >= target,
                "<=": value <= target,
                "<": value < target,
                "==": value == target,
            }[op]
        out.append(
            {"figure": name, "target": f"{op} {target}" if target is not None else "", "measured": value, "met": met}
        )
    return out


def print_figures(rows: list[dict[str, Any]]) -> None:
    print_table(
        "figures",
        [
            (
                r["figure"],
                f"{r['measured']}  "
                + (f"(target {r['target']}: {'met' if r['met'] else 'NOT met'})" if r["target"] else ""),
            )
            for r in rows
        ],
    )


# -- command line ----------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)

    def common(p: argparse.ArgumentParser, model: str = FAST_MODEL) -> None:
        p.add_argument("--ollama-host", default=DEFAULT_HOST)
        p.add_argument("--model", default=model, help="embedding model ('instant': zero-cost, in-process)")
        p.add_argument("--json", type=Path, default=None, help="write the record here")
        p.add_argument("--seed", type=int, default=1)
        p.add_argument("--work", type=Path, default=Path("/tmp/vask-bench"))
        p.add_argument(
            "--dimension",
            type=int,
            choices=DIMENSIONS,
            default=384,
            help="the hashing models' dimension (hash-embed: 384; hash-embed-1024, the default model's)",
        )

    p = sub.add_parser("all", help="every step on synthetic vaults; prints the figures table")
    p.add_argument("--quick", action="store_true", help="small vaults: ~3 minutes on 2 cores")
    p.add_argument("--repeat", type=int, default=2, help="overhead-ratio runs (the median is reported)")
    p.add_argument("--no-shim", action="store_true", help="never start ../shared/ollama-shim")
    common(p)

    p = sub.add_parser("sizes", help="index, restart and query at each vault size; figures side by side")
    p.add_argument("--sizes", default="10000,40000,100000", type=lambda v: [int(x) for x in v.split(",")])
    p.add_argument("--queries", type=int, default=300)
    p.add_argument("--restarts", type=int, default=3)
    p.add_argument("--fresh-vaults", action="store_true", help="generate the vaults even if they exist")
    p.add_argument(
        "--dimensions",
        default=[384],
        type=lambda v: [int(x) for x in v.split(",")],
        help="hash-embed's dimensions to run at, e.g. 384,1024 (figures side by side)",
    )
    p.add_argument("--topics", type=int, default=None, help="vaults whose notes cluster in this many topics")
    p.add_argument("--serve-sync", action="store_true", help="also vask serve's first sync (a fast model server)")
    p.add_argument(
        "--later-sync", type=int, default=0, metavar="N", help="also a later sync of N edited notes, recall after it"
    )
    common(p)

    p = sub.add_parser("index", help="full index of --vault into a fresh --index-dir, time split by stage")
    p.add_argument("--vault", type=Path, required=True)
    p.add_argument("--index-dir", type=Path, required=True)
    p.add_argument("--batch-size", type=int, default=None)
    p.add_argument("--concurrency", type=int, default=None)
    p.add_argument("--timeline", action="store_true", help="sample RSS by phase of the sync")
    p.add_argument("--tracemalloc", action="store_true", help="also Python's allocations (slower)")
    common(p)

    p = sub.add_parser("overhead", help="real model: full index time ÷ direct embedding time")
    p.add_argument("--vault", type=Path, required=True)
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=None)
    p.add_argument("--concurrency", type=int, default=None)
    p.add_argument(
        "--provider",
        choices=("ollama", "openai"),
        default="ollama",
        help="the API to embed through: Ollama's, or the OpenAI-compatible one at --ollama-host + /v1",
    )
    common(p, REAL_MODEL)

    p = sub.add_parser(
        "restart", help="restart vask serve with nothing changed: spawn → vault confirmed current, memory, searches"
    )
    p.add_argument("--vault", type=Path, required=True)
    p.add_argument("--index-dir", type=Path, required=True)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--short", type=int, default=120, help="4-word questions searched, the first right after ready")
    p.add_argument("--long", type=int, default=60, help="pasted paragraphs searched after them")
    p.add_argument(
        "--launcher",
        choices=LAUNCHERS,
        default="uv",
        help="how serve is started: `uv run vask serve` (as a person does), or the checkout's Python directly",
    )
    p.add_argument(
        "--checkout", type=Path, default=None, help="the checkout whose serve is started (default: this one)"
    )
    p.add_argument("--poll", type=float, default=0.1, help="seconds between /v1/health polls")
    p.add_argument(
        "--first-start",
        action="store_true",
        help="each start one that measures the search calibration (the kept one is removed)",
    )
    common(p)

    p = sub.add_parser("query", help="/v1/search server-side latency (query embedding excluded)")
    p.add_argument("--vault", type=Path, required=True)
    p.add_argument("--index-dir", type=Path, required=True)
    p.add_argument("--queries", type=int, default=300)
    p.add_argument("--mode", choices=("hybrid", "vector"), default="hybrid")
    common(p)

    p = sub.add_parser("related", help="/v1/related latency, a different note each call")
    p.add_argument("--vault", type=Path, required=True)
    p.add_argument("--index-dir", type=Path, required=True)
    p.add_argument("--calls", type=int, default=50)
    common(p)

    p = sub.add_parser("edits", help="save-to-searchable over many edits; disk before and after")
    p.add_argument("--vault", type=Path, required=True, help="edited in place: use a synthetic vault")
    p.add_argument("--index-dir", type=Path, required=True)
    p.add_argument("--edits", type=int, default=100)
    p.add_argument("--debounce-ms", type=int, default=250)
    common(p)

    p = sub.add_parser("memory", help="vask serve indexing from scratch: peak and idle RSS, disk")
    p.add_argument("--vault", type=Path, required=True)
    p.add_argument("--index-dir", type=Path, required=True, help="replaced")
    common(p)

    p = sub.add_parser("responsive", help="/v1/status, /v1/search and progress while vask serve syncs")
    p.add_argument("--vault", type=Path, required=True, help="every note's mtime is moved 1 s: a synthetic vault")
    p.add_argument("--index-dir", type=Path, required=True, help="replaced")
    p.add_argument("--queries", type=int, default=40, help="search queries, asked idle and cycled during the sync")
    p.add_argument("--timeout", type=float, default=3600.0, help="seconds each sync may take")
    common(p)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from vask_server.adapters.memory import set_process_memory_policy

    args = build_parser().parse_args(argv)
    set_process_memory_policy()  # as `vask` sets it: the steps run in this process measure what it runs
    if args.command == "all":
        run_all(args)
        return 0
    handlers: dict[str, Callable[[argparse.Namespace], dict[str, Any]]] = {
        "index": run_index,
        "overhead": run_overhead,
        "restart": run_restart,
        "query": run_query,
        "related": run_related,
        "edits": run_edits,
        "memory": run_memory,
        "responsive": run_responsive,
        "sizes": run_sizes,
    }
    if getattr(args, "index_dir", None) is not None:
        check_bench_dir(args.index_dir)  # before anything starts (the step claims it when it runs)
    needs_ollama = not (args.command == "index" and args.model in ("instant", LOCAL_HASH))
    with ollama_running(args.ollama_host) if needs_ollama else contextlib.nullcontext():
        handlers[args.command](args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
