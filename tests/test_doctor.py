"""`vask doctor`: each check against the real thing (the fake Ollama over HTTP, a vault and index on disk,
a socket on the port), each problem with its fix, each check at its level (ok, info, warn, fail), and exit 3
only when a check fails: when something stops vask from working."""

from __future__ import annotations

import json
import socket

import pytest

from tests.conftest import RunningFake
from vask_server.cli.command import DOCTOR_FOUND_PROBLEMS, main


def doctor(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict]:
    code = main(["doctor", "--json", *args])
    report = json.loads(capsys.readouterr().out)
    return code, {check["name"]: check for check in report["checks"]} | {"ok": report["ok"]}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def levels(checks: dict) -> dict[str, str]:
    return {name: check["level"] for name, check in checks.items() if name != "ok"}


def test_all_is_well_once_indexed_and_each_check_says_what_it_found(cli_env, vault, capsys):
    assert main(["index", "--vault", str(vault), "--quiet"]) == 0
    capsys.readouterr()
    code, checks = doctor(capsys, "--vault", str(vault), "--port", str(free_port()))
    assert code == 0 and checks["ok"] is True
    assert checks["Ollama (embeddings and answers)"]["detail"].startswith("reachable at http://127.0.0.1:")
    assert checks["embedding model"]["detail"] == "'fake-embed', 96 dimensions"
    assert checks["vault"]["detail"].endswith("66 notes, 1 board, 1 PDF")
    assert checks["index"]["level"] == "ok" and checks["index"]["detail"].endswith("up to date")
    assert levels(checks) == {
        "Ollama (embeddings and answers)": "ok",
        "embedding model": "ok",
        "chat model": "ok",
        "instructions": "info",  # (fake-embed is no model vask knows: it says which settings give it some)
        "vault": "ok",
        "index": "ok",
        "language": "ok",
        "keyword search": "ok",
        "port": "ok",
        "Obsidian plugin": "info",  # (not installed: said, with where to find it; nothing wrong)
        "MCP door": "ok",
    }
    mcp = checks["MCP door"]
    assert f"mcp --vault {vault}" in mcp["detail"] and "answers from 68 notes" in mcp["detail"]
    assert "read-only" in mcp["detail"] and "docs/MCP.md" in mcp["fix"]
    # a changed note: the index is behind, by how many, and how to catch up; vask still works
    (vault / "Inbox note.md").write_text("# New\n\nA new thought.\n")
    code, checks = doctor(capsys, "--vault", str(vault), "--port", str(free_port()))
    assert code == 0 and checks["index"]["level"] == "warn" and checks["index"]["ok"]
    assert "1 note changed since" in checks["index"]["detail"] and "`vask index`" in checks["index"]["fix"]


def test_a_vault_without_the_plugin_and_not_indexed_yet_is_no_failure(cli_env, vault, capsys):
    """The models are there and the vault is readable: nothing stops vask. The missing plugin is a note
    with where to find it, the index not built yet a step with its command; the exit is 0."""
    code, checks = doctor(capsys, "--vault", str(vault), "--port", str(free_port()))
    assert code == 0 and checks["ok"] is True
    plugin = checks["Obsidian plugin"]
    assert plugin["level"] == "info" and plugin["ok"] and "obsidian-plugin/README.md" in plugin["fix"]
    assert checks["index"]["level"] == "warn" and "not built yet" in checks["index"]["detail"]
    assert checks["MCP door"]["level"] == "warn" and "no index to answer from yet" in checks["MCP door"]["detail"]
    assert not (vault.parent / "index" / "lancedb").exists()  # (the checks open nothing for writing)
    assert "fail" not in levels(checks).values()
    code = main(["doctor", "--vault", str(vault), "--port", str(free_port())])
    out = capsys.readouterr().out
    assert code == 0
    assert "info  Obsidian plugin: not installed in this vault" in out
    assert "      see: To ask from inside Obsidian: obsidian-plugin/README.md" in out
    assert "warn  index: not built yet" in out and "      fix: `vask index`" in out
    assert out.rstrip().endswith("the lines marked warn say what would make it work better.")


def test_ollama_down_a_missing_model_and_no_index_each_say_the_fix(cli_env, vault, capsys, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:9")
    code, checks = doctor(capsys, "--vault", str(vault))
    assert code == DOCTOR_FOUND_PROBLEMS and checks["ok"] is False
    down = checks["Ollama (embeddings and answers)"]
    assert down["level"] == "fail" and not down["ok"] and "`ollama serve`" in down["fix"]
    assert "embedding model" not in checks  # (nothing to ask while it is down)
    assert checks["index"]["level"] == "warn" and "not built yet" in checks["index"]["detail"]


def test_a_missing_model_says_ollama_pull(cli_env, vault, capsys, monkeypatch):
    monkeypatch.setenv("VASK_CHAT_MODEL", "qwen2.5:14b")
    code, checks = doctor(capsys, "--vault", str(vault))
    assert code == DOCTOR_FOUND_PROBLEMS
    assert checks["chat model"]["level"] == "fail" and "`ollama pull qwen2.5:14b`" in checks["chat model"]["fix"]
    assert checks["embedding model"]["level"] == "ok"


def test_the_port_another_program_holds_and_the_plugins_version(cli_env, vault, capsys):
    """Another program on `vask serve`'s port stops only a server started by hand there (the command
    line, and the plugin's own server on any free port, go on): a warning with its fix."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        code, checks = doctor(capsys, "--vault", str(vault), "--port", str(port))
    assert code == 0 and checks["port"]["level"] == "warn" and "--port" in checks["port"]["fix"]
    plugin_dir = vault / ".obsidian" / "plugins" / "vask"
    plugin_dir.mkdir(parents=True)
    (plugin_dir / "manifest.json").write_text(json.dumps({"id": "vask", "version": "0.1.0"}))
    _, checks = doctor(capsys, "--vault", str(vault))
    assert checks["Obsidian plugin"]["level"] == "ok"
    assert checks["Obsidian plugin"]["detail"] == "version 0.1.0, server 0.1.0"
    (plugin_dir / "manifest.json").write_text(json.dumps({"id": "vask", "version": "0.3.0"}))
    code, checks = doctor(capsys, "--vault", str(vault))
    assert (
        checks["Obsidian plugin"]["level"] == "warn" and "not the same release" in checks["Obsidian plugin"]["detail"]
    )
    assert code == 0


def test_tls_files_are_checked_when_set(cli_env, vault, capsys, tmp_path):
    (tmp_path / "cert.pem").write_text("not a certificate")
    (tmp_path / "key.pem").write_text("not a key")
    code, checks = doctor(
        capsys, "--vault", str(vault), "--tls-cert", str(tmp_path / "cert.pem"), "--tls-key", str(tmp_path / "key.pem")
    )
    assert code == DOCTOR_FOUND_PROBLEMS and checks["TLS"]["level"] == "fail" and "PEM" in checks["TLS"]["fix"]


def test_the_text_report_marks_each_level_and_the_fixes(cli_env, vault, capsys, fake_ollama: RunningFake):
    fake_ollama.fake.chat_models = set()
    code = main(["doctor", "--vault", str(vault), "--port", str(free_port())])
    out = capsys.readouterr().out
    assert code == DOCTOR_FOUND_PROBLEMS
    assert "ok    Ollama (embeddings and answers): reachable at" in out
    assert "FAIL  chat model: 'fake-chat' is not available" in out and "      fix: `ollama pull fake-chat`" in out
    assert "warn  index: not built yet" in out and "      fix: `vask index`" in out
    assert "info  Obsidian plugin: not installed" in out
    assert out.rstrip().endswith("Fix the lines marked FAIL above, then run `vask doctor` again.")


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
    assert code == 0 and checks["index"]["level"] == "warn" and "1 note changed since" in checks["index"]["detail"]


def test_the_instructions_in_use_and_where_they_come_from(cli_env, vault, capsys, monkeypatch, fake_ollama):
    """A model vask knows gets its card's instructions; a setting overrides them; a model vask does not
    know gets none, and doctor says which settings give it some. An index whose passages were embedded
    with another instruction than the configured one is behind: `vask index` builds it anew."""
    fake_ollama.fake.embed_models["multilingual-e5-small"] = 96
    monkeypatch.setenv("VASK_EMBED_MODEL", "multilingual-e5-small")
    assert main(["index", "--vault", str(vault), "--quiet"]) == 0
    capsys.readouterr()
    code, checks = doctor(capsys, "--vault", str(vault), "--port", str(free_port()))
    assert code == 0 and checks["instructions"]["level"] == "ok"
    assert checks["instructions"]["detail"] == (
        "questions 'query: ', passages 'passage: ' (multilingual-e5-small's card)"
    )
    assert checks["index"]["level"] == "ok"
    code, checks = doctor(capsys, "--vault", str(vault), "--port", str(free_port()), "--query-prefix", "Find: ")
    assert checks["instructions"]["detail"] == "questions 'Find: ' (VASK_QUERY_PREFIX), passages 'passage: ' (its card)"
    assert checks["index"]["level"] == "ok"  # (a query instruction embeds nothing again)
    monkeypatch.setenv("VASK_DOCUMENT_PREFIX", "none")
    code, checks = doctor(capsys, "--vault", str(vault), "--port", str(free_port()))
    assert code == 0 and checks["index"]["level"] == "warn"
    assert checks["index"]["detail"] == (
        "its passages were embedded with the instruction 'passage: ', not the configured none"
    )
    assert "`vask index` builds it anew" in checks["index"]["fix"]
    # `vask status` says the same
    assert main(["status", "--vault", str(vault)]) == 0
    out = capsys.readouterr().out
    assert "instructions: questions 'query: ' (its card), passages none (VASK_DOCUMENT_PREFIX)" in out
    assert "`vask index` builds it anew" in out
    monkeypatch.delenv("VASK_DOCUMENT_PREFIX")
    monkeypatch.setenv("VASK_EMBED_MODEL", "fake-embed")
    code, checks = doctor(capsys, "--vault", str(vault), "--port", str(free_port()))
    assert checks["instructions"]["level"] == "info"
    assert checks["instructions"]["detail"] == "none (fake-embed is not a model vask knows)"
    assert "VASK_QUERY_PREFIX" in checks["instructions"]["fix"]
