"""Vector search quality against speed: recall@50 of the ANN list against exact search, and the
vector search's latency, for IVF partition counts and probe counts on an existing benchmark index.

Rebuilds the index's ANN index (replace) for each partition count, so use a benchmark index
(`scripts.bench index --model hash-local`), never a vault's own. Queries are the benchmark's
(`scripts.benchkit.make_queries`) embedded with hash-embed's vectors in-process; `--where` adds a filter
(a date range, say) to every query, measured against the same filter searched exactly.

    uv run python -m scripts.bench_ann --index-dir /tmp/lv/index-40k --partitions 0,64,128 --nprobes 20,40,64
    uv run python -m scripts.bench_ann --index-dir /tmp/lv/index-40k --store-defaults   # what vask builds
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np

from scripts.benchkit import LocalHashEmbedder, check_bench_dir, make_queries, percentile


async def _exact(table: Any, vector: np.ndarray, limit: int, where: str | None) -> list[str]:
    query = table.query().nearest_to(vector).distance_type("cosine").limit(limit).bypass_vector_index()
    if where:
        query = query.where(where)
    result = await query.select(["id", "_distance"]).to_arrow()
    return list(result["id"].to_pylist())


async def _ann(
    table: Any, vector: np.ndarray, limit: int, where: str | None, nprobes: int, refine: int, widen: bool
) -> list[str]:
    query = table.query().nearest_to(vector).distance_type("cosine").limit(limit)
    # (widen: more partitions are probed while fewer than `limit` rows pass the filter, up to all)
    query = (query.maximum_nprobes(0).minimum_nprobes(nprobes) if widen else query.nprobes(nprobes)).refine_factor(
        refine
    )
    if where:
        query = query.where(where)
    result = await query.select(["id", "_distance"]).to_arrow()
    return list(result["id"].to_pylist())


def _recall(got: list[str], wanted: list[str]) -> float:
    return len(set(got) & set(wanted)) / max(1, len(wanted))


def _index_config(kind: str, partitions: int) -> Any:
    """The ANN index to compare: `sq` is what vask builds (8-bit codes of every dimension); `pq`
    keeps 48 one-byte codes a vector (8x smaller, so less to scan and to hold in memory), `rq`
    one bit a dimension (RaBitQ, as small; `rq2` two); `hnsw-sq`
    searches a graph inside each partition instead of scanning it."""
    from lancedb.index import HnswSq, IvfPq, IvfRq, IvfSq

    n = partitions or None
    if kind == "pq":
        return IvfPq(distance_type="cosine", num_partitions=n, num_sub_vectors=48)
    if kind in ("rq", "rq2"):
        return IvfRq(distance_type="cosine", num_partitions=n, num_bits=2 if kind == "rq2" else 1)
    if kind == "hnsw-sq":
        return HnswSq(distance_type="cosine", num_partitions=n)
    return IvfSq(distance_type="cosine", num_partitions=n)


async def sweep(args: argparse.Namespace) -> dict[str, Any]:
    from vask_server.adapters.ann_plan import ann_plan, ann_refine
    from vask_server.adapters.store import Store

    store = await Store.open(args.index_dir)
    meta = store.read_meta()
    assert meta.active is not None, "no complete index in --index-dir"
    dimension = meta.active.dimension
    table = await store.tables(meta.active).chunks()
    rows = await table.count_rows()
    embedder = LocalHashEmbedder(dimension)
    queries = make_queries(args.queries, seed=args.seed)
    vectors = [v.astype(np.float32) for v in await embedder.embed(queries)]
    if args.btree:
        from lancedb.index import BTree

        indexed = {tuple(i.columns) for i in await table.list_indices()}
        for column in args.btree.split(","):
            if (column,) not in indexed:
                await table.create_index(column, config=BTree())
        print(f"B-tree indexes on {args.btree}")
    started = time.perf_counter()
    exact_s: list[float] = []
    exact: list[list[str]] = []
    # The exact lists take seconds a query at 500,000 rows: kept beside the index for the next sweep.
    key = hashlib.sha256(json.dumps([rows, queries, args.limit, args.where]).encode()).hexdigest()[:16]
    cache = args.index_dir / f"exact-{key}.json"
    if cache.is_file():
        saved = json.loads(cache.read_text())
        exact, exact_s = saved["exact"], saved["seconds"]
    else:
        for vector in vectors:
            t = time.perf_counter()
            exact.append(await _exact(table, vector, args.limit, args.where))
            exact_s.append(time.perf_counter() - t)
        cache.write_text(json.dumps({"exact": exact, "seconds": exact_s}))
    print(f"{rows} rows; exact lists of {len(queries)} queries in {time.perf_counter() - started:.1f} s")
    matched = await table.count_rows(args.where) if args.where else rows
    record: dict[str, Any] = {
        "rows": rows,
        "where": args.where,
        "rows_matching": matched,
        "queries": len(queries),
        "limit": args.limit,
        "exact_median_ms": round(statistics.median(exact_s) * 1000, 1),
        "runs": [],
    }
    if args.store_defaults:
        plan = ann_plan(rows)
        configs = [(plan.partitions, [plan.nprobes], [ann_refine(plan.partitions, dimension)])]
    else:
        configs = [(p, args.nprobes, args.refine) for p in args.partitions]
    for partitions, probe_list, refine_list in configs:
        t = time.perf_counter()
        if not args.skip_build:
            for old in [i.name for i in await table.list_indices() if "vector" in i.columns]:
                await table.drop_index(old)
            config = _index_config(args.index_type, partitions)
            await table.create_index("vector", config=config, name=f"vector_ivf{partitions}")  # type: ignore[arg-type]
        build_s = time.perf_counter() - t
        built = partitions
        print(f"partitions {partitions or 'default'}: built in {build_s:.1f} s")
        for nprobes in probe_list:
            for refine in refine_list:
                for widen in [False, True] if args.where else [False]:
                    recalls: list[float] = []
                    seconds: list[float] = []
                    counts: list[int] = []
                    for vector, wanted in zip(vectors, exact, strict=True):
                        t = time.perf_counter()
                        got = await _ann(table, vector, args.limit, args.where, nprobes, refine, widen)
                        seconds.append(time.perf_counter() - t)
                        recalls.append(_recall(got, wanted))
                        counts.append(len(got))
                    run = {
                        "index_type": args.index_type,
                        "partitions": built or partitions,
                        "nprobes": nprobes,
                        "refine": refine,
                        "widen": widen,
                        "build_s": round(build_s, 1),
                        "recall_mean": round(float(np.mean(recalls)), 4),
                        "recall_min": round(min(recalls), 4),
                        "recall_p5": round(percentile(recalls, 0.05), 4),
                        "mean_results": round(float(np.mean(counts)), 1),
                        "median_ms": round(statistics.median(seconds) * 1000, 1),
                        "p95_ms": round(percentile(seconds, 0.95) * 1000, 1),
                    }
                    record["runs"].append(run)
                    print(
                        f"  nprobes {nprobes:>4} refine {refine:>2}{' widen' if widen else ''}: recall mean "
                        f"{run['recall_mean']:.3f} min {run['recall_min']:.2f} p5 {run['recall_p5']:.2f}, "
                        f"{run['mean_results']} results, median {run['median_ms']} ms p95 {run['p95_ms']} ms"
                    )
    return record


def main() -> int:
    from vask_server.adapters.memory import set_process_memory_policy

    set_process_memory_policy()
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--index-dir", type=Path, required=True, help="a benchmark index (its ANN index is rebuilt)")
    parser.add_argument("--partitions", default="0", help="comma-separated; 0: LanceDB's default")
    parser.add_argument("--nprobes", default="20")
    parser.add_argument("--refine", default="5")
    parser.add_argument("--index-type", choices=("sq", "pq", "rq", "rq2", "hnsw-sq"), default="sq")
    parser.add_argument("--store-defaults", action="store_true", help="only the parameters vask itself picks")
    parser.add_argument("--btree", default="", help="comma-separated columns to give B-tree indexes first")
    parser.add_argument("--skip-build", action="store_true", help="search the ANN index the table has")
    parser.add_argument("--where", default=None, help="a filter on every query, e.g. a date range")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--limit", type=int, default=50)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    check_bench_dir(args.index_dir)
    if not (args.index_dir / ".vask-bench").is_file():
        raise SystemExit("--index-dir must be an index the benchmark made (it has a .vask-bench file)")
    args.partitions = [int(x) for x in args.partitions.split(",")]
    args.nprobes = [int(x) for x in args.nprobes.split(",")]
    args.refine = [int(x) for x in args.refine.split(",")]
    record = asyncio.run(sweep(args))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(record, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
