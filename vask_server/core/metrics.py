"""Retrieval metrics over distinct notes: hit@k, MRR@10, declines of absent questions; and, when
the answer step was run too, how often the answer says "not in your notes" and cites a right note."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from vask_server.errors import BadRequest

HIT_KS = (1, 3, 6, 10)


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    expected: tuple[str, ...]
    type: str
    split: str = "dev"

    @property
    def absent(self) -> bool:
        return not self.expected


@dataclass(frozen=True)
class Outcome:
    question: Question
    returned: tuple[str, ...]  # distinct note paths, best first
    declined: bool  # nothing passed the evidence threshold
    answer: str | None = None  # the chat model's answer, when the answer step was run
    answer_declined: bool = False  # the search declined, or the answer says the notes don't hold it
    cited: tuple[str, ...] = ()  # note paths the answer cites

    def rank(self) -> int | None:
        """1-based rank of the first expected note, None when it is not returned."""
        for position, path in enumerate(self.returned, start=1):
            if path in self.question.expected:
                return position
        return None


def parse_questions(lines: Iterable[str], source: str = "questions") -> list[Question]:
    questions: list[Question] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            questions.append(
                Question(
                    id=str(data["id"]),
                    question=str(data["question"]),
                    expected=tuple(str(p) for p in data.get("expected", [])),
                    type=str(data.get("type", "other")),
                    split=str(data.get("split", "dev")),
                )
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise BadRequest(
                f"{source}:{number}: not a valid question ({exc})",
                'Each line must be JSON like {"id", "question", "expected": [paths], "type"}.',
            ) from None
    return questions


@dataclass
class Summary:
    count: int = 0
    hits: dict[int, float] = field(default_factory=dict)
    mrr: float = 0.0
    answerable_declined: int = 0
    absent: int = 0
    absent_declined: int = 0
    answers: AnswerSummary | None = None  # only when the answer step was run

    def to_dict(self) -> dict[str, Any]:
        return {
            "count": self.count,
            **{f"hit@{k}": round(v, 4) for k, v in self.hits.items()},
            "mrr@10": round(self.mrr, 4),
            "answerable_declined": self.answerable_declined,
            "absent": self.absent,
            "absent_declined": self.absent_declined,
            **({"answers": self.answers.__dict__} if self.answers else {}),
        }


@dataclass
class AnswerSummary:
    """What the user reads: retrieval and the chat model together."""

    absent_declined: int = 0  # absent questions answered "not in your notes" (by the search or the model)
    answerable_declined: int = 0  # answerable questions answered so: answers lost
    answerable_citing_expected: int = 0  # answers citing at least one note that holds the answer


def summarise(outcomes: Sequence[Outcome]) -> Summary:
    answerable = [o for o in outcomes if not o.question.absent]
    absent = [o for o in outcomes if o.question.absent]
    summary = Summary(count=len(answerable), absent=len(absent))
    summary.absent_declined = sum(o.declined for o in absent)
    summary.answerable_declined = sum(o.declined for o in answerable)
    if any(o.answer is not None for o in outcomes):
        summary.answers = AnswerSummary(
            absent_declined=sum(o.answer_declined for o in absent),
            answerable_declined=sum(o.answer_declined for o in answerable),
            answerable_citing_expected=sum(bool(set(o.cited) & set(o.question.expected)) for o in answerable),
        )
    if not answerable:
        return summary
    for k in HIT_KS:
        summary.hits[k] = sum(1 for o in answerable if (r := o.rank()) is not None and r <= k) / len(answerable)
    summary.mrr = sum(1.0 / r for o in answerable if (r := o.rank()) is not None and r <= 10) / len(answerable)
    return summary
