"""Search latency of one vask checkout on sample_vault: run it from two checkouts, alternating, to
compare them side by side.

usage: (cd CHECKOUT && uv run python /path/to/scripts/latency_side_by_side.py INDEX_DIR LABEL)
with OLLAMA_HOST and VASK_EMBED_MODEL set (hash-embed: the model is not what is measured). The 120 questions
are the first of tests/eval/questions-*.jsonl without the time set. A checkout whose searcher takes the question
as one value is timed through it; one from before that, through search_question's keywords; one from before
questions about time has no search_question, and is timed through search.
"""

import asyncio
import glob
import json
import statistics
import sys
import time
from datetime import date
from pathlib import Path

from vask_server.config import load_settings
from vask_server.services.context import open_services

try:
    from vask_server.core.question import Question
except ImportError:  # (a checkout from before it)
    Question = None

ROOT = Path(__file__).resolve().parents[1]


async def main():
    s = load_settings(vault=ROOT / "sample_vault", index_dir=Path(sys.argv[1]))
    qs = [
        json.loads(line)["question"]
        for f in sorted(glob.glob(str(ROOT / "tests" / "eval" / "questions-*.jsonl")))
        if "time" not in f
        for line in Path(f).read_text("utf-8").splitlines()
        if line.strip()
    ][:120]
    async with open_services(s) as sv:
        await sv.indexer.sync()
        fn = getattr(sv.searcher, "search_question", None)
        times = []
        for q in qs:
            t = time.perf_counter()
            if fn and Question is not None:
                await fn(Question(q, today=date(2026, 4, 1), top_k=6, min_similarity=0.25))
            elif fn:
                await fn(q, today=date(2026, 4, 1), top_k=6, min_similarity=0.25)
            else:
                await sv.searcher.search(q, top_k=6, min_similarity=0.25)
            times.append((time.perf_counter() - t) * 1000)
        times.sort()
        print(
            sys.argv[2],
            f"median {statistics.median(times):.1f} ms p95 {times[int(0.95 * len(times))]:.1f} ms n={len(times)}",
        )


asyncio.run(main())
