"""The README is the front door: every setting and command must be documented there, as it is."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from vask_server.cli import COMMANDS, main
from vask_server.config import SETTINGS, SettingSpec

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text("utf-8")


def section(title: str) -> str:
    """The text of one `## title` section."""
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", README, re.M | re.S)
    assert match, f"README has no section '## {title}'"
    return match.group(1)


def table(text: str, first_header: str) -> list[dict[str, str]]:
    """The rows of the Markdown table whose header starts with `first_header`, as {header: cell}."""
    lines = [line for line in text.splitlines() if line.startswith("|")]
    start = next(n for n, line in enumerate(lines) if cells(line)[0] == first_header)
    headers = cells(lines[start])
    rows = []
    for line in lines[start + 2 :]:  # after the header and its |---| line
        row = cells(line)
        assert len(row) == len(headers), f"README table row has {len(row)} cells, not {len(headers)}: {line}"
        rows.append(dict(zip(headers, row, strict=True)))
    return rows


def cells(line: str) -> list[str]:
    return [cell.strip().replace("\\|", "|") for cell in re.split(r"(?<!\\)\|", line.strip())[1:-1]]


def code(cell: str) -> str:
    """The text of a cell that must be exactly one `code span`."""
    match = re.fullmatch(r"`([^`]+)`", cell)
    assert match, f"expected a single `code` cell, got {cell!r}"
    return match.group(1)


def commands_in(cell: str) -> set[str]:
    if cell == "all commands":
        return set(COMMANDS)
    names = {name.strip() for name in cell.split(",")}
    assert names <= set(COMMANDS), f"unknown commands in {cell!r}"
    return names


SETTINGS_ROWS = table(section("Settings"), "Env var")


def row_for(spec: SettingSpec) -> dict[str, str]:
    rows = [row for row in SETTINGS_ROWS if code(row["Env var"]) == spec.env]
    assert len(rows) == 1, f"README has {len(rows)} settings rows for {spec.env}"
    return rows[0]


def test_the_settings_table_has_a_row_for_each_setting_and_no_other() -> None:
    assert sorted(code(row["Env var"]) for row in SETTINGS_ROWS) == sorted(spec.env for spec in SETTINGS)


@pytest.mark.parametrize("spec", SETTINGS, ids=lambda spec: spec.env)
def test_each_settings_row_gives_the_flag_and_the_default_that_applies(spec: SettingSpec) -> None:
    row = row_for(spec)
    assert code(row["Flag"]) == spec.flag
    if spec.default is None or spec.default == ():
        assert row["Default"] == "(none)"
    else:
        documented = spec.parse(code(row["Default"]))  # compared as values: "0.25" is not 0.2
        assert documented == spec.default and type(documented) is type(spec.default), row["Default"]


def setting_flags_in_help(command: str, capsys: pytest.CaptureFixture[str]) -> set[str]:
    with pytest.raises(SystemExit) as exited:
        main([command, "--help"])
    assert exited.value.code == 0
    shown = set(re.findall(r"^ {2}(--[a-z-]+)", capsys.readouterr().out, re.M))
    return shown & {spec.flag for spec in SETTINGS}


@pytest.mark.parametrize("command", COMMANDS)
def test_each_command_takes_as_flags_the_settings_the_readme_says(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    documented = {spec.flag for spec in SETTINGS if command in commands_in(row_for(spec)["Flag on"])}
    assert setting_flags_in_help(command, capsys) == documented


def test_the_commands_table_shows_only_flags_the_command_takes(capsys: pytest.CaptureFixture[str]) -> None:
    for row in table(section("Commands"), "Command"):
        usage = row["Command"]
        (command,) = {name for name in re.findall(r"`vask (\w+)", usage) if name in COMMANDS}
        with pytest.raises(SystemExit):
            main([command, "--help"])
        accepted = set(re.findall(r"^ {2}(--[a-z-]+)", capsys.readouterr().out, re.M))
        assert set(re.findall(r"--[a-z-]+", usage)) <= accepted, usage


def test_every_command_is_in_the_readme() -> None:
    for command in COMMANDS:
        assert f"`vask {command}" in README, f"README does not document `vask {command}`"


def test_eval_compare_help_names_every_configuration_it_runs(capsys: pytest.CaptureFixture[str]) -> None:
    from vask_server.services.evaluate import COMPARE_CONFIGS

    with pytest.raises(SystemExit):
        main(["eval", "--help"])
    shown = " ".join(re.sub(r"-\n\s+", "-", capsys.readouterr().out).split())  # (argparse wraps at hyphens)
    for name in COMPARE_CONFIGS:
        assert re.search(rf"(?<![\w+-]){re.escape(name)}(?![\w+-])", shown), name
