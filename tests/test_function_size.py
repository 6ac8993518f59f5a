"""No function in vask_server is longer than a screen: a longer one does several jobs, and each job
wants its own name. Data literals are the exception (the OpenAPI document, its paths): a function that
only builds a value, with no branch or loop, reads top to bottom however long it is."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted((ROOT / "vask_server").rglob("*.py"))
MAX_LINES = 80
CONTROL_FLOW = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.Try, ast.With, ast.AsyncWith, ast.Match)


def builds_a_value(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Only assignments and a return (after a docstring), nothing that branches or loops."""
    body = function.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    if not body or not all(isinstance(s, (ast.Assign, ast.AnnAssign, ast.Return)) for s in body):
        return False
    return not any(isinstance(node, CONTROL_FLOW) for s in body for node in ast.walk(s))


def long_functions(source: str, limit: int = MAX_LINES) -> list[tuple[str, int]]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno is not None:
            length = node.end_lineno - node.lineno + 1
            if length > limit and not builds_a_value(node):
                found.append((node.name, length))
    return found


def test_no_function_is_longer_than_a_screen() -> None:
    found = [
        f"{path.relative_to(ROOT)}: {name} ({length} lines)"
        for path in SOURCES
        for name, length in long_functions(path.read_text("utf-8"))
    ]
    assert not found, f"functions over {MAX_LINES} lines (split each into steps with names): {found}"


def test_the_check_sees_a_long_function_and_excuses_only_a_literal() -> None:
    statements = "\n".join(f"    x{i} = {i}" for i in range(MAX_LINES))
    looping = "def long():\n" + statements + "\n    for _ in []:\n        pass\n"
    literal = (
        "def document():\n    return {\n" + "\n".join(f"        'k{i}': {i}," for i in range(MAX_LINES)) + "\n    }\n"
    )
    assert long_functions(looping) == [("long", MAX_LINES + 3)]
    assert long_functions(literal) == []
    assert long_functions("def short():\n    return 1\n") == []
