"""`scripts.bench sizes`: every step at each vault size (and dimension), side by side; the table
docs/BENCHMARKS.md renders from its record (`sizes_table`).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from scripts.bench_index import ann_build_s, index_once, run_index_subprocess
from scripts.bench_query import run_query
from scripts.bench_serve import run_memory, run_restart
from scripts.benchkit import LOCAL_HASH, check_bench_dir, hash_model, machine, write_json

# The vaults of `sizes`: notes -> (seed, median words a note). 100,000 notes are shorter, so that the
# three sizes reach ~124,000, ~494,000 and ~550,000 chunks.
SIZE_VAULTS = {10_000: (1, 850.0), 40_000: (7, 850.0), 100_000: (7, 350.0)}


def run_sizes(args: argparse.Namespace) -> dict[str, Any]:
    """Every size of `--sizes` at each of `--dimensions`: a vault (with `--topics`, one whose notes
    cluster), a full index in a fresh process (peak RSS by phase, with hash-embed's vectors made
    in-process), restarts with nothing changed, /v1/search latency and recall of the ANN list, and with
    `--serve-sync` `vask serve`'s own first sync of the vault (its peak and idle RSS; needs a fast model
    server at --ollama-host: scripts.hash_ollama); then the figures side by side."""
    from scripts.synth_vault import MEDIAN_WORDS, generate

    work: Path = args.work
    record: dict[str, Any] = {"machine": machine(), "topics": args.topics, "sizes": {}}
    for notes in args.sizes:
        seed, median = SIZE_VAULTS.get(notes, (args.seed, MEDIAN_WORDS))
        topics = f"-t{args.topics}" if args.topics else ""
        vault = work / f"vault-{notes}-s{seed}-m{int(median)}{topics}"
        if not (vault / ".obsidian").is_dir() or args.fresh_vaults:
            print(f"generating {vault} ...")
            generate(vault, notes, seed=seed, median_words=median, topics=args.topics)
        for dimension in args.dimensions:
            one = _one_size(args, vault, notes, dimension, seed, median)
            key = str(notes) if args.dimensions == [384] else f"{notes}x{dimension}"
            record["sizes"][key] = one
            write_json(args.json, record)  # after each size: a long run keeps what it measured
    print_sizes(record)
    write_json(args.json, record)
    return record


def _one_size(
    args: argparse.Namespace, vault: Path, notes: int, dimension: int, seed: int, median: float
) -> dict[str, Any]:
    work: Path = args.work
    model = hash_model(dimension)
    suffix = "" if dimension == 384 else f"-d{dimension}"
    index_dir = work / f"index-size-{notes}{suffix}"
    check_bench_dir(index_dir)
    one: dict[str, Any] = {"vault": vault.name, "seed": seed, "median_words": median, "dimension": dimension}
    extra = ["--timeline", "--dimension", str(dimension)]
    # The process's own memory and speed: with the zero-cost embedder (hash-local's feature
    # cache, ~170 MiB at 100,000 notes, would be counted as vask's), into a folder dropped after.
    instant_dir = work / f"index-size-{notes}{suffix}-instant"
    check_bench_dir(instant_dir)
    one["index_instant"] = run_index_subprocess(vault, instant_dir, args.ollama_host, "instant", extra)
    shutil.rmtree(instant_dir)
    # The index searched below: hash-embed's vectors, made in-process.
    one["index"] = run_index_subprocess(vault, index_dir, args.ollama_host, LOCAL_HASH, extra)

    def ns(**kw: Any) -> argparse.Namespace:
        base = {"ollama_host": args.ollama_host, "json": None, "seed": args.seed, "work": work}
        return argparse.Namespace(**{**base, **kw})

    one["restart"] = run_restart(ns(vault=vault, index_dir=index_dir, model=model, runs=args.restarts, searches=50))
    one["query"] = run_query(ns(vault=vault, index_dir=index_dir, model=model, queries=args.queries, mode="hybrid"))
    if args.later_sync:
        one["later_sync"] = run_later_sync(
            ns(vault=vault, index_dir=index_dir, model=model, dimension=dimension, notes=args.later_sync, queries=100)
        )
    if args.serve_sync:
        serve_dir = work / f"index-serve-{notes}{suffix}"
        one["serve"] = run_memory(ns(vault=vault, index_dir=serve_dir, model=model))
        shutil.rmtree(serve_dir)
    return one


def run_later_sync(args: argparse.Namespace) -> dict[str, Any]:
    """A later sync of an indexed vault with `args.notes` of its notes edited (a paragraph added to
    each, taken out again after): how long it takes, the index on disk after it, and /v1/search's
    latency and the recall of its vector list after it (what a first build's figures cannot show: a
    compaction that damaged the vector index went unseen so)."""
    notes = sorted(p for p in args.vault.rglob("*.md") if ".obsidian" not in p.parts)
    picked = random.Random(args.seed).sample(notes, min(args.notes, len(notes)))
    originals = {path: path.read_bytes() for path in picked}
    try:
        for n, path in enumerate(picked):
            path.write_bytes(originals[path] + f"\n\nA paragraph added later, number {n}.\n".encode())
        sync = asyncio.run(
            index_once(args.vault, args.index_dir, args.ollama_host, LOCAL_HASH, None, None, dimension=args.dimension)
        )
        query = run_query(argparse.Namespace(**{**vars(args), "mode": "hybrid"}))
    finally:
        for path, data in originals.items():
            path.write_bytes(data)
    return {"notes_changed": len(picked), "sync_s": sync["total_s"], "index_bytes": sync["index_bytes"], "query": query}


def _later_recall(one: dict[str, Any]) -> dict[str, float]:
    return dict(one["later_sync"]["query"]["vector_recall_at_50"])


def size_rows(record: dict[str, Any]) -> list[tuple[str, list[str]]]:
    """The figures of each size, one row per figure."""
    mib = 2**20
    sizes = record["sizes"]

    def each(fn: Callable[[dict[str, Any]], Any]) -> list[str]:
        out = []
        for one in sizes.values():
            try:
                out.append(str(fn(one)))
            except (KeyError, TypeError):
                out.append("—")
        return out

    return [
        ("notes", each(lambda o: f"{o['index']['notes']:,}")),
        ("chunks", each(lambda o: f"{o['index']['chunks_stored']:,}")),
        ("full index, zero-cost embedder (s)", each(lambda o: f"{o['index_instant']['total_s']:.0f}")),
        ("… throughput (chunks/s)", each(lambda o: f"{o['index_instant']['chunks_per_s']:,.0f}")),
        ("… peak RSS (MiB)", each(lambda o: f"{o['index_instant']['peak_rss_bytes'] / mib:.0f}")),
        ("full index, hash-local (s)", each(lambda o: f"{o['index']['total_s']:.0f}")),
        ("… throughput (chunks/s)", each(lambda o: f"{o['index']['chunks_per_s']:,.0f}")),
        ("… ANN build, in the sync or after it (s)", each(lambda o: f"{ann_build_s(o['index']):.1f}")),
        ("… peak RSS, its embedder's cache in it (MiB)", each(lambda o: f"{o['index']['peak_rss_bytes'] / mib:.0f}")),
        ("index on disk (MiB)", each(lambda o: f"{o['index']['index_bytes'] / mib:,.0f}")),
        # (the index's overhead: its bytes against those of the vectors it holds, as 16-bit floats)
        ("… ÷ the 16-bit vectors' own size", each(lambda o: f"{o['index']['index_bytes'] / _vector_bytes(o):.2f}")),
        ("restart: ready (s, median)", each(lambda o: f"{o['restart']['ready_median_s']:.2f}")),
        ("restart: embeddings", each(lambda o: o["restart"]["embeddings_max"])),
        ("restart: first search (ms)", each(lambda o: f"{o['restart']['first_search_median_s'] * 1000:.0f}")),
        ("serve idle after restart (MiB)", each(lambda o: f"{o['restart']['idle_rss_mib']:.0f}")),
        ("… after 50 searches (MiB)", each(lambda o: f"{o['restart']['rss_after_searches_mib']:.0f}")),
        ("/v1/search median (ms)", each(lambda o: f"{o['query']['server']['median_ms']:.1f}")),
        ("/v1/search p95 (ms)", each(lambda o: f"{o['query']['server']['p95_ms']:.1f}")),
        ("first search after a sync (ms)", each(lambda o: f"{o['query']['first_search_after_sync_ms']:.0f}")),
        ("recall@50, mean", each(lambda o: f"{o['query']['vector_recall_at_50']['mean']:.3f}")),
        ("recall@50, worst query", each(lambda o: f"{o['query']['vector_recall_at_50']['min']:.2f}")),
        (
            "a note found from its own paragraph (of 100)",
            each(lambda o: f"{o['query']['own_paragraph_found']['found']}"),
        ),
        ("a later sync: notes edited", each(lambda o: f"{o['later_sync']['notes_changed']:,}")),
        ("… its time (s)", each(lambda o: f"{o['later_sync']['sync_s']:.1f}")),
        ("… recall@50 after it, mean", each(lambda o: f"{_later_recall(o)['mean']:.3f}")),
        ("… recall@50 after it, worst", each(lambda o: f"{_later_recall(o)['min']:.2f}")),
        ("… /v1/search median after it (ms)", each(lambda o: f"{o['later_sync']['query']['server']['median_ms']:.1f}")),
        ("… index on disk after it (MiB)", each(lambda o: f"{o['later_sync']['index_bytes'] / mib:,.0f}")),
        ("serve's first sync (s)", each(lambda o: f"{o['serve']['first_sync_s']:.0f}")),
        ("… peak RSS, sync + ANN index (MiB)", each(lambda o: f"{o['serve']['peak_rss_indexing_bytes'] / mib:.0f}")),
        ("… idle RSS afterwards (MiB)", each(lambda o: f"{o['serve']['idle_rss_bytes'] / mib:.0f}")),
    ]


# The rows of the index made with hash-local's vectors: its time and peak are the stand-in's as much as
# vask's (the zero-cost embedder's rows give vask's own).
_HASH_LOCAL_ROWS = (5, 6, 8)


def sizes_table(record: dict[str, Any], *, own_only: bool = False) -> str:
    """The sizes side by side as a Markdown table: what docs/BENCHMARKS.md shows of docs/bench/sizes.json.
    `own_only`: without the rows of the hash-local index's time and peak."""
    header = ["figure", *(_size_label(key) for key in record["sizes"])]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    # (a figure no size has, from a record older than the figure, is left out)
    every = [row for n, row in enumerate(size_rows(record)) if not (own_only and n in _HASH_LOCAL_ROWS)]
    rows = [(name, values) for name, values in every if set(values) != {"—"}]
    lines += [f"| {name} | " + " | ".join(values) + " |" for name, values in rows]
    return "\n".join(lines)


def _vector_bytes(one: dict[str, Any]) -> int:
    """The stored vectors' own bytes: 16-bit floats, one vector a chunk."""
    return int(one["index"]["chunks_stored"]) * int(one.get("dimension", 384)) * 2


def _size_label(key: str) -> str:
    """ "10,000 notes", or "10,000 notes, 1,024-d" for a run at several dimensions."""
    notes, _, dimension = key.partition("x")
    return f"{int(notes):,} notes" + (f", {int(dimension):,}-d" if dimension else "")


def print_sizes(record: dict[str, Any]) -> None:
    print("\n" + sizes_table(record))
