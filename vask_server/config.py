"""Every setting, declared once: name, environment variable, command-line flag, default, meaning.

`SETTINGS` is the single source of truth: the CLI builds its flags from it, `load_settings` reads
the environment through it, and a test checks that the README documents each entry.
Nothing is read at import time.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from vask_server.errors import ConfigError


@dataclass(frozen=True)
class SettingSpec:
    name: str
    env: str
    flag: str
    default: Any
    parse: Callable[[str], Any]
    help: str


def _path(value: str) -> Path:
    return Path(value).expanduser()


def _bool(value: str) -> bool:
    lowered = value.strip().lower()
    if lowered in {"1", "true", "yes", "on"}:
        return True
    if lowered in {"0", "false", "no", "off", ""}:
        return False
    raise ValueError(f"expected a boolean, got {value!r}")


SETTINGS: tuple[SettingSpec, ...] = (
    SettingSpec("vault", "VASK_VAULT", "--vault", None, _path, "The Obsidian vault folder to index and ask."),
    SettingSpec(
        "index_dir",
        "VASK_INDEX_DIR",
        "--index-dir",
        None,
        _path,
        "Where the index lives. Default: a per-user data folder keyed by the vault's absolute path "
        "($XDG_DATA_HOME/vask/indexes/<vault name>-<hash>, ~/.local/share when unset), "
        "outside the vault so sync tools never copy it.",
    ),
    SettingSpec("ollama_host", "OLLAMA_HOST", "--ollama-host", "http://127.0.0.1:11434", str, "Where Ollama listens."),
    SettingSpec(
        "embed_model",
        "VASK_EMBED_MODEL",
        "--embed-model",
        "mxbai-embed-large",
        str,
        "Ollama embedding model. Changing it builds a separate index beside the old one.",
    ),
    SettingSpec(
        "chat_model", "VASK_CHAT_MODEL", "--chat-model", "qwen2.5:14b", str, "Ollama chat model that writes answers."
    ),
    SettingSpec(
        "chat_context",
        "VASK_CHAT_CONTEXT",
        "--chat-context",
        8192,
        int,
        "Context window in tokens asked of the chat model (Ollama's num_ctx); the sources are fitted into it.",
    ),
    SettingSpec("top_k", "VASK_TOP_K", "--top-k", 6, int, "How many passages to retrieve for an answer or a search."),
    SettingSpec(
        "min_similarity",
        "VASK_MIN_SIMILARITY",
        "--min-similarity",
        0.25,
        float,
        "Cosine similarity below which a passage is not used as evidence.",
    ),
    SettingSpec(
        "decline_sigmas",
        "VASK_DECLINE_SIGMAS",
        "--decline-sigmas",
        0.33,
        float,
        "How far above the index's level of unrelated text (in standard deviations) a question's topic must "
        "score before vask answers; lower declines less often. Measure it with vask eval.",
    ),
    SettingSpec(
        "chunk_tokens",
        "VASK_CHUNK_TOKENS",
        "--chunk-tokens",
        240,
        int,
        "Token budget of one chunk (counted with a subword estimate, not characters).",
    ),
    SettingSpec(
        "chunk_max_chars",
        "VASK_CHUNK_MAX_CHARS",
        "--chunk-max-chars",
        3000,
        int,
        "Hard character cap of one chunk: a safety net for dense tables, URLs and code.",
    ),
    SettingSpec(
        "max_note_bytes",
        "VASK_MAX_NOTE_BYTES",
        "--max-note-bytes",
        2_000_000,
        int,
        "Notes larger than this are skipped and reported (pasted logs, exports).",
    ),
    SettingSpec(
        "embed_batch_size", "VASK_EMBED_BATCH_SIZE", "--embed-batch-size", 32, int, "Texts per Ollama /api/embed call."
    ),
    SettingSpec(
        "embed_concurrency",
        "VASK_EMBED_CONCURRENCY",
        "--embed-concurrency",
        2,
        int,
        "Embedding calls in flight at once.",
    ),
    SettingSpec(
        "ollama_timeout",
        "VASK_OLLAMA_TIMEOUT",
        "--ollama-timeout",
        120.0,
        float,
        "Seconds before one Ollama call is abandoned (then retried).",
    ),
    SettingSpec(
        "ollama_retries",
        "VASK_OLLAMA_RETRIES",
        "--ollama-retries",
        4,
        int,
        "Retries, with exponential backoff, of an Ollama call that failed transiently.",
    ),
    SettingSpec(
        "host",
        "VASK_HOST",
        "--host",
        "127.0.0.1",
        str,
        "Address `vask serve` binds. Anything but loopback also needs --allow-remote.",
    ),
    SettingSpec("port", "VASK_PORT", "--port", 8765, int, "Port `vask serve` listens on."),
    SettingSpec(
        "allow_remote",
        "VASK_ALLOW_REMOTE",
        "--allow-remote",
        False,
        _bool,
        "Allow binding a non-loopback address (your notes become reachable from the network).",
    ),
    SettingSpec(
        "debounce_ms",
        "VASK_DEBOUNCE_MS",
        "--debounce-ms",
        250,
        int,
        "How long the watcher waits for a file to settle before reindexing it.",
    ),
    SettingSpec(
        "log_level", "VASK_LOG_LEVEL", "--log-level", "info", str, "Logging level: debug, info, warning, error."
    ),
)

_BY_NAME = {spec.name: spec for spec in SETTINGS}


@dataclass(frozen=True)
class Settings:
    vault: Path | None = None
    index_dir: Path | None = None
    ollama_host: str = "http://127.0.0.1:11434"
    embed_model: str = "mxbai-embed-large"
    chat_model: str = "qwen2.5:14b"
    chat_context: int = 8192
    top_k: int = 6
    min_similarity: float = 0.25
    decline_sigmas: float = 0.33
    chunk_tokens: int = 240
    chunk_max_chars: int = 3000
    max_note_bytes: int = 2_000_000
    embed_batch_size: int = 32
    embed_concurrency: int = 2
    ollama_timeout: float = 120.0
    ollama_retries: int = 4
    host: str = "127.0.0.1"
    port: int = 8765
    allow_remote: bool = False
    debounce_ms: int = 250
    log_level: str = "info"

    def with_overrides(self, **overrides: Any) -> Settings:
        return replace(self, **{k: v for k, v in overrides.items() if v is not None})

    def require_vault(self) -> Path:
        if self.vault is None:
            raise ConfigError(
                "No vault given.",
                "Pass --vault PATH or set VASK_VAULT to your Obsidian vault folder.",
            )
        vault = self.vault.expanduser().resolve()
        if not vault.is_dir():
            raise ConfigError(
                f"The vault folder does not exist: {vault}",
                "Check the path given with --vault or VASK_VAULT.",
            )
        return vault

    def resolved_index_dir(self) -> Path:
        """The index folder: explicit, else per-user and keyed by the vault's absolute path."""
        if self.index_dir is not None:
            return self.index_dir.expanduser().resolve()
        return default_index_dir(self.require_vault())


def default_index_dir(vault: Path, env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    base = Path(env.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    absolute = str(vault.expanduser().resolve())
    digest = hashlib.sha256(absolute.encode()).hexdigest()[:12]
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", Path(absolute).name).strip("-") or "vault"
    return base / "vask" / "indexes" / f"{name}-{digest}"


def load_settings(env: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
    """Defaults, then environment, then explicit overrides (command-line flags)."""
    env = os.environ if env is None else env
    values: dict[str, Any] = {}
    for spec in SETTINGS:
        raw = env.get(spec.env)
        if raw is None or raw == "":
            continue
        try:
            values[spec.name] = spec.parse(raw)
        except ValueError as exc:
            raise ConfigError(f"{spec.env}={raw!r} is not valid: {exc}", spec.help) from exc
    values.update({k: v for k, v in overrides.items() if v is not None})
    unknown = set(values) - {f.name for f in fields(Settings)}
    if unknown:
        raise ConfigError(f"Unknown settings: {sorted(unknown)}")
    settings = Settings(**values)
    validate(settings)
    return settings


def validate(settings: Settings) -> None:
    checks = [
        (settings.top_k >= 1, "top_k must be at least 1"),
        (settings.chat_context >= 2048, "chat_context must be at least 2048 tokens"),
        (0.0 <= settings.min_similarity <= 1.0, "min_similarity must be between 0 and 1"),
        (-3.0 <= settings.decline_sigmas <= 5.0, "decline_sigmas must be between -3 and 5"),
        (settings.chunk_tokens >= 16, "chunk_tokens must be at least 16"),
        (settings.chunk_max_chars >= 200, "chunk_max_chars must be at least 200"),
        (settings.embed_batch_size >= 1, "embed_batch_size must be at least 1"),
        (settings.embed_concurrency >= 1, "embed_concurrency must be at least 1"),
        (settings.ollama_retries >= 0, "ollama_retries must not be negative"),
        (0 <= settings.port < 65536, "port must be between 0 (any free port) and 65535"),
    ]
    for ok, message in checks:
        if not ok:
            raise ConfigError(message)


def spec(name: str) -> SettingSpec:
    return _BY_NAME[name]
