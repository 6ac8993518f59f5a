"""`scripts.bench index` and `overhead`: a full index in this process, each stage's busy time and the
memory by phase of the sync; and the real model's overhead, a full index against embedding the same
texts directly. `run_index_subprocess` runs the index step in a fresh process for the other steps.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scripts.benchkit import (
    LOCAL_HASH,
    ROOT,
    InstantEmbedder,
    LocalHashEmbedder,
    active_tables,
    claim_bench_dir,
    disk_bytes,
    embed_inputs,
    print_table,
    proc_status,
    wait_background,
    write_json,
)


@dataclass
class StageClock:
    """Busy time per stage. Stages can overlap (parsing runs in a thread while batches are embedded
    and written), so the stages can add up to more than the wall time."""

    seconds: dict[str, float] = field(default_factory=dict)
    calls: dict[str, int] = field(default_factory=dict)

    def add(self, stage: str, seconds: float) -> None:
        self.seconds[stage] = self.seconds.get(stage, 0.0) + seconds
        self.calls[stage] = self.calls.get(stage, 0) + 1

    def wrap_async(self, stage: str, fn: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
        async def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return await fn(*args, **kwargs)
            finally:
                self.add(stage, time.perf_counter() - started)

        return timed

    def wrap_sync(self, stage: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.add(stage, time.perf_counter() - started)

        return timed


class MemoryTimeline:
    """RSS sampled every `every` seconds in a thread, each sample labelled with what the sync was
    doing then (the last store call started, or the batch count): where the peak is, and what grows
    with the vault. With `traced`, also Python's own allocations (tracemalloc, ~2x slower)."""

    def __init__(self, every: float = 0.25, traced: bool = False) -> None:
        import threading

        self.every = every
        self.traced = traced
        self.label = "start"
        self.samples: list[tuple[float, int, int, str]] = []  # (seconds, RSS, traced bytes, label)
        self.snapshots: dict[str, list[str]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._started = time.perf_counter()

    def __enter__(self) -> MemoryTimeline:
        if self.traced:
            import tracemalloc

            tracemalloc.start(1)
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        import tracemalloc

        while not self._stop.wait(self.every):
            traced = tracemalloc.get_traced_memory()[0] if self.traced else 0
            rss = proc_status().get("VmRSS", 0)
            self.samples.append((round(time.perf_counter() - self._started, 2), rss, traced, self.label))

    def snapshot(self, name: str, top: int = 12) -> None:
        """The largest live Python allocations by source line, now (with `traced` only)."""
        if not self.traced:
            return
        import tracemalloc

        stats = tracemalloc.take_snapshot().statistics("lineno")[:top]
        self.snapshots[name] = [
            f"{stat.size / 2**20:.1f} MiB in {stat.count} blocks: {stat.traceback}" for stat in stats
        ]

    def labelled(self, label: str, fn: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
        async def run(*args: Any, **kwargs: Any) -> Any:
            self.label = label
            try:
                return await fn(*args, **kwargs)
            finally:
                self.label = f"after {label}"

        return run

    def summary(self) -> dict[str, Any]:
        """The peak RSS while each label was current (MiB), in the order the labels came."""
        mib = 2**20
        peaks: dict[str, list[float]] = {}
        for _, rss, traced, label in self.samples:
            key = label.split(" ", 1)[0] if label.startswith("batch") else label
            peak = peaks.setdefault(key, [0.0, 0.0])
            peak[0] = max(peak[0], rss / mib)
            peak[1] = max(peak[1], traced / mib)
        step = max(1, len(self.samples) // 60)
        return {
            "peak_by_phase_mib": {k: {"rss": round(v[0]), "python": round(v[1])} for k, v in peaks.items()},
            "timeline": [
                (t, round(rss / mib), round(traced / mib), label) for t, rss, traced, label in self.samples[::step]
            ],
            "snapshots": self.snapshots,
        }


_STORE_METHODS = (
    "manifest",
    "vectors_for_hashes",
    "write_notes",
    "delete_notes",
    "compact",
    "ensure_fts",
    "chunk_paths",
    "count_chunks",
)


async def index_once(
    vault: Path,
    index_dir: Path,
    host: str,
    model: str,
    batch_size: int | None,
    concurrency: int | None,
    timeline: MemoryTimeline | None = None,
    provider: str = "ollama",
    dimension: int = 384,
) -> dict[str, Any]:
    from vask_server.adapters.ollama import Embedder
    from vask_server.adapters.store import Store
    from vask_server.adapters.vault import Vault
    from vask_server.config import load_settings
    from vask_server.services.options import index_options
    from vask_server.services.sync.indexer import Indexer

    settings = load_settings(
        env={},
        vault=vault,
        index_dir=index_dir,
        ollama_host=host,
        embed_model=model,
        embed_batch_size=batch_size,
        embed_concurrency=concurrency,
    )
    clock = StageClock()
    gateway = _gateway(provider, host)
    embedder: Any
    if model == "instant":
        embedder = InstantEmbedder(dimension)
    elif model == LOCAL_HASH:
        embedder = LocalHashEmbedder(dimension)
    else:
        embedder = Embedder(
            gateway,
            model,
            prompts=settings.embed_instructions().prompts,
            batch_size=settings.embed_batch_size,
            concurrency=settings.embed_concurrency,
        )
    store = await Store.open(index_dir)
    indexer = Indexer(Vault(vault), store, embedder, index_options(settings))
    await embedder.dimension()  # the model's first answer is not part of indexing
    in_process = model in ("instant", LOCAL_HASH)
    before = embed_inputs(host) if not in_process else None
    for name in _STORE_METHODS:
        if hasattr(store, name):
            setattr(store, name, clock.wrap_async("storage", getattr(store, name)))
    if hasattr(store, "index_vectors_now"):  # a large first sync builds its ANN index as its last step
        store.index_vectors_now = clock.wrap_async("vector index", store.index_vectors_now)
    progress = None
    if timeline is not None:
        labelled = ("manifest", "chunk_keys", "chunk_paths", "write_notes", "delete_notes", "compact", "ensure_fts")
        for name in (*labelled, "purge", "forget_tables"):
            if hasattr(store, name):
                setattr(store, name, timeline.labelled(name, getattr(store, name)))

        def progress(done: int, total: int) -> None:
            timeline.label = f"batches {done}/{total}"
            if total and done * 2 >= total > (done - 64) * 2:
                timeline.snapshot("half of the batches written")

    embedder.embed = clock.wrap_async("embedding", embedder.embed)
    indexer.reader.prepare = clock.wrap_sync("parse+chunk", indexer.reader.prepare)  # type: ignore[method-assign]
    scan = indexer.vault.scan
    indexer.vault.scan = clock.wrap_sync("scan", scan)  # type: ignore[method-assign]
    started = time.perf_counter()
    cpu_started = time.process_time()
    report = await indexer.sync(progress=progress)
    total = time.perf_counter() - started
    cpu = time.process_time() - cpu_started
    if timeline is not None:
        timeline.snapshot("after the sync")
        timeline.label = "ANN index"
    ann_started = time.perf_counter()
    await wait_background(store)  # the ANN index a large table gets, built after the sync
    ann = time.perf_counter() - ann_started
    if timeline is not None:
        timeline.label = "done"
    after = embed_inputs(host) if not in_process else None
    rows = await active_tables(store).count_chunks()
    await gateway.close()
    return {
        "vault": vault.name,
        "model": model,
        "embed_batch_size": settings.embed_batch_size,
        "embed_concurrency": settings.embed_concurrency,
        "notes": report.scanned,
        "chunks_stored": rows,
        "chunks_embedded": report.chunks_embedded,
        "chunks_reused": report.chunks_reused,
        "failed": len(report.failed) + len(report.skipped),
        "total_s": round(total, 3),
        "process_cpu_s": round(cpu, 3),
        "chunks_per_s": round(rows / total, 1),
        "notes_per_s": round(report.scanned / total, 1),
        "stages_busy_s": {k: round(v, 3) for k, v in clock.seconds.items()},
        "ann_index_after_sync_s": round(ann, 2),
        "embed_inputs_seen_by_server": None if before is None or after is None else after - before,
        "peak_rss_bytes": proc_status().get("VmHWM"),
        "index_bytes": disk_bytes(index_dir),
    }


def _gateway(provider: str, host: str) -> Any:
    """The model server's client: Ollama's API at `host`, or an OpenAI-compatible one (`host` with /v1)."""
    from vask_server.adapters.ollama import OllamaGateway
    from vask_server.adapters.openai_api import OpenAIGateway

    return OpenAIGateway(host) if provider == "openai" else OllamaGateway(host)


async def _direct_embed(
    texts: list[str], host: str, model: str, batch_size: int, concurrency: int, provider: str = "ollama"
) -> float:
    from vask_server.adapters.ollama import Embedder
    from vask_server.core.embed_prompts import prompts_for

    gateway = _gateway(provider, host)
    embedder = Embedder(gateway, model, prompts=prompts_for(model), batch_size=batch_size, concurrency=concurrency)
    await embedder.dimension()
    started = time.perf_counter()
    await embedder.embed(texts)
    seconds = time.perf_counter() - started
    await gateway.close()
    return seconds


def unique_embed_texts(vault: Path) -> list[str]:
    """The texts a full index of `vault` embeds: every chunk and note record, one per content hash."""
    from vask_server.adapters.vault import Vault
    from vask_server.core.chunk import chunk_note
    from vask_server.core.describe import note_record
    from vask_server.core.links import LinkResolver
    from vask_server.core.parse import parse_note

    store = Vault(vault)
    scan = store.scan()
    resolver = LinkResolver(scan.all_files)
    seen: dict[str, str] = {}
    for path in sorted(scan.notes):
        text, _ = store.read_note(path, 2_000_000)
        note = parse_note(path, text, resolver)
        chunks = chunk_note(note)
        record = note_record(note)
        for chunk in [*chunks, *([record] if record else [])]:
            seen.setdefault(chunk.hash, chunk.embed_text)
    return list(seen.values())


def run_index(args: argparse.Namespace) -> dict[str, Any]:
    """Full index of a vault into a fresh index folder, in this process."""
    index_dir = claim_bench_dir(args.index_dir, fresh=True)
    timeline = MemoryTimeline(traced=args.tracemalloc) if args.timeline or args.tracemalloc else None
    with timeline or contextlib.nullcontext():
        record = asyncio.run(
            index_once(
                args.vault,
                index_dir,
                args.ollama_host,
                args.model,
                args.batch_size,
                args.concurrency,
                timeline,
                dimension=args.dimension,
            )
        )
    if timeline is not None:
        record["memory"] = timeline.summary()
        for phase, peak in record["memory"]["peak_by_phase_mib"].items():
            print(
                f"  peak RSS during {phase}: {peak['rss']} MiB"
                + (f" (Python {peak['python']})" if args.tracemalloc else "")
            )
        for name, lines in record["memory"]["snapshots"].items():
            print(f"  largest Python allocations, {name}:", *lines, sep="\n    ")
    stages = record["stages_busy_s"]
    print_table(
        f"full index of {record['notes']} notes with {args.model}",
        [
            ("chunks stored", f"{record['chunks_stored']} ({record['chunks_embedded']} embedded)"),
            ("total", f"{record['total_s']:.2f} s ({record['process_cpu_s']:.1f} s CPU in this process)"),
            ("throughput", f"{record['chunks_per_s']:.0f} chunks/s, {record['notes_per_s']:.0f} notes/s"),
            ("parse+chunk (busy)", f"{stages.get('parse+chunk', 0):.2f} s"),
            ("embedding (busy)", f"{stages.get('embedding', 0):.2f} s"),
            ("storage (busy)", f"{stages.get('storage', 0):.2f} s"),
            ("scan", f"{stages.get('scan', 0):.2f} s"),
            ("ANN index, in the sync", f"{stages.get('vector index', 0):.1f} s"),
            ("ANN index, after the sync", f"{record['ann_index_after_sync_s']:.1f} s"),
            ("peak RSS", f"{(record['peak_rss_bytes'] or 0) / 2**20:.0f} MiB"),
            ("index size", f"{record['index_bytes'] / 2**20:.1f} MiB"),
        ],
    )
    write_json(args.json, record)
    return record


def ann_build_s(record: dict[str, Any]) -> float:
    """Seconds building the ANN index: in the sync (its last step) or after it (as older checkouts,
    which the benchmarks also measure, build it)."""
    return float(record["stages_busy_s"].get("vector index", 0)) + float(record["ann_index_after_sync_s"])


def run_index_subprocess(
    vault: Path, index_dir: Path, host: str, model: str, extra: Sequence[str] = ()
) -> dict[str, Any]:
    """The index step in a fresh process, so its peak RSS is its own."""
    out = index_dir.parent / f"{index_dir.name}.index.json"
    command = [
        sys.executable,
        "-m",
        "scripts.bench",
        "index",
        "--vault",
        str(vault),
        "--index-dir",
        str(index_dir),
        "--ollama-host",
        host,
        "--model",
        model,
        "--json",
        str(out),
        *extra,
    ]
    subprocess.run(command, cwd=ROOT, check=True, env={**os.environ, "VASK_LOG_LEVEL": "warning"})
    result: dict[str, Any] = json.loads(out.read_text())
    return result


def run_overhead(args: argparse.Namespace) -> dict[str, Any]:
    """The real model: full index time ÷ the time to embed the same texts directly, in one run."""
    if args.batch_size is None or args.concurrency is None:
        from vask_server.config import load_settings

        defaults = load_settings(env={})
        args.batch_size = args.batch_size or defaults.embed_batch_size
        args.concurrency = args.concurrency or defaults.embed_concurrency
    texts = unique_embed_texts(args.vault)
    host = f"{args.ollama_host.rstrip('/')}/v1" if args.provider == "openai" else args.ollama_host
    pairs = []
    for n in range(args.repeat):
        index_dir = claim_bench_dir(args.work / f"index-overhead-{n}", fresh=True)

        # Alternate which goes first, so a machine getting busier or quieter during the run does not
        # favour one side.
        def direct_embed() -> float:
            return asyncio.run(_direct_embed(texts, host, args.model, args.batch_size, args.concurrency, args.provider))

        def full_index(index_dir: Path = index_dir) -> dict[str, Any]:
            return asyncio.run(
                index_once(
                    args.vault,
                    index_dir,
                    host,
                    args.model,
                    args.batch_size,
                    args.concurrency,
                    provider=args.provider,
                )
            )

        if n % 2 == 0:
            direct = direct_embed()
            indexed = full_index()
        else:
            indexed = full_index()
            direct = direct_embed()
        pairs.append(
            {
                "order": "direct first" if n % 2 == 0 else "index first",
                "direct_embed_s": round(direct, 2),
                "index": indexed,
                "ratio": indexed["total_s"] / direct,
            }
        )
        print(
            f"run {n + 1}: {len(texts)} texts embedded directly in {direct:.1f} s; full index "
            f"{indexed['total_s']:.1f} s; ratio {indexed['total_s'] / direct:.3f}"
        )
    ratios = [p["ratio"] for p in pairs]
    record = {
        "vault": args.vault.name,
        "model": args.model,
        "provider": args.provider,
        "embed_batch_size": args.batch_size,
        "embed_concurrency": args.concurrency,
        "texts": len(texts),
        "runs": pairs,
        "ratio_median": round(statistics.median(ratios), 3),
    }
    print_table(
        f"overhead with {args.model} ({args.provider} API)",
        [
            ("texts", str(len(texts))),
            ("ratios", ", ".join(f"{r:.3f}" for r in ratios)),
            ("median ratio", f"{record['ratio_median']:.3f}"),
        ],
    )
    write_json(args.json, record)
    return record
