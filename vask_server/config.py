"""Reading the settings: the defaults, then the environment, then the command-line flags, each value
parsed by its entry in `SETTINGS` (vask_server/settings.py, where every setting is declared) and
validated here, so a bad value stops a command with the same error and hint from wherever it came.
Nothing is read at import time.
"""

from __future__ import annotations

import ipaddress
import os
import re
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from vask_server.errors import ConfigError
from vask_server.settings import SETTINGS, ServerAccess, Settings, SettingSpec, default_index_dir, same_server

# Settings, SETTINGS, SettingSpec, ServerAccess, same_server and default_index_dir are declared in
# vask_server/settings.py; the rest of vask imports them from here, beside what reads and checks them.
__all__ = [
    "CHECKED_WHERE_USED",
    "KEYWORD_TOKENIZERS",
    "LOG_LEVELS",
    "PROVIDERS",
    "SETTINGS",
    "ServerAccess",
    "SettingSpec",
    "Settings",
    "default_index_dir",
    "header_dict",
    "is_loopback",
    "load_settings",
    "loopback_only",
    "same_server",
    "validate",
]

_BY_NAME = {setting.name: setting for setting in SETTINGS}


def load_settings(
    env: Mapping[str, str] | None = None, flags: Mapping[str, str | None] | None = None, **overrides: Any
) -> Settings:
    """Defaults, then environment, then command-line flags (raw strings, parsed like the environment),
    then explicit overrides (typed values, from code). Every value is validated."""
    env = os.environ if env is None else env
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}  # where each value came from, for the error message
    unknown = {name for name, v in [*(flags or {}).items(), *overrides.items()] if v is not None} - set(_BY_NAME)
    if unknown:
        raise ConfigError(f"Unknown settings: {sorted(unknown)}", f"Known settings: {', '.join(_BY_NAME)}.")
    for spec in SETTINGS:
        raw = env.get(spec.env)
        if raw is not None and raw != "":
            where = spec.shown(f"{spec.env}=", raw)
            values[spec.name], sources[spec.name] = _parse(spec, raw, where), where
    for name, raw in (flags or {}).items():
        if raw is not None:
            flag_spec = _BY_NAME[name]
            where = flag_spec.shown(f"{flag_spec.flag} ", raw)
            values[name], sources[name] = _parse(flag_spec, raw, where), where
    for name, value in overrides.items():
        if value is not None:
            values[name] = value
            sources[name] = f"{name} (value not shown)" if _BY_NAME[name].secret else f"{name}={value!r}"
    settings = Settings(**values)
    validate(settings, sources)
    return settings


def _parse(spec: SettingSpec, raw: str, where: str) -> Any:
    try:
        return spec.parse(raw)
    except ValueError as exc:
        raise ConfigError(f"{where} is not valid: {exc}.", _hint(spec)) from None


def _hint(spec: SettingSpec) -> str:
    default = "none" if spec.default is None else spec.default
    return f"{spec.help} Fix {spec.flag} or {spec.env}, or leave both unset for the default ({default})."


LOG_LEVELS = ("debug", "info", "warning", "error")

# A problem (what the value must be), or None when the value is fine.
Rule = Callable[[Any], str | None]


def _at_least(low: float) -> Rule:
    return lambda value: None if value >= low else f"must be at least {low}"


def _above(low: float) -> Rule:
    return lambda value: None if value > low else f"must be more than {low}"


def _between(low: float, high: float, note: str = "") -> Rule:
    return lambda value: None if low <= value <= high else f"must be between {low} and {high}{note}"


def _one_of(choices: tuple[str, ...]) -> Rule:
    return lambda value: None if value in choices else f"must be one of {', '.join(choices)}"


def _model_name(value: str) -> str | None:
    if value and not any(char.isspace() for char in value):
        return None
    return "must be an Ollama model name such as mxbai-embed-large or qwen2.5:14b"


_HOSTNAME = re.compile(r"(?!-)[A-Za-z0-9_-]{1,63}(?<!-)(\.(?!-)[A-Za-z0-9_-]{1,63}(?<!-))*\.?")


def _host(value: str) -> str | None:
    try:
        ipaddress.ip_address(value.strip("[]"))
        return None
    except ValueError:
        pass
    if len(value) <= 253 and _HOSTNAME.fullmatch(value):
        return None
    return "must be an IP address or a host name, such as 127.0.0.1"


PROVIDERS = ("ollama", "openai")
KEYWORD_TOKENIZERS = ("auto", "simple", "cjk")


def _web_url(value: str, what: str) -> str | None:
    """An http(s) URL with a host (a model server's)."""
    try:
        split = urllib.parse.urlsplit(value)
        split.port  # noqa: B018 (a port that is no number, or out of range, raises here)
    except ValueError:
        return f"must be {what}"
    if split.scheme not in ("http", "https") or not split.hostname or _host(split.hostname) is not None:
        return f"must be {what}"
    return None


def _ollama_url(value: str) -> str | None:
    """The forms Ollama's own client accepts: `host`, `host:port`, `http(s)://host[:port][/path]`."""
    problem = "must be Ollama's address, such as http://127.0.0.1:11434 or 127.0.0.1:11434"
    scheme, separator, rest = value.partition("://")
    if not separator:
        scheme, rest = "http", value
    if scheme not in ("http", "https"):
        return problem
    try:
        split = urllib.parse.urlsplit(f"{scheme}://{rest}")
        split.port  # noqa: B018 (a port that is no number, or out of range, raises here)
    except ValueError:
        return problem
    if split.hostname is None:
        return None if rest.startswith(":") else problem  # ":11434" is Ollama's shorthand for 127.0.0.1
    return None if _host(split.hostname) is None else problem


def _header_lines(lines: tuple[str, ...]) -> str | None:
    for line in lines:
        name, separator, value = line.partition(":")
        # (never the value, nor an entry without a colon, which may be all value: they are secrets)
        if not separator:
            return "holds an entry that is not 'Name: value' (no colon)"
        if not re.fullmatch(r"[A-Za-z0-9!#$%&'*+.^_`|~-]+", name.strip()) or not value.strip():
            return f"holds an entry that is not 'Name: value' (header {name.strip()[:40]!r})"
        if any(char in value for char in "\r\n\0"):
            return f"holds a value with a line break (header {name.strip()!r})"
    return None


def _host_names(names: tuple[str, ...]) -> str | None:
    for name in names:
        if _host(name) is not None:
            return f"holds {name!r}, which is not a host name or an IP address"
    return None


def _gitignore_patterns(patterns: tuple[str, ...]) -> str | None:
    import pathspec  # (only when there are patterns to check)

    for pattern in patterns:
        try:
            pathspec.GitIgnoreSpec.from_lines([pattern])
        except (ValueError, TypeError):
            return f"holds {pattern!r}, which is not a gitignore pattern"
    return None


_PREFIX_CHARS = 1000  # an instruction is a line or two; more is a value pasted by mistake


def _instruction(value: str | None) -> str | None:
    if value is None:
        return None
    if len(value) > _PREFIX_CHARS:
        return f"must be at most {_PREFIX_CHARS} characters"
    if any(char in value for char in "\r\0"):
        return "must not hold a carriage return or a NUL character"
    return None


_RULES: dict[str, Rule] = {
    "provider": _one_of(PROVIDERS),
    "chat_provider": _one_of(("", *PROVIDERS)),
    "openai_base_url": lambda value: _web_url(value, "an OpenAI-compatible base URL, such as http://127.0.0.1:1234/v1"),
    "chat_base_url": lambda value: (
        _web_url(value, "a server's address, such as http://gpu-box:8000/v1") if value else None
    ),
    "openai_api_key": lambda value: "must not hold spaces or line breaks" if any(c.isspace() for c in value) else None,
    "chat_api_key": lambda value: "must not hold spaces or line breaks" if any(c.isspace() for c in value) else None,
    "ollama_host": _ollama_url,
    "ollama_headers": _header_lines,
    "allowed_hosts": _host_names,
    "pull_registries": _host_names,
    "embed_model": _model_name,
    "chat_model": _model_name,
    "query_prefix": _instruction,
    "document_prefix": _instruction,
    "chat_context": _at_least(2048),
    "top_k": _at_least(1),
    "min_similarity": _between(0, 1),
    "decline_sigmas": _between(-3, 5),
    "chunk_tokens": _at_least(16),
    "chunk_max_chars": _at_least(200),
    "max_note_bytes": _at_least(1),
    "max_pdf_bytes": _at_least(1),
    "pdf_timeout": _above(0),
    "embed_batch_size": _at_least(1),
    "embed_concurrency": _at_least(1),
    "ollama_timeout": _above(0),
    "ollama_retries": _at_least(0),
    "host": _host,
    "port": _between(0, 65535, " (0: any free port)"),
    "debounce_ms": _at_least(0),
    "log_level": _one_of(LOG_LEVELS),
    "date_keys": lambda keys: None if keys else "must name at least one frontmatter key",
    "exclude": _gitignore_patterns,
    "keyword_tokenizer": _one_of(KEYWORD_TOKENIZERS),
}
# The folders are checked where they are used (Settings.require_vault, adapters.folders);
# a boolean is checked by its parser.
# The certificate and key are read by `vask serve` (adapters/tls.py), which says what is wrong with them.
CHECKED_WHERE_USED = frozenset(
    {"vault", "index_dir", "allow_remote", "obsidian_excluded", "tls_cert", "tls_key", "index_canvas", "index_pdf"}
)


def validate(settings: Settings, sources: Mapping[str, str] | None = None) -> None:
    for name, rule in _RULES.items():
        value = getattr(settings, name)
        problem = rule(value)
        if problem:
            setting = _BY_NAME[name]
            shown = "(value not shown)" if setting.secret else repr(value)
            where = (sources or {}).get(name, f"{setting.flag} / {setting.env} {shown}")
            raise ConfigError(f"{where} is not valid: it {problem}.", _hint(setting))


def header_dict(lines: tuple[str, ...]) -> dict[str, str]:
    """VASK_OLLAMA_HEADERS as the mapping a client sends."""
    pairs = (line.partition(":") for line in lines)
    return {name.strip(): value.strip() for name, _, value in pairs}


def is_loopback(host: str) -> bool:
    """`localhost`, 127.0.0.0/8 or ::1 (with or without brackets)."""
    if host.lower().rstrip(".") == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


# The address a server started for a program on this machine (`vask serve --pair-file`) binds when the
# one set is not a loopback address: 127.0.0.1 exists on every system, and a literal (unlike `localhost`,
# which names ::1 first on some) is one address with one port.
PAIRED_HOST = "127.0.0.1"


def loopback_only(settings: Settings) -> tuple[Settings, list[str]]:
    """The settings of a server started by a program on this machine (the Obsidian plugin, through
    `--pair-file`): plain HTTP on a loopback address, whatever the environment it inherited says
    (VASK_HOST=0.0.0.0 with VASK_ALLOW_REMOTE=true meant for a server run by hand, or TLS files),
    since its starter pairs only with such an address. Also what was set aside, a line each."""
    notes: list[str] = []
    why = "a server started with --pair-file listens on loopback over plain HTTP, for this machine only"
    host = settings.host
    if not is_loopback(host):
        notes.append(f"the address {host} (VASK_HOST, --host) set aside: {why}")
        host = PAIRED_HOST
    elif host.lower().rstrip(".") == "localhost":
        host = PAIRED_HOST  # (one address: its starter is told a literal one)
    if settings.allow_remote:
        notes.append(f"VASK_ALLOW_REMOTE (--allow-remote) set aside: {why}")
    if settings.tls_cert is not None or settings.tls_key is not None:
        notes.append(f"VASK_TLS_CERT and VASK_TLS_KEY (--tls-cert, --tls-key) set aside: {why}")
    local = replace(settings, host=host, allow_remote=False, tls_cert=None, tls_key=None)
    return local, notes
