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
from datetime import date, datetime

import numpy as np
import pyarrow as pa

from vask_server.adapters.manifest import Manifest, NoteRecord
from vask_server.adapters.memory import release_memory
from vask_server.adapters.meta import IndexMeta, table_suffix
from vask_server.adapters.migrations import APPLIED, current_format
from vask_server.adapters.ollama import Embedder
from vask_server.adapters.pdf import PdfReader
from vask_server.adapters.snapshot import ScanSeen, clear_snapshot, index_is_current, save_snapshot
from vask_server.adapters.store import UNDROPPED_TABLES, Store, now_iso
from vask_server.adapters.vault import FileStat, NoteUnreadable, Vault, VaultScan
from vask_server.core.chunk import chunk_note
from vask_server.core.cjk import CJK, SIMPLE, written_in_cjk
from vask_server.core.dates import chunk_dates, date_note
from vask_server.core.describe import note_record
from vask_server.core.exclude import Excluder, opt_out_rule, opted_out, opted_out_text
from vask_server.core.filetypes import CANVAS, MARKDOWN, file_type
from vask_server.core.hashkeys import HashKeys
from vask_server.core.language import not_english_share
from vask_server.core.links import LinkResolver
from vask_server.core.models import Chunk, Note
from vask_server.core.parse import parse_note, plain_note
from vask_server.core.plan import IndexOptions, ScanPlan, SyncQueue, chunks_to_embed, plan_scan, recent_first
from vask_server.core.progress import SyncProgress
from vask_server.services.files import ReadFile, content_hash, read_canvas, read_pdf
from vask_server.services.options import excluder_for, known_keyword_terms, with_vault_dates
from vask_server.services.rows import Prepared, chunk_rows, note_record_of, text_rows

log = logging.getLogger(__name__)

_NOTES_PER_BATCH = 64
# A sync's first batch is small: it measures the model's pace within seconds, which decides whether
# the notes' text is made searchable by keyword ahead of their vectors (`_KEYWORD_FIRST_AFTER_S`).
_FIRST_BATCH_NOTES = 8
# A first sync expected to take longer than this writes every note's text (and its keyword index)
# before the vectors: with a laptop's model a large vault takes an hour, and its notes would be
# unsearchable meanwhile. A quicker one does not: it would only add the reading of every note twice.
_KEYWORD_FIRST_AFTER_S = 60.0
# ... and only with a model slower than this (chunks a second: a CPU's pace, not a GPU's), for which
# reading every note once more costs little beside the embedding; a fast model's first sync is quick
# enough without it, and would only be slowed by it.
_SLOW_MODEL_CHUNKS_PER_S = 150.0
_COMPACT_AFTER_WRITES = 25
# A sync of this many notes has its compaction's kept versions pruned once no search can read them
# (`Store.prune_later`): they hold as much again as the index. (A smaller one's wait the next sync.)
_PRUNE_AFTER_NOTES = 1_000
# Batches are read, parsed and embedded 64 notes at a time, but written in larger appends: every
# append is a table version and a data file, and compacting the 1,564 of a 100,000-note build peaked
# 66 MiB higher, kept 90 MiB more and took 14 s against 8 s for the same rows in 192. A write waits for
# this many rows or this long, so a crash loses at most a few seconds of embedding (redone next time).
_ROWS_PER_WRITE = 4_096
_SECONDS_PER_WRITE = 5.0
# Notes read to tell a vault's script (VASK_KEYWORD_TOKENIZER=auto), spread evenly over its paths.
_LANGUAGE_SAMPLE = 200


@dataclass
class SyncReport:
    scanned: int = 0
    changed: int = 0
    unchanged: int = 0
    deleted: int = 0
    chunks_embedded: int = 0
    chunks_reused: int = 0
    chunks_removed: int = 0  # rows of deleted notes
    touched: int = 0  # notes whose file time changed but not their text: rows kept, time recorded
    failed: list[tuple[str, str]] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    excluded: dict[str, int] = field(default_factory=dict)  # notes left out, by rule (never their paths)
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0
    model: str = ""
    dimension: int = 0

    def summary(self) -> str:
        return (
            f"{self.scanned} notes scanned, {self.changed} changed, {self.deleted} deleted; "
            + (f"{self.touched} touched (only their time changed); " if self.touched else "")
            + f"chunks: {self.chunks_embedded} embedded, {self.chunks_reused} reused, "
            f"{self.chunks_removed} removed; {len(self.failed)} failed, {len(self.skipped)} skipped; "
            + (f"{sum(self.excluded.values())} excluded; " if self.excluded else "")
            + f"{self.seconds:.2f} s"
        )


ProgressFn = Callable[[int, int], None]
# What a sync is doing once every note is read, where no count moves: "compacting", "keyword index",
# "removing excluded notes", "vector index"; None again when it is done. (LanceDB reports no progress
# inside them: at 100,000 notes they take ~35 s, and a first vector index ~20 s more.)
StageFn = Callable[[str | None], None]


@dataclass
class _Pending:
    """Batches embedded but not yet written (see `_ROWS_PER_WRITE`)."""

    started: float = field(default_factory=time.monotonic)
    paths: list[str] = field(default_factory=list)
    rows: list[pa.Table] = field(default_factory=list)
    records: list[NoteRecord] = field(default_factory=list)
    opted_out: list[str] = field(default_factory=list)  # notes that opted out and have rows to remove
    vectors: dict[str, np.ndarray] = field(default_factory=dict)  # by hash: what later batches can reuse

    @property
    def row_count(self) -> int:
        return sum(table.num_rows for table in self.rows)

    def due(self) -> bool:
        return self.row_count >= _ROWS_PER_WRITE or time.monotonic() - self.started >= _SECONDS_PER_WRITE


@dataclass
class _Present:
    """What the chunks table (and manifest) held when a large sync started, plus what it wrote."""

    paths: set[str]
    hashes: HashKeys


@dataclass
class _Run:
    """One sync's state, filled in phase by phase (`Indexer._sync`)."""

    suffix: str
    dimension: int
    report: SyncReport
    only: set[str] | None  # a targeted sync's notes; None: the whole vault
    force: bool
    terms: str  # how the keyword text is cut
    terms_changed: bool  # ... and it is not how the index cut it: every row is rewritten
    first: bool  # the index's first sync (no complete index answers meanwhile)
    switching: bool  # to another model's index
    rechunk: bool  # every note is chunked again (`--full`, or the chunking or dating changed)
    # Filled by `_plan`; what holds every note (all but `plan` and the counts) is let go after the
    # writes (`let_go`), before the compaction and the index builds, the peak of a large sync.
    scan: VaultScan = field(init=False)
    manifest: Manifest = field(init=False)
    on_disk: dict[str, FileStat] = field(init=False)
    resolver: LinkResolver = field(init=False)
    keep: set[str] = field(init=False)
    present: _Present | None = None
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
        self._pdf: PdfReader | None = None  # started on a sync's first PDF, stopped when the sync ends
        self.progress: SyncProgress | None = None  # the running sync's, for the status
        self._queue: SyncQueue | None = None  # the running sync's notes still to do
        self._wanted_first: list[str] = []  # notes the person opened: taken first
        self._pause_changed = asyncio.Event()
        self._pausable = False
        self.keyword_first_after_s = _KEYWORD_FIRST_AFTER_S
        self.slow_model_chunks_per_s = _SLOW_MODEL_CHUNKS_PER_S
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
        """Background syncs wait while this is set (kept in index.json: a restart stays paused, and
        `vask pause` from another process is heard)."""
        return bool(self.store.read_meta().extra.get("paused"))

    def set_paused(self, paused: bool) -> None:
        meta = self.store.read_meta()
        if paused:
            meta.extra["paused"] = True
        else:
            meta.extra.pop("paused", None)
        self.store.write_meta(meta)
        self._pause_changed.set()

    async def _wait_while_paused(self, progress: ProgressFn | None) -> None:
        if not self.paused:
            return
        started = time.monotonic()
        if self.progress is not None:
            self.progress.paused = True
        if progress and self.progress is not None:
            progress(self.progress.notes_done, self.progress.notes_total)
        log.info("indexing paused")
        while self.paused:
            self._pause_changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._pause_changed.wait(), 1.0)  # (or `vask resume`, heard in index.json)
        log.info("indexing resumed")
        if self.progress is not None:
            self.progress.paused = False
            self.progress.was_paused(time.monotonic() - started)
        if progress and self.progress is not None:
            progress(self.progress.notes_done, self.progress.notes_total)

    async def target(self) -> tuple[str, int]:
        """The table suffix and dimension for the configured embedding model (asks the model)."""
        dimension = await self.embedder.dimension()
        return table_suffix(self.embedder.model, dimension), dimension

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
                if self._pdf is not None:
                    await asyncio.to_thread(self._pdf.close)
                    self._pdf = None

    async def _sync(
        self, only: set[str] | None, force: bool, progress: ProgressFn | None, stage: StageFn
    ) -> SyncReport:
        """The sync as a pipeline; each phase is a method below, in this order."""
        started = time.perf_counter()
        self.options = await asyncio.to_thread(with_vault_dates, self.options, self.vault)
        excluder = await asyncio.to_thread(excluder_for, self.options, self.vault)
        for problem in excluder.problems:
            log.warning("exclusion rule not used: %s", problem)
        terms, not_english, scan = await self._keyword_terms(excluder, anew=force and only is None)
        if only is not None and self.store.read_meta().extra.get("chunking") != self.options.fingerprint():
            only = None  # the notes' dating (or chunking) changed: every note is redone, not these alone
        if only is None and not force:
            scan = scan or await self._scan(excluder)
            unchanged = await self._unchanged_since_last_sync(scan, started, not_english)
            if unchanged is not None:
                return unchanged
        run = await self._start(only, force, terms)
        run.scan = scan or await self._scan(excluder)
        await self._plan(run)
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
        await self._record(run, not_english, scan_problems, scan_skipped, seen)
        run.report.seconds = time.perf_counter() - started
        return run.report

    async def _scan(self, excluder: Excluder) -> VaultScan:
        return await asyncio.to_thread(self.vault.scan, excluder, self.options.file_types)

    async def _keyword_terms(self, excluder: Excluder, *, anew: bool) -> tuple[str, float | None, VaultScan | None]:
        """How the keyword column is cut: as the setting says, else as the index records, else (a
        first build, `--full`) detected from the notes; and the share of notes not in English, for
        `vask status` and `vask doctor` to weigh the model. Decided before anything is written or
        compared. Returns the scan when it had to make one."""
        recorded = self.store.read_meta().active
        terms = known_keyword_terms(self._keyword_setting, None if anew else recorded)
        not_english = None if anew else (recorded or {}).get("not_english")
        scan = None
        if terms is None or not_english is None:
            scan = await self._scan(excluder)
            texts = await asyncio.to_thread(self._sample_notes, scan)
            if terms is None:
                terms = CJK if written_in_cjk(texts) else SIMPLE
                log.info("keyword terms: %s (from %d notes)", terms, len(texts))
            not_english = round(not_english_share(texts), 3)
        self.options = replace(self.options, keyword_terms=terms)
        return terms, not_english, scan

    async def _start(self, only: set[str] | None, force: bool, terms: str) -> _Run:
        """The index this sync writes (the configured model's), recorded as being built before any
        write, so a crash mid-build leaves it findable while queries keep using the complete one."""
        suffix, dimension = await self.target()
        meta = self.store.read_meta()
        recorded = meta.active
        switching = recorded is not None and recorded.get("suffix") != suffix
        if switching or recorded is None:
            meta.building = {
                "model": self.embedder.model,
                "dimension": dimension,
                "suffix": suffix,
                "keyword_terms": terms,  # (what a search during the first sync cuts its question into)
            }
            if recorded is None:
                meta.extra[APPLIED] = current_format()  # (a new index is written in it: no step to run)
            self.store.write_meta(meta)
        return _Run(
            suffix=suffix,
            dimension=dimension,
            report=SyncReport(model=self.embedder.model, dimension=dimension),
            only=None if switching else only,  # a new model's index is built whole before it is used
            force=force,
            terms=terms,
            terms_changed=recorded is not None and recorded.get("keyword_terms", SIMPLE) != terms,
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
        run.manifest = await self.store.manifest(run.suffix, run.only, with_links=False)
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
            paths_present, hashes_present = await self.store.chunk_keys(run.suffix, run.dimension)
            run.present = _Present(paths_present | set(run.manifest), hashes_present)

    async def _linkers_of(self, run: _Run, hidden: set[str], *, exclude: Collection[str] = ()) -> set[str]:
        """The rule for notes that link to a note now excluded or opted out: links to it resolve to
        nothing, as to a missing note, so these notes are redone and no row keeps even its path."""
        if not hidden:
            return set()
        return await self.store.notes_linking_to(run.suffix, hidden) - hidden - set(exclude) - set(run.plan.deleted)

    async def _embed_and_write(self, run: _Run, progress: ProgressFn | None) -> None:
        """The changed notes, most recent (and those the person opened) first, read and parsed a
        batch ahead in a worker thread while this batch is embedded and written: the model is not
        left waiting for the parser, nor the parser for the model. The first sync of an index (not a
        model switch: the old index answers meanwhile) that will take long writes every note's text
        to a keyword table first, searched by keyword until the end."""
        suffix, dimension, report, present = run.suffix, run.dimension, run.report, run.present
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
        prepare = functools.partial(self._prepare_ahead, run.on_disk, run.manifest, run.resolver, run.keep)
        batch = queue.take(_FIRST_BATCH_NOTES if keyword_first else _NOTES_PER_BATCH)
        upcoming = prepare(batch)
        pending = _Pending()
        try:
            while upcoming is not None:
                if self._pausable and self.paused:
                    if pending.paths:  # what is embedded is kept while paused
                        await self._write_pending(suffix, dimension, pending, present)
                        pending = _Pending()
                    await self._wait_while_paused(progress)
                prepared = await upcoming
                embedded_before = report.chunks_embedded
                await self._embed_batch(suffix, dimension, prepared, report, present, pending)
                following = queue.take(_NOTES_PER_BATCH)
                upcoming = prepare(following)
                # (the first batch at once: the newest notes, searchable in the first seconds)
                if pending.due() or upcoming is None or done == 0:
                    await self._write_pending(suffix, dimension, pending, present)
                    pending = _Pending()
                done += len(batch)
                sync_progress.advance(
                    time.monotonic(),
                    notes=len(batch),
                    size=sum(item.stamp.size for item in prepared),
                    chunks=sum(len(item.chunks) for item in prepared),
                    embedded=report.chunks_embedded - embedded_before,
                )
                if keyword_first and keyword_task is None:
                    keyword_task = self._keyword_first(suffix, sync_progress, run.on_disk, run.resolver)
                batch = following
                if progress:
                    progress(done, run.total)
            if keyword_task is not None:
                await keyword_task  # (its failure is logged there: searches then wait for the end)
        except Exception:
            # What was embedded before the failure (Ollama gone, say) is kept, not embedded again.
            if pending.paths:
                with contextlib.suppress(Exception):
                    await self._write_pending(suffix, dimension, pending, present)
            raise
        finally:
            if upcoming is not None and not upcoming.done():
                upcoming.cancel()
            if keyword_task is not None and not keyword_task.done():
                keyword_task.cancel()

    async def _redo_linkers(self, run: _Run) -> None:
        """The notes linking to notes that opted out in their frontmatter (found only by reading
        them, during this sync), redone without the link's target (`_linkers_of`)."""
        opted_out, self._opted_out = self._opted_out, set()
        redo = sorted(await self._linkers_of(run, opted_out))
        if redo:
            hidden = set(run.scan.excluded) | opted_out
            quiet = LinkResolver([path for path in run.scan.all_files if path not in hidden])
            theirs = await self.store.manifest(run.suffix, redo, with_links=False)
            prepared = await asyncio.to_thread(self._prepare, redo, run.scan.notes, theirs, quiet)
            pending = _Pending()
            await self._embed_batch(run.suffix, run.dimension, prepared, run.report, None, pending)
            await self._write_pending(run.suffix, run.dimension, pending, None)

    async def _delete(self, run: _Run) -> None:
        """The notes gone from disk (or excluded), after the new ones are written: a moved note has
        found its old vectors by content hash by now."""
        if run.newly_excluded:
            self._purge = True  # notes that became excluded: no version of the tables may keep them
        if not run.plan.deleted:
            return
        removed = sum(run.manifest.chunk_count(p) for p in run.plan.deleted if p in run.manifest)
        await self.store.delete_notes(run.suffix, run.dimension, run.plan.deleted)
        run.report.deleted = len(run.plan.deleted)
        run.report.chunks_removed += removed
        self._writes_since_compact += 1

    async def _remove_orphans(self, run: _Run) -> None:
        """Rows whose note has no manifest entry: left by a crash between a note's chunk write and
        its manifest row, for a note that was then deleted. Nothing else would ever remove them."""
        if run.only is not None:
            return
        known = (set(run.manifest) | set(run.plan.changed)) - set(run.plan.deleted)
        orphans = sorted(await self.store.chunk_paths(run.suffix, run.dimension) - known)
        if orphans:
            log.info("removing chunks of %d notes that are in no manifest", len(orphans))
            await self.store.delete_notes(run.suffix, run.dimension, orphans)
            run.plan = replace(run.plan, deleted=[*run.plan.deleted, *orphans])

    async def _finish_tables(self, run: _Run, stage: StageFn) -> None:
        """Compaction, the keyword index, the purge of excluded notes' old versions, and a first ANN
        index: the steps where no count moves (`StageFn`)."""
        suffix, dimension = run.suffix, run.dimension
        run.wrote = run.total > 0 or bool(run.plan.deleted)
        run.compacted = run.wrote and (run.only is None or self._writes_since_compact >= _COMPACT_AFTER_WRITES)
        if run.compacted:
            stage("compacting")
            await self.store.compact(suffix, dimension)
            self._writes_since_compact = 0
            if run.large:
                release_memory()  # what the compaction freed, before the full-text index is built
        # `--full` also makes the keyword index again: what repairs one whose files are damaged
        stage("keyword index")
        # (and when the text is cut another way: every row was rewritten, the index is made anew)
        rebuild = (run.force and run.only is None) or run.terms_changed
        await self.store.ensure_fts(suffix, dimension, rebuild=rebuild)
        # The chunks table answers keyword searches now. (Also a keyword table a killed first sync
        # left, when this one, nearly done, needed none: no copy of a note's text may outlive its sync.)
        await self.store.drop_text(suffix)
        if self._purge:
            stage("removing excluded notes")
            await self.store.purge(suffix, dimension)
            self._purge = False
        if run.large:
            # The handles and caches of every version the sync wrote, and of the full-text build, let
            # go before the vector index is built on top: the peak of a large first sync.
            await self.store.forget_tables()
            release_memory()
        first_ann = await self.store.missing_vector_index(suffix, dimension) if run.wrote else None
        if first_ann is not None:
            stage("vector index")
            await self.store.index_vectors_now(suffix, dimension, first_ann)
        stage(None)

    async def _record(
        self,
        run: _Run,
        not_english: float | None,
        scan_problems: dict[str, str],
        scan_skipped: dict[str, str],
        seen: ScanSeen | None,
    ) -> None:
        """index.json says the index is complete (and which it replaced, whose tables go), and the
        scan's snapshot is kept for the next "nothing changed" check."""
        meta = self.store.read_meta()
        previous = meta.active
        meta.active = {
            "model": self.embedder.model,
            "dimension": run.dimension,
            "suffix": run.suffix,
            "completed_at": now_iso(),
            "keyword_terms": run.terms,
            "not_english": not_english,
        }
        meta.building = None
        meta.last_sync = now_iso()
        # Counted as well: two syncs can end within the second `last_sync` has, and what is measured
        # per index version (the search calibration) must see both.
        meta.extra["syncs"] = int(meta.extra.get("syncs", 0)) + 1
        meta.extra["chunking"] = self.options.fingerprint()
        if run.only is None:
            _remember_scan_problems(meta, scan_problems, scan_skipped)
            meta.extra["excluded"] = dict(sorted(run.report.excluded.items()))  # counts by rule, no paths
        self.store.write_meta(meta)
        replaced = str(previous["suffix"]) if previous and previous.get("suffix") != run.suffix else None
        if previous and replaced:
            log.info("index for %s is complete; removing the %s index", self.embedder.model, previous.get("model"))
        await self._remove_old_tables(meta, replaced, run.report)
        if seen is not None:
            save_snapshot(self.store.index_dir, self.embedder.model, self.options.fingerprint(), seen)
        if run.large or run.compacted:
            release_memory()  # after a large sync or a compaction: give the freed heap back
        await self.store.index_vectors_later(run.suffix, run.dimension)
        if run.total >= _PRUNE_AFTER_NOTES and run.compacted:
            self.store.prune_later(run.suffix, run.dimension)

    def _sample_notes(self, scan: VaultScan) -> list[str]:
        """The text of up to `_LANGUAGE_SAMPLE` notes spread over the vault, to tell its languages by
        (nothing of it is kept). Notes that opted out are left out."""
        paths = sorted(p for p in scan.notes if file_type(p) in (MARKDOWN, None))
        step = max(1, len(paths) // _LANGUAGE_SAMPLE)
        texts = []
        for path in paths[::step][:_LANGUAGE_SAMPLE]:
            try:
                text, _ = self.vault.read_note(path, self.options.max_note_bytes)
            except NoteUnreadable:
                continue
            if not opted_out_text(text):
                texts.append(text)
        return texts

    async def _unchanged_since_last_sync(
        self, scan: VaultScan, started: float, not_english: float | None
    ) -> SyncReport | None:
        """A full sync that finds every note exactly as the last complete sync left it (the same
        snapshot `vask index` checks) has nothing to do: it reads no rows and asks the model nothing,
        so a restart with nothing changed embeds nothing. (It does open the chunks table once, to
        start an ANN index that a killed or failed build left missing.) None when anything differs."""
        meta = self.store.read_meta()
        active = meta.active
        fingerprint = self.options.fingerprint()
        if not active or not index_is_current(self.store.index_dir, meta, self.embedder.model, fingerprint, scan.notes):
            return None
        report = SyncReport(model=self.embedder.model, dimension=int(active["dimension"]))
        report.scanned = report.unchanged = len(scan.notes)
        report.failed.extend(scan.problems.items())
        report.skipped.extend(scan.skipped.items())
        for rule in scan.excluded.values():
            report.excluded[rule] = report.excluded.get(rule, 0) + 1
        remembered = _remember_scan_problems(meta, scan.problems, scan.skipped)
        if active.get("not_english") is None and not_english is not None:  # (an index made before it was kept)
            active["not_english"] = not_english
            remembered = True
        if remembered:
            self.store.write_meta(meta)
        await self._remove_old_tables(meta, None, report)
        await self.store.index_vectors_later(str(active["suffix"]), report.dimension)
        report.seconds = time.perf_counter() - started
        return report

    async def _remove_old_tables(self, meta: IndexMeta, replaced: str | None, report: SyncReport) -> None:
        """Drops the tables of the index this sync replaced, and those an earlier sync failed to
        drop. Any that stay are warned about and kept in index.json (the status lists them), and
        the next sync tries again: they hold a whole index's worth of disk."""
        leftover: dict[str, str] = dict(meta.extra.get(UNDROPPED_TABLES, {}))
        suffixes = {name.split("_", 1)[1] for name in leftover} | ({replaced} if replaced else set())
        in_use = {(meta.active or {}).get("suffix"), (meta.building or {}).get("suffix")}
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
        return asyncio.ensure_future(asyncio.to_thread(self._prepare, batch, on_disk, manifest, resolver, keep))

    def _keyword_first(
        self,
        suffix: str,
        progress: SyncProgress,
        on_disk: dict[str, FileStat],
        resolver: LinkResolver,
    ) -> asyncio.Task[None] | None:
        """After the first batch has measured the model's pace: when the rest will take longer than
        `_KEYWORD_FIRST_AFTER_S`, the text of every note left is written to the store's keyword
        table (in the background, beside the embedding) and searched by keyword until the end."""
        seconds_left = progress.eta_seconds(min_measured_s=0.0)
        if seconds_left is None or seconds_left < self.keyword_first_after_s:
            return None
        if progress.chunks_embedded > self.slow_model_chunks_per_s * self._embed_seconds:
            return None
        # Every note, those embedded already too: until the end, keyword searches read this table
        # alone. Markdown and canvases: a PDF is read by the sync's one PDF worker, not to be shared.
        paths = recent_first((p for p in on_disk if file_type(p) in (MARKDOWN, CANVAS, None)), on_disk)
        log.info("the first sync will take ~%d min: every note is searchable by keyword first", seconds_left // 60)
        return asyncio.create_task(self._write_keyword_table(suffix, paths, on_disk, resolver), name="vask-keywords")

    async def _write_keyword_table(
        self, suffix: str, paths: list[str], on_disk: dict[str, FileStat], resolver: LinkResolver
    ) -> None:
        started = time.perf_counter()
        try:
            await self.store.start_text(suffix)
            empty = Manifest.empty()
            rows: list[pa.Table] = []
            for start in range(0, len(paths), _NOTES_PER_BATCH):
                prepared = await asyncio.to_thread(
                    self._prepare, paths[start : start + _NOTES_PER_BATCH], on_disk, empty, resolver
                )
                table = text_rows(prepared, self.options.keyword_terms)
                if table is not None:
                    rows.append(table)
                if sum(t.num_rows for t in rows) >= _ROWS_PER_WRITE:
                    await self.store.add_text_rows(suffix, pa.concat_tables(rows))
                    rows = []
            if rows:
                await self.store.add_text_rows(suffix, pa.concat_tables(rows))
            await self.store.finish_text(suffix)
            log.info(
                "every note is searchable by keyword (%d notes in %.1f s); %d are still to be embedded",
                len(paths),
                time.perf_counter() - started,
                len(self._queue or ()),
            )
        except asyncio.CancelledError:
            raise
        except Exception:  # keyword search then waits for the sync's end, as it did without this
            log.exception("writing the keyword table failed")

    def _prepare(
        self,
        paths: list[str],
        on_disk: dict[str, FileStat],
        manifest: Manifest,
        resolver: LinkResolver,
        keep: Collection[str] = (),
    ) -> list[Prepared]:
        """Reads, parses and chunks (in a worker thread: it is the CPU-heavy part). `keep`: notes
        whose stored rows stay if their text is as the manifest records it (only their time
        changed), instead of being parsed and written again."""
        out: list[Prepared] = []
        for path in paths:
            item = Prepared(path=path, stamp=on_disk[path])
            if file_type(path) not in (MARKDOWN, None):
                self._read_other(item, resolver)
                out.append(item)
                continue
            try:
                text, warnings = self.vault.read_note(path, self.options.max_note_bytes)
            except NoteUnreadable as exc:
                item.status, item.reason = exc.status, exc.reason
                out.append(item)
                continue
            item.warnings.extend(warnings)
            item.content_hash = content_hash(text)
            record = manifest.get(path) if path in keep else None
            if record is not None and _only_touched(record, item):
                item.kept = record
                out.append(item)
                continue
            try:
                note = parse_note(path, text, resolver)
                if opted_out(note.frontmatter):
                    out.append(_opted_out(item, manifest))
                    continue
                item.note, item.chunks = self._chunked(note)
            except Exception as exc:  # a parser bug must cost the note its structure, not its text
                if opted_out_text(text):  # (even a note the parser chokes on keeps its opt-out, unlogged)
                    out.append(_opted_out(item, manifest))
                    continue
                log.exception("could not parse %s", path)
                problem = f"could not parse: {type(exc).__name__}: {exc}"
                try:
                    warning = f"{path}: {problem}; indexed as plain text, without its headings, links and tags"
                    item.note, item.chunks = self._chunked(plain_note(path, text, warning))
                except Exception:  # not even as plain text: the note is listed as failed, with why
                    log.exception("could not index %s as plain text", path)
                    item.status, item.reason = "failed", problem
                    item.note, item.chunks = None, []
            if item.note is not None:
                item.warnings.extend(item.note.warnings)
                dates = date_note(item.note, datetime.fromtimestamp(item.stamp.mtime_ns / 1e9), self.options.dates)
                item.dates, item.modified = chunk_dates(item.chunks, dates), dates.modified
            out.append(item)
        return out

    def _read_other(self, item: Prepared, resolver: LinkResolver) -> None:
        """A Canvas board or a PDF (services/files.py), dated as a note without dates of its own is."""
        try:
            read: ReadFile
            if file_type(item.path) == CANVAS:
                read = read_canvas(self.vault, item.path, self.options, resolver)
            else:
                if self._pdf is None:
                    self._pdf = PdfReader(self.options.pdf_timeout, self.options.max_pdf_bytes)
                read = read_pdf(self.vault, self._pdf, item.path, self.options)
        except NoteUnreadable as exc:
            item.status, item.reason = exc.status, exc.reason
            return
        item.note, item.chunks, item.content_hash = read.note, read.chunks, read.content_hash
        item.warnings.extend(read.warnings)
        dates = date_note(read.note, datetime.fromtimestamp(item.stamp.mtime_ns / 1e9), self.options.dates)
        item.dates, item.modified = chunk_dates(item.chunks, dates), dates.modified

    def _chunked(self, note: Note) -> tuple[Note, list[Chunk]]:
        chunks = chunk_note(note, self.options.chunking)
        record = note_record(note) if self.options.note_records else None
        if record is not None:
            chunks.append(record)
        return note, chunks

    async def _embed_batch(
        self,
        suffix: str,
        dimension: int,
        prepared: list[Prepared],
        report: SyncReport,
        present: _Present | None,
        pending: _Pending,
    ) -> None:
        """Embeds what a batch needs (reusing stored vectors, and those of batches not yet written)
        and adds its rows and note records to `pending`."""
        all_chunks = [chunk for item in prepared for chunk in item.chunks]
        all_hashes = {c.hash for c in all_chunks}
        known = {h: pending.vectors[h] for h in all_hashes if h in pending.vectors}
        # (with `present`: the others have no stored vector, no need to ask)
        wanted = all_hashes - known.keys()
        hashes = present.hashes.maybe_present(wanted) if present is not None else wanted
        known.update(await self.store.vectors_for_hashes(suffix, dimension, hashes))
        to_embed = chunks_to_embed(all_chunks, known)
        if to_embed:
            asked = time.perf_counter()
            vectors = await self.embedder.embed([c.embed_text for c in to_embed])
            self._embed_seconds += time.perf_counter() - asked
            for chunk, vector in zip(to_embed, vectors, strict=True):
                known[chunk.hash] = vector
        report.chunks_embedded += len(to_embed)
        report.chunks_reused += len(all_chunks) - len(to_embed)

        indexed_at = now_iso()
        self._opted_out.update(item.path for item in prepared if item.status == "excluded")
        pending.opted_out.extend(item.path for item in prepared if item.status == "excluded" and item.was_indexed)
        for item in prepared:
            if item.status == "excluded":
                report.excluded[item.reason] = report.excluded.get(item.reason, 0) + 1
                continue
            if item.kept is not None:
                report.touched += 1
                pending.records.append(replace(item.kept, mtime_ns=item.stamp.mtime_ns, size=item.stamp.size))
                continue
            report.changed += 1
            report.warnings.extend(item.warnings)
            if item.status == "failed":
                report.failed.append((item.path, item.reason))
            elif item.status == "skipped":
                report.skipped.append((item.path, item.reason))
            pending.records.append(note_record_of(item, indexed_at))
        rows = chunk_rows(prepared, known, dimension, self.options.keyword_terms)
        if rows is not None:
            pending.rows.append(rows)
        pending.paths.extend(item.path for item in prepared if item.kept is None)  # (touched ones keep their rows)
        pending.vectors.update(known)

    async def _write_pending(self, suffix: str, dimension: int, pending: _Pending, present: _Present | None) -> None:
        unread = [record.path for record in pending.records if record.links is None]
        if unread:  # touched notes' records, read without their links: they are written back whole
            links = await self.store.links_of(suffix, unread)
            pending.records = [
                replace(r, links=links.get(r.path, "[]")) if r.links is None else r for r in pending.records
            ]
        rows = pa.concat_tables(pending.rows) if pending.rows else None
        await self.store.write_notes(
            suffix, dimension, pending.paths, rows, pending.records, existing=None if present is None else present.paths
        )
        if pending.opted_out:  # notes that have just opted out: their rows go, and no kept version may hold them
            await self.store.delete_notes(suffix, dimension, pending.opted_out)
            self._purge = True
        if present is not None:
            present.paths.update(pending.paths)
            present.hashes.add(pending.vectors)
        self._writes_since_compact += 1


def _no_stage(_: str | None) -> None:
    pass


def _remember_scan_problems(meta: IndexMeta, problems: dict[str, str], skipped: dict[str, str]) -> bool:
    """Files the scan failed to look at or skipped are in no manifest, so the status reads them from
    here, under the same word the sync used. True when that changed what `meta` holds."""
    found = {
        "scan_problems": dict(sorted(problems.items())),
        "scan_skipped": dict(sorted(skipped.items())),
    }
    changed = any(meta.extra.get(key, {}) != value for key, value in found.items())
    meta.extra.update(found)
    return changed


def _opted_out(item: Prepared, manifest: Manifest) -> Prepared:
    """The rule for a note that opted out in its frontmatter: read only to see this, nothing of it is
    kept, embedded or logged; its rows, if it has any, are removed (`_Pending.opted_out`)."""
    item.status, item.reason = "excluded", opt_out_rule()
    item.was_indexed = item.path in manifest
    return item


def _only_touched(record: NoteRecord, item: Prepared) -> bool:
    """The note was indexed whole from this very text, and its time moved within the same day: its
    rows would come out the same (the day is all of the time they record)."""
    return (
        record.status == "ok"
        and record.content_hash == item.content_hash
        and _day(record.mtime_ns) == _day(item.stamp.mtime_ns)
    )


def _day(mtime_ns: int) -> date:
    return datetime.fromtimestamp(mtime_ns / 1e9).date()  # as date_note reads it: local time
