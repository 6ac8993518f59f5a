"""Keyword search alone, with each way of cutting text into terms, over the passages of an index that
`vask index` built: which tokenizer finds the right note for questions in a language written without
spaces. Eval only; the product's choice is in `vask_server/core/cjk.py`.

    uv run python scripts/bench_keyword_tokenizers.py INDEX_DIR QUESTIONS.jsonl [QUESTIONS.jsonl ...]

For each way, the passages' keyword text (`search_text`, as the index holds it) is written to a
table of its own in a temporary folder, given a LanceDB full-text index, and every question with an
answer is asked as a keyword query (MatchQuery, as `vask search` asks). Reported per way: hit@1,
hit@6 and MRR@10 over distinct notes, the index build time and its size on disk, and the median
query time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa

from vask_server.adapters.lancedb_api import FTS, MatchQuery, lancedb
from vask_server.adapters.meta import read_meta
from vask_server.core.cjk import CJK_RUN_RE, bigrams, cjk_terms


def pairs_only(text: str) -> str:
    """CJK runs as their character pairs alone (what vask does, without the single characters)."""
    return CJK_RUN_RE.sub(lambda match: f" {' '.join(bigrams(match[0]))} ", text)


_PLAIN = {"stem": False, "remove_stop_words": False, "ascii_folding": False}
# name -> (full-text index configuration, what is done to a text before it is written or asked)
WAYS: dict[str, tuple[FTS, Callable[[str], str]]] = {
    "simple (today)": (FTS(), str),
    "ngram 2-2 (LanceDB)": (FTS(base_tokenizer="ngram", ngram_min_length=2, ngram_max_length=2, **_PLAIN), str),
    "ngram 1-2 (LanceDB)": (FTS(base_tokenizer="ngram", ngram_min_length=1, ngram_max_length=2, **_PLAIN), str),
    "icu (LanceDB)": (FTS(base_tokenizer="icu"), str),
    "icu/split (LanceDB)": (FTS(base_tokenizer="icu/split"), str),
    "CJK pairs, simple (cut by vask)": (FTS(), pairs_only),
    "CJK pairs + characters, simple (cut by vask: chosen)": (FTS(), cjk_terms),
}


async def measure(index_dir: Path, questions: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    meta = read_meta(index_dir)
    if not meta.active:
        raise SystemExit(f"{index_dir} holds no complete index")
    source = await lancedb.connect_async(str(index_dir / "lancedb"))
    table = await source.open_table(f"chunks_{meta.active.suffix}")
    rows = await table.query().select(["id", "path", "search_text"]).to_arrow()
    texts = rows["search_text"].to_pylist()
    answerable = [q for q in questions if q["expected"]]
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as folder:
        db = await lancedb.connect_async(folder)
        for number, (name, (config, cut)) in enumerate(WAYS.items()):
            data = pa.table({"id": rows["id"], "path": rows["path"], "search_text": [cut(t or "") for t in texts]})
            bench = await db.create_table(f"way{number}", data)
            started = time.perf_counter()
            await bench.create_index("search_text", config=config)
            built = time.perf_counter() - started
            size = sum(f.stat().st_size for f in (Path(folder) / f"way{number}.lance").rglob("*") if f.is_file())
            hits1 = hits6 = 0
            reciprocal = 0.0
            timings = []
            for question in answerable:
                started = time.perf_counter()
                query = bench.query().nearest_to_text(MatchQuery(cut(question["question"]), "search_text"))  # type: ignore[call-arg]
                found = await query.limit(50).select(["path", "_score"]).to_arrow()
                timings.append(time.perf_counter() - started)
                notes = list(dict.fromkeys(found["path"].to_pylist()))
                ranks = [notes.index(p) + 1 for p in question["expected"] if p in notes[:10]]
                best = min(ranks, default=None)
                hits1 += best == 1
                hits6 += best is not None and best <= 6
                reciprocal += 1 / best if best else 0.0
            n = len(answerable) or 1
            results[name] = {
                "hit@1": hits1 / n,
                "hit@6": hits6 / n,
                "mrr@10": reciprocal / n,
                "build_s": built,
                "index_kib": size / 1024,
                "query_ms": 1000 * statistics.median(timings) if timings else 0.0,
            }
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("index_dir", type=Path)
    parser.add_argument("questions", type=Path, nargs="+")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    questions = [json.loads(line) for path in args.questions for line in path.read_text("utf-8").splitlines() if line]
    results = asyncio.run(measure(args.index_dir, questions))
    if args.json:
        print(json.dumps(results, indent=2, ensure_ascii=False))
        return
    print(f"{len([q for q in questions if q['expected']])} answerable questions")
    print("| Way | hit@1 | hit@6 | MRR@10 | index build s | index KiB | query ms (median) |")
    print("|---|---|---|---|---|---|---|")
    for name, r in results.items():
        print(
            f"| {name} | {r['hit@1']:.3f} | {r['hit@6']:.3f} | {r['mrr@10']:.3f} | {r['build_s']:.2f} "
            f"| {r['index_kib']:.0f} | {r['query_ms']:.1f} |"
        )


if __name__ == "__main__":
    main()
