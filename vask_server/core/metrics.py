"""Retrieval metrics over distinct notes: hit@k, MRR@10, declines of absent questions; and, when
the answer step was run too, how often the answer says "not in your notes" and cites a right note."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date
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
    asked_at: date | None = None  # a time question: the day it is asked
    range: tuple[date, date] | None = None  # and the dates it means, inclusive
    page: int | None = None  # the answer is on this page of the expected PDF

    @property
    def absent(self) -> bool:
        return not self.expected


Span = tuple[date | None, date | None]  # a passage's first and last day; (None, None) when unknown


@dataclass(frozen=True)
class Outcome:
    question: Question
    returned: tuple[str, ...]  # distinct note paths, best first
    declined: bool  # nothing passed the evidence threshold
    answer: str | None = None  # the chat model's answer, when the answer step was run
    answer_declined: bool = False  # the search declined, or the answer says the notes don't hold it
    cited: tuple[str, ...] = ()  # note paths the answer cites
    dates: tuple[Span, ...] = ()  # the span of each returned note's first passage, as `returned`
    understood: Span | None = None  # the time range the search applied (None: none)
    pages: tuple[int | None, ...] = ()  # the page of each returned file's first passage, as `returned`

    def page_found(self, depth: int = 6) -> bool:
        """A question with a `page`: an expected PDF is among the first `depth` notes, and its best
        passage is on that page."""
        for position, path in enumerate(self.returned[:depth]):
            if path in self.question.expected:
                return position < len(self.pages) and self.pages[position] == self.question.page
        return False

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
                    asked_at=date.fromisoformat(data["asked_at"]) if data.get("asked_at") else None,
                    range=_range(data.get("range")),
                    page=int(data["page"]) if data.get("page") is not None else None,
                )
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise BadRequest(
                f"{source}:{number}: not a valid question ({exc})",
                'Each line must be JSON like {"id", "question", "expected": [paths], "type"}.',
            ) from None
    return questions


def _range(value: Any) -> tuple[date, date] | None:
    if value is None:
        return None
    first, last = date.fromisoformat(value["from"]), date.fromisoformat(value["to"])
    if first > last:
        raise ValueError(f"range from {first} is after {last}")
    return first, last


@dataclass
class Summary:
    count: int = 0
    hits: dict[int, float] = field(default_factory=dict)
    mrr: float = 0.0
    answerable_declined: int = 0
    absent: int = 0
    absent_declined: int = 0
    answers: AnswerSummary | None = None  # only when the answer step was run
    time: TimeSummary | None = None  # only for time questions (with "asked_at" and "range")
    # Questions whose answer is on a given PDF page: how many, and the share whose expected PDF is in
    # the first 6 with its best passage on that page.
    page_questions: int = 0
    page_at_6: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "count": self.count,
            **{f"hit@{k}": round(v, 4) for k, v in self.hits.items()},
            "mrr@10": round(self.mrr, 4),
            "answerable_declined": self.answerable_declined,
            "absent": self.absent,
            "absent_declined": self.absent_declined,
            **({"answers": self.answers.__dict__} if self.answers else {}),
            **({"time": self.time.to_dict()} if self.time else {}),
            **(
                {"page_questions": self.page_questions, "page@6": round(self.page_at_6, 4)}
                if self.page_questions
                else {}
            ),
        }


# "From the beginning": a range that starts this early means "any time up to when it is asked".
OPEN_START = date(2000, 1, 1)
IN_RANGE_DEPTH = 6


@dataclass
class TimeSummary:
    """Questions about a time: whether the range was read as meant, and how much of what was shown
    lies inside it (a passage counts when its span overlaps the range)."""

    questions: int = 0
    range_understood: float = 0.0  # share of questions whose range was read exactly
    in_range_precision: float = 0.0  # mean share of the first 6 distinct notes dated inside the range
    shown: int = 0  # questions that showed any note (the precision is over these)
    out_of_range_shown: float = 0.0  # share of those that showed a note from outside the range
    misread: list[str] = field(default_factory=list)  # ids whose range was read otherwise

    def to_dict(self) -> dict[str, Any]:
        return {
            "questions": self.questions,
            "range_understood": round(self.range_understood, 4),
            "in_range_precision@6": round(self.in_range_precision, 4),
            "shown": self.shown,
            "out_of_range_shown": round(self.out_of_range_shown, 4),
            "misread": self.misread,
        }


def range_matches(question: Question, understood: Span | None) -> bool:
    """The understood range is the one meant: open ends read as the beginning and the day asked."""
    assert question.range is not None and question.asked_at is not None
    first, last = question.range
    if understood is None:
        return first <= OPEN_START and last == question.asked_at
    start, end = understood
    start_ok = (start or date.min) <= OPEN_START if first <= OPEN_START else start == first
    return start_ok and (end or question.asked_at) == last


def in_range(span: Span, question: Question) -> bool:
    assert question.range is not None
    first, last = question.range
    start, end = span
    if start is None or end is None:
        return False
    return end >= first and start <= last


def summarise_time(outcomes: Sequence[Outcome]) -> TimeSummary | None:
    timed = [o for o in outcomes if o.question.range is not None and o.question.asked_at is not None]
    if not timed:
        return None
    summary = TimeSummary(questions=len(timed))
    understood = [o for o in timed if range_matches(o.question, o.understood)]
    summary.range_understood = len(understood) / len(timed)
    summary.misread = [o.question.id for o in timed if o not in understood]
    precisions: list[float] = []
    out_of_range = 0
    for outcome in timed:
        shown = outcome.dates[:IN_RANGE_DEPTH]
        if not shown:
            continue
        inside = sum(in_range(span, outcome.question) for span in shown)
        precisions.append(inside / len(shown))
        out_of_range += inside < len(shown)
    summary.shown = len(precisions)
    if precisions:
        summary.in_range_precision = sum(precisions) / len(precisions)
        summary.out_of_range_shown = out_of_range / len(precisions)
    return summary


@dataclass
class AnswerSummary:
    """What the user reads: retrieval and the chat model together."""

    absent_declined: int = 0  # absent questions answered "not in your notes" (by the search or the model)
    answerable_declined: int = 0  # answerable questions answered so: answers lost
    answerable_citing_expected: int = 0  # answers citing at least one note that holds the answer


def summarise(outcomes: Sequence[Outcome]) -> Summary:
    answerable = [o for o in outcomes if not o.question.absent]
    absent = [o for o in outcomes if o.question.absent]
    summary = Summary(count=len(answerable), absent=len(absent), time=summarise_time(outcomes))
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
    paged = [o for o in answerable if o.question.page is not None]
    if paged:
        summary.page_questions = len(paged)
        summary.page_at_6 = sum(o.page_found() for o in paged) / len(paged)
    for k in HIT_KS:
        summary.hits[k] = sum(1 for o in answerable if (r := o.rank()) is not None and r <= k) / len(answerable)
    summary.mrr = sum(1.0 / r for o in answerable if (r := o.rank()) is not None and r <= 10) / len(answerable)
    return summary
