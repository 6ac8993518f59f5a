"""`vask eval`: measure retrieval (and, with --answers, the answers) on a question set, and print the
report as text tables and a failure log, or as JSON."""

from __future__ import annotations

import argparse
import contextlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vask_server.core.metrics import parse_questions
from vask_server.errors import ConfigError, ModelMissing, OllamaUnavailable

if TYPE_CHECKING:
    from vask_server.services.context import Services


async def run(args: argparse.Namespace, services: Services) -> int:
    """`vask eval`: the question set measured with each configuration, printed as tables or JSON."""
    from vask_server.services.query.evaluate import (
        COMPARE_CONFIGS,
        DEFAULT_CONFIGS,
        PRESETS,
        TIME_CONFIGS,
        evaluate,
        preset,
        report,
        seed_index,
    )
    from vask_server.services.query.qa import QAService

    path: Path = args.questions
    try:
        lines = path.read_text("utf-8").splitlines()
    except OSError as exc:
        raise ConfigError(f"Cannot read {path}: {exc.strerror}", "Check the path of the questions file.") from None
    questions = parse_questions(lines, str(path))
    if args.split:
        questions = [q for q in questions if q.split == args.split]
    names = COMPARE_CONFIGS if args.compare else DEFAULT_CONFIGS
    if args.compare and any(q.range is not None for q in questions):
        names = (*names, *(n for n in TIME_CONFIGS if n not in names))  # time read and not, side by side
    if args.configs:
        names = tuple(n.strip() for n in args.configs.split(",") if n.strip())
    unknown = [n for n in names if n not in PRESETS]
    if unknown:
        raise ConfigError(f"Unknown eval config(s): {', '.join(unknown)}", f"Choose from: {', '.join(PRESETS)}.")
    settings = services.settings
    configs = [preset(name, settings.min_similarity, settings.decline_sigmas, settings.top_k) for name in names]
    chat_model = settings.chat_model if args.answers else None
    if chat_model:  # a missing model stops the run here, not after the baseline index is built
        reachable, missing = await services.chat_gateway.probe([chat_model])
        if not reachable:
            raise OllamaUnavailable(services.chat_gateway.host, server=services.chat_gateway.server)
        if missing:
            raise ModelMissing(chat_model, services.chat_gateway.host, server=services.chat_gateway.server)
    reports = []
    for config in configs:
        async with contextlib.AsyncExitStack() as stack:
            searcher = await stack.enter_async_context(seed_index(services)) if config.seed_index else services.searcher
            answerer = (
                QAService(searcher, services.chat_gateway, chat_model, settings.chat_context) if chat_model else None
            )
            outcomes = await evaluate(
                searcher, questions, config, answerer=answerer, answer_top_k=settings.top_k, today=args.now
            )
        reports.append(report(config, outcomes, chat_model=chat_model))
    if args.json:
        print(json.dumps({"questions": str(path), "reports": reports}, indent=2, ensure_ascii=False))
    else:
        print(render_eval(reports))
    return 0


def render_eval(reports: list[dict[str, Any]]) -> str:
    """The text `vask eval` prints: one table of every configuration, then answers, time questions,
    PDF pages, each split, each question type and the failures, as they apply."""
    width = max([14, *(len(rep["config"]) + 2 for rep in reports)])
    lines: list[str] = []
    for section in (_overall, _answers, _time, _pages, _splits, _types_and_failures):
        lines += section(reports, width)
    return "\n".join(lines)


def _overall(reports: list[dict[str, Any]], width: int) -> list[str]:
    """Every configuration's hit rates, MRR and declines, one row each."""
    lines: list[str] = []
    header = (
        f"{'config':<{width}}{'n':>4}{'hit@1':>8}{'hit@3':>8}{'hit@6':>8}{'hit@10':>8}{'MRR@10':>8}"
        f"{'absent declined':>17}{'answerable declined':>21}"
    )
    lines.append(header)
    for rep in reports:
        o = rep["overall"]
        lines.append(
            f"{rep['config']:<{width}}{o['count']:>4}{o.get('hit@1', 0):>8.3f}{o.get('hit@3', 0):>8.3f}"
            f"{o.get('hit@6', 0):>8.3f}{o.get('hit@10', 0):>8.3f}{o['mrr@10']:>8.3f}"
            f"{o['absent_declined']:>12}/{o['absent']:<4}{o['answerable_declined']:>17}/{o['count']:<3}"
        )
    return lines


def _answers(reports: list[dict[str, Any]], width: int) -> list[str]:
    """With --answers: what the chat model said, per configuration."""
    lines: list[str] = []
    answered = [rep for rep in reports if "answers" in rep["overall"]]
    if answered:
        lines.append("")
        lines.append(
            f'answers by {answered[0]["settings"]["chat_model"]}: "not in your notes" from the search or the model'
        )
        lines.append(f"{'config':<{width}}{'absent declined':>17}{'answerable declined':>21}{'cite a right note':>19}")
        for rep in answered:
            o, a = rep["overall"], rep["overall"]["answers"]
            lines.append(
                f"{rep['config']:<{width}}{a['absent_declined']:>12}/{o['absent']:<4}"
                f"{a['answerable_declined']:>17}/{o['count']:<3}{a['answerable_citing_expected']:>15}/{o['count']:<3}"
            )
    return lines


def _time(reports: list[dict[str, Any]], width: int) -> list[str]:
    """Time questions: the range read and the passages within it."""
    lines: list[str] = []
    timed = [rep for rep in reports if "time" in rep["overall"]]
    if timed:
        lines.append("")
        lines.append("time questions: range read as meant; share of the first 6 notes dated in the range")
        lines.append(f"{'config':<{width}}{'n':>4}{'range read':>12}{'in-range@6':>12}{'shown out of range':>20}")
        for rep in timed:
            t = rep["overall"]["time"]
            lines.append(
                f"{rep['config']:<{width}}{t['questions']:>4}{t['range_understood']:>12.3f}"
                f"{t['in_range_precision@6']:>12.3f}{t['out_of_range_shown']:>20.3f}"
            )
            if t["misread"]:
                lines.append(f"  range read otherwise: {', '.join(t['misread'])}")
    return lines


def _pages(reports: list[dict[str, Any]], width: int) -> list[str]:
    """Questions answered on a PDF page."""
    lines: list[str] = []
    paged = [rep for rep in reports if "page@6" in rep["overall"]]
    if paged:
        lines.append("")
        lines.append("questions answered on a PDF page: the PDF in the first 6, its best passage on that page")
        for rep in paged:
            o = rep["overall"]
            lines.append(f"{rep['config']:<{width}}{o['page_questions']:>4}  page@6 {o['page@6']:.3f}")
    return lines


def _splits(reports: list[dict[str, Any]], width: int) -> list[str]:
    """Each split of the question set on its own."""
    lines: list[str] = []
    for split in sorted({name for rep in reports for name in rep["by_split"]}):
        lines.append("")
        lines.append(f"{split} split:")
        for rep in reports:
            o = rep["by_split"].get(split)
            if o:
                lines.append(
                    f"  {rep['config']:<{width}}{o['count']:>4}  hit@1 {o.get('hit@1', 0):.3f}"
                    f"  hit@6 {o.get('hit@6', 0):.3f}"
                    f"  MRR@10 {o['mrr@10']:.3f}  absent declined {o['absent_declined']}/{o['absent']}"
                    f"  answerable declined {o['answerable_declined']}"
                )
    return lines


def _types_and_failures(reports: list[dict[str, Any]], width: int) -> list[str]:
    """Each question type, then every failure with what was expected and returned."""
    lines: list[str] = []
    for rep in reports:
        lines.append("")
        lines.append(f"by type ({rep['config']}):")
        for name, o in rep["by_type"].items():
            if o["count"]:
                lines.append(
                    f"  {name:<12}{o['count']:>4}  hit@1 {o.get('hit@1', 0):.2f}  hit@6 {o.get('hit@6', 0):.2f}"
                    f"  MRR {o['mrr@10']:.2f}"
                )
            else:
                lines.append(f"  {name:<12}{o['absent']:>4}  declined {o['absent_declined']}/{o['absent']}")
        lines.append(f"failures ({rep['config']}):")
        for failure in rep["failures"]:
            lines.append(f"  {failure['id']} [{failure['type']}] {failure['problem']}: {failure['question']}")
            if failure.get("expected"):
                lines.append(f"      expected {failure['expected']}")
            lines.append(f"      got      {failure['returned']}")
            if "answer" in failure:
                lines.append(f"      answer   {failure['answer']!r}")
    return lines
