"""Connection questions ("which ideas from the last three months connect to [[X]]?") measured as the
product answers them: `vask search`'s connections, ten notes deep.

    uv run python scripts/eval_connections.py tests/eval/connections/connections-sample.jsonl --vault sample_vault
    uv run python scripts/eval_connections.py tests/eval/connections/connections-hub.jsonl --vault HUB --json out.json

Each line: {"id", "question", "seed", "current_note", "connected": [paths judged connected and not
linked], "asked_at"?, "range"?: {"from", "to"}}. The notes linked to or from the seed come from the
index's own link graph. Reported, over the questions:
- linked@10: of the notes linked with the seed (with a passage inside the range, when one is asked),
  the share among the first 10 other notes;
- unlinked@10: of the notes judged connected and not linked, the share among the first 10;
- connected@6: the questions with a linked or judged note among the first 6;
- in range: of the notes listed for a question with a range, the share whose passage is inside it;
- seed in first 6: the seed's own passages among the first 6 connections (the seed is never one);
- seed kept first: questions whose answer keeps the seed's own passages before its connections
  ("what could help with [[X]]?"); those passages are not counted among the notes listed.
Needs a running Ollama (or the stand-in) with the model of VASK_EMBED_MODEL. Eval only.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from datetime import date
from pathlib import Path
from typing import Any

from vask_server.adapters.sql import sql_string
from vask_server.config import load_settings
from vask_server.core.question import Question
from vask_server.core.retrieve import Filters
from vask_server.services.context import open_services

DEPTH = 10


async def evaluate(questions: list[dict[str, Any]], vault: Path, index_dir: Path | None) -> dict[str, Any]:
    flags: dict[str, Any] = {"vault": str(vault)}
    if index_dir is not None:
        flags["index_dir"] = str(index_dir)
    settings = load_settings(flags=flags)
    rows = []
    async with open_services(settings) as services:
        searcher = services.searcher
        index = searcher.active()
        graph = await searcher.graphs.get(index)
        for q in questions:
            asked = date.fromisoformat(q["asked_at"]) if q.get("asked_at") else date(2026, 12, 5)
            question = Question(
                q["question"],
                today=asked,
                top_k=DEPTH,
                min_similarity=0.0,
                open_note=q["seed"] if q.get("current_note") else None,
            )
            result = await searcher.search_question(question)
            seed = q["seed"]
            # the connections: the seed's own passages, kept first when the question may be about it
            # ("what could help with [[X]]?"), are no connection and take no place
            connected = [hit for hit in result.hits if hit.linked != "seed"]
            listed = list(dict.fromkeys(hit.path for hit in connected))[:DEPTH]
            linked = (graph.links_to(seed) | graph.linked_from(seed)) - {seed}
            span = q.get("range")
            if span:  # only the linked notes with a passage inside the range can be asked for
                filters = Filters(date_from=date.fromisoformat(span["from"]), date_to=date.fromisoformat(span["to"]))
                linked = {p for p in linked if await _has_passage_in(services, index, p, filters)}
            judged = set(q["connected"]) - linked
            in_range = None
            if span:
                inside = [
                    h
                    for h in connected
                    if h.date is not None
                    and (h.date_end or h.date).isoformat() >= span["from"]
                    and h.date.isoformat() <= span["to"]
                ]
                in_range = (len({h.path for h in inside}), len(listed))
            rows.append(
                {
                    "id": q["id"],
                    "seed_found": result.seed == seed,
                    "linked": (len(linked & set(listed)), len(linked)),
                    "judged": (len(judged & set(listed)), len(judged)),
                    "connected@6": bool((linked | judged) & set(listed[:6])),
                    "in_range": in_range,
                    "seed_in_6": sum(h.path == seed for h in connected[:6]),
                    "seed_kept": len(result.hits) - len(connected),
                    "listed": listed,
                }
            )
    return {"questions": rows, "summary": summarise(rows)}


async def _has_passage_in(services: Any, index: Any, path: str, filters: Filters) -> bool:
    from vask_server.adapters.sql import filters_to_where

    where = f"path = {sql_string(path)} AND kind = 'chunk' AND {filters_to_where(filters)}"
    return bool((await services.store.tables(index).all_chunk_rows(["id"], where=where)).num_rows)


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    def share(key: str) -> float | None:
        found, total = (sum(r[key][i] for r in rows if r[key]) for i in (0, 1))
        return round(found / total, 3) if total else None

    ranged = [r for r in rows if r["in_range"]]
    return {
        "questions": len(rows),
        "seed understood": sum(r["seed_found"] for r in rows),
        "linked@10": share("linked"),
        "unlinked@10": share("judged"),
        "connected@6": round(sum(r["connected@6"] for r in rows) / len(rows), 3) if rows else None,
        "in range": share("in_range") if ranged else None,
        "seed passages in first 6 (max)": max((r["seed_in_6"] for r in rows), default=0),
        "seed kept first": sum(bool(r.get("seed_kept")) for r in rows),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("questions", type=Path)
    parser.add_argument("--vault", type=Path, required=True)
    parser.add_argument("--index-dir", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None, help="write every question's outcome here")
    args = parser.parse_args()
    questions = [json.loads(line) for line in args.questions.read_text("utf-8").splitlines() if line.strip()]
    report = asyncio.run(evaluate(questions, args.vault, args.index_dir))
    print(json.dumps(report["summary"], indent=2))
    for row in report["questions"]:
        print(
            f"{row['id']}: linked {row['linked'][0]}/{row['linked'][1]}, judged {row['judged'][0]}/{row['judged'][1]}"
            f"{'' if row['connected@6'] else ', NONE in first 6'}{'' if row['seed_found'] else ', SEED NOT READ'}"
        )
    if args.json:
        args.json.write_text(json.dumps(report, indent=2, ensure_ascii=False), "utf-8")


if __name__ == "__main__":
    main()
