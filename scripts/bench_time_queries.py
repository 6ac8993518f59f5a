"""/v1/search latency of questions that name a time against the same questions without one.

The query set is `scripts.bench`'s (`make_queries`, same seed); each query is also asked with a
time phrase appended ("… last month", before a final "?"), and both are sent to `/v1/search` of the
real aiohttp app, in this process, with a fixed `now` so the range is the same on every run. The two
kinds alternate query by query (plain first on even queries, timed first on odd ones), so a machine
getting busier or quieter favours neither. As in `scripts.bench query`, a middleware placed outermost
times each request server-side, and query embedding is excluded: the texts a search embeds (the
question without its time words, and its topic) are embedded once before timing and served from
memory. Every timed query must come back with the expected time range, every plain one with none.

    uv run python -m scripts.bench_time_queries --vault /tmp/vask-bench/vault-10000 \\
        --index-dir /tmp/vask-bench/index-large --ollama-host http://127.0.0.1:11500 \\
        --queries 300 --now 2025-06-15 --phrase "last month" --json /tmp/time-queries.json

Needs an index built by this checkout (tables with date columns) and an Ollama API with the index's
model (`hash-embed` for the benchmark indexes; ../shared/ollama-shim is started when nothing answers).
"""

from __future__ import annotations

import argparse
import asyncio
import os
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np

from scripts.benchkit import (
    DEFAULT_HOST,
    FAST_MODEL,
    make_queries,
    ollama_running,
    print_table,
    served,
    summary_ms,
    wait_background,
    write_json,
)


def with_time(query: str, phrase: str) -> str:
    """`query` naming a time: the phrase goes before a final question mark, else at the end."""
    return f"{query[:-1]} {phrase}?" if query.endswith("?") else f"{query} {phrase}"


async def _bench(args: argparse.Namespace, queries: list[str]) -> dict[str, Any]:
    import aiohttp

    from vask_server.adapters.sql import filters_to_where
    from vask_server.config import load_settings
    from vask_server.core.question import Question, understand
    from vask_server.core.retrieve import Filters, topic_query
    from vask_server.web.app import create_app
    from vask_server.web.keys import LIVE, SERVICES

    today: date = args.now
    settings = load_settings(
        env={},
        vault=args.vault,
        index_dir=args.index_dir,
        ollama_host=args.ollama_host,
        embed_model=args.model,
        chat_model="extractive",
    )
    app = create_app(settings, watch=False)
    async with served(app) as (port, handler_s):
        await app[LIVE].wait_idle(timeout=600)
        services = app[SERVICES]
        await wait_background(services.store)
        searcher = services.searcher
        index = searcher.active()
        timed = [with_time(q, args.phrase) for q in queries]
        # What each search embeds: the question as understood (time words taken out) and its topic.
        texts: set[str] = set()
        ranges = set()
        for query in [*queries, *timed]:
            understood = understand(Question(query, today=today, top_k=6, min_similarity=0.0))
            texts.update(filter(None, [understood.text, topic_query(understood.text)]))
            if understood.time_range is not None:
                ranges.add((understood.time_range.start, understood.time_range.end))
        real = searcher._embedder(index)
        ordered = sorted(texts)
        vectors = dict(zip(ordered, await real.embed(ordered, query=True), strict=True))

        async def cached(batch: Sequence[str], **_: object) -> np.ndarray:
            return np.stack([vectors[t] for t in batch])

        real.embed = cached  # type: ignore[method-assign, assignment]
        if len(ranges) != 1:
            raise SystemExit(f"expected one time range over all timed queries, read {sorted(ranges)}")
        ((start, end),) = ranges
        if start is None or end is None:
            raise SystemExit(f"'{args.phrase}' read as an open range: pick a phrase with both ends")
        table = await services.store.tables(index).chunks()
        where = filters_to_where(Filters(date_from=start, date_to=end))
        in_range = await table.count_rows(f"({where}) AND kind = 'chunk'")
        token = (args.index_dir / "token").read_text().strip()
        times: dict[str, list[float]] = {"plain": [], "timed": []}
        hits = {"plain": 0, "timed": 0}
        async with aiohttp.ClientSession(
            f"http://127.0.0.1:{port}", headers={"Authorization": f"Bearer {token}"}
        ) as session:

            async def one(kind: str, query: str, record: bool = True) -> None:
                body = {"query": query, "mode": args.mode, "now": today.isoformat()}
                async with session.post("/v1/search", json=body) as response:
                    payload = await response.json()
                    assert response.status == 200, payload
                span = payload["time_range"]
                want = {"from": start.isoformat(), "to": end.isoformat()} if kind == "timed" else None
                got = None if span is None else {"from": span["from"], "to": span["to"]}
                assert got == want, (query, span)
                if record:
                    times[kind].append(handler_s[-1])
                    hits[kind] += len(payload["hits"])

            # warm-up: the first search builds the calibration cache; the first filtered one opens
            # the date columns
            await one("plain", queries[0], record=False)
            await one("timed", timed[0], record=False)
            for n, (plain, dated) in enumerate(zip(queries, timed, strict=True)):
                pair = [("plain", plain), ("timed", dated)]
                for kind, query in pair if n % 2 == 0 else reversed(pair):
                    await one(kind, query)
        chunks = await services.store.tables(index).count_chunks()
        plain_s, timed_s = summary_ms(times["plain"]), summary_ms(times["timed"])
        return {
            "chunks": chunks,
            "now": today.isoformat(),
            "phrase": args.phrase,
            "range": {"start": start.isoformat(), "end": end.isoformat()},
            "rows_in_range": in_range,
            "queries": len(queries),
            "mode": args.mode,
            "plain": {**plain_s, "mean_hits": round(hits["plain"] / len(queries), 2)},
            "timed": {**timed_s, "mean_hits": round(hits["timed"] / len(queries), 2)},
            "timed_over_plain_median": round(timed_s["median_ms"] / plain_s["median_ms"], 3),
            "load_average": list(os.getloadavg()),
        }


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vault", type=Path, required=True)
    parser.add_argument("--index-dir", type=Path, required=True, help="an index built by this checkout")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--seed", type=int, default=11, help="of the query set (scripts.bench's default)")
    parser.add_argument("--now", type=date.fromisoformat, default=date(2025, 6, 15), help="the day 'now' is")
    parser.add_argument("--phrase", default="last month", help="the time the timed queries name")
    parser.add_argument("--mode", choices=("hybrid", "vector"), default="hybrid")
    parser.add_argument("--ollama-host", default=DEFAULT_HOST)
    parser.add_argument("--model", default=FAST_MODEL)
    parser.add_argument("--json", type=Path, default=None, help="write the record here")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    queries = make_queries(args.queries, seed=args.seed)
    with ollama_running(args.ollama_host):
        record = asyncio.run(_bench(args, queries))
    p, t = record["plain"], record["timed"]
    print_table(
        f"/v1/search at {record['chunks']} chunks, {record['queries']} queries each, now {record['now']}",
        [
            ("plain: median / p95", f"{p['median_ms']:.1f} / {p['p95_ms']:.1f} ms ({p['mean_hits']} hits)"),
            (
                f"'… {record['phrase']}': median / p95",
                f"{t['median_ms']:.1f} / {t['p95_ms']:.1f} ms ({t['mean_hits']} hits)",
            ),
            ("timed ÷ plain, median", f"{record['timed_over_plain_median']:.3f}"),
            ("range", f"{record['range']['start']} .. {record['range']['end']} ({record['rows_in_range']} rows)"),
        ],
    )
    write_json(args.json, record)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
