"""Comments and docstrings in vask_server say why, briefly; the figures a choice rests on live in
docs/BENCHMARKS.md and docs/EVALUATION.md ("What the code's constants rest on", "What the ranking's
constants rest on"), where a re-run can update them. A figure copied into the code goes stale with the
next measurement and nobody sees it."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted((ROOT / "vask_server").rglob("*.py"))

# What a measurement looks like: a time or a size, a before → after, a speed-up, a recall or hit rate.
MEASURED = re.compile(
    r"\d[\d,.]*\s?(?:ms|µs|us|s|sec|seconds|MiB|MB|GiB|GB|KiB|KB|kB)\b"
    r"|\d[\d,.]*\s?(?:->|→)\s?[\d.]"
    r"|\d+(?:-\d+)?\s?[x×] (?:slower|faster|smaller|larger)"
    r"|\b(?:recall|hit|MRR)@\d+\s+[\d.]"
)


def comments_and_docstrings(path: Path) -> Iterator[tuple[int, str]]:
    source = path.read_text("utf-8")
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            docstring = ast.get_docstring(node, clean=False)
            if docstring:
                for offset, line in enumerate(docstring.splitlines()):
                    yield node.body[0].lineno + offset, line


def test_the_pattern_finds_the_figures_it_is_meant_to() -> None:
    for text in (
        "~90 ms per query",
        "peaked 220 MiB lower",
        "/v1/search 40.4 -> 57.3",
        "4-9x slower",
        "recall@50 0.967",
        "~1.7 us each",
    ):
        assert MEASURED.search(text), text
    for text in ("16 bytes a note", "refine 6", "Python 3.11", "a list nested deep", "TLS 1.2+"):
        assert not MEASURED.search(text), text


@pytest.mark.parametrize("path", SOURCES, ids=lambda path: str(path.relative_to(ROOT)))
def test_no_comment_or_docstring_carries_a_measured_figure(path: Path) -> None:
    found = [f"{line}: {text.strip()}" for line, text in comments_and_docstrings(path) if MEASURED.search(text)]
    assert not found, f"{path.relative_to(ROOT)}: put the figure in docs/BENCHMARKS.md and point there: {found}"
