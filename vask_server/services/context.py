"""Wires settings to adapters and services once, for the CLI and the web app alike."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vask_server.adapters.footprint import chunk_mib, folder_bytes, per_notes, serve_idle_mib
from vask_server.adapters.gateway import ModelGateway
from vask_server.adapters.meta import IndexRecord
from vask_server.adapters.ollama import Embedder, OllamaGateway
from vask_server.adapters.openai_api import OpenAIGateway
from vask_server.adapters.store import Store
from vask_server.adapters.vault import Vault
from vask_server.config import ServerAccess, Settings, header_dict
from vask_server.core.embed_prompts import describe
from vask_server.core.model_languages import language_advice
from vask_server.errors import NotIndexed
from vask_server.services.options import index_options
from vask_server.services.proposals import ProposalService
from vask_server.services.query.exclusions import CurrentExclusions
from vask_server.services.query.qa import QAService
from vask_server.services.query.ranking import RetrievalConfig
from vask_server.services.query.search import Searcher
from vask_server.services.sync.indexer import Indexer

log = logging.getLogger(__name__)

UNSENT_OPENAI_KEY = (
    "VASK_OPENAI_API_KEY is set, but no request goes to VASK_OPENAI_BASE_URL, so it is sent nowhere; the "
    "answers' server at VASK_CHAT_BASE_URL is sent no key: give it its own with VASK_CHAT_API_KEY."
)


@dataclass
class QueryServices:
    """What answering from the index needs, and no more: what every door's questions go through. A
    reader (`vask mcp`) has only these, over an index it opened read-only."""

    settings: Settings
    vault_root: Path
    index_dir: Path
    gateway: ModelGateway  # embeddings (and answers, unless chat_gateway is another server)
    store: Store
    vault: Vault
    searcher: Searcher
    chat_gateway: ModelGateway  # answers: the same object as `gateway` when it is the same server

    async def close(self) -> None:
        await self.searcher.close()
        await self.gateway.close()
        if self.chat_gateway is not self.gateway:
            await self.chat_gateway.close()


@dataclass
class Services(QueryServices):
    """The query services, and the index's writer and answers: the server's and the CLI's."""

    indexer: Indexer
    qa: QAService
    proposals: ProposalService  # proposed changes to notes: the queue, apply, undo


def make_gateway(settings: Settings, access: ServerAccess) -> ModelGateway:
    """The gateway to `access`'s server, speaking its API, sent its secrets only, with the settings'
    timeout and retries."""
    if access.provider == "openai":
        return OpenAIGateway(
            access.address,
            api_key=access.api_key,
            key_setting=access.key_setting,
            timeout=settings.ollama_timeout,
            retries=settings.ollama_retries,
        )
    headers = header_dict(access.headers)
    if access.api_key:
        headers["Authorization"] = f"Bearer {access.api_key}"
    return OllamaGateway(
        access.address,
        timeout=settings.ollama_timeout,
        retries=settings.ollama_retries,
        headers=headers,
        key_setting=access.key_setting,
    )


def model_gateways(settings: Settings, gateway: ModelGateway | None = None) -> tuple[ModelGateway, ModelGateway]:
    """(embeddings, answers): one object when both come from one server sent the same secrets."""
    embed_access, chat_access = settings.embed_access(), settings.chat_access()
    embeds = gateway or make_gateway(settings, embed_access)
    return embeds, embeds if chat_access == embed_access else make_gateway(settings, chat_access)


async def build_services(settings: Settings, *, gateway: ModelGateway | None = None) -> Services:
    vault_root = settings.require_vault()
    index_dir = settings.resolved_index_dir()
    if settings.unsent_openai_key():
        log.warning(UNSENT_OPENAI_KEY)
    gateway, chat_gateway = model_gateways(settings, gateway)
    store = await Store.open(index_dir)
    vault = Vault(vault_root)
    instructions = settings.embed_instructions()
    embedder = Embedder(
        gateway,
        settings.embed_model,
        prompts=instructions.prompts,
        batch_size=settings.embed_batch_size,
        concurrency=settings.embed_concurrency,
    )
    indexer = Indexer(vault, store, embedder, index_options(settings))
    searcher = Searcher(
        store, gateway, RetrievalConfig(decline_sigmas=settings.decline_sigmas), instructions=instructions
    )
    searcher.sync_progress = lambda: indexer.progress
    searcher.exclusions = CurrentExclusions(vault, index_options(settings)).now
    qa = QAService(searcher, chat_gateway, settings.chat_model, settings.chat_context)
    return Services(
        settings=settings,
        vault_root=vault_root,
        index_dir=index_dir,
        gateway=gateway,
        store=store,
        vault=vault,
        searcher=searcher,
        chat_gateway=chat_gateway,
        indexer=indexer,
        qa=qa,
        proposals=ProposalService(vault, index_dir, index_options(settings)),
    )


async def open_reader_services(settings: Settings, *, gateway: ModelGateway | None = None) -> QueryServices:
    """The query services over the index as it stands, opened read-only: nothing is written, synced,
    watched or taken (not the writer's lock: a `vask serve` may be writing this index meanwhile)."""
    vault_root = settings.require_vault()
    index_dir = settings.resolved_index_dir()
    gateway, chat_gateway = model_gateways(settings, gateway)
    store = await Store.open(index_dir, read_only=True)
    vault = Vault(vault_root)
    searcher = Searcher(
        store,
        gateway,
        RetrievalConfig(decline_sigmas=settings.decline_sigmas),
        instructions=settings.embed_instructions(),
    )
    searcher.exclusions = CurrentExclusions(vault, index_options(settings)).now
    return QueryServices(settings, vault_root, index_dir, gateway, store, vault, searcher, chat_gateway)


@asynccontextmanager
async def open_services(settings: Settings, **kwargs: Any) -> AsyncIterator[Services]:
    services = await build_services(settings, **kwargs)
    try:
        yield services
    finally:
        await services.close()


async def index_status(services: QueryServices, *, check: bool = False, disk: bool = False) -> dict[str, Any]:
    """What is indexed, with which model, and what failed: for `vask status` and `/v1/status`.
    `check`: first runs one keyword query, so that `store_errors` shows a broken keyword index
    before a search meets it."""
    meta = services.store.read_meta()
    active = meta.active
    # What searches read: during a first sync, the index it is building (its notes embedded so far)
    searched = active or meta.building
    notes = chunks = keyword_only = 0
    dimension = searched.dimension if searched else 0
    failed: list[dict[str, str]] = []
    skipped: list[dict[str, str]] = []
    others: dict[str, tuple[str, str]] = {}
    if searched:
        tables = services.store.tables(searched)
        if check and active:  # (not mid-way through a first sync: it would build the keyword index)
            await tables.check_keyword_search()
        with contextlib.suppress(NotIndexed):  # (a reader, before the first sync has written anything)
            notes, others = await tables.note_statuses()
            chunks = await tables.count_chunks()
            if active is None:  # the notes found by keyword until they are embedded (keyword_first.py)
                keyword_only = max(0, await tables.text_notes() - notes)
        for path, (status, reason) in others.items():
            if status == "skipped":
                skipped.append({"path": path, "reason": reason})
            else:
                failed.append({"path": path, "reason": reason})
    # (a walk of the index folder: asked by the status commands, not by the count after every sync)
    on_disk = await asyncio.to_thread(folder_bytes, services.index_dir / "lancedb") if disk else None
    # (the same word for the same file as the sync's report: `vask index` and this must agree)
    failed.extend({"path": path, "reason": reason} for path, reason in meta.extra.get("scan_problems", {}).items())
    skipped.extend({"path": path, "reason": reason} for path, reason in meta.extra.get("scan_skipped", {}).items())
    return {
        "vault": str(services.vault_root),
        "index_dir": str(services.index_dir),
        "notes": notes,
        "chunks": chunks,
        # a first sync's notes not embedded yet that searches find by keyword meanwhile
        "keyword_only_notes": keyword_only,
        # the index folder's bytes (all tables and versions), and as many per 10,000 notes at this rate
        "disk_bytes": on_disk,
        "disk_bytes_per_10000_notes": None if on_disk is None else per_notes(on_disk, notes),
        # about what `vask serve` of this index holds when idle, and what 10,000 more notes at this
        # rate would add (fitted to the benchmarks' measurements: adapters/footprint.py)
        "serve_memory_mib": serve_idle_mib(chunks, dimension) if dimension else None,
        "serve_memory_mib_per_10000_notes": round(chunk_mib(per_notes(chunks, notes) or 0, dimension))
        if dimension and notes
        else None,
        "model": active.model if active else None,
        "dimension": active.dimension if active else None,
        "configured_model": services.settings.embed_model,
        "building": meta.building.to_json() if meta.building else None,
        "paused": meta.paused,
        "last_sync": meta.last_sync,
        # notes kept out of the index, counted by the rule that excludes them (never their names)
        "excluded": meta.extra.get("excluded", {}),
        "failed": sorted(failed, key=lambda f: f["path"]),
        "skipped": sorted(skipped, key=lambda f: f["path"]),
        "store_errors": services.store.problems(),  # the index itself failing: [{operation, message, hint}]
        # how keyword text is cut and why, what share of the notes read are not English, and what to do
        "language": _language(active),
        "servers": servers(services),
        "instructions": instructions_status(services.settings, active),
    }


def instructions_status(settings: Settings, active: IndexRecord | None) -> dict[str, Any]:
    """The instructions the configured model is sent and where each comes from (its card, a setting,
    none known), and whether the index's passages were embedded with another: then the next sync
    builds the index anew."""
    configured = settings.embed_instructions()
    index = active
    rebuild = index is not None and index.model == configured.model and index.document_prompt != configured.document
    return {
        "query": configured.query,
        "query_from": configured.query_source,
        "document": configured.document,
        "document_from": configured.document_source,
        "family": configured.family.name if configured.family else None,
        "card": configured.family.card if configured.family else None,
        "index_document": index.document_prompt if index is not None else None,
        "rebuild": rebuild,
        "text": describe(configured),
    }


def _language(active: IndexRecord | None) -> dict[str, Any]:
    if active is None:
        return {
            "keyword_terms": None,
            "keyword_reason": None,
            "keyword_sample": None,
            "not_english": None,
            "advice": None,
        }
    # What the keyword terms were chosen by: the setting, the notes read and those of them written
    # mostly in Chinese or Japanese (core/keyword_choice.py).
    choice = active.keyword_choice
    sample = (
        None
        if choice is None
        else {"setting": choice.setting, "notes_read": choice.notes_read, "cjk_notes": choice.cjk_notes}
    )
    return {
        "keyword_terms": active.keyword_terms,
        "keyword_reason": active.keyword_reason(),
        "keyword_sample": sample,
        "not_english": active.not_english,
        "advice": language_advice(active.model, active.not_english),
    }


def servers(services: QueryServices) -> dict[str, Any]:
    """The model servers embeddings and answers come from, and for each whether an API key is sent to
    it (never the key): `api_key` is given for an OpenAI-compatible server, and for Ollama when
    VASK_CHAT_API_KEY is sent to it."""
    settings = services.settings
    described: dict[str, Any] = {}
    for role, gateway, access in (
        ("embed", services.gateway, settings.embed_access()),
        ("chat", services.chat_gateway, settings.chat_access()),
    ):
        entry: dict[str, Any] = {"provider": gateway.provider, "url": gateway.host}
        if gateway.provider == "openai" or access.api_key:
            entry["api_key"] = "set" if access.api_key else "not set"
        described[role] = entry
    return described
