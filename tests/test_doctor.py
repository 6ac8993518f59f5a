"""`vask doctor`: each check against the real thing (the fake Ollama over HTTP, a vault and index on disk,
a socket on the port), each problem with its fix, exit 0 only when all is well."""

from __future__ import annotations

import json
import socket

import pytest

from tests.conftest import RunningFake
from vask_server.cli import DOCTOR_FOUND_PROBLEMS, main


def doctor(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict]:
    code = main(["doctor", "--json", *args])
    report = json.loads(capsys.readouterr().out)
    return code, {check["name"]: check for check in report["checks"]} | {"ok": report["ok"]}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_all_is_well_once_indexed_and_each_check_says_what_it_found(cli_env, vault, capsys):
    assert main(["index", "--vault", str(vault), "--quiet"]) == 0
    capsys.readouterr()
    code, checks = doctor(capsys, "--vault", str(vault), "--port", str(free_port()))
    assert code == 0 and checks["ok"] is True
    assert checks["Ollama (embeddings and answers)"]["detail"].startswith("reachable at http://127.0.0.1:")
    assert checks["embedding model"]["detail"] == "'fake-embed', 96 dimensions"
    assert checks["vault"]["detail"].endswith("66 notes, 1 board, 1 PDF")
    assert checks["index"]["ok"] and checks["index"]["detail"].endswith("up to date")
    assert checks["port"]["ok"]
    plugin = checks["Obsidian plugin"]
    assert not plugin["ok"] and not plugin["required"]  # (not installed: said, not a failure)
    # a changed note: the index is behind, by how many, and how to catch up
    (vault / "Inbox note.md").write_text("# New\n\nA new thought.\n")
    code, checks = doctor(capsys, "--vault", str(vault), "--port", str(free_port()))
    assert code == DOCTOR_FOUND_PROBLEMS and "1 note changed since" in checks["index"]["detail"]
    assert "`vask index`" in checks["index"]["fix"]


def test_ollama_down_a_missing_model_and_no_index_each_say_the_fix(cli_env, vault, capsys, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:9")
    code, checks = doctor(capsys, "--vault", str(vault))
    assert code == DOCTOR_FOUND_PROBLEMS
    down = checks["Ollama (embeddings and answers)"]
    assert not down["ok"] and "`ollama serve`" in down["fix"]
    assert "embedding model" not in checks  # (nothing to ask while it is down)
    assert not checks["index"]["ok"] and "not built yet" in checks["index"]["detail"]


def test_a_missing_model_says_ollama_pull(cli_env, vault, capsys, monkeypatch):
    monkeypatch.setenv("VASK_CHAT_MODEL", "qwen2.5:14b")
    code, checks = doctor(capsys, "--vault", str(vault))
    assert code == DOCTOR_FOUND_PROBLEMS
    assert not checks["chat model"]["ok"] and "`ollama pull qwen2.5:14b`" in checks["chat model"]["fix"]
    assert checks["embedding model"]["ok"]


def test_the_port_another_program_holds_and_the_plugins_version(cli_env, vault, capsys):
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        _, checks = doctor(capsys, "--vault", str(vault), "--port", str(port))
    assert not checks["port"]["ok"] and "--port" in checks["port"]["fix"]
    plugin_dir = vault / ".obsidian" / "plugins" / "vask"
    plugin_dir.mkdir(parents=True)
    (plugin_dir / "manifest.json").write_text(json.dumps({"id": "vask", "version": "0.1.0"}))
    _, checks = doctor(capsys, "--vault", str(vault))
    assert checks["Obsidian plugin"]["ok"] and checks["Obsidian plugin"]["detail"] == "version 0.1.0, server 0.1.0"
    (plugin_dir / "manifest.json").write_text(json.dumps({"id": "vask", "version": "0.3.0"}))
    _, checks = doctor(capsys, "--vault", str(vault))
    assert not checks["Obsidian plugin"]["ok"] and "not the same release" in checks["Obsidian plugin"]["detail"]


def test_tls_files_are_checked_when_set(cli_env, vault, capsys, tmp_path):
    (tmp_path / "cert.pem").write_text("not a certificate")
    (tmp_path / "key.pem").write_text("not a key")
    code, checks = doctor(
        capsys, "--vault", str(vault), "--tls-cert", str(tmp_path / "cert.pem"), "--tls-key", str(tmp_path / "key.pem")
    )
    assert code == DOCTOR_FOUND_PROBLEMS and not checks["TLS"]["ok"] and "PEM" in checks["TLS"]["fix"]


def test_the_text_report_marks_problems_and_their_fixes(cli_env, vault, capsys, fake_ollama: RunningFake):
    code = main(["doctor", "--vault", str(vault)])
    out = capsys.readouterr().out
    assert code == DOCTOR_FOUND_PROBLEMS
    assert "ok  Ollama (embeddings and answers): reachable at" in out
    assert "!!  index: not built yet" in out and "    fix: `vask index`" in out
    assert out.rstrip().endswith("then run `vask doctor` again.")


def test_a_note_that_opted_out_is_not_counted_as_behind(cli_env, vault, capsys):
    """A note with `vask: exclude` has no record in the index (nothing of it is kept), as every chat
    the plugin saves: the index is up to date all the same, and a real change is still counted."""
    (vault / "Saved chat.md").write_text("---\nvask: exclude\n---\n# A chat\n\nPrivate words.\n")
    assert main(["index", "--vault", str(vault), "--quiet"]) == 0
    capsys.readouterr()
    code, checks = doctor(capsys, "--vault", str(vault), "--port", str(free_port()))
    assert code == 0 and checks["index"]["detail"].endswith("up to date")
    (vault / "Inbox note.md").write_text("# New\n\nA new thought.\n")
    code, checks = doctor(capsys, "--vault", str(vault), "--port", str(free_port()))
    assert code == DOCTOR_FOUND_PROBLEMS and "1 note changed since" in checks["index"]["detail"]
