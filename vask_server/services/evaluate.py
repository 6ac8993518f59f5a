"""`vask eval`: run the questions through one or more retrieval configurations, side by side."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from vask_server.core.metrics import Outcome, Question, summarise
from vask_server.core.retrieve import distinct_notes
from vask_server.services.search import RetrievalConfig, Searcher

RANK_DEPTH = 10


@dataclass(frozen=True)
class EvalConfig:
    name: str
    retrieval: RetrievalConfig
    min_similarity: float


async def evaluate(searcher: Searcher, questions: Sequence[Question], config: EvalConfig) -> list[Outcome]:
    outcomes: list[Outcome] = []
    ranking = RetrievalConfig(mode=config.retrieval.mode, per_note=1, candidates=config.retrieval.candidates)
    for question in questions:
        # The ranking is judged on its own (no threshold); the decline uses the configured threshold.
        ranked = await searcher.search(question.question, top_k=RANK_DEPTH, min_similarity=0.0, config=ranking)
        best = ranked.best_similarity
        declined = best is None or best < config.min_similarity
        outcomes.append(Outcome(question, tuple(distinct_notes(ranked.hits))[:RANK_DEPTH], declined))
    return outcomes


def report(config: EvalConfig, outcomes: Sequence[Outcome]) -> dict[str, Any]:
    by_type: dict[str, list[Outcome]] = defaultdict(list)
    by_split: dict[str, list[Outcome]] = defaultdict(list)
    for outcome in outcomes:
        by_type[outcome.question.type].append(outcome)
        by_split[outcome.question.split].append(outcome)
    failures = []
    for outcome in outcomes:
        rank = outcome.rank()
        q = outcome.question
        if q.absent and not outcome.declined:
            failures.append(
                {
                    "id": q.id,
                    "type": q.type,
                    "question": q.question,
                    "problem": "absent, not declined",
                    "returned": list(outcome.returned[:3]),
                }
            )
        elif not q.absent and (rank is None or rank > 1 or outcome.declined):
            problem = "declined" if outcome.declined else ("missed" if rank is None else f"rank {rank}")
            failures.append(
                {
                    "id": q.id,
                    "type": q.type,
                    "question": q.question,
                    "problem": problem,
                    "expected": list(q.expected),
                    "returned": list(outcome.returned[:5]),
                }
            )
    return {
        "config": config.name,
        "overall": summarise(outcomes).to_dict(),
        "by_split": {name: summarise(items).to_dict() for name, items in sorted(by_split.items())},
        "by_type": {name: summarise(items).to_dict() for name, items in sorted(by_type.items())},
        "failures": failures,
    }
