"""The generated parts of the docs are what scripts/render_docs.py renders from the checked-in records
and the parser: a figure cannot drift from its record, nor docs/CLI.md from `vask --help`."""

from __future__ import annotations

from pathlib import Path

import pytest

from scripts import render_docs


@pytest.mark.parametrize("doc", list(render_docs.RENDERERS), ids=lambda path: path.name)
def test_the_checked_in_doc_is_what_its_records_render(doc: Path) -> None:
    text = doc.read_text("utf-8")
    assert render_docs.render(doc, text) == text, (
        f"{doc.name} differs from its records: run `uv run python -m scripts.render_docs`"
    )


def test_a_block_is_replaced_and_the_prose_around_it_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    doc = tmp_path / "DOC.md"
    monkeypatch.setitem(render_docs.RENDERERS, doc, {"t": lambda: "| a |\n|---|\n| 1 |"})
    text = "# Title\n\nProse.\n\n<!-- generated: t -->\nstale\n<!-- end -->\n\nMore prose.\n"
    assert render_docs.render(doc, text) == (
        "# Title\n\nProse.\n\n<!-- generated: t -->\n| a |\n|---|\n| 1 |\n<!-- end -->\n\nMore prose.\n"
    )


def test_a_block_without_a_renderer_or_a_renderer_without_a_block_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = tmp_path / "DOC.md"
    monkeypatch.setitem(render_docs.RENDERERS, doc, {"t": lambda: "x"})
    with pytest.raises(ValueError, match="missing"):
        render_docs.render(doc, "no blocks here\n")
    with pytest.raises(ValueError, match="unknown"):
        render_docs.render(doc, "<!-- generated: t -->\n<!-- end -->\n<!-- generated: u -->\n<!-- end -->\n")


def test_the_cli_reference_shows_every_command_and_its_own_arguments() -> None:
    from vask_server.cli.command import COMMANDS

    cli = render_docs.cli()
    for command in COMMANDS:
        assert f"### vask {command}\n" in cli
    token_actions = "{add,list,revoke,allow-apply,deny-apply}"
    assert "`--full`" in cli and "`--split SPLIT`" in cli and f"`[{token_actions}]`" not in cli
    assert f"`{token_actions}`" in cli


def test_the_check_mode_changes_nothing_and_says_what_is_stale(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = tmp_path / "DOC.md"
    doc.write_text("<!-- generated: t -->\nold\n<!-- end -->\n", "utf-8")
    monkeypatch.setattr(render_docs, "RENDERERS", {doc: {"t": lambda: "new"}})
    monkeypatch.setattr(render_docs, "ROOT", tmp_path)
    assert render_docs.main(["--check"]) == 1
    assert "DOC.md" in capsys.readouterr().out and "old" in doc.read_text("utf-8")
    assert render_docs.main([]) == 0
    assert doc.read_text("utf-8") == "<!-- generated: t -->\nnew\n<!-- end -->\n"
    assert render_docs.main(["--check"]) == 0
