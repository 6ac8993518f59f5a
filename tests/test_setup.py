"""What the README's Quick start promises: `scripts/test` and `scripts/demo` install uv when missing,
check Node.js and Chromium before running anything, and say what to install when they cannot.

The scripts run for real, with stand-ins for the installers on PATH (no network): a fake `pipx`
that "installs" a recording uv stub, fake `node`, `npm`, `python3` and `apt-get`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text("utf-8")
NODE_MIN = json.loads((ROOT / "obsidian-plugin" / "package.json").read_text("utf-8"))["engines"]["node"]

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="the scripts are bash")


def quick_start() -> str:
    match = re.search(r"^## Quick start\n(.*?)(?=^## )", README, re.M | re.S)
    assert match
    return match.group(1)


def fake(bin_dir: Path, name: str, body: str) -> None:
    path = bin_dir / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)


@pytest.fixture
def sandbox(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A HOME with nothing installed and a PATH of fakes in front of the system's basic tools."""
    home, bin_dir = tmp_path / "home", tmp_path / "bin"
    home.mkdir()
    bin_dir.mkdir()
    log = tmp_path / "calls.log"
    # every fake appends its command line, so a test can see what ran, and in which order
    fake(bin_dir, "apt-get", f'echo "apt-get $*" >> {log}; exit 100')
    fake(bin_dir, "python3", f'echo "python3 $*" >> {log}; echo "error: externally-managed-environment" >&2; exit 1')
    fake(bin_dir, "node", f'echo "node $*" >> {log}; echo v18.20.4')
    fake(bin_dir, "npm", f'echo "npm $*" >> {log}')
    fake(bin_dir, "chromium", "exit 0")
    env = {
        "HOME": str(home),
        "PATH": f"{bin_dir}:/usr/bin:/bin",  # (no uv, pipx or pyenv there)
        "LANG": "C.UTF-8",
        "CALLS": str(log),
    }
    return tmp_path, env


def run(script: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(ROOT / script)], env=env, capture_output=True, text=True, timeout=60, cwd=ROOT)


def calls(tmp_path: Path) -> list[str]:
    log = tmp_path / "calls.log"
    return log.read_text().splitlines() if log.exists() else []


def add_pipx(tmp_path: Path) -> None:
    """A pipx whose `install uv` puts a uv stub (recording its calls) into PIPX_BIN_DIR."""
    log = tmp_path / "calls.log"
    uv_stub = f'#!/bin/sh\\necho "uv $*" >> {log}\\n[ "$1" = --version ] && echo "uv 0.0.0-stub"\\nexit 0\\n'
    fake(
        tmp_path / "bin",
        "pipx",
        f'echo "pipx $*" >> {log}; mkdir -p "$PIPX_BIN_DIR"; printf \'{uv_stub}\' > "$PIPX_BIN_DIR/uv"; '
        'chmod +x "$PIPX_BIN_DIR/uv"',
    )


@pytest.mark.parametrize("script", ["scripts/test", ".ci/run"])
def test_test_installs_uv_then_stops_on_an_old_node_before_running_anything(
    sandbox: tuple[Path, dict[str, str]], script: str
) -> None:
    tmp_path, env = sandbox
    add_pipx(tmp_path)
    result = run(script, env)
    assert result.returncode == 1, result.stderr
    assert (tmp_path / "home" / ".local" / "bin" / "uv").is_file()  # where pipx put it, and on PATH
    assert "installed uv 0.0.0-stub" in result.stderr and ".local/bin to your PATH" in result.stderr
    assert f"need Node.js >= {NODE_MIN.lstrip('>=')}" in result.stderr and "v18.20.4" in result.stderr
    ran = calls(tmp_path)
    assert ran[0] == "pipx install --quiet uv"
    assert not [line for line in ran if line.startswith(("uv sync", "uv run", "npm ci"))]  # nothing ran
    assert not [line for line in ran if line.startswith("apt-get")]


def test_test_runs_the_suite_once_everything_is_there(sandbox: tuple[Path, dict[str, str]]) -> None:
    tmp_path, env = sandbox
    add_pipx(tmp_path)
    fake(tmp_path / "bin", "node", "echo v20.19.0")
    result = run("scripts/test", env)
    assert result.returncode == 0, result.stderr
    ran = [line for line in calls(tmp_path) if line.startswith(("uv", "npm"))]
    assert ran[0] == "uv --version" and ran[1] == "uv sync --frozen --quiet"
    assert "uv run --frozen mypy" in ran and "npm ci --no-audit --no-fund --loglevel=error" in ran
    assert ran[-1] == "uv run --frozen pytest"


def test_a_missing_chromium_is_named_before_anything_runs(sandbox: tuple[Path, dict[str, str]]) -> None:
    tmp_path, env = sandbox
    add_pipx(tmp_path)
    fake(tmp_path / "bin", "node", "echo v22.1.0")
    result = run("scripts/test", {**env, "CHROMIUM_PATH": str(tmp_path / "no-chromium")})
    assert result.returncode == 1
    assert "CHROMIUM_PATH=" in result.stderr and "is not an executable" in result.stderr
    assert not [line for line in calls(tmp_path) if line.startswith("uv sync")]


@pytest.mark.parametrize("script", ["scripts/test", "scripts/demo"])
def test_without_any_way_to_install_uv_the_scripts_say_what_to_install(
    sandbox: tuple[Path, dict[str, str]], script: str
) -> None:
    tmp_path, env = sandbox
    result = run(script, env)
    assert result.returncode == 1
    assert "could not install uv" in result.stderr and "pipx install uv" in result.stderr
    ran = calls(tmp_path)
    # what it tried: a user install, then a private venv (both refused here), and apt-get only as root
    assert "python3 -m pip install --user --quiet uv" in ran
    assert any(line.startswith("python3 -m venv ") for line in ran)
    assert any(line.startswith("apt-get") for line in ran) == (os.geteuid() == 0)


def test_the_quick_start_states_what_the_scripts_need() -> None:
    text = " ".join(quick_start().split())
    requires_python = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]["requires-python"]
    assert f"Python ≥ {requires_python.lstrip('>=')}" in text
    assert f"Node.js ≥ {NODE_MIN.lstrip('>=')}" in text and "Chromium" in text
    assert "NODE_MIN=" + NODE_MIN.lstrip(">=") in (ROOT / "scripts" / "setup.sh").read_text("utf-8")
    assert "pipx" in text and "~/.local/bin" in text
    for script in ("scripts/demo", "scripts/test"):
        assert script in text and os.access(ROOT / script, os.X_OK)
    # CI runs the README's command and nothing else
    ci = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if line and not line.startswith("#")]
    assert ci[-1] == "exec scripts/test" and not [line for line in ci if "install" in line]
