"""Settings → indexing options (kept apart from the services so importing it stays cheap)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from vask_server.adapters.meta import IndexMeta, IndexRecord, read_meta
from vask_server.adapters.snapshot import index_is_current
from vask_server.adapters.vault import (
    APP_SETTINGS,
    DAILY_NOTES_SETTINGS,
    PERIODIC_NOTES_SETTINGS,
    Vault,
    VaultScan,
)
from vask_server.config import Settings
from vask_server.core.chunk import ChunkOptions
from vask_server.core.cjk import CJK, SIMPLE
from vask_server.core.exclude import Excluder, ExclusionRules, obsidian_filters
from vask_server.core.filetypes import CANVAS, MARKDOWN, PDF
from vask_server.core.plan import IndexOptions
from vask_server.core.time.dates import DateOptions, periodic_formats


def index_options(settings: Settings, vault: Vault | None = None) -> IndexOptions:
    """The options a sync of this vault uses; with `vault`, dated by the vault's own periodic-note
    settings as they are now."""
    options = IndexOptions(
        chunking=ChunkOptions(max_tokens=settings.chunk_tokens, max_chars=settings.chunk_max_chars),
        max_note_bytes=settings.max_note_bytes,
        dates=DateOptions(date_keys=settings.date_keys),
        exclude=settings.exclude,
        obsidian_excluded=settings.obsidian_excluded,
        file_types=file_types(settings),
        max_pdf_bytes=settings.max_pdf_bytes,
        pdf_timeout=settings.pdf_timeout,
        keyword_terms=settings.keyword_tokenizer,
    )
    return options if vault is None else with_vault_dates(options, vault)


def file_types(settings: Settings) -> tuple[str, ...]:
    """Markdown always; Canvas boards and PDFs unless turned off."""
    return (MARKDOWN, *([CANVAS] if settings.index_canvas else []), *([PDF] if settings.index_pdf else []))


def with_vault_dates(options: IndexOptions, vault: Vault) -> IndexOptions:
    """`options` with the periodic-note formats the vault configures (read anew: a user can change
    them in Obsidian at any time; a change re-dates every note at the next full sync)."""
    periodic = periodic_formats(
        vault.obsidian_settings(DAILY_NOTES_SETTINGS), vault.obsidian_settings(PERIODIC_NOTES_SETTINGS)
    )
    if periodic == options.dates.periodic:
        return options
    return replace(options, dates=replace(options.dates, periodic=periodic))


def excluder_for(options: IndexOptions, vault: Vault) -> Excluder:
    """The exclusion rules as they are now: the user's patterns, and Obsidian's Excluded files read
    anew from `.obsidian/app.json` (unless VASK_OBSIDIAN_EXCLUDED is off)."""
    obsidian = obsidian_filters(vault.obsidian_settings(APP_SETTINGS)) if options.obsidian_excluded else ()
    return Excluder(ExclusionRules(globs=options.exclude, obsidian=obsidian))


def known_keyword_terms(setting: str, active: IndexRecord | None) -> str | None:
    """How a sync of a few notes cuts their keyword text, known without reading notes: as the index
    does (its rows must all be cut one way; a whole sync is what changes it, the setting's change
    included), else the setting's choice. None: `auto` with no index yet (the indexer then reads the
    notes)."""
    if active is not None and active.keyword_terms in (SIMPLE, CJK):
        return active.keyword_terms
    return setting if setting in (SIMPLE, CJK) else None


def unchanged_since_last_sync(settings: Settings, vault: Vault, index_dir: Path) -> tuple[IndexMeta, VaultScan] | None:
    """The index's record and the vault's scan when a full sync would find nothing to do: the decision
    the indexer makes before a sync (adapters/snapshot.index_is_current, on the options that sync
    would use), taken from a directory scan alone, without the database or the model. None when
    anything differs, and when only reading the notes could tell (the index records no choice of
    keyword terms under this setting and today's rule, or not the notes' language: with the notes
    as they were, a choice it records would be made again the same)."""
    meta = read_meta(index_dir)
    active = meta.active
    if not active or active.model != settings.embed_model:
        return None  # (before the scan: a changed model needs no look at the files)
    language = active.language(settings.keyword_tokenizer)
    if language is None:
        return None
    options = replace(index_options(settings, vault), keyword_terms=language.keyword.terms)
    scan = vault.scan(excluder_for(options, vault), options.file_types)
    instructions = settings.embed_instructions()
    if active.query_prompt != instructions.query:
        return None  # (the sync records the new query instruction: nothing is embedded for it)
    if not index_is_current(
        index_dir, meta, settings.embed_model, options.fingerprint(), scan.notes, instructions.document
    ):
        return None
    return meta, scan
