"""`vask index`, `vask status`, `vask pause` and `vask resume`: building the index with a progress bar
(the index's one writer meanwhile), saying what it holds, and pausing the server's indexing."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TextIO

from vask_server.config import Settings
from vask_server.core.progress import SyncProgress, describe_eta
from vask_server.errors import VaskError

if TYPE_CHECKING:
    from vask_server.adapters.writer_lock import IndexBusy, WriterLock
    from vask_server.services.context import Services


def nothing_changed(settings: Settings) -> bool:
    """`vask index`'s fast path: when a directory scan shows the last complete sync left nothing to do
    (services/options.unchanged_since_last_sync), says so without opening the database."""
    from vask_server.adapters.vault import Vault
    from vask_server.services.options import unchanged_since_last_sync

    started = time.perf_counter()
    vault_root = settings.require_vault()
    index_dir = settings.resolved_index_dir()
    unchanged = unchanged_since_last_sync(settings, Vault(vault_root), index_dir)
    if unchanged is None:
        return False
    meta, scan = unchanged
    active = meta.active
    assert active is not None  # (an unchanged index is a complete one)
    print(f"indexed {vault_root} with {active.model} ({active.dimension}-d) into {index_dir}")
    print(
        f"{len(scan.notes)} notes scanned, 0 changed, 0 deleted; chunks: 0 embedded, 0 reused, 0 removed; "
        f"nothing to do; {time.perf_counter() - started:.2f} s"
    )
    for path, reason in sorted(scan.problems.items()):
        print(f"  failed  {path}: {reason}")
    for path, reason in sorted(scan.skipped.items()):
        print(f"  skipped {path}: {reason}")
    return True


async def index(args: argparse.Namespace, services: Services) -> int:
    """`vask index`: a sync with a progress bar, then what it did and what it could not read."""
    progress = ProgressBar(sys.stderr, enabled=not args.quiet, estimate=lambda: services.indexer.progress)
    result = await services.indexer.sync(force=args.full, progress=progress)
    await services.store.wait_background()  # a large index's ANN index, before this process exits
    await services.searcher.keep_calibration()
    print(f"indexed {services.vault_root} with {result.model} ({result.dimension}-d) into {services.index_dir}")
    print(result.summary())
    for path, reason in result.failed:
        print(f"  failed  {path}: {reason}")
    for path, reason in result.skipped:
        print(f"  skipped {path}: {reason}")
    for warning in result.warnings:
        print(f"  warning {warning}")
    return 0


async def status(args: argparse.Namespace, services: Services) -> int:
    """`vask status`: what is indexed, with which model and servers, and what failed or was skipped."""
    from vask_server.services.context import index_status

    status = await index_status(services, check=True, disk=True)
    if args.json:
        print(json.dumps(status, ensure_ascii=False, indent=2))
        return 0
    if status.get("paused"):
        print("indexing is paused (`vask resume` goes on where it stopped).")
    if not status["model"]:
        print(f"{status['vault']} is not indexed yet (index folder {status['index_dir']}).")
        if status["building"]:
            print(f"Its first index is being built: {_searchable_so_far(status)}.")
        else:
            print("Run `vask index` to build it.")
        return 0
    print(f"vault:      {status['vault']}")
    print(f"index:      {status['index_dir']}")
    print(f"model:      {status['model']} ({status['dimension']}-d)")
    if status["configured_model"] != status["model"]:
        print(f"configured: {status['configured_model']} (run `vask index` to switch)")
    print(f"notes:      {status['notes']}  chunks: {status['chunks']}  last sync: {status['last_sync']}")
    per = status["disk_bytes_per_10000_notes"]
    scaled = f" ({per / 2**20:,.0f} MiB per 10,000 notes at this rate)" if per else ""
    print(f"disk:       {status['disk_bytes'] / 2**20:,.1f} MiB{scaled}")
    if status["serve_memory_mib"] is not None:
        more = status["serve_memory_mib_per_10000_notes"]
        extra = f", +{more:,} MiB per 10,000 more notes at this rate" if more is not None else ""
        print(f"memory:     vask serve idles at about {status['serve_memory_mib']:,} MiB{extra}")
    language = status["language"]
    if language["keyword_terms"]:
        print(f"keywords:   {language['keyword_terms']} ({language['keyword_reason']})")
    if language["advice"]:
        print(f"language:   {language['advice']}")
    instructions = status["instructions"]
    print(f"instructions: {instructions['text']}")
    if instructions["rebuild"]:
        print("  the index's passages were embedded with another instruction: `vask index` builds it anew")
    embed, chat = status["servers"]["embed"], status["servers"]["chat"]

    def server(entry: dict[str, Any]) -> str:
        key = f" (API key {entry['api_key']})" if "api_key" in entry else ""
        return f"{entry['provider']} at {entry['url']}{key}"

    answers = "the same" if chat == embed else server(chat)
    print(f"servers:    embeddings {server(embed)}; answers {answers}")
    excluded = status.get("excluded") or {}
    if excluded:
        rules = "; ".join(f"{count} by {rule}" for rule, count in excluded.items())
        print(f"excluded:   {sum(excluded.values())} notes ({rules})")
    for item in status["failed"]:
        print(f"  failed  {item['path']}: {item['reason']}")
    for item in status["skipped"]:
        print(f"  skipped {item['path']}: {item['reason']}")
    for problem in status["store_errors"]:
        print(f"  error   {problem['message']}. {problem['hint']}")
    return 0


def writer(settings: Settings) -> WriterLock:
    """`vask index`'s hold on the index (adapters/writer_lock.py), taken before it reads anything:
    a second writer, or a `vask serve` running on the index, is an error that names it."""
    from vask_server.adapters.writer_lock import INDEX, WriterLock

    settings.require_vault()  # (a wrong vault is said before any folder is made for it)
    return WriterLock(settings.resolved_index_dir(), INDEX)


def pause(settings: Settings, *, paused: bool) -> int:
    """Through the running `vask serve`'s API when one holds the index (it alone writes index.json
    then); else written into index.json, where the next server reads it."""
    from vask_server.adapters.meta import read_meta, write_meta
    from vask_server.adapters.writer_lock import IndexBusy, WriterLock

    index_dir = settings.resolved_index_dir()
    if not (index_dir / "index.json").exists():
        raise VaskError(f"There is no index in {index_dir} to pause or resume.", "Check --vault / --index-dir.")
    lock = WriterLock(index_dir, "vask pause" if paused else "vask resume")
    try:
        lock.acquire()
    except IndexBusy as busy:
        return _pause_server(busy, paused)
    try:
        meta = read_meta(index_dir)
        meta.set_paused(paused)
        write_meta(index_dir, meta)
    finally:
        lock.release()
    if paused:
        print("indexing paused: no `vask serve` runs on this index now; the next one waits until `vask resume`.")
        print("Searches go on.")
    else:
        print("indexing resumed: the next `vask serve` of this index indexes as usual.")
    return 0


def _pause_server(busy: IndexBusy, paused: bool) -> int:
    from vask_server.adapters.running_server import post
    from vask_server.adapters.writer_lock import INDEX, SERVE

    holder = busy.holder
    if holder is None or holder.command != SERVE:
        hint = (
            "`vask pause` pauses `vask serve`; a `vask index` run by hand is not paused: stop it with Ctrl-C "
            "(it keeps what it embedded), then run `vask pause` again."
        )
        raise VaskError(busy.message, hint if holder is not None and holder.command == INDEX else busy.hint)
    post(holder, busy.index_dir, "/v1/index/pause" if paused else "/v1/index/resume")
    if paused:
        print(f"indexing paused: {holder.describe()} stops after its current batch and keeps what it embedded.")
        print("Searches go on. `vask resume` goes on where it stopped (also after a restart).")
    else:
        print(f"indexing resumed: {holder.describe()} goes on where it stopped.")
    return 0


class ProgressBar:
    """Notes done, percent and time left; a bar on a terminal, a line every 10% elsewhere.
    `estimate`: the sync's progress (core/progress.py), which measures by bytes and knows the pace."""

    def __init__(
        self, stream: TextIO, enabled: bool = True, estimate: Callable[[], SyncProgress | None] | None = None
    ) -> None:
        self.stream = stream
        self.enabled = enabled
        self.estimate = estimate
        self.started = time.perf_counter()
        self.tty = stream.isatty()
        self._last_decile = -1

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled or total == 0:
            return
        elapsed = max(time.perf_counter() - self.started, 1e-6)
        rate = done / elapsed
        progress = self.estimate() if self.estimate is not None else None
        fraction = progress.fraction() if progress is not None else done / total
        left = describe_eta(progress.eta_seconds()) if progress is not None and done < total else ""
        tail = f"  {left}" if left else ""
        if self.tty:
            width = 30
            filled = int(width * fraction)
            bar = "#" * filled + "." * (width - filled)
            self.stream.write(
                f"\rindexing [{bar}] {100 * fraction:3.0f}%  {done}/{total} notes  {rate:.1f} notes/s{tail}\x1b[K"
            )
            if done == total:
                self.stream.write("\n")
            self.stream.flush()
        else:
            decile = int(10 * fraction)
            if decile != self._last_decile:
                self._last_decile = decile
                line = f"indexing: {100 * fraction:.0f}%, {done}/{total} notes ({rate:.1f} notes/s){tail}"
                print(line, file=self.stream)


def _searchable_so_far(status: dict[str, Any]) -> str:
    """What searches find during a first sync."""
    embedded = f"{status['notes']:,} notes ({status['chunks']:,} chunks) embedded so far, found by meaning and keyword"
    if status["keyword_only_notes"]:
        return f"{embedded}; {status['keyword_only_notes']:,} more found by keyword until they are embedded"
    return embedded
