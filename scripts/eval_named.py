"""Ordinary questions that name a note ("What's the pricing for Tidepool Pro according to [[Launch
Tidepool app]]?"): none may lose the note it names by being read as "what connects to [[X]]?".

    uv run python scripts/eval_named.py tests/eval/named/named-notes-sample.jsonl --vault sample_vault
    uv run python scripts/eval_named.py tests/eval/named/named-notes-hub.jsonl --vault HUB --json out.json

Each line: {"id", "question", "named": ["[[Note]]", ...], "expected": [paths]}. Each question is read
and searched as the product does (`vask search`, six passages), and again as written (`connect:
false`: every `[[Note]]` a scope, as an ordinary question). Reported:
- read as connections: questions the product reads as "what connects to …";
- named seed dropped: of those, the ones whose seed is a note the question names and which the answer
  leaves out (the reading's failure: must be none);
- lost: questions with a named note among the results as written and not among them as read (must
  be none); named kept: the share of such named notes among the results as read;
- expected@6, as read and as written: an expected note among the results.
`--open-note PATH` asks each as if that note were open in Obsidian (what "this note" then means).
Needs a running Ollama (or the stand-in) with the model of VASK_EMBED_MODEL. Eval only.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from datetime import date
from pathlib import Path
from typing import Any

from vask_server.config import load_settings
from vask_server.core.question import Question
from vask_server.core.scope import Mention, resolve
from vask_server.errors import VaskError
from vask_server.services.context import open_services
from vask_server.services.query.search import SearchResult

ASKED_ON = date(2026, 12, 5)


async def evaluate(
    questions: list[dict[str, Any]], vault: Path, index_dir: Path | None, open_note: str | None
) -> dict[str, Any]:
    flags: dict[str, Any] = {"vault": str(vault)}
    if index_dir is not None:
        flags["index_dir"] = str(index_dir)
    settings = load_settings(flags=flags)
    rows = []
    async with open_services(settings) as services:
        searcher = services.searcher
        directory = await searcher._directory()
        assert directory is not None, "index the vault first"
        for q in questions:
            named = set()
            for mention in q["named"]:
                name = mention.strip("[]").split("|")[0].split("#")[0].strip()
                found, _ = resolve([Mention("note", mention, name)], directory)
                named |= set(found.notes)

            async def ask(connect: bool, question: str = q["question"]) -> SearchResult | VaskError:
                try:
                    asked = Question(
                        question,
                        today=ASKED_ON,
                        top_k=settings.top_k,
                        min_similarity=settings.min_similarity,
                        open_note=open_note,
                        connect=connect,
                    )
                    return await searcher.search_question(asked)
                except VaskError as exc:  # (a mention that names nothing, "this note" with none open)
                    return exc

            read, written = await ask(True), await ask(False)
            read_paths = _paths(read)
            written_paths = _paths(written)
            seed = read.seed if isinstance(read, SearchResult) else None
            kept_seed = isinstance(read, SearchResult) and any(h.linked == "seed" for h in read.hits)
            rows.append(
                {
                    "id": q["id"],
                    "question": q["question"],
                    "named": sorted(named),
                    "error": f"{read.code}: {read.message}" if isinstance(read, VaskError) else None,
                    "connection": seed is not None,
                    "seed": seed,
                    "named_seed_dropped": seed in named and seed not in read_paths,
                    "seed_kept": kept_seed,
                    "named_as_written": sorted(named & written_paths),
                    "named_lost": sorted((named & written_paths) - read_paths),
                    "expected_as_read": bool(set(q["expected"]) & read_paths),
                    "expected_as_written": bool(set(q["expected"]) & written_paths),
                    "notice": read.notice if isinstance(read, SearchResult) else None,
                }
            )
    return {"questions": rows, "summary": summarise(rows)}


def _paths(result: SearchResult | VaskError) -> set[str]:
    return {hit.path for hit in result.hits} if isinstance(result, SearchResult) else set()


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    held = sum(len(r["named_as_written"]) for r in rows)
    lost = sum(len(r["named_lost"]) for r in rows)
    n = len(rows) or 1
    return {
        "questions": len(rows),
        "errors": sum(r["error"] is not None for r in rows),
        "read as connections": sum(r["connection"] for r in rows),
        "named seed dropped": sum(r["named_seed_dropped"] for r in rows),
        "seed kept first": sum(r["seed_kept"] for r in rows),
        "lost": sum(bool(r["named_lost"]) for r in rows),
        "named kept": round((held - lost) / held, 3) if held else None,
        "expected@6 as read": round(sum(r["expected_as_read"] for r in rows) / n, 3),
        "expected@6 as written": round(sum(r["expected_as_written"] for r in rows) / n, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("questions", type=Path)
    parser.add_argument("--vault", type=Path, required=True)
    parser.add_argument("--index-dir", type=Path, default=None)
    parser.add_argument("--open-note", default=None, help="ask each as if this note were open (vault-relative)")
    parser.add_argument("--json", type=Path, default=None, help="write every question's outcome here")
    args = parser.parse_args()
    questions = [json.loads(line) for line in args.questions.read_text("utf-8").splitlines() if line.strip()]
    report = asyncio.run(evaluate(questions, args.vault, args.index_dir, args.open_note))
    print(json.dumps(report["summary"], indent=2))
    for row in report["questions"]:
        problems = [
            *(["named seed dropped"] if row["named_seed_dropped"] else []),
            *([f"lost {', '.join(row['named_lost'])}"] if row["named_lost"] else []),
            *([row["error"]] if row["error"] else []),
        ]
        if row["connection"] or problems:
            seed = f"seed {row['seed']}{' (kept first)' if row['seed_kept'] else ''}" if row["connection"] else ""
            print(f"{row['id']}: {'; '.join([s for s in (seed, *problems) if s])} | {row['question']}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2, ensure_ascii=False), "utf-8")


if __name__ == "__main__":
    main()
