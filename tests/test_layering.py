"""Imports point one way: core (pure) ◀ adapters ◀ services ◀ web, mcp ◀ the command line. A module may
import its own layer and those below it, never one above: what a lower layer needs from a higher one
moves down instead."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "vask_server"

# Lowest first. `errors` and the package's own `__init__` (its version) are for everyone; `settings`
# declares the settings (on core's defaults); `config` loads them (environment, files), for services
# and above. Any other top-level module is the command line's.
LAYERS = {
    "__init__": 0,
    "errors": 0,
    "core": 1,
    "settings": 2,
    "adapters": 3,
    "config": 4,
    "services": 5,
    "web": 6,
    "mcp": 6,  # (two doors side by side: neither imports the other, tests/test_layers.py)
}
COMMAND_LINE = 7


def layer(module: str) -> int | None:
    """The layer of a `vask_server` module (dotted name); None for anything outside the package."""
    parts = module.split(".")
    if parts[0] != "vask_server":
        return None
    return LAYERS["__init__"] if len(parts) == 1 else LAYERS.get(parts[1], COMMAND_LINE)


def imported(tree: ast.AST) -> list[tuple[int, str]]:
    """The modules a module imports, at any depth (inside functions too), each with its line. (`from
    vask_server import __version__` is the package's own `__init__`.)"""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
    return found


def upward_imports(root: Path) -> list[str]:
    wrong = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root.parent).with_suffix("")
        module = ".".join(relative.parts).removesuffix(".__init__")
        own = layer(module)
        assert own is not None
        for line, name in imported(ast.parse(path.read_text("utf-8"))):
            target = layer(name)
            if target is not None and target > own:
                wrong.append(f"{path.relative_to(root.parent)}:{line} imports {name}")
    return wrong


def test_every_import_points_down() -> None:
    assert upward_imports(PACKAGE) == []


def test_an_import_of_a_higher_layer_is_found(tmp_path: Path) -> None:
    package = tmp_path / "vask_server"
    (package / "services").mkdir(parents=True)
    (package / "services" / "doctor.py").write_text(
        "from vask_server.core.filetypes import MARKDOWN\n\n\ndef check():\n    from vask_server.web.tls import x\n"
    )
    (package / "core").mkdir()
    (package / "core" / "plan.py").write_text("import vask_server.adapters.store\n")
    assert upward_imports(package) == [
        "vask_server/core/plan.py:1 imports vask_server.adapters.store",
        "vask_server/services/doctor.py:5 imports vask_server.web.tls",
    ]
