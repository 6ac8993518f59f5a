"""The README is the front door: every setting, command and endpoint is named there, in compact tables
(the settings grouped, each with its flag and default), and docs/REFERENCE.md has each in full; both
are held to the code, and every relative link in the README and docs/ must lead to a file (and a
heading) that exists. docs/CLI.md is generated from the parser (tests/test_render_docs.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from vask_server.cli.command import COMMANDS, main
from vask_server.config import SETTINGS, SettingSpec
from vask_server.web.openapi import openapi_document

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text("utf-8")
REFERENCE = (ROOT / "docs" / "REFERENCE.md").read_text("utf-8")
DOCS = {"README": README, "REFERENCE": REFERENCE}


def section(title: str, text: str = README) -> str:
    """The text of one `## title` section."""
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert match, f"no section '## {title}'"
    return match.group(1)


def table(text: str, first_header: str) -> list[dict[str, str]]:
    """The rows of the Markdown table whose header starts with `first_header`, as {header: cell}."""
    lines = text.splitlines()
    start = next(n for n, line in enumerate(lines) if line.startswith("|") and cells(line)[0] == first_header)
    headers = cells(lines[start])
    rows = []
    for line in lines[start + 2 :]:  # after the header and its |---| line, up to the table's end
        if not line.startswith("|"):
            break
        row = cells(line)
        assert len(row) == len(headers), f"table row has {len(row)} cells, not {len(headers)}: {line}"
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


def settings_rows(doc: str) -> list[dict[str, str]]:
    return table(section("Settings", DOCS[doc]), "Env var")


def row_for(spec: SettingSpec, doc: str = "REFERENCE") -> dict[str, str]:
    rows = [row for row in settings_rows(doc) if code(row["Env var"]) == spec.env]
    assert len(rows) == 1, f"{doc} has {len(rows)} settings rows for {spec.env}"
    return rows[0]


def test_the_settings_table_has_a_row_for_each_setting_and_no_other() -> None:
    doc = "REFERENCE"
    assert sorted(code(row["Env var"]) for row in settings_rows(doc)) == sorted(spec.env for spec in SETTINGS)


def test_the_readme_names_every_setting_with_its_flag_and_no_other() -> None:
    shown = section("Settings")
    named = re.findall(r"`((?:VASK|OLLAMA)_[A-Z_]+)` \(`(--[a-z-]+)`", shown)
    assert sorted(named) == sorted((spec.env, spec.flag) for spec in SETTINGS)
    assert set(re.findall(r"`((?:VASK|OLLAMA)_[A-Z_]+)`", shown)) == {spec.env for spec in SETTINGS}


@pytest.mark.parametrize("spec", SETTINGS, ids=lambda spec: spec.env)
def test_a_default_the_readme_shows_is_the_one_that_applies(spec: SettingSpec) -> None:
    match = re.search(rf"`{spec.env}` \(`{spec.flag}`(?:, `([^`]+)`)?", section("Settings"))
    assert match, f"README names {spec.env} without its flag"
    if spec.default is None or spec.default in ((), ""):
        assert match.group(1) is None, f"README gives {spec.env} a default it does not have"
        return
    assert match.group(1), f"README does not give {spec.env}'s default"
    if "…" in match.group(1):  # (a long list, shortened)
        return
    documented = spec.parse(match.group(1))
    assert documented == spec.default and type(documented) is type(spec.default), match.group(1)


@pytest.mark.parametrize("spec", SETTINGS, ids=lambda spec: spec.env)
def test_each_settings_row_gives_the_flag_and_the_default_that_applies(spec: SettingSpec) -> None:
    doc = "REFERENCE"
    row = row_for(spec, doc)
    assert code(row["Flag"]) == spec.flag
    if spec.default is None or spec.default in ((), ""):
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
def test_each_command_takes_as_flags_the_settings_the_reference_says(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    documented = {spec.flag for spec in SETTINGS if command in commands_in(row_for(spec)["Flag on"])}
    assert setting_flags_in_help(command, capsys) == documented


@pytest.mark.parametrize("doc", DOCS)
def test_the_commands_table_shows_only_flags_the_command_takes(doc: str, capsys: pytest.CaptureFixture[str]) -> None:
    for row in table(section("Commands", DOCS[doc]), "Command"):
        usage = row["Command"]
        (command,) = {name for name in re.findall(r"`vask (\w+)", usage) if name in COMMANDS}
        with pytest.raises(SystemExit):
            main([command, "--help"])
        accepted = set(re.findall(r"^ {2}(--[a-z-]+)", capsys.readouterr().out, re.M))
        assert set(re.findall(r"--[a-z-]+", usage)) <= accepted, usage


@pytest.mark.parametrize("doc", DOCS)
def test_every_command_is_in_the_commands_table(doc: str) -> None:
    usages = " ".join(row["Command"] for row in table(section("Commands", DOCS[doc]), "Command"))
    for command in COMMANDS:
        assert f"`vask {command}" in usages, f"{doc} does not document `vask {command}`"


def endpoints_in(doc: str) -> list[str]:
    """The `METHOD /path` of each row of a doc's endpoint table (a query string left off)."""
    rows = table(section("HTTP API", DOCS[doc]), "Endpoint")
    return [code(row["Endpoint"]).split("?", 1)[0] for row in rows]


@pytest.mark.parametrize("doc", DOCS)
def test_the_endpoint_table_has_a_row_for_each_endpoint_and_no_other(doc: str) -> None:
    served = [
        f"{method.upper()} {path}"
        for path, item in openapi_document()["paths"].items()
        for method in item
        if method != "options"  # (every endpoint answers CORS preflights)
    ]
    assert sorted(endpoints_in(doc)) == sorted(served)


def test_eval_compare_help_names_every_configuration_it_runs(capsys: pytest.CaptureFixture[str]) -> None:
    from vask_server.services.query.evaluate import COMPARE_CONFIGS

    with pytest.raises(SystemExit):
        main(["eval", "--help"])
    shown = " ".join(re.sub(r"-\n\s+", "-", capsys.readouterr().out).split())  # (argparse wraps at hyphens)
    for name in COMPARE_CONFIGS:
        assert re.search(rf"(?<![\w+-]){re.escape(name)}(?![\w+-])", shown), name


LINKED_DOCS = [
    ROOT / "README.md",
    ROOT / "CHANGELOG.md",
    *sorted((ROOT / "docs").rglob("*.md")),
    ROOT / "tests" / "eval" / "README.md",
]


def prose(text: str) -> str:
    """Markdown without its fenced code and code spans, where `](` or `#` are not links or headings."""
    return re.sub(r"`[^`\n]*`", "", re.sub(r"^```.*?^```", "", text, flags=re.M | re.S))


def anchors(path: Path) -> set[str]:
    """The heading anchors GitHub makes for a Markdown file (a repeated heading gets -1, -2, ...)."""
    made: set[str] = set()
    counts: dict[str, int] = {}
    for heading in re.findall(r"^#{1,6} +(.+?) *$", prose(path.read_text("utf-8")), re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        made.add(f"{slug}-{counts[slug]}" if slug in counts else slug)
        counts[slug] = counts.get(slug, 0) + 1
    return made


def relative_links(path: Path) -> list[str]:
    targets = re.findall(r"\]\(([^)\s]+)\)", prose(path.read_text("utf-8")))
    return [target for target in targets if not re.match(r"[a-z][a-z0-9+.-]*:", target)]


@pytest.mark.parametrize("doc", LINKED_DOCS, ids=lambda path: path.name)
def test_every_relative_link_leads_to_a_file_and_heading_that_exist(doc: Path) -> None:
    for target in relative_links(doc):
        file, _, anchor = target.partition("#")
        linked = (doc.parent / file).resolve() if file else doc
        assert linked.exists(), f"{doc.name}: {target} leads to no file"
        if anchor and linked.suffix == ".md":
            assert anchor in anchors(linked), f"{doc.name}: {target} names no heading of {linked.name}"


def test_the_readme_links_every_docs_page() -> None:
    linked = {(ROOT / target.partition("#")[0]).resolve() for target in relative_links(ROOT / "README.md")}
    assert {page.resolve() for page in (ROOT / "docs").glob("*.md")} <= linked


# A path of the machine a figure was measured on (a scratch folder, a worktree, a home folder) means
# nothing to a reader and says who ran it where: committed docs and records name a vault by its folder's
# name, a scratch folder as `$W`. (`/tmp/vask-bench` is the benchmark's own default `--work`.)
MACHINE_PATH = re.compile(r"(?<![\w.~$/-])/(?:work|home|root|Users|mnt|tmp)/(?!vask-bench\b)[^\s`\"')]*")
COMMITTED_DOCS = [
    ROOT / "README.md",
    ROOT / "CHANGELOG.md",
    *sorted((ROOT / "docs").rglob("*.md")),
    *sorted((ROOT / "docs").rglob("*.json")),
    *sorted((ROOT / "tests" / "eval").rglob("*.md")),
]


def test_no_committed_doc_or_record_names_a_path_of_the_machine_that_made_it() -> None:
    found = [
        f"{path.relative_to(ROOT)}: {match}"
        for path in COMMITTED_DOCS
        for match in MACHINE_PATH.findall(path.read_text("utf-8"))
    ]
    assert not found, found
