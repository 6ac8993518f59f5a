"""Imports point one way: no module of vask_server or scripts/ imports, directly or through others, a
module that imports it back. A circle means neither can be understood, tested or moved without the
other (scripts/bench.py and bench_responsive.py once imported each other)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def module_name(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")


def imported(path: Path, modules: set[str]) -> set[str]:
    """The modules of `modules` that `path` imports when it runs, at its top or inside a function
    (what only a type checker reads, under `if TYPE_CHECKING:`, is left out)."""
    tree = ast.parse(path.read_text("utf-8"))
    checking_only = {
        id(node)
        for block in ast.walk(tree)
        if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test)
        for statement in block.body
        for node in ast.walk(statement)
    }
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in checking_only:
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, *([base] if base else [])])
            found.update(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names)
    return (found & modules) - {module_name(path)}


def graph() -> dict[str, set[str]]:
    paths = [*(ROOT / "vask_server").rglob("*.py"), *(ROOT / "scripts").glob("*.py")]
    modules = {module_name(path) for path in paths}
    return {module_name(path): imported(path, modules) for path in paths}


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in edges[node]:
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = [stack.pop()]
            while group[-1] != node:
                group.append(stack.pop())
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_the_circle_finder_finds_a_circle() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_no_module_of_vask_server_or_scripts_imports_itself_back() -> None:
    edges = graph()
    assert "scripts.benchkit" in edges["scripts.bench"] and "vask_server.adapters.store" in edges
    assert circles(edges) == []
