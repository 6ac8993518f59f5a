"""`vask doctor`: every check between a fresh install and a first answer, each problem with the command
that fixes it. Reads and asks; changes nothing (no index is built, no model pulled).

Each check has a level: `ok`; `info`, said with a pointer, nothing wrong (no plugin in a vault used from
the command line); `warn`, vask works but something would make it work better or is a step still to
take (an index not built yet or behind, a port another program holds); `fail`, what stops vask from
working (no model server, a model missing, no vault). Only a `fail` makes `vask doctor` exit 3."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from vask_server import __version__
from vask_server.adapters.gateway import ModelGateway
from vask_server.adapters.meta import IndexRecord, read_meta
from vask_server.adapters.ollama import display_host
from vask_server.adapters.tls import server_ssl_context
from vask_server.config import Settings
from vask_server.core.cjk import CJK, SIMPLE
from vask_server.core.embed_prompts import UNKNOWN, describe, shown
from vask_server.core.filetypes import CANVAS, MARKDOWN, PDF, file_type
from vask_server.core.keyword_choice import KeywordChoice
from vask_server.core.language import MOSTLY
from vask_server.core.model_languages import language_advice
from vask_server.core.plan import plan_scan
from vask_server.errors import VaskError

Level = Literal["ok", "info", "warn", "fail"]
LEVELS: tuple[Level, ...] = ("ok", "info", "warn", "fail")


@dataclass(frozen=True)
class Check:
    name: str  # what was checked, in a few words ("Ollama", "embedding model")
    level: Level
    detail: str  # what was found
    fix: str = ""  # info: where to read more; warn and fail: the command or step that fixes it

    @property
    def ok(self) -> bool:
        """Nothing here stops vask from working."""
        return self.level != "fail"

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "level": self.level, "ok": self.ok, "detail": self.detail, "fix": self.fix}


async def run_checks(settings: Settings, *, serving: str | None = None) -> list[Check]:
    """Every check, in the order a person fixes things: the model servers, the models, the vault, the
    index, the port, TLS, the plugin. `serving`: the address of the `vask serve` that runs them
    (GET /v1/doctor), whose port is known to be its own (probing it from inside would wait on itself)."""
    from vask_server.services.context import model_gateways  # (the database's import is not needed before)

    checks: list[Check] = []
    embeds, chats = model_gateways(settings)
    try:
        for role, gateway, model in (
            ("embeddings", embeds, settings.embed_model),
            ("answers", chats, settings.chat_model),
        ):
            reachable, missing = await gateway.probe([model])
            if role == "embeddings" or gateway is not embeds:  # (one server for both: checked once)
                checks.append(_server_check(gateway, reachable, "embeddings and answers" if chats is embeds else role))
            if reachable:
                checks.append(await _model_check(gateway, model, role, missing, settings))
    finally:
        await embeds.close()
        if chats is not embeds:
            await chats.close()
    checks.append(_instructions_check(settings))
    vault, on_disk = await asyncio.to_thread(_vault_check, settings)
    checks.append(vault)
    if on_disk is not None:
        checks.append(await _index_check(settings, on_disk))
        checks.extend(await asyncio.to_thread(_language_checks, settings, on_disk))
    checks.append(Check("port", "ok", f"`vask serve` answers at {serving}") if serving else _port_check(settings))
    if settings.tls_cert is not None or settings.tls_key is not None:
        checks.append(_tls_check(settings))
    if settings.unsent_openai_key():
        checks.append(_unsent_key_check(settings))
    if vault.ok:
        checks.append(_plugin_check(settings))
        checks.append(await _mcp_check(settings))
    return checks


def _server_check(gateway: ModelGateway, reachable: bool, role: str) -> Check:
    name = f"{gateway.server.removeprefix('The ')} ({role})"
    if reachable:
        return Check(name, "ok", f"reachable at {gateway.host}")
    if gateway.provider == "ollama":
        fix = "Start it with `ollama serve` (or open the Ollama app), or set OLLAMA_HOST to where it runs."
    else:
        fix = "Start the server (LM Studio: Developer > Start server), or set VASK_OPENAI_BASE_URL to where it runs."
    return Check(name, "fail", f"not reachable at {gateway.host}", fix)


async def _model_check(gateway: ModelGateway, model: str, role: str, missing: list[str], settings: Settings) -> Check:
    name = "embedding model" if role == "embeddings" else "chat model"
    if model in missing:
        fix = (
            f"`ollama pull {model}`"
            if gateway.provider == "ollama"
            else f"load '{model}' in the server (its API identifier), or set the model's name"
        )
        setting = "VASK_EMBED_MODEL" if role == "embeddings" else "VASK_CHAT_MODEL"
        return Check(
            name, "fail", f"'{model}' is not available at {gateway.host}", f"{fix}; or choose another ({setting})"
        )
    if role == "answers":
        return Check(name, "ok", f"'{model}' (context window asked: {settings.chat_context} tokens, VASK_CHAT_CONTEXT)")
    try:
        vectors = await gateway.embed(model, ["vask doctor"])
    except VaskError as exc:
        return Check(name, "fail", f"'{model}' did not embed a test text: {exc.message}", exc.hint)
    return Check(name, "ok", f"'{model}', {len(vectors[0])} dimensions")


def _instructions_check(settings: Settings) -> Check:
    """The instructions the embedding model is sent and where each comes from (core/embed_prompts.py):
    a model vask does not know is sent none, which its card may not want."""
    instructions = settings.embed_instructions()
    detail = describe(instructions)
    if {instructions.query_source, instructions.document_source} == {UNKNOWN}:
        return Check(
            "instructions",
            "info",
            detail,
            "If its card asks for an instruction before questions or passages, set VASK_QUERY_PREFIX and "
            "VASK_DOCUMENT_PREFIX (docs/MODEL-SERVERS.md, Instructions).",
        )
    return Check("instructions", "ok", detail)


def _vault_check(settings: Settings) -> tuple[Check, Mapping[str, Any] | None]:
    """What the vault holds, and its scan (the files as indexing sees them) for the index's check."""
    from vask_server.adapters.vault import Vault
    from vask_server.services.options import excluder_for, index_options

    try:
        root = settings.require_vault()
        vault = Vault(root)
        options = index_options(settings, vault)
        scan = vault.scan(excluder_for(options, vault), options.file_types)
    except VaskError as exc:
        return Check("vault", "fail", exc.message, exc.hint), None
    except OSError as exc:
        fix = "Check the path and that this user can read it."
        return Check("vault", "fail", f"cannot read it: {exc.strerror}", fix), None
    kinds = {MARKDOWN: 0, CANVAS: 0, PDF: 0}
    for path in scan.notes:
        kind = file_type(path)
        if kind in kinds:
            kinds[kind] += 1
    held = f"{_count(kinds[MARKDOWN], 'note')}, {_count(kinds[CANVAS], 'board')}, {_count(kinds[PDF], 'PDF')}"
    extra = f"; {len(scan.excluded)} excluded" if scan.excluded else ""
    if not scan.notes:
        fix = "Point --vault (VASK_VAULT) at the Obsidian vault folder."
        return Check("vault", "fail", f"{root} holds no notes", fix), None
    return Check("vault", "ok", f"{root}: {held}{extra}"), scan.notes


async def _index_check(settings: Settings, on_disk: Mapping[str, Any]) -> Check:
    """Built, with the configured model, and how many of the scanned files changed since its sync. A step
    still to take (`vask index`, or a running `vask serve`, does it), not a failure."""
    from vask_server.adapters.store import Store
    from vask_server.adapters.vault import Vault
    from vask_server.services.sync.freshness import OPT_OUT_READS, count_opted_out

    index_dir = settings.resolved_index_dir()
    meta = read_meta(index_dir)
    if not meta.active:
        return Check(
            "index", "warn", f"not built yet ({index_dir})", "`vask index` (or start `vask serve`, which builds it)"
        )
    model, dimension = meta.active.model, meta.active.dimension
    if model != settings.embed_model:
        return Check(
            "index", "warn", f"built with '{model}', not the configured '{settings.embed_model}'", "`vask index`"
        )
    embedded_with, configured = meta.active.document_prompt, settings.embed_instructions().document
    if embedded_with != configured:
        return Check(
            "index",
            "warn",
            f"its passages were embedded with the instruction {shown(embedded_with)}, not the configured "
            f"{shown(configured)}",
            "`vask index` builds it anew beside this one, which answers until it is complete",
        )
    store = await Store.open(index_dir, read_only=True)
    stamps = (await store.tables(meta.active).manifest(with_links=False)).stamps()
    plan = plan_scan(on_disk, stamps)
    # A note that opted out (`vask: exclude`) has no record, as the sync keeps none: not behind.
    new = [path for path in plan.changed if path not in stamps]
    vault = Vault(settings.require_vault())
    opted = await asyncio.to_thread(count_opted_out, vault, new[:OPT_OUT_READS], settings.max_note_bytes)
    late = len(plan.changed) - opted + len(plan.deleted)
    detail = f"'{model}', {dimension}-d, last sync {meta.last_sync}"
    if late:
        return Check(
            "index",
            "warn",
            f"{detail}; {_count(late, 'note')} changed since",
            "`vask index` (a running `vask serve` does it itself)",
        )
    return Check("index", "ok", f"{detail}; up to date")


def _language_checks(settings: Settings, on_disk: Mapping[str, Any]) -> list[Check]:
    """Whether the embedding model reads the notes' language, and how keyword search cuts their
    text: from what the index recorded of them (when it would still hold under this setting), else
    from the notes read now, by the same function a sync decides with (`reading.vault_language`).
    Advice, not failures: keyword search still works."""
    from vask_server.adapters.vault import Vault
    from vask_server.services.sync.reading import vault_language

    active = read_meta(settings.resolved_index_dir()).active
    language = active.language(settings.keyword_tokenizer) if active else None
    if language is None:
        language = vault_language(Vault(settings.require_vault()), on_disk, settings.keyword_tokenizer)
    return [_language_check(settings, language.not_english), _keyword_check(active, language.keyword)]


def _language_check(settings: Settings, share: float) -> Check:
    advice = language_advice(settings.embed_model, share)
    if advice is None:
        english = "in English" if share < MOSTLY else "not in English"
        return Check("language", "ok", f"most notes are {english}; '{settings.embed_model}' fits")
    found, _, fix = advice.partition(" Use a multilingual model: ")
    return Check("language", "warn", found, f"Use a multilingual model: {fix}")


_TERMS = {SIMPLE: "simple (words split at spaces and punctuation)", CJK: "cjk (Chinese and Japanese cut into pairs)"}


def _keyword_check(active: IndexRecord | None, choice: KeywordChoice) -> Check:
    """The index's keyword terms and why; a first sync's, or the next whole sync's when it will change them."""
    if active is None:
        return Check("keyword search", "ok", f"the first sync will use {_TERMS[choice.terms]}: {choice.reason()}")
    terms = active.keyword_terms
    if terms != choice.terms:
        return Check(
            "keyword search",
            "warn",
            f"the index uses {_TERMS.get(terms, terms)}; the notes now call for {choice.terms}: {choice.reason()}",
            "`vask index` (or a start of `vask serve`, or Reindex vault) cuts the keyword text anew; "
            "nothing is embedded again",
        )
    return Check("keyword search", "ok", f"{_TERMS[choice.terms]}: {choice.reason()}")


def _port_check(settings: Settings) -> Check:
    """Whether `vask serve` started by hand could listen where the settings say. The command line and
    the plugin's own server (which takes any free port) do not need it: a warning, not a failure."""
    host, port = settings.host, settings.port
    if port == 0:
        return Check("port", "ok", "any free port (VASK_PORT 0)")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            if _vask_answers(host, port):
                return Check("port", "ok", f"{host}:{port}: `vask serve` is running there")
            return Check(
                "port",
                "warn",
                f"{host}:{port} is used by another program: `vask serve` could not listen there",
                "Choose another with --port (VASK_PORT).",
            )
    return Check("port", "ok", f"{host}:{port} is free for `vask serve`")


def _vask_answers(host: str, port: int) -> bool:
    import urllib.request

    try:
        with urllib.request.urlopen(f"http://{host}:{port}/v1/health", timeout=2) as response:
            return bool(json.loads(response.read()).get("status") == "ok")
    except (OSError, ValueError):
        return False


def _tls_check(settings: Settings) -> Check:
    try:
        server_ssl_context(settings)
    except VaskError as exc:
        return Check("TLS", "fail", exc.message, exc.hint)
    return Check("TLS", "ok", f"{settings.tls_cert} with its key")


def _unsent_key_check(settings: Settings) -> Check:
    """VASK_OPENAI_API_KEY set for a server no request goes to, and the answers' server at another address
    sent no key: a key goes only to the server it was given for, and that one's is VASK_CHAT_API_KEY."""
    return Check(
        "API keys",
        "warn",
        "VASK_OPENAI_API_KEY is sent nowhere (no request goes to VASK_OPENAI_BASE_URL), and the answers' server "
        f"at {display_host(settings.chat_server()[1])} is sent no key",
        "If that server wants one, give it with VASK_CHAT_API_KEY (--chat-api-key); unset VASK_OPENAI_API_KEY.",
    )


def _plugin_check(settings: Settings) -> Check:
    root = settings.require_vault()
    manifest = root / ".obsidian" / "plugins" / "vask" / "manifest.json"
    install = "Install it: obsidian-plugin/README.md, 'Install into a vault'."
    if not manifest.is_file():
        # (the command line needs no plugin: said, with where to find it, for whoever wants it)
        return Check(
            "Obsidian plugin",
            "info",
            "not installed in this vault; the command line needs none",
            f"To ask from inside Obsidian: {install.removeprefix('Install it: ')}",
        )
    try:
        version = str(json.loads(manifest.read_text("utf-8")).get("version", "?"))
    except (OSError, ValueError):
        return Check("Obsidian plugin", "warn", "its manifest.json cannot be read", install)
    same = version.split(".")[:2] == __version__.split(".")[:2]
    detail = f"version {version}, server {__version__}"
    if not same:
        return Check("Obsidian plugin", "warn", f"{detail}: not the same release", install)
    return Check("Obsidian plugin", "ok", detail)


async def _mcp_check(settings: Settings) -> Check:
    """Whether an agent's `vask mcp` would answer: the MCP SDK is installed, the index opens read-only as
    `vask mcp` opens it (beside a running `vask serve`), and the command an agent's configuration runs."""
    import importlib.util
    import shutil

    from vask_server.adapters.store import Store
    from vask_server.errors import NotIndexed

    name = "MCP door"
    setup = "docs/MCP.md says how to add it to Claude, Cursor, VS Code or LM Studio"
    if importlib.util.find_spec("mcp") is None:
        return Check(
            name, "fail", "the `mcp` package is not installed", "Reinstall vask: `uv sync` (or pip install vask)."
        )
    launch = shutil.which("vask") or "python -m vask_server.cli"
    command = f"`{launch} mcp --vault {settings.require_vault()}`"
    try:
        store = await Store.open(settings.resolved_index_dir(), read_only=True)
        index = store.read_meta().searched()
        notes, _ = await store.tables(index).note_statuses()
    except NotIndexed:
        return Check(
            name, "warn", f"{command} would have no index to answer from yet", "`vask index` (or `vask serve`)"
        )
    except VaskError as exc:
        return Check(name, "fail", f"{command} cannot open the index read-only: {exc.message}", exc.hint)
    building = "" if index.complete else " (its first index, being built)"
    return Check(
        name,
        "ok",
        f"{command} answers from {_count(notes, 'note')}{building}, read-only; `vask serve` serves it at /mcp too",
        setup,
    )


def _count(number: int, thing: str) -> str:
    return f"{number} {thing}{'' if number == 1 else 's'}"


def healthy(checks: list[Check]) -> bool:
    """No check failed: nothing stops vask from working (warnings and notes aside)."""
    return all(check.ok for check in checks)


def worst(checks: list[Check]) -> Level:
    return max((check.level for check in checks), key=LEVELS.index, default="ok")


def report(checks: list[Check]) -> dict[str, Any]:
    """What `vask doctor --json` prints and GET /v1/doctor answers."""
    return {"ok": healthy(checks), "level": worst(checks), "checks": [check.to_dict() for check in checks]}
