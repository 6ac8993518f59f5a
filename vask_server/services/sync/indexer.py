"""Keeps the store in step with the vault: only changed files are read, only new text is embedded.

Order matters for safety: a batch's chunks are written before its manifest rows, so a crash leaves
notes that the next sync redoes, never a note marked indexed without its vectors; deleted notes are
removed after new ones are written, so a moved note finds its old vectors by content hash.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field, replace

from vask_server.adapters.manifest import Manifest
from vask_server.adapters.memory import release_memory
from vask_server.adapters.meta import IndexMeta, IndexRecord, now_iso
from vask_server.adapters.migrations import APPLIED, current_format
from vask_server.adapters.ollama import Embedder
from vask_server.adapters.snapshot import ScanSeen, clear_snapshot, index_is_current, save_snapshot
from vask_server.adapters.store import UNDROPPED_TABLES, Store
from vask_server.adapters.tables import IndexTables
from vask_server.adapters.vault import FileStat, NoteUnreadable, Vault, VaultScan
from vask_server.core.exclude import Excluder, opted_out, opted_out_text
from vask_server.core.filetypes import MARKDOWN, file_type
from vask_server.core.keyword_choice import VaultLanguage
from vask_server.core.links import LinkResolver
from vask_server.core.parse import frontmatter_of
from vask_server.core.plan import IndexOptions, ScanPlan, SyncQueue, plan_scan, recent_first
from vask_server.core.progress import SyncProgress
from vask_server.errors import NotIndexed
from vask_server.services.options import excluder_for, known_keyword_terms, with_vault_dates
from vask_server.services.sync.batches import Pending, Present, embed_batch, write_pending
from vask_server.services.sync.keyword_first import (
    FIRST_BATCH_NOTES,
    KEYWORD_FIRST_AFTER_S,
    SLOW_MODEL_CHUNKS_PER_S,
    long_first_sync,
    refresh_keyword_table,
    start_keyword_table,
)
from vask_server.services.sync.pause import SyncPause
from vask_server.services.sync.reading import NoteReader, vault_language
from vask_server.services.sync.recut import recut_keyword_text
from vask_server.services.sync.rows import Prepared
from vask_server.services.sync.sync_report import SyncReport, remember_scan_problems

log = logging.getLogger(__name__)

_NOTES_PER_BATCH = 64
_COMPACT_AFTER_WRITES = 25
# A sync of this many notes has the versions its compaction kept pruned once no search can read them
# (`IndexTables.prune_versions`): they hold as much again as the index. (A smaller one's wait the next sync.)
_PRUNE_AFTER_NOTES = 1_000
# Batches are read, parsed and embedded 64 notes at a time, but written in larger appends: every
# append is a table version and a data file, and many small ones make the compaction slower and its
# memory peak higher than the same rows in fewer. A write waits for this many rows or this long, so a
# crash loses at most a few seconds of embedding (redone next time).
_ROWS_PER_WRITE = 4_096
_SECONDS_PER_WRITE = 5.0


ProgressFn = Callable[[int, int], None]
# What a sync is doing once every note is read, where no count moves: "compacting", "keyword index",
# "removing excluded notes", "vector index"; None again when it is done. (LanceDB reports no progress
# inside them, and on a large vault they are long: docs/BENCHMARKS.md, "Sync and live events".)
StageFn = Callable[[str | None], None]


@dataclass
class _Run:
    """One sync's state, filled in phase by phase (`Indexer._sync`)."""

    index: IndexRecord  # the index this sync writes, as recorded once it is complete
    tables: IndexTables  # ... and its tables
    report: SyncReport
    only: set[str] | None  # a targeted sync's notes; None: the whole vault
    force: bool
    terms: str  # how the keyword text is cut
    terms_changed: bool  # ... and it is not how the index cut it: its keyword text is cut anew
    first: bool  # the index's first sync (no complete index answers meanwhile)
    switching: bool  # to another model's index
    rechunk: bool  # every note is chunked again (`--full`, or the chunking or dating changed)
    text_recut: bool  # ... and not how an earlier run of this first sync cut its keyword table
    recut: bool = False  # every row's keyword text was cut anew (`_recut`)
    # Filled by `_plan`; what holds every note (all but `plan` and the counts) is let go after the
    # writes (`let_go`), before the compaction and the index builds, the peak of a large sync.
    scan: VaultScan = field(init=False)
    manifest: Manifest = field(init=False)
    on_disk: dict[str, FileStat] = field(init=False)
    resolver: LinkResolver = field(init=False)
    keep: set[str] = field(init=False)
    present: Present | None = None
    plan: ScanPlan = field(init=False)
    newly_excluded: set[str] = field(default_factory=set)
    linkers: set[str] = field(default_factory=set)
    total: int = 0  # notes to read
    large: bool = False  # more than one batch
    wrote: bool = False
    compacted: bool = False

    def let_go(self) -> None:
        del self.scan, self.manifest, self.on_disk, self.resolver, self.keep
        self.present = None


class Indexer:
    def __init__(self, vault: Vault, store: Store, embedder: Embedder, options: IndexOptions) -> None:
        self.vault = vault
        self.store = store
        self.embedder = embedder
        self.options = options
        self._keyword_setting = options.keyword_terms  # "auto", "simple" or "cjk"; resolved per sync
        self._writes_since_compact = 0
        self._purge = False  # excluded notes were removed since the last purge
        self._opted_out: set[str] = set()  # notes found opted out during this sync
        self._lock = asyncio.Lock()
        self.reader = NoteReader(vault, options)  # (given each sync's options as it starts)
        self.progress: SyncProgress | None = None  # the running sync's, for the status
        self._queue: SyncQueue | None = None  # the running sync's notes still to do
        self._wanted_first: list[str] = []  # notes the person opened: taken first
        self.pause = SyncPause(store)
        self._pausable = False
        # When a first sync writes every note's text for keyword search before embedding (keyword_first.py)
        self.keyword_first_after_s = KEYWORD_FIRST_AFTER_S
        self.slow_model_chunks_per_s = SLOW_MODEL_CHUNKS_PER_S
        self._embed_seconds = 0.0  # the running sync's time waiting for the model

    # -- the person's say in a long sync ------------------------------------------------------------

    def prioritize(self, paths: Iterable[str]) -> int:
        """Notes to take before the others (those the person has open or opened last): moved to the
        front of the running sync, and of the next one. Returns how many the running sync moved."""
        wanted = [p for p in paths if isinstance(p, str)][:200]
        self._wanted_first = list(dict.fromkeys([*wanted, *self._wanted_first]))[:200]
        return self._queue.promote(wanted) if self._queue is not None else 0

    @property
    def paused(self) -> bool:
        """Background syncs wait while this is set (services/sync/pause.py)."""
        return self.pause.on

    def set_paused(self, paused: bool) -> None:
        self.pause.set(paused)

    async def target(self) -> IndexRecord:
        """The index of the configured embedding model, as a sync starts to build it (asks the model
        its dimension)."""
        dimension = await self.embedder.dimension()
        return IndexRecord.building(self.embedder.model, dimension, self.options.keyword_terms, self.embedder.prompts)

    async def sync(
        self,
        only: Iterable[str] | None = None,
        *,
        force: bool = False,
        progress: ProgressFn | None = None,
        stage: StageFn | None = None,
        pausable: bool = False,
    ) -> SyncReport:
        """`pausable`: waits between batches while paused (`set_paused`): the server's background
        syncs are; a `vask index` the person runs is not."""
        async with self._lock:
            self._pausable = pausable
            try:
                return await self._sync(set(only) if only is not None else None, force, progress, stage or _no_stage)
            finally:
                self.progress, self._queue = None, None
                await asyncio.to_thread(self.reader.close)  # (its PDF worker, if the sync started one)

    async def _sync(
        self, only: set[str] | None, force: bool, progress: ProgressFn | None, stage: StageFn
    ) -> SyncReport:
        """The sync as a pipeline; each phase is a method below, in this order."""
        started = time.perf_counter()
        self.options = await asyncio.to_thread(with_vault_dates, self.options, self.vault)
        excluder = await asyncio.to_thread(excluder_for, self.options, self.vault)
        for problem in excluder.problems:
            log.warning("exclusion rule not used: %s", problem)
        if only is not None and self.store.read_meta().extra.get("chunking") != self.options.fingerprint():
            only = None  # the notes' dating (or chunking) changed: every note is redone, not these alone
        scan = await self._scan(excluder) if only is None else None
        # (nothing changed since the last complete sync: what the vault's notes tell is as it recorded)
        # (in a thread: the scan's digest takes a moment at a large vault, and the server answers meanwhile)
        current = scan is not None and not force and await asyncio.to_thread(self._index_current, scan)
        terms, language, scan = await self._keyword_terms(excluder, scan, current=current, anew=force)
        self.reader.options = self.options  # (as they are for this sync, its keyword terms decided)
        if current and scan is not None and language is not None:
            unchanged = await self._unchanged_since_last_sync(scan, started, language)
            if unchanged is not None:
                return unchanged
        run = await self._start(only, force, terms)
        run.scan = scan or await self._scan(excluder)
        # (the run holds the scan now, and lets it go before the tables' last steps, the peak of a large
        # sync: a name here would keep every note's entry alive through the vector index build)
        del scan
        if run.terms_changed and not run.switching:
            await self._recut(run, stage)
        await self._plan(run)
        await self._remove_opted_out(run)
        await self._embed_and_write(run, progress)
        await self._redo_linkers(run)
        await self._delete(run)
        await self._remove_orphans(run)
        seen = ScanSeen.of(run.scan.notes) if run.only is None else None
        scan_problems, scan_skipped = run.scan.problems, run.scan.skipped
        run.let_go()
        if run.large:
            release_memory()
        await self._finish_tables(run, stage)
        await self._record(run, language, scan_problems, scan_skipped, seen)
        run.report.seconds = time.perf_counter() - started
        return run.report

    async def _scan(self, excluder: Excluder) -> VaultScan:
        return await asyncio.to_thread(self.vault.scan, excluder, self.options.file_types)

    def _index_current(self, scan: VaultScan) -> bool:
        """Every note is exactly as the last complete sync of this model's index saw it."""
        meta = self.store.read_meta()
        return index_is_current(
            self.store.index_dir,
            meta,
            self.embedder.model,
            self.options.fingerprint(),
            scan.notes,
            self.embedder.prompts.document,
        )

    async def _keyword_terms(
        self, excluder: Excluder, scan: VaultScan | None, *, current: bool, anew: bool
    ) -> tuple[str, VaultLanguage | None, VaultScan | None]:
        """How the keyword column is cut. A whole sync (`scan` given) decides it from the vault's
        notes (`reading.vault_language`), and tells the share of notes not in English for `vask status`
        and `vask doctor` to weigh the model by; unless `current` (no note changed since the complete
        sync that recorded a choice under this setting and rule: the notes would tell the same). A
        sync of a few notes cuts them as the index does (it reads the notes only when there is no
        index yet). Decided before anything is written or compared. Returns the scan when it made one."""
        recorded = self.store.read_meta().active
        if scan is None:
            terms = known_keyword_terms(self._keyword_setting, recorded)
            if terms is not None:
                self.options = replace(self.options, keyword_terms=terms)
                return terms, None, None
            scan = await self._scan(excluder)
        language = None if anew or not current or recorded is None else recorded.language(self._keyword_setting)
        if language is None:
            language = await asyncio.to_thread(vault_language, self.vault, scan.notes, self._keyword_setting)
            log.info("keyword terms: %s (%s)", language.keyword.terms, language.keyword.reason())
        terms = language.keyword.terms
        self.options = replace(self.options, keyword_terms=terms)
        return terms, language, scan

    async def _recut(self, run: _Run, stage: StageFn) -> None:
        """The index's keyword text cut the new way, from its rows (services/sync/recut.py: nothing is read
        again or embedded), and recorded at once: a question is cut as the rows it is matched with.
        The sync then compacts and rebuilds the indexes (`_finish_tables`)."""
        stage("keyword index")
        clear_snapshot(self.store.index_dir)  # (the indexes are rebuilt by a whole sync, not skipped)
        await recut_keyword_text(run.tables, run.terms)
        meta = self.store.read_meta()
        if meta.active is not None and meta.active.suffix == run.index.suffix:
            meta.active = replace(meta.active, keyword_terms=run.terms)
            self.store.write_meta(meta)
        run.recut = True
        stage(None)

    async def _start(self, only: set[str] | None, force: bool, terms: str) -> _Run:
        """The index this sync writes (the configured model's), recorded as being built before any
        write, so a crash mid-build leaves it findable while queries keep using the complete one."""
        # (its keyword terms: what a search during the first sync cuts its question into)
        target = replace(await self.target(), keyword_terms=terms)
        meta = self.store.read_meta()
        recorded, before = meta.active, meta.building
        switching = recorded is not None and recorded.suffix != target.suffix
        if switching or recorded is None:
            meta.building = target
            if recorded is None:
                meta.extra[APPLIED] = current_format()  # (a new index is written in it: no step to run)
            self.store.write_meta(meta)
        return _Run(
            index=target,
            tables=self.store.tables(target),
            report=SyncReport(model=self.embedder.model, dimension=target.dimension),
            only=None if switching else only,  # a new model's index is built whole before it is used
            force=force,
            terms=terms,
            terms_changed=recorded is not None and recorded.keyword_terms != terms,
            # (a first sync's keyword table, kept from before a restart, was cut as its record said)
            text_recut=before is not None and before.keyword_terms != terms,
            first=recorded is None,
            switching=switching,
            rechunk=force or meta.extra.get("chunking") != self.options.fingerprint(),
        )

    async def _plan(self, run: _Run) -> None:
        """What changed on disk since the manifest, plus the notes that link to a note now excluded."""
        scan, report = run.scan, run.report
        for rule in scan.excluded.values():
            report.excluded[rule] = report.excluded.get(rule, 0) + 1
        if run.only is not None and any(path in scan.excluded for path in run.only):
            run.only = None  # a note moved into an excluded folder: the notes linking to it are redone too
        # A targeted sync reads only its notes' rows, and no sync their links (most of a row; the
        # few records written back, of touched notes, have theirs read again: `_write_pending`).
        run.manifest = await run.tables.manifest(run.only, with_links=False)
        only = run.only
        run.on_disk = scan.notes if only is None else {p: s for p, s in scan.notes.items() if p in only}
        run.plan = plan_scan(run.on_disk, run.manifest.stamps(), force=run.rechunk and only is None)
        run.newly_excluded = {path for path in run.plan.deleted if path in scan.excluded}
        run.linkers = await self._linkers_of(run, run.newly_excluded, exclude=set(run.plan.changed))
        if run.linkers:
            run.plan = replace(run.plan, changed=sorted([*run.plan.changed, *run.linkers]))
        report.scanned = len(run.on_disk)
        report.unchanged = run.plan.unchanged
        report.failed.extend((p, r) for p, r in scan.problems.items() if only is None or p in only)
        report.skipped.extend((p, r) for p, r in scan.skipped.items() if only is None or p in only)
        run.resolver = LinkResolver([path for path in scan.all_files if path not in scan.excluded])
        run.total = len(run.plan.changed)
        run.large = run.total > _NOTES_PER_BATCH
        # A note whose file time changed but not its text (a checkout, a sync tool, a backup restore)
        # keeps its rows: rewriting them all left every index behind the table until the next
        # compaction, and searches took seconds meanwhile. Not when the chunking changed, nor for
        # the notes redone because a note they link to became excluded.
        run.keep = set() if run.rechunk else set(run.plan.changed) - run.linkers
        if run.total or run.plan.deleted or run.switching:
            clear_snapshot(self.store.index_dir)
        # A sync of many batches reads which paths and hashes have rows once, instead of asking the
        # table (a scan that grows with it) for every batch: quadratic on a first build otherwise.
        if run.large:
            paths_present, hashes_present = await run.tables.chunk_keys()
            run.present = Present(paths_present | set(run.manifest), hashes_present)

    async def _remove_opted_out(self, run: _Run) -> None:
        """Indexed notes whose file now opts out in its frontmatter (`vask: exclude`, written while no
        server watched): their rows go before anything is embedded, which waits behind a pause or the
        notes before them, so no search finds them meanwhile. Their own turn in the sync then finds
        them opted out, as it would have."""
        indexed = [path for path in run.plan.changed if path in run.manifest]
        await self._delete_opted_out(run.tables, indexed)

    async def remove_opted_out(self, paths: Collection[str]) -> None:
        """What a paused sync cannot wait for: of these notes just changed, those the searched index
        holds and that now opt out lose their rows at once (the sync of them waits for the resume)."""
        try:
            tables = self.store.tables(self.store.read_meta().searched())
        except NotIndexed:
            return
        held = await tables.manifest(paths, with_links=False)
        await self._delete_opted_out(tables, [path for path in paths if path in held])

    async def _delete_opted_out(self, tables: IndexTables, indexed: list[str]) -> None:
        indexed = [path for path in indexed if file_type(path) == MARKDOWN]
        if not indexed:
            return
        max_bytes = self.options.max_note_bytes
        opted = await asyncio.to_thread(lambda: [p for p in indexed if self._opts_out_now(p, max_bytes)])
        if opted:
            await tables.delete_notes(opted)
            self._purge = True  # no kept version of the tables may hold them either (at a sync's end)

    def _opts_out_now(self, path: str, max_bytes: int) -> bool:
        try:
            text, _ = self.vault.read_note(path, max_bytes)
        except NoteUnreadable:
            return False  # (its turn in the sync says why it cannot be read)
        return opted_out(frontmatter_of(text)) or opted_out_text(text)

    async def _linkers_of(self, run: _Run, hidden: set[str], *, exclude: Collection[str] = ()) -> set[str]:
        """The rule for notes that link to a note now excluded or opted out: links to it resolve to
        nothing, as to a missing note, so these notes are redone and no row keeps even its path."""
        if not hidden:
            return set()
        return await run.tables.notes_linking_to(hidden) - hidden - set(exclude) - set(run.plan.deleted)

    async def _embed_and_write(self, run: _Run, progress: ProgressFn | None) -> None:
        """The changed notes, most recent (and those the person opened) first, read and parsed a
        batch ahead in a worker thread while this batch is embedded and written: the model is not
        left waiting for the parser, nor the parser for the model. The first sync of an index (not a
        model switch: the old index answers meanwhile) that will take long writes every note's text
        to a keyword table first, searched by keyword until the end."""
        tables, report, present = run.tables, run.report, run.present
        done = 0
        self._embed_seconds = 0.0
        queue = self._queue = SyncQueue(recent_first(run.plan.changed, run.scan.notes, self._wanted_first))
        self.progress = sync_progress = SyncProgress(
            notes_total=run.total,
            bytes_total=sum(run.scan.notes[p].size for p in run.plan.changed if p in run.scan.notes),
            started=time.monotonic(),
        )
        if progress:
            progress(0, run.total)
        keyword_first = run.first and run.only is None and run.large
        keyword_task: asyncio.Task[None] | None = None
        kept_table = await self._keep_keyword_table(run)
        prepare = functools.partial(self._prepare_ahead, run.on_disk, run.manifest, run.resolver, run.keep)
        size = FIRST_BATCH_NOTES if keyword_first else _NOTES_PER_BATCH
        batch = queue.take(size)
        upcoming = prepare(batch)
        pending = Pending()
        try:
            while upcoming is not None:
                if self._pausable and self.paused:
                    if pending.paths:  # what is embedded is kept while paused
                        await self._write_pending(tables, pending, present)
                        pending = Pending()
                    await self.pause.wait_while_on(self.progress, progress)
                prepared = await upcoming
                embedded_before = report.chunks_embedded
                await self._embed_batch(tables, prepared, report, present, pending)
                # A first sync's batches grow from the first, each written at once: the newest notes,
                # searchable by meaning in the first seconds rather than after a whole batch.
                growing, size = size < _NOTES_PER_BATCH, min(2 * size, _NOTES_PER_BATCH)
                following = queue.take(size)
                upcoming = prepare(following)
                if pending.due(_ROWS_PER_WRITE, _SECONDS_PER_WRITE) or upcoming is None or growing:
                    await self._write_pending(tables, pending, present)
                    pending = Pending()
                done += len(batch)
                sync_progress.advance(
                    time.monotonic(),
                    notes=len(batch),
                    size=sum(item.stamp.size for item in prepared),
                    chunks=sum(len(item.chunks) for item in prepared),
                    embedded=report.chunks_embedded - embedded_before,
                )
                if keyword_first and keyword_task is None and not kept_table:
                    keyword_task = self._keyword_first(tables, sync_progress, run.on_disk, run.resolver)
                batch = following
                if progress:
                    progress(done, run.total)
            if keyword_task is not None:
                await keyword_task  # (its failure is logged there: searches then wait for the end)
        except Exception:
            # What was embedded before the failure (Ollama gone, say) is kept, not embedded again.
            if pending.paths:
                with contextlib.suppress(Exception):
                    await self._write_pending(tables, pending, present)
            raise
        finally:
            if upcoming is not None and not upcoming.done():
                upcoming.cancel()
            if keyword_task is not None and not keyword_task.done():
                keyword_task.cancel()

    async def _keep_keyword_table(self, run: _Run) -> bool:
        """A keyword table an earlier run of this first sync finished: kept, brought in step with the
        vault before anything waits (a pause, the model), rather than written again after a batch."""
        if not (run.first and run.only is None and run.tables.text_ready()):
            return False
        await refresh_keyword_table(
            run.tables,
            self.reader,
            run.on_disk,
            run.resolver,
            recut=run.text_recut,
            notes_per_batch=_NOTES_PER_BATCH,
            rows_per_write=_ROWS_PER_WRITE,
        )
        return True

    async def _redo_linkers(self, run: _Run) -> None:
        """The notes linking to notes that opted out in their frontmatter (found only by reading
        them, during this sync), redone without the link's target (`_linkers_of`)."""
        opted_out, self._opted_out = self._opted_out, set()
        redo = sorted(await self._linkers_of(run, opted_out))
        if redo:
            hidden = set(run.scan.excluded) | opted_out
            quiet = LinkResolver([path for path in run.scan.all_files if path not in hidden])
            theirs = await run.tables.manifest(redo, with_links=False)
            prepared = await asyncio.to_thread(self.reader.prepare, redo, run.scan.notes, theirs, quiet)
            pending = Pending()
            await self._embed_batch(run.tables, prepared, run.report, None, pending)
            await self._write_pending(run.tables, pending, None)

    async def _delete(self, run: _Run) -> None:
        """The notes gone from disk (or excluded), after the new ones are written: a moved note has
        found its old vectors by content hash by now."""
        if run.newly_excluded:
            self._purge = True  # notes that became excluded: no version of the tables may keep them
        if not run.plan.deleted:
            return
        removed = sum(run.manifest.chunk_count(p) for p in run.plan.deleted if p in run.manifest)
        await run.tables.delete_notes(run.plan.deleted)
        run.report.deleted = len(run.plan.deleted)
        run.report.chunks_removed += removed
        self._writes_since_compact += 1

    async def _remove_orphans(self, run: _Run) -> None:
        """Rows whose note has no manifest entry: left by a crash between a note's chunk write and
        its manifest row, for a note that was then deleted. Nothing else would ever remove them."""
        if run.only is not None:
            return
        known = (set(run.manifest) | set(run.plan.changed)) - set(run.plan.deleted)
        orphans = sorted(await run.tables.chunk_paths() - known)
        if orphans:
            log.info("removing chunks of %d notes that are in no manifest", len(orphans))
            await run.tables.delete_notes(orphans)
            run.plan = replace(run.plan, deleted=[*run.plan.deleted, *orphans])

    async def _finish_tables(self, run: _Run, stage: StageFn) -> None:
        """Compaction, the keyword index, the purge of excluded notes' old versions, and a first ANN
        index: the steps where no count moves (`StageFn`)."""
        tables = run.tables
        run.wrote = run.total > 0 or bool(run.plan.deleted) or run.recut
        run.compacted = run.wrote and (run.only is None or self._writes_since_compact >= _COMPACT_AFTER_WRITES)
        if run.compacted:
            stage("compacting")
            if await tables.compact():
                log.info("compacted the chunks table; its vector index is built anew")
            self._writes_since_compact = 0
            if run.large:
                release_memory()  # what the compaction freed, before the full-text index is built
        # `--full` also makes the keyword index again: what repairs one whose files are damaged
        stage("keyword index")
        # (and when the text is cut another way: every row's keyword text changed, the index is made anew)
        rebuild = (run.force and run.only is None) or run.terms_changed
        await tables.ensure_fts(rebuild=rebuild)
        if run.wrote:  # (rows written since a table with a vector index was compacted)
            await tables.refresh_keyword_index()
        # The chunks table answers keyword searches now. (Also a keyword table a killed first sync
        # left, when this one, nearly done, needed none: no copy of a note's text may outlive its sync.)
        if run.only is None:  # (every start-up sync is whole: a leftover is gone after a restart)
            await tables.drop_text()
        purged = self._purge
        if purged:
            stage("removing excluded notes")
            await tables.purge()
            self._purge = False
        if run.large:
            # The handles and caches of every version the sync wrote, and of the full-text build, let
            # go before the vector index is built on top: the peak of a large first sync.
            await self.store.forget_tables()
            release_memory()
        # (the index a table large enough lacks: after a first sync, or dropped by a compaction or the purge)
        first_ann = await tables.missing_vector_index() if run.wrote or purged else None
        prune = run.compacted and run.total >= _PRUNE_AFTER_NOTES
        if first_ann is not None:
            stage("vector index")
            if prune:  # (before the index is built: the pruning's optimize would damage it)
                await tables.prune_versions()
            await tables.index_vectors_now(first_ann)
        elif prune:
            tables.prune_later()
        stage(None)

    async def _record(
        self,
        run: _Run,
        language: VaultLanguage | None,
        scan_problems: dict[str, str],
        scan_skipped: dict[str, str],
        seen: ScanSeen | None,
    ) -> None:
        """index.json says the index is complete (and which it replaced, whose tables go), and the
        scan's snapshot is kept for the next "nothing changed" check."""
        meta = self.store.read_meta()
        previous = meta.active
        record = replace(run.index, keyword_terms=run.terms, complete=True, completed_at=now_iso())
        # what the notes told at this sync; a sync of a few notes keeps what the last whole one did
        meta.active = record.with_language(language) if language is not None else _language_kept(record, previous)
        meta.building = None
        meta.last_sync = now_iso()
        # Counted as well: two syncs can end within the second `last_sync` has, and what is measured
        # per index version (the search calibration) must see both.
        meta.extra["syncs"] = int(meta.extra.get("syncs", 0)) + 1
        meta.extra["chunking"] = self.options.fingerprint()
        if run.only is None:
            remember_scan_problems(meta, scan_problems, scan_skipped)
            meta.extra["excluded"] = dict(sorted(run.report.excluded.items()))  # counts by rule, no paths
        self.store.write_meta(meta)
        replaced = previous.suffix if previous and previous.suffix != run.index.suffix else None
        if previous and replaced:
            log.info("index for %s is complete; removing the %s index", self.embedder.model, previous.model)
        await self._remove_old_tables(meta, replaced, run.report)
        if seen is not None:
            save_snapshot(self.store.index_dir, self.embedder.model, self.options.fingerprint(), seen)
        if run.large or run.compacted:
            release_memory()  # after a large sync or a compaction: give the freed heap back
        await run.tables.index_vectors_later()

    async def _unchanged_since_last_sync(
        self, scan: VaultScan, started: float, language: VaultLanguage
    ) -> SyncReport | None:
        """A full sync that finds every note exactly as the last complete sync left it (the same
        snapshot `vask index` checks), and the keyword text cut as the notes still call for, has
        nothing to do: it reads no rows and asks the model nothing, so a restart with nothing changed
        embeds nothing. (It does open the chunks table once, to start an ANN index that a killed or
        failed build left missing.) None when anything differs."""
        meta = self.store.read_meta()
        active = meta.active
        if not active or active.keyword_terms != language.keyword.terms:
            return None
        report = SyncReport(model=self.embedder.model, dimension=active.dimension)
        report.scanned = report.unchanged = len(scan.notes)
        report.failed.extend(scan.problems.items())
        report.skipped.extend(scan.skipped.items())
        for rule in scan.excluded.values():
            report.excluded[rule] = report.excluded.get(rule, 0) + 1
        remembered = remember_scan_problems(meta, scan.problems, scan.skipped)
        read = active.with_language(language).with_query_prompt(self.embedder.prompts.query)
        if read != active:  # (read anew: kept as read)
            meta.active = read
            remembered = True
        if remembered:
            self.store.write_meta(meta)
        await self._remove_old_tables(meta, None, report)
        await self.store.tables(active).index_vectors_later()
        report.seconds = time.perf_counter() - started
        return report

    async def _remove_old_tables(self, meta: IndexMeta, replaced: str | None, report: SyncReport) -> None:
        """Drops the tables of the index this sync replaced, and those an earlier sync failed to
        drop. Any that stay are warned about and kept in index.json (the status lists them), and
        the next sync tries again: they hold a whole index's worth of disk."""
        leftover: dict[str, str] = dict(meta.extra.get(UNDROPPED_TABLES, {}))
        suffixes = {name.split("_", 1)[1] for name in leftover} | ({replaced} if replaced else set())
        in_use = {record.suffix for record in (meta.active, meta.building) if record is not None}
        if not suffixes - in_use:
            return
        failed: dict[str, str] = {}
        for suffix in sorted(suffixes - in_use):
            failed.update(await self.store.drop(suffix))
        for name, reason in sorted(failed.items()):
            report.warnings.append(
                f"could not remove the old index table {name} ({reason}); it takes disk space until it is, "
                "and the next sync tries again"
            )
        if failed != leftover:
            meta.extra[UNDROPPED_TABLES] = failed
            self.store.write_meta(meta)

    def _prepare_ahead(
        self,
        on_disk: dict[str, FileStat],
        manifest: Manifest,
        resolver: LinkResolver,
        keep: Collection[str],
        batch: list[str],
    ) -> asyncio.Future[list[Prepared]] | None:
        """The batch read and parsed in a worker thread, to be awaited when its turn comes."""
        if not batch:
            return None
        return asyncio.ensure_future(asyncio.to_thread(self.reader.prepare, batch, on_disk, manifest, resolver, keep))

    def _keyword_first(
        self, tables: IndexTables, progress: SyncProgress, on_disk: dict[str, FileStat], resolver: LinkResolver
    ) -> asyncio.Task[None] | None:
        """After the first batch has measured the model's pace: the keyword table, written in the
        background when the rest will take long (keyword_first.py)."""
        seconds_left = long_first_sync(
            progress,
            self._embed_seconds,
            after_s=self.keyword_first_after_s,
            slow_chunks_per_s=self.slow_model_chunks_per_s,
        )
        if seconds_left is None:
            return None
        return start_keyword_table(
            tables,
            self.reader,
            on_disk,
            resolver,
            seconds_left=seconds_left,
            notes_per_batch=_NOTES_PER_BATCH,
            rows_per_write=_ROWS_PER_WRITE,
            left_to_embed=lambda: len(self._queue or ()),
        )

    async def _embed_batch(
        self,
        tables: IndexTables,
        prepared: list[Prepared],
        report: SyncReport,
        present: Present | None,
        pending: Pending,
    ) -> None:
        self._embed_seconds += await embed_batch(
            tables, self.embedder, prepared, report, present, pending, self.options.keyword_terms
        )
        self._opted_out.update(item.path for item in prepared if item.status == "excluded")

    async def _write_pending(self, tables: IndexTables, pending: Pending, present: Present | None) -> None:
        if await write_pending(tables, pending, present):
            self._purge = True  # notes that have just opted out: no kept version of the tables may hold them
        self._writes_since_compact += 1


def _no_stage(_: str | None) -> None:
    pass


def _language_kept(record: IndexRecord, previous: IndexRecord | None) -> IndexRecord:
    """The record with what the index's previous record said of the vault's languages, kept by a
    sync that did not read them."""
    if previous is None or previous.suffix != record.suffix:
        return record
    kept = {key: value for key, value in previous.others.items() if key in ("not_english", "keyword_choice")}
    return replace(record, not_english=previous.not_english, keyword_choice=previous.keyword_choice, others=kept)
