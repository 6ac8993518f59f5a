"""Imports point one way, and no door imports another: `mcp/` and `web/` sit side by side above
`services/`, and nothing below them imports either (cli/command.py, above all, gives `vask serve` its /mcp)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "vask_server"


def imported(folder: str) -> dict[str, set[str]]:
    """Each module of `folder` with the vask_server modules it imports (type-only imports too)."""
    found: dict[str, set[str]] = {}
    for path in sorted((PACKAGE / folder).rglob("*.py")):
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                names.add(node.module)
            elif isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
        found[str(path.relative_to(PACKAGE))] = {n for n in names if n.startswith("vask_server")}
    return found


@pytest.mark.parametrize(
    ("folder", "never"),
    [
        ("mcp", "vask_server.web"),
        ("web", "vask_server.mcp"),
        ("services", "vask_server.mcp"),
        ("adapters", "vask_server.mcp"),
        ("core", "vask_server.mcp"),
        ("core", "vask_server.web"),
        ("adapters", "vask_server.web"),
    ],
)
def test_a_layer_never_imports_a_door_beside_or_above_it(folder: str, never: str) -> None:
    offenders = {module: sorted(n for n in names if n.startswith(never)) for module, names in imported(folder).items()}
    assert {module: names for module, names in offenders.items() if names} == {}
    assert imported(folder)  # (the scan does see the modules)
