"""Every setting, declared once: name, environment variable, command-line flag, default, meaning.

The `Settings` dataclass gives each setting its type and its one default; `SETTINGS` adds the
environment variable, flag, parser and help, and reads its defaults from the dataclass. The CLI
builds its flags from `SETTINGS`, config.load_settings reads the environment and the flags through
it and validates every value, and tests check that the README and docs/REFERENCE.md document each
entry.
Nothing is read at import time.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path
from typing import Any

from vask_server.core.embed_prompts import Instructions, instructions_for
from vask_server.core.exclude import split_globs
from vask_server.core.time.dates import DEFAULT_DATE_KEYS
from vask_server.errors import ConfigError


@dataclass(frozen=True)
class Settings:
    vault: Path | None = None
    index_dir: Path | None = None
    provider: str = "ollama"
    ollama_host: str = "http://127.0.0.1:11434"
    # Secrets for a reverse proxy in front of Ollama: kept out of the settings' repr (and so of any log)
    ollama_headers: tuple[str, ...] = field(default=(), repr=False)
    openai_base_url: str = "http://127.0.0.1:1234/v1"
    openai_api_key: str = field(default="", repr=False)
    chat_provider: str = ""
    chat_base_url: str = ""
    chat_api_key: str = field(default="", repr=False)
    embed_model: str = "mxbai-embed-large"
    # The instructions put before questions and passages: None, the model's card's (core/embed_prompts.py)
    query_prefix: str | None = None
    document_prefix: str | None = None
    chat_model: str = "qwen2.5:14b"
    chat_context: int = 8192
    top_k: int = 6
    min_similarity: float = 0.25
    decline_sigmas: float = 1.5
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
    allowed_hosts: tuple[str, ...] = ()
    tls_cert: Path | None = None
    tls_key: Path | None = None
    debounce_ms: int = 250
    log_level: str = "info"
    date_keys: tuple[str, ...] = DEFAULT_DATE_KEYS
    exclude: tuple[str, ...] = ()
    obsidian_excluded: bool = True
    index_canvas: bool = True
    index_pdf: bool = True
    max_pdf_bytes: int = 50_000_000
    pdf_timeout: float = 30.0
    keyword_tokenizer: str = "auto"
    pull_registries: tuple[str, ...] = ()

    def embed_server(self) -> tuple[str, str]:
        """(provider, address) of the server embeddings come from."""
        return self.provider, self.ollama_host if self.provider == "ollama" else self.openai_base_url

    def chat_server(self) -> tuple[str, str]:
        """(provider, address) of the server answers come from: the embeddings' unless told otherwise."""
        provider = self.chat_provider or self.provider
        default = self.ollama_host if provider == "ollama" else self.openai_base_url
        return provider, self.chat_base_url or default

    def embed_instructions(self) -> Instructions:
        """What the embedding model is sent before questions and passages, and where it comes from."""
        return instructions_for(self.embed_model, self.query_prefix, self.document_prefix)

    def embed_access(self) -> ServerAccess:
        """The embeddings' server with what it is sent: VASK_OPENAI_API_KEY or VASK_OLLAMA_HEADERS,
        each given for its own address (VASK_OPENAI_BASE_URL, OLLAMA_HOST)."""
        provider, address = self.embed_server()
        if provider == "openai":
            return ServerAccess(provider, address, api_key=self.openai_api_key, key_setting="VASK_OPENAI_API_KEY")
        return ServerAccess(provider, address, headers=self.ollama_headers, key_setting="VASK_OLLAMA_HEADERS")

    def chat_access(self) -> ServerAccess:
        """The answers' server with what it is sent. A secret goes only to the server it was given for:
        VASK_CHAT_API_KEY to the answers' server; VASK_OPENAI_API_KEY (VASK_OLLAMA_HEADERS) only when the
        answers come from VASK_OPENAI_BASE_URL (OLLAMA_HOST) itself, and then VASK_CHAT_API_KEY, when set,
        is sent instead of the key. An answers' server at another address gets VASK_CHAT_API_KEY or nothing."""
        provider, address = self.chat_server()
        headers: tuple[str, ...]
        if provider == "openai":
            home = same_server(address, self.openai_base_url, provider)
            own_key, headers, own_setting = self.openai_api_key, (), "VASK_OPENAI_API_KEY"
        else:
            home = same_server(address, self.ollama_host, provider)
            own_key, headers, own_setting = "", self.ollama_headers, "VASK_OLLAMA_HEADERS"
        if not home:
            own_key, headers = "", ()
        setting = "VASK_CHAT_API_KEY" if self.chat_api_key or not home else own_setting
        return ServerAccess(provider, address, self.chat_api_key or own_key, headers, setting)

    def unsent_openai_key(self) -> bool:
        """VASK_OPENAI_API_KEY is set but sent nowhere, while the answers come from an OpenAI-compatible
        server at another address that is sent no key: the set-up in which that key once went to the
        answers' server, which now takes VASK_CHAT_API_KEY."""
        (provider, address), (chat_provider, chat_address) = self.embed_server(), self.chat_server()
        used = provider == "openai" and same_server(address, self.openai_base_url, provider)
        chat_elsewhere = chat_provider == "openai" and not same_server(chat_address, self.openai_base_url, "openai")
        return bool(self.openai_api_key) and not self.chat_api_key and not used and chat_elsewhere

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
        if not os.access(vault, os.R_OK | os.X_OK):
            raise ConfigError(
                f"The vault folder is not readable: {vault}",
                "Give this user read access to it (chmod u+rx), or pass another folder with --vault.",
            )
        return vault

    def resolved_index_dir(self) -> Path:
        """The index folder: explicit, else per-user and keyed by the vault's absolute path."""
        if self.index_dir is not None:
            return self.index_dir.expanduser().resolve()
        return default_index_dir(self.require_vault())


@dataclass(frozen=True)
class ServerAccess:
    """A model server, by API and address, and the secrets it is sent (kept out of any repr)."""

    provider: str  # "ollama" or "openai"
    address: str
    api_key: str = field(default="", repr=False)  # sent as `Authorization: Bearer`; "" sends none
    headers: tuple[str, ...] = field(default=(), repr=False)  # VASK_OLLAMA_HEADERS' 'Name: value' lines
    key_setting: str = ""  # the setting a refusal's hint names (VASK_CHAT_API_KEY, ...)


def server_address(address: str, provider: str) -> tuple[str, str, int | None, str]:
    """(scheme, host, port, path) of a model server's address, with the defaults its client fills in
    (Ollama's: http and port 11434 when the address has no scheme), to tell whether two are one."""
    text = address.strip()
    if "://" not in text:
        text = f"http://{text}"
        default_port: int | None = 11434 if provider == "ollama" else 80
    else:
        default_port = None
    try:
        split = urllib.parse.urlsplit(text)
        port = split.port
    except ValueError:
        return ("", text, None, "")  # (not an address: equal only to itself)
    scheme = split.scheme.lower()
    port = port or default_port or {"http": 80, "https": 443}.get(scheme)
    return scheme, (split.hostname or "127.0.0.1").lower(), port, split.path.rstrip("/")


def same_server(first: str, second: str, provider: str) -> bool:
    return server_address(first, provider) == server_address(second, provider)


# The defaults, read from the dataclass: the one place they are written (and type-checked).
_DEFAULTS: dict[str, Any] = {f.name: f.default for f in fields(Settings) if f.default is not MISSING}


@dataclass(frozen=True)
class SettingSpec:
    name: str
    env: str
    flag: str
    parse: Callable[[str], Any]
    help: str
    secret: bool = False  # its value is never echoed in an error message

    def shown(self, where: str, raw: str) -> str:
        return f"{where} (value not shown)" if self.secret else f"{where}{raw!r}"

    @property
    def default(self) -> Any:
        return _DEFAULTS[self.name]


def _path(value: str) -> Path:
    return Path(value).expanduser()


def _text(value: str) -> str:
    return value.strip()


def _lower(value: str) -> str:
    return value.strip().lower()


def _int(value: str) -> int:
    try:
        return int(value.strip())
    except ValueError:
        raise ValueError("expected a whole number") from None


def _float(value: str) -> float:
    try:
        return float(value.strip())
    except ValueError:
        raise ValueError("expected a number") from None


def _prefix(value: str) -> str | None:
    """Kept as written, a trailing space included (most instructions end with one); the two characters
    \\n stand for a line break (Qwen3-Embedding's has one). Empty: unset."""
    return value.replace("\\n", "\n") or None


def _list(value: str) -> tuple[str, ...]:
    """Comma-separated, as in the environment; a repeated flag arrives joined the same way."""
    return split_globs([value])


def _bool(value: str) -> bool:
    lowered = value.strip().lower()
    if lowered in {"1", "true", "yes", "on"}:
        return True
    if lowered in {"0", "false", "no", "off", ""}:
        return False
    raise ValueError("expected true or false")


SETTINGS: tuple[SettingSpec, ...] = (
    SettingSpec("vault", "VASK_VAULT", "--vault", _path, "The Obsidian vault folder to index and ask."),
    SettingSpec(
        "index_dir",
        "VASK_INDEX_DIR",
        "--index-dir",
        _path,
        "Where the index lives. Default: a per-user data folder keyed by the vault's absolute path "
        "($XDG_DATA_HOME/vask/indexes/<vault name>-<hash>; when unset ~/.local/share on Linux and macOS, "
        "%LOCALAPPDATA% on Windows), outside the vault so sync tools never copy it.",
    ),
    SettingSpec(
        "provider",
        "VASK_PROVIDER",
        "--provider",
        _lower,
        "The model server: ollama, or openai for any OpenAI-compatible one (LM Studio, llama.cpp's "
        "llama-server, vLLM, Ollama's own /v1) at VASK_OPENAI_BASE_URL. Embeddings come from it, and answers "
        "unless VASK_CHAT_PROVIDER says otherwise.",
    ),
    SettingSpec(
        "ollama_host",
        "OLLAMA_HOST",
        "--ollama-host",
        _text,
        "Where Ollama listens: this machine or another one, over http or https.",
    ),
    SettingSpec(
        "ollama_headers",
        "VASK_OLLAMA_HEADERS",
        "--ollama-headers",
        _list,
        "Headers sent with every request to Ollama at OLLAMA_HOST (not to an answers' server at another "
        "address), for a reverse proxy's authentication, as 'Name: value' (comma-separated; the flag can "
        "be repeated). Never logged or shown.",
        secret=True,
    ),
    SettingSpec(
        "openai_base_url",
        "VASK_OPENAI_BASE_URL",
        "--openai-base-url",
        _text,
        "Base URL of the OpenAI-compatible server, with its /v1: http://127.0.0.1:1234/v1 (LM Studio), "
        ":8080/v1 (llama-server), :8000/v1 (vLLM), :11434/v1 (Ollama).",
    ),
    SettingSpec(
        "openai_api_key",
        "VASK_OPENAI_API_KEY",
        "--openai-api-key",
        _text,
        "API key of the OpenAI-compatible server at VASK_OPENAI_BASE_URL, when it asks for one (vLLM "
        "--api-key): sent to that address only; none is sent when empty. Never logged, shown or written "
        "to the index.",
        secret=True,
    ),
    SettingSpec(
        "chat_provider",
        "VASK_CHAT_PROVIDER",
        "--chat-provider",
        _lower,
        "The answers' model server when it is not VASK_PROVIDER's: ollama or openai (empty: the same).",
    ),
    SettingSpec(
        "chat_base_url",
        "VASK_CHAT_BASE_URL",
        "--chat-base-url",
        _text,
        "The answers' server when it is another one than the embeddings': an Ollama host, or an "
        "OpenAI-compatible base URL with /v1 (empty: OLLAMA_HOST or VASK_OPENAI_BASE_URL, by provider).",
    ),
    SettingSpec(
        "chat_api_key",
        "VASK_CHAT_API_KEY",
        "--chat-api-key",
        _text,
        "API key of the answers' server, sent with answer requests only (as `Authorization: Bearer`). An "
        "answers' server at another address than VASK_OPENAI_BASE_URL gets this key or none, never "
        "VASK_OPENAI_API_KEY. Never logged, shown or written to the index.",
        secret=True,
    ),
    SettingSpec(
        "embed_model",
        "VASK_EMBED_MODEL",
        "--embed-model",
        _text,
        "Ollama embedding model. Changing it builds a separate index beside the old one.",
    ),
    SettingSpec(
        "query_prefix",
        "VASK_QUERY_PREFIX",
        "--query-prefix",
        _prefix,
        "Instruction put before every question the embedding model embeds, exactly as written (a trailing "
        "space counts; \\n is a line break); `none` for none. Unset: the one the model's card gives, for the "
        "models vask knows (`vask doctor` says which). A change applies at once: nothing is embedded again.",
    ),
    SettingSpec(
        "document_prefix",
        "VASK_DOCUMENT_PREFIX",
        "--document-prefix",
        _prefix,
        "Instruction put before every passage the embedding model embeds, as VASK_QUERY_PREFIX is. A change "
        "builds a separate index beside the old one (the vectors change), used once it is complete.",
    ),
    SettingSpec("chat_model", "VASK_CHAT_MODEL", "--chat-model", _text, "Ollama chat model that writes answers."),
    SettingSpec(
        "chat_context",
        "VASK_CHAT_CONTEXT",
        "--chat-context",
        _int,
        "Context window in tokens asked of the chat model (Ollama's num_ctx); the sources are fitted into it.",
    ),
    SettingSpec("top_k", "VASK_TOP_K", "--top-k", _int, "How many passages to retrieve for an answer or a search."),
    SettingSpec(
        "min_similarity",
        "VASK_MIN_SIMILARITY",
        "--min-similarity",
        _float,
        "Cosine similarity below which a passage is not used as evidence.",
    ),
    SettingSpec(
        "decline_sigmas",
        "VASK_DECLINE_SIGMAS",
        "--decline-sigmas",
        _float,
        "How far above the index's level of unrelated text (in standard deviations) a question's topic must "
        "score before vask answers; lower declines less often. Measure it with vask eval.",
    ),
    SettingSpec(
        "chunk_tokens",
        "VASK_CHUNK_TOKENS",
        "--chunk-tokens",
        _int,
        "Token budget of one chunk (counted with a subword estimate, not characters).",
    ),
    SettingSpec(
        "chunk_max_chars",
        "VASK_CHUNK_MAX_CHARS",
        "--chunk-max-chars",
        _int,
        "Hard character cap of one chunk: a safety net for dense tables, URLs and code.",
    ),
    SettingSpec(
        "max_note_bytes",
        "VASK_MAX_NOTE_BYTES",
        "--max-note-bytes",
        _int,
        "Notes larger than this are skipped and reported (pasted logs, exports).",
    ),
    SettingSpec(
        "embed_batch_size", "VASK_EMBED_BATCH_SIZE", "--embed-batch-size", _int, "Texts per Ollama /api/embed call."
    ),
    SettingSpec(
        "embed_concurrency",
        "VASK_EMBED_CONCURRENCY",
        "--embed-concurrency",
        _int,
        "Embedding calls in flight at once.",
    ),
    SettingSpec(
        "ollama_timeout",
        "VASK_OLLAMA_TIMEOUT",
        "--ollama-timeout",
        _float,
        "Seconds before one Ollama call is abandoned (then retried).",
    ),
    SettingSpec(
        "ollama_retries",
        "VASK_OLLAMA_RETRIES",
        "--ollama-retries",
        _int,
        "Retries, with exponential backoff, of an Ollama call that failed transiently.",
    ),
    SettingSpec(
        "host",
        "VASK_HOST",
        "--host",
        _text,
        "Address `vask serve` binds. Anything but loopback also needs --allow-remote.",
    ),
    SettingSpec("port", "VASK_PORT", "--port", _int, "Port `vask serve` listens on."),
    SettingSpec(
        "allow_remote",
        "VASK_ALLOW_REMOTE",
        "--allow-remote",
        _bool,
        "Allow binding a non-loopback address (your notes become reachable from the network).",
    ),
    SettingSpec(
        "allowed_hosts",
        "VASK_ALLOWED_HOSTS",
        "--allowed-hosts",
        _list,
        "Names clients may reach `vask serve` by besides loopback and the bound address, such as "
        "vask.home.arpa or a Tailscale name (comma-separated; the flag can be repeated). Any other Host "
        "header is refused (DNS-rebinding protection).",
    ),
    SettingSpec(
        "tls_cert",
        "VASK_TLS_CERT",
        "--tls-cert",
        _path,
        "PEM certificate (chain) for HTTPS; with --tls-key, `vask serve` speaks only HTTPS.",
    ),
    SettingSpec("tls_key", "VASK_TLS_KEY", "--tls-key", _path, "PEM private key of --tls-cert."),
    SettingSpec(
        "debounce_ms",
        "VASK_DEBOUNCE_MS",
        "--debounce-ms",
        _int,
        "How long the watcher waits for a file to settle before reindexing it.",
    ),
    SettingSpec("log_level", "VASK_LOG_LEVEL", "--log-level", _lower, "Logging level: debug, info, warning, error."),
    SettingSpec(
        "date_keys",
        "VASK_DATE_KEYS",
        "--date-keys",
        _list,
        "Frontmatter keys that say when a note was written, first found wins (comma-separated; case, spaces, "
        "_ and - ignored).",
    ),
    SettingSpec(
        "exclude",
        "VASK_EXCLUDE",
        "--exclude",
        _list,
        "Notes never to index: gitignore-style patterns relative to the vault, such as Private/** or "
        "**/*.secret.md (comma-separated; the flag can be repeated).",
    ),
    SettingSpec(
        "obsidian_excluded",
        "VASK_OBSIDIAN_EXCLUDED",
        "--obsidian-excluded",
        _bool,
        "Also leave out what Obsidian's Settings > Files and links > Excluded files lists (true or false).",
    ),
    SettingSpec(
        "index_canvas",
        "VASK_INDEX_CANVAS",
        "--index-canvas",
        _bool,
        "Index Canvas boards (.canvas): text cards, group and edge labels; file cards as links (true or false).",
    ),
    SettingSpec(
        "index_pdf",
        "VASK_INDEX_PDF",
        "--index-pdf",
        _bool,
        "Index the text of PDFs (.pdf), page by page; hits open the page (true or false).",
    ),
    SettingSpec(
        "max_pdf_bytes",
        "VASK_MAX_PDF_BYTES",
        "--max-pdf-bytes",
        _int,
        "PDFs larger than this are not opened; they are skipped and reported.",
    ),
    SettingSpec(
        "pdf_timeout",
        "VASK_PDF_TIMEOUT",
        "--pdf-timeout",
        _float,
        "Seconds one PDF may take to read; then its reader is stopped, and the PDF skipped and reported.",
    ),
    SettingSpec(
        "keyword_tokenizer",
        "VASK_KEYWORD_TOKENIZER",
        "--keyword-tokenizer",
        _lower,
        "How keyword search cuts text into terms: simple (at spaces and punctuation), cjk (Chinese and "
        "Japanese also into character pairs; other words whole), or auto (cjk when a note is written mostly "
        "in Chinese or Japanese, read from a sample of the vault at every whole sync). A change cuts the "
        "stored keyword text anew and rebuilds the keyword index; nothing is embedded again.",
    ),
    SettingSpec(
        "pull_registries",
        "VASK_PULL_REGISTRIES",
        "--pull-registries",
        _list,
        "Registries besides Ollama's own (registry.ollama.ai, ollama.com) that POST /v1/models/pull may "
        "download from, by host, such as hf.co (comma-separated; the flag can be repeated). Names without a "
        "host are Ollama's.",
    ),
)

_BY_NAME = {spec.name: spec for spec in SETTINGS}


def spec(name: str) -> SettingSpec:
    return _BY_NAME[name]


def default_index_dir(vault: Path, env: Mapping[str, str] | None = None) -> Path:
    """The index's folder when none is set: `<data folder>/vask/indexes/<vault name>-<hash of its path>`,
    the data folder being $XDG_DATA_HOME when set, else ~/.local/share on Linux and macOS (where uv and
    pipx keep theirs) and %LOCALAPPDATA% on Windows (this machine's, not roaming: an index is large and
    belongs to one machine). On Windows an index made under ~/.local/share before is still used."""
    env = os.environ if env is None else env
    absolute = str(vault.expanduser().resolve())
    digest = hashlib.sha256(absolute.encode()).hexdigest()[:12]
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", Path(absolute).name).strip("-") or "vault"
    folder = Path("vask") / "indexes" / f"{name}-{digest}"
    xdg = Path.home() / ".local" / "share"
    if env.get("XDG_DATA_HOME"):
        return Path(env["XDG_DATA_HOME"]) / folder
    if sys.platform != "win32":
        return xdg / folder
    local = Path(env.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local") / folder
    return xdg / folder if (xdg / folder).is_dir() and not local.exists() else local
