"""Settings: one default per setting, every value validated, every expected failure `error:` + `hint:`
and exit code 2, through the real `vask` entry point."""

from __future__ import annotations

import dataclasses
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from vask_server.cli.command import main
from vask_server.config import CHECKED_WHERE_USED, SETTINGS, Settings, SettingSpec, load_settings
from vask_server.errors import ConfigError

ROOT = Path(__file__).resolve().parent.parent


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def assert_clear_error(code: int, err: str, *expected: str) -> None:
    assert code == 2, err
    lines = err.strip().splitlines()
    assert lines[0].startswith("error: ") and lines[1].startswith("hint: "), err
    assert "Traceback" not in err
    for text in expected:
        assert text in err


def test_each_default_is_written_once_in_the_settings_dataclass() -> None:
    # A spec cannot carry a default of its own: it reads the dataclass field's.
    assert "default" not in {f.name for f in dataclasses.fields(SettingSpec)}
    assert [spec.name for spec in SETTINGS] == [f.name for f in dataclasses.fields(Settings)]
    defaults = Settings()
    for spec in SETTINGS:
        assert spec.default == getattr(defaults, spec.name)
        assert type(spec.default) is type(getattr(defaults, spec.name))
    assert load_settings(env={}) == defaults


def test_the_help_shows_the_default_that_applies(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    for spec in SETTINGS:
        assert f"env {spec.env}; default {spec.default}]" in out


# One invalid value for every setting that has a rule; the folders are checked where they are used.
BAD_VALUES = {
    "provider": ["lmstudio", "openai-compatible"],
    "chat_provider": ["vllm"],
    "openai_base_url": ["localhost:1234", "ftp://127.0.0.1/v1", "http://:8000/v1", "http://127.0.0.1:99999/v1"],
    "chat_base_url": ["gpu-box:8000"],
    "openai_api_key": ["secret-value with spaces"],
    "chat_api_key": ["secret-value with\ttab"],
    "ollama_host": ["ftp://127.0.0.1:11434", "127.0.0.1:99999", "http://", "http://no host"],
    "embed_model": ["two words"],
    "chat_model": [" "],
    "chat_context": ["1024", "lots"],
    "top_k": ["0", "six"],
    "min_similarity": ["1.5", "-0.1"],
    "decline_sigmas": ["9"],
    "chunk_tokens": ["8"],
    "chunk_max_chars": ["100"],
    "max_note_bytes": ["0"],
    "embed_batch_size": ["0"],
    "embed_concurrency": ["0"],
    "ollama_timeout": ["0", "-5", "soon"],
    "ollama_retries": ["-1"],
    "host": ["not a host", "-bad-"],
    "port": ["70000", "-1", "http"],
    "allow_remote": ["maybe"],
    "debounce_ms": ["-1"],
    "log_level": ["loud", "verbose"],
    "date_keys": [" , "],
    "exclude": ["Private/**,!"],
    "obsidian_excluded": ["maybe"],
    "ollama_headers": ["X-Proxy-Auth secret-value", "Bad Name: v", "X-Empty:"],
    "allowed_hosts": ["vask.home.arpa,not a host"],
    "index_canvas": ["maybe"],
    "index_pdf": ["sometimes"],
    "max_pdf_bytes": ["0"],
    "pdf_timeout": ["0", "-1"],
    "keyword_tokenizer": ["chinese", "ngram"],
    "pull_registries": ["hf.co,https://hf.co", "registry example"],
    "query_prefix": ["x" * 1001, "query:\r"],
    "document_prefix": ["passage:\r\n", "y" * 2000],
}


def test_every_setting_has_a_rule_and_a_test() -> None:
    assert set(BAD_VALUES) | CHECKED_WHERE_USED == {spec.name for spec in SETTINGS}


@pytest.mark.parametrize(
    ("spec", "raw"),
    [(spec, raw) for spec in SETTINGS for raw in BAD_VALUES.get(spec.name, [])],
    ids=lambda value: value.env if isinstance(value, SettingSpec) else repr(value),
)
def test_an_invalid_environment_variable_is_a_clear_error(
    spec: SettingSpec, raw: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setenv(spec.env, raw)
    code, _, err = run(capsys, "token", "--vault", str(tmp_path), "--index-dir", str(tmp_path / "index"))
    shown = f"{spec.env}= (value not shown)" if spec.secret else f"{spec.env}={raw!r}"
    assert_clear_error(code, err, f"error: {shown} is not valid: ", spec.flag)
    if spec.secret:  # a secret is never echoed, not even in part
        assert "secret-value" not in err and raw not in err
    assert not (tmp_path / "index").exists()  # nothing was done


def test_an_invalid_flag_is_the_same_clear_error(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(capsys, "search", "--vault", str(tmp_path), "--top-k", "0", "x")
    assert_clear_error(code, err, "error: --top-k '0' is not valid: it must be at least 1.", "VASK_TOP_K")
    code, _, err = run(capsys, "search", "--vault", str(tmp_path), "--top-k", "six", "x")
    assert_clear_error(code, err, "--top-k 'six' is not valid: expected a whole number", "default (6)")
    code, _, err = run(capsys, "serve", "--vault", str(tmp_path), "--log-level", "loud")
    assert_clear_error(code, err, "--log-level 'loud' is not valid: it must be one of debug, info, warning, error")


@pytest.mark.parametrize(
    "value", ["http://127.0.0.1:11434", "127.0.0.1:11434", "localhost", "https://ollama.example.com/base", ":11434"]
)
def test_the_addresses_ollama_accepts_are_accepted(value: str) -> None:
    assert load_settings(env={"OLLAMA_HOST": value}).ollama_host == value


def test_log_level_is_case_insensitive() -> None:
    assert load_settings(env={"VASK_LOG_LEVEL": "DEBUG"}).log_level == "debug"


def test_an_index_folder_that_cannot_be_made_is_a_clear_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, vault: Path
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    for command in ("token", "index", "status"):
        code, _, err = run(capsys, command, "--vault", str(vault), "--index-dir", str(blocker / "index"))
        assert_clear_error(code, err, "Cannot create the index folder", "--index-dir")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads and writes any folder")
def test_unreadable_vault_and_unwritable_index_are_clear_errors(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, vault: Path
) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    try:
        code, _, err = run(capsys, "index", "--vault", str(vault), "--index-dir", str(locked))
        assert_clear_error(code, err, "The index folder is not writable", "--index-dir")
        vault.chmod(0o000)
        code, _, err = run(capsys, "index", "--vault", str(vault), "--index-dir", str(tmp_path / "index"))
        assert_clear_error(code, err, "The vault folder is not readable", "--vault")
    finally:
        vault.chmod(0o700)
        locked.chmod(0o700)


def test_serve_on_a_port_in_use_says_so_and_exits_2(tmp_path: Path, vault: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        env = {
            **os.environ,
            "VASK_INDEX_DIR": str(tmp_path / "index"),
            "OLLAMA_HOST": "http://127.0.0.1:9",  # never reached: the bind fails first
        }
        result = subprocess.run(
            [sys.executable, "-m", "vask_server.cli", "serve", "--vault", str(vault), "--port", str(port)],
            env=env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert result.returncode == 2, result.stderr
    assert f"error: Port {port} on 127.0.0.1 is already in use." in result.stderr
    assert "hint: " in result.stderr and "--port" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "index").exists()  # bound before anything was synced or created


def test_an_unknown_setting_is_a_config_error_naming_it():
    with pytest.raises(ConfigError, match="Unknown settings: \\['bogus'\\]"):
        load_settings(env={}, bogus=1)
    with pytest.raises(ConfigError, match="Unknown settings: \\['nope'\\]"):
        load_settings(env={}, flags={"nope": "1"})
