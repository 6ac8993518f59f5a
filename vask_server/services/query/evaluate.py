"""`vask eval`: run the questions through retrieval configurations side by side, in one run.

The "baseline" is the seed design (heading chunks embedded as written, vector search only, top-6,
a fixed 0.25 threshold): it is built into a temporary index beside the real one, with the same
embedding model, so the comparison is made on the same machine, model and questions.

With an answerer, each question also goes through the answer step with the chat model, as `vask ask`
would: that measures what the user reads, "not in your notes" from the search or from the model.
"""

from __future__ import annotations

import tempfile
from collections import defaultdict
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from datetime import date
from pathlib import Path
from typing import Any

from vask_server.adapters.ollama import Embedder
from vask_server.adapters.store import Store
from vask_server.core.chunk import ChunkOptions
from vask_server.core.embed_prompts import EmbedPrompts
from vask_server.core.filetypes import MARKDOWN
from vask_server.core.metrics import Outcome, Question, summarise
from vask_server.core.plan import IndexOptions
from vask_server.core.prompt import says_not_in_notes
from vask_server.core.question import Question as AskedQuestion
from vask_server.core.retrieve import distinct_notes
from vask_server.services.context import Services
from vask_server.services.query.qa import QAService
from vask_server.services.query.ranking_variants import RankingVariant
from vask_server.services.query.search import Searcher
from vask_server.services.sync.indexer import Indexer

RANK_DEPTH = 10  # distinct notes hit@k and MRR look at, at most


@dataclass(frozen=True)
class EvalConfig:
    name: str
    retrieval: RankingVariant
    min_similarity: float
    # Passages retrieved: None takes the user's VASK_TOP_K, as `vask ask` does (6 by default, of which
    # at most `retrieval.per_note` from one note: 3 to 6 distinct notes).
    top_k: int | None = None
    seed_index: bool = False  # search the temporary seed-style index instead of the real one
    read_time: bool = True  # read the time a question names ("last month"), as ask and search do


# Every preset but two retrieves as `vask ask` does (the user's top_k, two passages a note at most)
# and changes one thing. "baseline" is the seed design; "hybrid-depth10" ranks ten distinct notes, one
# passage each, to see how far down a miss sits: not what an answer shows.
PRESETS: dict[str, EvalConfig] = {
    "baseline": EvalConfig(
        "baseline",
        RankingVariant(mode="vector", note_records=False, graph=False, decline="fixed", per_note=1),
        0.25,
        top_k=6,
        seed_index=True,
    ),
    "vector": EvalConfig("vector", RankingVariant(mode="vector"), 0.25),
    "hybrid": EvalConfig("hybrid", RankingVariant(mode="hybrid"), 0.25),  # what `vask ask` and the server do
    "hybrid-depth10": EvalConfig("hybrid-depth10", RankingVariant(mode="hybrid", per_note=1), 0.25, top_k=RANK_DEPTH),
    # The same as hybrid, with the time a question names left unread: what time questions got before dates.
    "hybrid-no-time": EvalConfig("hybrid-no-time", RankingVariant(mode="hybrid"), 0.25, read_time=False),
    "hybrid+graph": EvalConfig("hybrid+graph", RankingVariant(mode="hybrid", graph=True), 0.25),
    # Convex fusion of the cosines as the model gives them, before they were moved onto the scale its
    # weights were chosen on (core/scale.py): the same ranking with all-minilm, not with other models.
    "hybrid-raw-cosines": EvalConfig("hybrid-raw-cosines", RankingVariant(mode="hybrid", cosines="raw"), 0.25),
    # Reciprocal-rank fusion, the previous default, beside the convex fusion that replaced it.
    "hybrid-rrf": EvalConfig("hybrid-rrf", RankingVariant(mode="hybrid", fusion="rrf"), 0.25),
    # The decline rule before the topic query: the best cosine of the question as asked, at mean + 0.7 sd.
    "hybrid-question-decline": EvalConfig(
        "hybrid-question-decline",
        RankingVariant(mode="hybrid", decline_on="question", decline_sigmas=0.7),
        0.25,
    ),
}
DEFAULT_CONFIGS = ("hybrid",)  # what `vask ask` and the server use
COMPARE_CONFIGS = (
    "baseline",
    "vector",
    "hybrid",
    "hybrid-depth10",
    "hybrid-raw-cosines",
    "hybrid-rrf",
    "hybrid+graph",
    "hybrid-question-decline",
)
TIME_CONFIGS = ("hybrid", "hybrid-no-time")  # what `--compare` adds for a set of time questions


def preset(name: str, min_similarity: float, decline_sigmas: float | None = None, top_k: int = 6) -> EvalConfig:
    """A preset with the user's settings where it has none of its own (`top_k`: VASK_TOP_K): the seed
    design keeps its fixed threshold and top-6, and the previous decline rule its own factor."""
    config = PRESETS[name]
    if config.seed_index:
        return config
    retrieval = config.retrieval
    if decline_sigmas is not None and retrieval.decline == "calibrated" and retrieval.decline_on == "topic":
        retrieval = replace(retrieval, decline_sigmas=decline_sigmas)
    return replace(config, min_similarity=min_similarity, retrieval=retrieval, top_k=config.top_k or top_k)


async def evaluate(
    searcher: Searcher,
    questions: Sequence[Question],
    config: EvalConfig,
    *,
    answerer: QAService | None = None,
    answer_top_k: int = 6,
    today: date | None = None,
) -> list[Outcome]:
    """Each question is searched as `config` says (the product's: as `vask ask` would), on the day it
    says it is asked, else `today` (else the real today); with an answerer, it is then asked as
    `vask ask` would ask it, with `answer_top_k` passages."""
    top_k = config.top_k or answer_top_k
    outcomes: list[Outcome] = []
    for question in questions:
        asked = AskedQuestion(
            question.question,
            today=question.asked_at or today or date.today(),
            top_k=top_k,
            min_similarity=config.min_similarity,
            read_time=config.read_time,
        )
        result = await searcher.search_question(asked, ranking=config.retrieval)
        first_hits: dict[str, tuple[date | None, date | None]] = {}
        first_pages: dict[str, int | None] = {}
        for hit in result.hits:
            first_hits.setdefault(hit.path, (hit.date, hit.date_end))
            first_pages.setdefault(hit.path, hit.page)
        returned = tuple(distinct_notes(result.hits))[:RANK_DEPTH]
        understood = (result.time_range.start, result.time_range.end) if result.time_range else None
        outcome = Outcome(
            question,
            returned,
            result.declined,
            dates=tuple(first_hits[path] for path in returned),
            understood=understood,
            pages=tuple(first_pages[path] for path in returned),
        )
        if answerer is not None:
            # (the baseline's top-6 stays its own)
            answered = replace(asked, top_k=min(answer_top_k, top_k))
            done = await answerer.complete(answered, ranking=config.retrieval)
            answer = str(done.get("answer", ""))
            outcome = replace(
                outcome,
                answer=answer,
                answer_declined=bool(done.get("declined")) or says_not_in_notes(answer),
                cited=tuple(dict.fromkeys(c["path"] for c in done.get("citations", []))),
            )
        outcomes.append(outcome)
    return outcomes


@asynccontextmanager
async def seed_index(services: Services) -> AsyncIterator[Searcher]:
    """The seed design's index (no table text, no note records), built beside the real one."""
    active = services.searcher.active()
    with tempfile.TemporaryDirectory(prefix="vask-eval-seed-") as folder:
        store = await Store.open(Path(folder))
        embedder = Embedder(
            services.gateway,
            active.model,
            prompts=EmbedPrompts(query=services.searcher.query_prompt(active), document=active.document_prompt),
            batch_size=services.settings.embed_batch_size,
            concurrency=services.settings.embed_concurrency,
        )
        options = IndexOptions(
            chunking=ChunkOptions(
                max_tokens=services.settings.chunk_tokens,
                max_chars=services.settings.chunk_max_chars,
                tables_as_text=False,
            ),
            max_note_bytes=services.settings.max_note_bytes,
            note_records=False,
            file_types=(MARKDOWN,),  # the seed design read Markdown only
        )
        await Indexer(services.vault, store, embedder, options).sync()
        yield Searcher(store, services.gateway, instructions=services.searcher.instructions)


_ANSWER_EXCERPT = 300


def _wrong_page(outcome: Outcome) -> bool:
    return outcome.question.page is not None and not outcome.page_found()


def report(config: EvalConfig, outcomes: Sequence[Outcome], *, chat_model: str | None = None) -> dict[str, Any]:
    by_type: dict[str, list[Outcome]] = defaultdict(list)
    by_split: dict[str, list[Outcome]] = defaultdict(list)
    for outcome in outcomes:
        by_type[outcome.question.type].append(outcome)
        by_split[outcome.question.split].append(outcome)
    failures = []
    for outcome in outcomes:
        rank = outcome.rank()
        q = outcome.question
        # (with answers, a decline by the model counts as the search's would)
        answer = {"answer": outcome.answer[:_ANSWER_EXCERPT]} if outcome.answer is not None else {}
        if q.absent and not (outcome.declined or outcome.answer_declined):
            failures.append(
                {
                    "id": q.id,
                    "type": q.type,
                    "question": q.question,
                    "problem": "absent, not declined",
                    "returned": list(outcome.returned[:3]),
                    **answer,
                }
            )
        elif not q.absent and (
            rank is None or rank > 1 or outcome.declined or outcome.answer_declined or _wrong_page(outcome)
        ):
            problem = "declined" if outcome.declined else ("missed" if rank is None else f"rank {rank}")
            if _wrong_page(outcome) and rank is not None:
                found = outcome.pages[rank - 1] if rank - 1 < len(outcome.pages) else None
                problem = f"{problem}, page {found} instead of {q.page}"
            if outcome.answer_declined and not outcome.declined:
                problem = "answer says not in notes" if rank == 1 else f"{problem}; answer says not in notes"
            failures.append(
                {
                    "id": q.id,
                    "type": q.type,
                    "question": q.question,
                    "problem": problem,
                    "expected": list(q.expected),
                    "returned": list(outcome.returned[:5]),
                    **answer,
                }
            )
    return {
        "config": config.name,
        "settings": {
            "retrieval": config.retrieval.__dict__,
            "min_similarity": config.min_similarity,
            "top_k": config.top_k,
            "seed_index": config.seed_index,
            **({"chat_model": chat_model} if chat_model else {}),
        },
        "overall": summarise(outcomes).to_dict(),
        "by_split": {name: summarise(items).to_dict() for name, items in sorted(by_split.items())},
        "by_type": {name: summarise(items).to_dict() for name, items in sorted(by_type.items())},
        "failures": failures,
    }
