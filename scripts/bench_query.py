"""`scripts.bench query` and `related`: `/v1/search` and `/v1/related` in an in-process server, timed by
an outermost middleware (a search's query embedding made up front and excluded), with the recall of
the vector list against exact search.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from scripts.benchkit import (
    claim_bench_dir,
    make_queries,
    print_table,
    served,
    summary_ms,
    wait_background,
    write_json,
)


async def _query_bench(
    vault: Path, index_dir: Path, host: str, model: str, queries: list[str], mode: str
) -> dict[str, Any]:
    import aiohttp

    from vask_server.config import load_settings
    from vask_server.core.retrieve import topic_query
    from vask_server.web.app import create_app
    from vask_server.web.keys import LIVE, SERVICES

    claim_bench_dir(index_dir)  # the app syncs --vault into it
    settings = load_settings(
        env={}, vault=vault, index_dir=index_dir, ollama_host=host, embed_model=model, chat_model="extractive"
    )
    app = create_app(settings, watch=False)
    async with served(app) as (port, handler_s):
        live = app[LIVE]
        await live.wait_idle(timeout=600)
        services = app[SERVICES]
        ann_started = time.perf_counter()
        await wait_background(services.store)  # a large index's ANN index, built in the background
        ann_wait = time.perf_counter() - ann_started
        searcher = services.searcher
        index = searcher.active()
        real = searcher._embedder(index)
        # Query embedding is measured apart and excluded: vectors are made once, up front.
        vectors: dict[str, np.ndarray] = {}
        embed_started = time.perf_counter()
        for query in queries:
            # as a search does: the question and its topic (for the "not in your notes" rule) in one call
            texts = [query, *filter(None, [topic_query(query)])]
            for text, vector in zip(texts, await real.embed(texts, query=True), strict=True):
                vectors[text] = vector
        embed_each = (time.perf_counter() - embed_started) / len(queries)

        async def cached(texts: Sequence[str], **_: object) -> np.ndarray:
            return np.stack([vectors[t] for t in texts])

        own = await _own_paragraphs_found(services.store, index, real)
        real.embed = cached  # type: ignore[method-assign]
        token = (index_dir / "token").read_text().strip()
        headers = {"Authorization": f"Bearer {token}"}
        client_s: list[float] = []
        hits = 0
        async with aiohttp.ClientSession(f"http://127.0.0.1:{port}", headers=headers) as session:

            async def one(query: str) -> int:
                started = time.perf_counter()
                async with session.post("/v1/search", json={"query": query, "mode": mode}) as response:
                    body = await response.json()
                    assert response.status == 200, body
                client_s.append(time.perf_counter() - started)
                return len(body["hits"])

            await one(queries[0])  # the first search after a sync builds the calibration cache
            first_s = handler_s[-1]
            handler_s.clear()
            client_s.clear()
            for query in queries:
                hits += await one(query)
        tables = services.store.tables(index)
        chunks = await tables.count_chunks()
        table = await tables.chunks()
        indices = await table.list_indices()
        # Recall of the vector list the search fuses (its 50 candidates) against exact search.
        recalls = []
        for query in queries:
            vector = vectors[query].astype(np.float32)
            got = await tables.vector_search(vector, 50)
            exact = await (
                table.query()
                .nearest_to(vector)
                .distance_type("cosine")
                .limit(50)
                .bypass_vector_index()
                .select(["id", "_distance"])
                .to_arrow()
            )
            wanted = set(exact["id"].to_pylist())
            recalls.append(len(wanted & {row["id"] for row in got}) / max(1, len(wanted)))
        return {
            "chunks": chunks,
            "mode": mode,
            "queries": len(queries),
            "server": summary_ms(handler_s),
            "client_round_trip": summary_ms(client_s),
            "first_search_after_sync_ms": round(first_s * 1000, 1),
            "query_embedding_ms_each": round(embed_each * 1000, 2),
            "mean_hits": round(hits / len(queries), 2),
            "indices": [f"{i.index_type}({', '.join(i.columns)})" for i in indices],
            "ann_index_wait_s": round(ann_wait, 2),
            "vector_recall_at_50": {
                "mean": round(float(np.mean(recalls)), 4),
                "min": round(min(recalls), 4),
            },
            "own_paragraph_found": own,
        }


async def _own_paragraphs_found(store: Any, index: Any, embedder: Any, samples: int = 100) -> dict[str, int]:
    """A note found from one of its own paragraphs: `samples` passages (one a note, seeded), each
    embedded as a question and searched by vector as the product searches (its ANN index), counted
    when its note is among the first 10 notes."""
    tables = store.tables(index)
    rows = await tables.all_chunk_rows(["id", "path"], where="kind = 'chunk'")
    ids, paths = rows["id"].to_pylist(), rows["path"].to_pylist()
    first: dict[str, str] = {}
    for chunk_id, path in zip(ids, paths, strict=True):
        first.setdefault(path, chunk_id)
    rng = np.random.default_rng(5)
    picked = [str(i) for i in rng.choice(sorted(first.values()), min(samples, len(first)), replace=False)]
    texts = await tables.texts_for_ids(picked)
    path_of = dict(zip(ids, paths, strict=True))
    found = 0
    for chunk_id in picked:
        vector = (await embedder.embed([texts[chunk_id]], query=True))[0]
        got = await tables.vector_search(vector, 50)
        notes = list(dict.fromkeys(row["path"] for row in got))[:10]
        found += path_of[chunk_id] in notes
    return {"found": found, "of": len(picked)}


def run_query(args: argparse.Namespace) -> dict[str, Any]:
    queries = make_queries(args.queries, seed=args.seed)
    record = asyncio.run(_query_bench(args.vault, args.index_dir, args.ollama_host, args.model, queries, args.mode))
    s = record["server"]
    print_table(
        f"/v1/search at {record['chunks']} chunks ({record['mode']}, {record['queries']} queries)",
        [
            ("server-side median", f"{s['median_ms']:.1f} ms"),
            ("server-side p95", f"{s['p95_ms']:.1f} ms"),
            ("client round trip median", f"{record['client_round_trip']['median_ms']:.1f} ms"),
            ("first search after a sync", f"{record['first_search_after_sync_ms']:.0f} ms"),
            ("query embedding (excluded)", f"{record['query_embedding_ms_each']:.1f} ms each"),
            ("indices", ", ".join(record["indices"])),
            (
                "vector recall@50 vs exact",
                f"mean {record['vector_recall_at_50']['mean']:.3f}, min {record['vector_recall_at_50']['min']:.2f}",
            ),
        ],
    )
    write_json(args.json, record)
    return record


async def _related_bench(vault: Path, index_dir: Path, host: str, model: str, calls: int, seed: int) -> dict[str, Any]:
    import aiohttp

    from vask_server.config import load_settings
    from vask_server.web.app import create_app
    from vask_server.web.keys import LIVE, SERVICES

    claim_bench_dir(index_dir)  # the app syncs --vault into it
    settings = load_settings(
        env={}, vault=vault, index_dir=index_dir, ollama_host=host, embed_model=model, chat_model="extractive"
    )
    app = create_app(settings, watch=False)
    async with served(app) as (port, _):
        await app[LIVE].wait_idle(timeout=1800)
        services = app[SERVICES]
        await wait_background(services.store)
        notes = sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*.md"))
        paths = random.Random(seed).sample(notes, min(len(notes), calls + 1))  # a note switch each call
        # How late a 5 ms timer fires during each call, at worst: how long the loop could do nothing
        # else (stream an answer's tokens, say).
        stall = 0.0
        stalls: list[float] = []
        done = asyncio.Event()

        async def heartbeat() -> None:
            nonlocal stall
            while not done.is_set():
                started = time.perf_counter()
                await asyncio.sleep(0.005)
                stall = max(stall, time.perf_counter() - started - 0.005)

        token = (index_dir / "token").read_text().strip()
        times: list[float] = []
        async with aiohttp.ClientSession(
            f"http://127.0.0.1:{port}", headers={"Authorization": f"Bearer {token}"}
        ) as session:
            beat = asyncio.create_task(heartbeat())
            for path in paths:
                stall = 0.0
                started = time.perf_counter()
                async with session.get("/v1/related", params={"path": path}) as response:
                    body = await response.json()
                    assert response.status == 200, body
                times.append(time.perf_counter() - started)
                stalls.append(stall)
            done.set()
            await beat
        indexed, others = await services.store.tables(services.searcher.active()).note_statuses()
        return {
            "notes": indexed + len(others),
            "calls": len(times) - 1,
            "first_call_ms": round(times[0] * 1000, 1),
            "first_call_longest_loop_stall_ms": round(stalls[0] * 1000, 1),
            "related": summary_ms(times[1:]),
            "longest_loop_stall": summary_ms(stalls[1:]),
        }


def run_related(args: argparse.Namespace) -> dict[str, Any]:
    """/v1/related, each call for another note (as the plugin does on every note switch)."""
    record = asyncio.run(
        _related_bench(args.vault, args.index_dir, args.ollama_host, args.model, args.calls, args.seed)
    )
    r, stall = record["related"], record["longest_loop_stall"]
    print_table(
        f"/v1/related on {record['notes']} notes ({record['calls']} calls after the first)",
        [
            ("median", f"{r['median_ms']:.1f} ms"),
            ("p95", f"{r['p95_ms']:.1f} ms"),
            (
                "first call",
                f"{record['first_call_ms']:.0f} ms (longest stall {record['first_call_longest_loop_stall_ms']:.0f} ms)",
            ),
            ("longest event loop stall in a call", f"median {stall['median_ms']:.0f} ms, max {stall['max_ms']:.0f} ms"),
        ],
    )
    write_json(args.json, record)
    return record
