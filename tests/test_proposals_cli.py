"""`vask proposals` (list, show, apply, reject, undo) and `vask token allow-apply`, as a person runs them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vask_server.adapters import token as tokens
from vask_server.adapters.vault import Vault
from vask_server.cli.command import main, normalise_argv
from vask_server.config import load_settings
from vask_server.core.proposals import ChangeRequest
from vask_server.services.options import index_options
from vask_server.services.proposals import ProposalService


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def place(tmp_path: Path) -> tuple[Path, tuple[str, ...]]:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Bread.md").write_text("# Bread\n\nI keep a sourdough starter.\n", encoding="utf-8")
    (vault / "Sourdough.md").write_text("# Sourdough\n\nFlour and water.\n", encoding="utf-8")
    return vault, ("--vault", str(vault), "--index-dir", str(tmp_path / "index"))


def service(vault: Path, index_dir: Path) -> ProposalService:
    settings = load_settings(env={}, vault=vault, index_dir=index_dir)
    return ProposalService(Vault(vault), index_dir, index_options(settings))


def test_list_show_apply_undo_reject(place, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vault, where = place
    code, out, _ = run(capsys, "proposals", *where)
    assert code == 0 and out.strip() == "No proposed changes are waiting."
    queue = service(vault, tmp_path / "index")
    link, _ = queue.propose_link("Bread.md", "Sourdough.md", device="default")
    edit, _ = queue.propose(
        ChangeRequest("edit", "Sourdough.md", content="# Sourdough\n\nRye.\n", source="bot"), device="x"
    )
    code, out, _ = run(capsys, "proposals", "list", *where)
    assert code == 0 and link.proposal.id in out and edit.proposal.id in out and "2 waiting" in out
    assert "Link [[Sourdough|sourdough]] in Bread, at the words “sourdough”" in out
    code, out, _ = run(capsys, "proposals", "show", link.proposal.id[:5], *where)
    assert code == 0 and "-I keep a sourdough starter.\n+I keep a [[Sourdough|sourdough]] starter.\n" in out

    code, out, _ = run(capsys, "proposals", "apply", link.proposal.id, *where)
    assert code == 0 and out.startswith(f"applied  {link.proposal.id}")
    assert (vault / "Bread.md").read_text() == "# Bread\n\nI keep a [[Sourdough|sourdough]] starter.\n"
    code, out, _ = run(capsys, "proposals", "undo", link.proposal.id, *where)
    assert code == 0 and (vault / "Bread.md").read_text() == "# Bread\n\nI keep a sourdough starter.\n"
    code, _, err = run(capsys, "proposals", "apply", link.proposal.id, *where)
    assert code == 2 and "error: Proposal" in err and "undone already" in err

    (vault / "Sourdough.md").write_text("# Sourdough\n\nFlour, water and time.\n", encoding="utf-8")
    code, out, _ = run(capsys, "proposals", "--json", *where)
    (row,) = json.loads(out)["proposals"]
    assert row["id"] == edit.proposal.id and row["state"] == "stale"
    code, out, err = run(capsys, "proposals", "apply", "--source", "bot", *where)
    assert code == 2 and "0 applied, 1 left waiting" in out and "changed since" in out
    assert (vault / "Sourdough.md").read_text() == "# Sourdough\n\nFlour, water and time.\n"
    code, out, _ = run(capsys, "proposals", "reject", "--source", "bot", *where)
    assert code == 0 and out.startswith(f"rejected  {edit.proposal.id}")
    code, out, _ = run(capsys, "proposals", "list", "--all", *where)
    assert "rejected" in out and "undone" in out
    code, _, err = run(capsys, "proposals", "apply", *where)
    assert code == 2 and "needs proposal ids or --source" in err


def test_a_question_that_starts_with_proposals_is_asked() -> None:
    assert normalise_argv(["proposals", "apply", "abcd"])[:2] == ["proposals", "apply"]
    assert normalise_argv(["proposals"])[0] == "proposals"
    assert normalise_argv(["proposals", "for", "my", "garden?"])[0] == "ask"
    assert normalise_argv(["token", "allow-apply", "phone"])[:2] == ["token", "allow-apply"]


def test_a_device_is_allowed_to_apply_and_stopped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    where = ("--vault", str(tmp_path), "--index-dir", str(tmp_path / "index"))
    run(capsys, "token", *where)
    run(capsys, "token", "add", "phone", *where)
    code, out, _ = run(capsys, "token", "add", "laptop", "--may-apply", *where)
    registry = tokens.TokenRegistry(tmp_path / "index")
    assert registry.may_apply("default") and registry.may_apply("laptop") and not registry.may_apply("phone")
    code, out, _ = run(capsys, "token", "allow-apply", "phone", *where)
    assert code == 0 and "may now apply" in out and registry.may_apply("phone")
    code, out, _ = run(capsys, "token", "list", "--json", *where)
    assert {d["name"]: d["may_apply"] for d in json.loads(out)["devices"]} == {
        "default": True,
        "laptop": True,
        "phone": True,
    }
    code, out, _ = run(capsys, "token", "deny-apply", "phone", *where)
    assert code == 0 and not registry.may_apply("phone")
    code, out, _ = run(capsys, "token", "list", *where)
    assert "applies changes" in out and [line.split()[-1] for line in out.splitlines()[1:]] == ["yes", "yes", "no"]
    code, _, err = run(capsys, "token", "allow-apply", "default", *where)
    assert code == 2 and "always may" in err
    code, _, err = run(capsys, "token", "allow-apply", "tablet", *where)
    assert code == 2 and "No device named 'tablet'" in err
