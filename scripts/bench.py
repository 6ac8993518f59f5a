"""vask benchmarks: indexing cost, restart, save-to-searchable, query latency, memory and disk.

Every step prints a table and writes JSON; `all` runs them in order on synthetic vaults (made by
scripts/synth_vault.py, deterministic from a seed) and writes one combined record. Vaults and indexes
live under --work (default /tmp/vask-bench), never in the repository. Needs an Ollama API at
--ollama-host with `hash-embed` (instant) and `all-minilm` (real): ../shared/ollama-shim is started on
that port when nothing answers there.

    uv run python -m scripts.bench all --json docs/bench/results.json    # the full run (~11 min)
    uv run python -m scripts.bench all --quick                           # small vaults (~3 min)

Single steps (see `--help` of each): `index`, `overhead`, `restart`, `query`, `edits`, `memory`; and
`related` and `responsive` (not part of `all`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import itertools
import json
import os
import platform
import random
import re
import shutil
import socket
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
SHIM = ROOT.parent / "shared" / "ollama-shim" / "run"
DEFAULT_HOST = "http://127.0.0.1:11500"
FAST_MODEL = "hash-embed"
REAL_MODEL = "all-minilm"
LOCAL_HASH = "hash-local"  # hash-embed's vectors made in-process (LocalHashEmbedder)
DIMENSIONS = (384, 1024)  # the stand-in's hash-embed, and hash-embed-1024: the default model's dimension


def hash_model(dimension: int = 384) -> str:
    """The stand-in's name for its hashing model at this dimension."""
    return FAST_MODEL if dimension == 384 else f"{FAST_MODEL}-{dimension}"


# -- small helpers ---------------------------------------------------------------------------------


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..1) of a non-empty sequence."""
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def summary_ms(values: Sequence[float]) -> dict[str, float]:
    """Median, p95, min and max of durations in seconds, as milliseconds."""
    return {
        "n": len(values),
        "median_ms": round(statistics.median(values) * 1000, 2),
        "p95_ms": round(percentile(values, 0.95) * 1000, 2),
        "min_ms": round(min(values) * 1000, 2),
        "max_ms": round(max(values) * 1000, 2),
    }


def proc_status(pid: int | str = "self") -> dict[str, int]:
    """VmRSS and VmHWM (peak RSS) of a process, in bytes."""
    out: dict[str, int] = {}
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                out[key] = int(value.split()[0]) * 1024
    return out


def disk_bytes(path: Path) -> int:
    from vask_server.adapters.footprint import folder_bytes

    return folder_bytes(path)


def machine() -> dict[str, Any]:
    cpu = ""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem = ""
    with contextlib.suppress(OSError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
    load = ""
    with contextlib.suppress(OSError):
        load = Path("/proc/loadavg").read_text().split(" ")[0]
    versions: dict[str, str] = {}
    for name in ("lancedb", "pyarrow", "numpy", "aiohttp", "ollama"):
        with contextlib.suppress(Exception):
            from importlib.metadata import version

            versions[name] = version(name)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    dirty = subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True)
    return {
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "memory": mem,
        "load_at_start": load,
        "python": platform.python_version(),
        "os": platform.platform(),
        "packages": versions,
        "commit": commit.stdout.strip() + (" (with uncommitted changes)" if dirty.stdout.strip() else ""),
    }


def http_json(url: str, body: Any = None, token: str | None = None, timeout: float = 60.0) -> Any:
    data = json.dumps(body).encode() if body is not None else None
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, data=data, headers=headers)
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return json.loads(response.read())


def embed_inputs(host: str) -> int | None:
    """How many texts the Ollama stand-in has embedded so far (shim, scripts.hash_ollama or the test
    fake), if it says."""
    for path in ("/shim/stats", "/fake/stats"):
        with contextlib.suppress(OSError, ValueError, urllib.error.URLError):
            return int(http_json(host + path, timeout=5)["embed_inputs"])
    return None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# -- folders the benchmark owns --------------------------------------------------------------------

# Written into every index folder the benchmark makes. Steps delete and rebuild such folders, so a
# folder without it (say, a real vault's index passed as --index-dir by mistake) is never touched.
BENCH_MARKER = ".vask-bench"


def refuse(message: str) -> SystemExit:
    """Exit 2 with `message` on stderr: bad input, nothing done."""
    print(f"scripts.bench: {message}", file=sys.stderr)
    return SystemExit(2)


def check_bench_dir(path: Path) -> None:
    """Refuses (exit 2) a folder the benchmark did not make: one that holds a vask index of its own,
    or any other non-empty folder without the marker. A missing or empty folder is fine."""
    from vask_server.adapters.meta import META_FILE

    if path.exists() and not path.is_dir():
        raise refuse(f"index folder {path} is a file.")
    if not path.is_dir() or (path / BENCH_MARKER).is_file():
        return
    if (path / META_FILE).exists():
        raise refuse(
            f"{path} holds a vask index that the benchmark did not make, which it would delete or "
            "overwrite; left alone. Pass a new folder as --index-dir (the benchmark makes it)."
        )
    if any(path.iterdir()):
        raise refuse(
            f"{path} is not empty and the benchmark did not make it (it has no {BENCH_MARKER} file), so it "
            "is left alone. Pass a new or empty folder as --index-dir; delete this one yourself if it is "
            "left over from a run of an earlier version of the benchmark."
        )


def claim_bench_dir(path: Path, *, fresh: bool = False) -> Path:
    """`path` as an index folder of the benchmark's own, marked as such: emptied first when `fresh`.
    Refuses, like `check_bench_dir`, a folder the benchmark did not make."""
    check_bench_dir(path)
    if fresh and path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True, exist_ok=True)
    (path / BENCH_MARKER).write_text("made by scripts/bench.py, which may delete this folder\n")
    return path


@contextlib.contextmanager
def ollama_running(host: str, start: bool = True) -> Iterator[None]:
    """Uses the Ollama API at `host`, starting ../shared/ollama-shim there when nothing answers."""
    try:
        http_json(host + "/api/tags", timeout=3)
    except (OSError, urllib.error.URLError):
        if not start or not SHIM.exists():
            raise SystemExit(f"nothing answers at {host}; start Ollama or {SHIM} --port N") from None
    else:  # (an error of the caller's, raised at this yield, is not a missing server)
        yield
        return
    port = host.rsplit(":", 1)[1].strip("/")
    log = open(Path(os.environ.get("TMPDIR", "/tmp")) / f"vask-bench-shim-{port}.log", "w")  # noqa: SIM115
    shim = subprocess.Popen([str(SHIM), "--port", port], stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                http_json(host + "/api/tags", timeout=3)
                break
            except (OSError, urllib.error.URLError):
                if shim.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"the Ollama stand-in did not start; see {log.name}") from None
                time.sleep(0.5)
        print(f"started the Ollama stand-in at {host} (pid {shim.pid})")
        yield
    finally:
        shim.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            shim.wait(10)
        log.close()


def print_table(title: str, rows: Sequence[tuple[str, str]]) -> None:
    width = max((len(k) for k, _ in rows), default=10)
    print(f"\n{title}")
    print("-" * len(title))
    for key, value in rows:
        print(f"  {key:<{width}}  {value}")


def write_json(path: Path | None, record: dict[str, Any]) -> None:
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=2) + "\n")
    print(f"wrote {path}")


def vask_env(index_dir: Path, host: str, model: str, **extra: str) -> dict[str, str]:
    # PYTHONDONTWRITEBYTECODE (set on the machine these figures come from) would make every start
    # compile its modules again, which no normal installation does: dropped, so starts are realistic.
    env = {k: v for k, v in os.environ.items() if not k.startswith("VASK_") and k != "PYTHONDONTWRITEBYTECODE"}
    env.update(
        {
            "VASK_INDEX_DIR": str(index_dir),
            "OLLAMA_HOST": host,
            "VASK_EMBED_MODEL": model,
            "VASK_CHAT_MODEL": "extractive",
            "VASK_LOG_LEVEL": "warning",
            **extra,
        }
    )
    return env


# -- the in-process indexing benchmark -------------------------------------------------------------


class InstantEmbedder:
    """A zero-cost stand-in for the model, so the figure is the pipeline's own throughput: a
    deterministic unit vector per text, made in-process (no HTTP, no model)."""

    def __init__(self, dimension: int = 384) -> None:
        from vask_server.core.embed_prompts import EmbedPrompts

        self.model = "instant-embed"
        self.prompts = EmbedPrompts()  # (no model: no instructions)
        self._dimension = dimension
        self.calls = 0
        self.inputs = 0

    async def dimension(self) -> int:
        return self._dimension

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        self.inputs += len(texts)
        raw = b"".join(hashlib.shake_256(t.encode()).digest(self._dimension) for t in texts)
        matrix = np.frombuffer(raw, dtype=np.uint8).reshape(len(texts), self._dimension).astype(np.float32) - 127.5
        matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
        return matrix


class LocalHashEmbedder(InstantEmbedder):
    """The Ollama stand-in's `hash-embed` vectors (signed feature hashing of word unigrams and
    bigrams, ../shared/ollama-shim), made in-process with a cache of each feature's slot: the same
    index as through HTTP (it is stored under the name `hash-embed`, so `vask serve` with the
    stand-in reuses it), in a fraction of the time, for the large vaults."""

    _WORD = re.compile(r"\w+")

    def __init__(self, dimension: int = 384) -> None:
        super().__init__(dimension)
        self.model = hash_model(dimension)
        self._slots: dict[str, tuple[int, float]] = {}

    def _slot(self, feature: str) -> tuple[int, float]:
        slot = self._slots.get(feature)
        if slot is None:
            h = int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest(), "little")
            slot = (h % self._dimension, 1.0 if (h >> 32) & 1 else -1.0)
            if len(self._slots) < 2_000_000:
                self._slots[feature] = slot
        return slot

    def vector(self, text: str) -> np.ndarray:
        v = np.zeros(self._dimension, dtype=np.float64)
        words = self._WORD.findall(text.lower())
        for feature in [*words, *(f"{a} {b}" for a, b in itertools.pairwise(words))]:
            index, sign = self._slot(feature)
            v[index] += sign
        norm = float(np.sqrt((v * v).sum())) or 1.0
        return (v / norm).astype(np.float32)

    async def embed(self, texts: Sequence[str], **_: object) -> np.ndarray:
        self.calls += 1
        self.inputs += len(texts)
        if not texts:
            return np.zeros((0, self._dimension), dtype=np.float32)
        return np.stack([self.vector(t) for t in texts])


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


async def _index_once(
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
    from vask_server.services.indexer import Indexer
    from vask_server.services.options import index_options

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
    await _wait_background(store)  # the ANN index a large table gets, built after the sync
    ann = time.perf_counter() - ann_started
    if timeline is not None:
        timeline.label = "done"
    after = embed_inputs(host) if not in_process else None
    rows = await store.count_chunks(report_suffix(store), report.dimension)
    await gateway.close()
    return {
        "vault": str(vault),
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


async def _wait_background(store: Any) -> None:
    """Until the store's background work (a new ANN index) is done. (Checkouts from before it
    existed have none: the benchmarks also run against them, for before/after figures.)"""
    wait = getattr(store, "wait_background", None)
    if wait is not None:
        await wait()


def report_suffix(store: Any) -> str:
    meta = store.read_meta()
    return str(meta.active["suffix"])


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
            _index_once(
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
    """Seconds building the ANN index: in the sync (its last step since the fourth sitting) or after it."""
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
                _index_once(
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
        "vault": str(args.vault),
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


# -- vask serve as a subprocess --------------------------------------------------------------------


@dataclass
class Server:
    process: subprocess.Popen[str]
    base: str
    token: str
    started: float  # monotonic time of the spawn

    def status(self) -> Any:
        return http_json(self.base + "/v1/status", token=self.token, timeout=10)

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(5)


def start_server(
    vault: Path, index_dir: Path, host: str, model: str, port: int, log: Path | None = None, **extra_env: str
) -> Server:
    from vask_server.adapters.token import ensure_token

    claim_bench_dir(index_dir)  # the server syncs --vault into it
    token = ensure_token(index_dir)
    env = vask_env(index_dir, host, model, **extra_env)
    command = [sys.executable, "-m", "vask_server.cli", "serve", "--vault", str(vault), "--port", str(port)]
    output = open(log, "w") if log else subprocess.DEVNULL  # noqa: SIM115 (closed with the process)
    started = time.monotonic()
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT, text=True)
    return Server(process, f"http://127.0.0.1:{port}", token, started)


def wait_ready(server: Server, timeout: float = 1800.0, poll: float = 0.02) -> tuple[float, float]:
    """Seconds from spawn until the port answers, and until the index is in step (idle, nothing
    pending)."""
    listening: float | None = None
    while True:
        now = time.monotonic()
        if now - server.started > timeout:
            raise SystemExit(f"vask serve not ready after {timeout} s")
        if server.process.poll() is not None:
            raise SystemExit(f"vask serve exited with {server.process.returncode}")
        try:
            status = server.status()
        except (OSError, urllib.error.URLError):
            time.sleep(poll)
            continue
        if listening is None:
            listening = now - server.started
        if status["state"] == "idle" and status["pending"] == 0 and status["model"]:
            return listening, time.monotonic() - server.started
        time.sleep(poll)


def run_restart(args: argparse.Namespace) -> dict[str, Any]:
    """Restart with nothing changed: spawn → ready, and how many texts were embedded meanwhile."""
    runs = []
    for n in range(args.runs):
        before = embed_inputs(args.ollama_host)
        server = start_server(args.vault, args.index_dir, args.ollama_host, args.model, free_port())
        try:
            listening, ready = wait_ready(server, timeout=120)
            after = embed_inputs(args.ollama_host)
            first = time.monotonic()
            hits = http_json(server.base + "/v1/search", {"query": "project plan review", "top_k": 3}, server.token)
            search_s = time.monotonic() - first
            idle, searched = rss_at_rest_and_after_searching(server, args.searches)
            status = server.status()
        finally:
            server.stop()
        runs.append(
            {
                "listening_s": round(listening, 3),
                "ready_s": round(ready, 3),
                "first_search_s": round(search_s, 3),
                "embeddings": None if before is None or after is None else after - before,
                "notes": status["notes"],
                "chunks": status["chunks"],
                "hits": len(hits["hits"]),
                "idle_rss_mib": round(idle / 2**20),
                "rss_after_searches_mib": round(searched / 2**20),
            }
        )
        print(
            f"run {n + 1}: listening {listening:.2f} s, ready {ready:.2f} s, "
            f"embeddings {runs[-1]['embeddings']}, first search {search_s * 1000:.0f} ms, "
            f"idle {runs[-1]['idle_rss_mib']} MiB, "
            f"after {args.searches} searches {runs[-1]['rss_after_searches_mib']} MiB"
        )
    record = {
        "vault": str(args.vault),
        "model": args.model,
        "runs": runs,
        "ready_median_s": round(statistics.median(r["ready_s"] for r in runs), 3),
        "ready_max_s": round(max(r["ready_s"] for r in runs), 3),
        "listening_median_s": round(statistics.median(r["listening_s"] for r in runs), 3),
        "first_search_median_s": round(statistics.median(r["first_search_s"] for r in runs), 3),
        "embeddings_max": max((r["embeddings"] or 0) for r in runs),
        "idle_rss_mib": statistics.median(r["idle_rss_mib"] for r in runs),
        "searches": args.searches,
        "rss_after_searches_mib": statistics.median(r["rss_after_searches_mib"] for r in runs),
    }
    print_table(
        f"restart with nothing changed ({runs[0]['notes']} notes, {runs[0]['chunks']} chunks)",
        [
            ("ready (median, max)", f"{record['ready_median_s']:.2f} s, {record['ready_max_s']:.2f} s"),
            ("listening (median)", f"{record['listening_median_s']:.2f} s"),
            ("first search after ready", f"{record['first_search_median_s'] * 1000:.0f} ms"),
            ("embeddings made", str(record["embeddings_max"])),
            ("idle RSS (median)", f"{record['idle_rss_mib']:.0f} MiB"),
            (f"RSS after {args.searches} searches (median)", f"{record['rss_after_searches_mib']:.0f} MiB"),
        ],
    )
    write_json(args.json, record)
    return record


def rss_at_rest_and_after_searching(server: Server, searches: int) -> tuple[int, int]:
    """Serve's RSS once the warm-up it starts with has settled, then after `searches` searches (what
    the caches and the heap keep of them), read once serve has handed freed memory back: it does
    when searches pause for 5 s (ReleaseWhenQuiet)."""
    idle = settled_rss(server.process.pid)
    for query in make_queries(searches, seed=3):
        http_json(server.base + "/v1/search", {"query": query}, server.token)
    time.sleep(6)
    return idle, settled_rss(server.process.pid)


def settled_rss(pid: int, *, quiet_s: float = 2.0, timeout: float = 60.0) -> int:
    """The RSS of a process once it has stopped moving by more than 1 MiB for `quiet_s`."""
    started = last_change = time.monotonic()
    last = proc_status(pid).get("VmRSS", 0)
    while time.monotonic() - last_change < quiet_s and time.monotonic() - started < timeout:
        time.sleep(0.25)
        now = proc_status(pid).get("VmRSS", 0)
        if abs(now - last) > 2**20:
            last, last_change = now, time.monotonic()
    return last


def run_edits(args: argparse.Namespace) -> dict[str, Any]:
    """Save-to-searchable over many edits against a running server; index size as the edits go on."""
    from scripts.save_to_searchable import measure_edits

    server = start_server(
        args.vault, args.index_dir, args.ollama_host, args.model, free_port(), VASK_DEBOUNCE_MS=str(args.debounce_ms)
    )
    latencies: list[float] = []
    searches: list[int] = []
    sizes: list[tuple[int, int]] = []
    try:
        wait_ready(server)
        sizes.append((0, disk_bytes(args.index_dir)))
        embeds_before = embed_inputs(args.ollama_host)
        block = max(1, min(25, args.edits))
        while len(latencies) < args.edits:
            count = min(block, args.edits - len(latencies))
            latencies += measure_edits(
                server.base, server.token, args.vault, count, start=len(latencies), seed=args.seed, searches=searches
            )
            wait_ready(server)
            sizes.append((len(latencies), disk_bytes(args.index_dir)))
        embeds_after = embed_inputs(args.ollama_host)
        status = server.status()
        rss = proc_status(server.process.pid)
    finally:
        server.stop()
    compacted = asyncio.run(_compact(args.index_dir))
    record = {
        "vault": str(args.vault),
        "model": args.model,
        "debounce_ms": args.debounce_ms,
        "notes": status["notes"],
        "chunks": status["chunks"],
        "save_to_searchable": summary_ms(latencies),
        "latencies_s": [round(x, 3) for x in latencies],
        # Texts the model embedded for the edits: all it embedded, less one query per search.
        "embeddings_during_edits": (
            None if embeds_before is None or embeds_after is None else embeds_after - embeds_before - len(searches)
        ),
        "searches": len(searches),
        "index_bytes_by_edits": sizes,
        "index_bytes_before": sizes[0][1],
        "index_bytes_after": sizes[-1][1],
        "index_bytes_after_final_compaction": compacted,
        "server_rss_after_bytes": rss.get("VmRSS"),
    }
    s = record["save_to_searchable"]
    mib = 2**20
    print_table(
        f"save-to-searchable, {len(latencies)} edits ({status['notes']} notes, {status['chunks']} chunks)",
        [
            ("median", f"{s['median_ms']:.0f} ms (debounce {args.debounce_ms} ms included)"),
            ("p95", f"{s['p95_ms']:.0f} ms"),
            ("min / max", f"{s['min_ms']:.0f} / {s['max_ms']:.0f} ms"),
            ("texts embedded", str(record["embeddings_during_edits"])),
            ("index size by edits", ", ".join(f"{n}: {b / mib:.1f} MiB" for n, b in sizes)),
            ("after a final compaction", f"{compacted / mib:.1f} MiB"),
        ],
    )
    write_json(args.json, record)
    return record


async def _compact(index_dir: Path) -> int:
    """What the next compaction leaves: old versions dropped (the server keeps the last 10 s)."""
    from datetime import timedelta

    from vask_server.adapters.store import Store

    store = await Store.open(index_dir)
    meta = store.read_meta()
    assert meta.active is not None
    await store.compact(str(meta.active["suffix"]), int(meta.active["dimension"]), keep=timedelta(seconds=0))
    return disk_bytes(index_dir)


def run_memory(args: argparse.Namespace) -> dict[str, Any]:
    """`vask serve` on an empty index: its peak RSS while it indexes the vault, then at rest."""
    claim_bench_dir(args.index_dir, fresh=True)
    args.work.mkdir(parents=True, exist_ok=True)
    log_path = args.work / "memory-serve.log"
    server = start_server(
        args.vault, args.index_dir, args.ollama_host, args.model, free_port(), VASK_LOG_LEVEL="info", log=log_path
    )
    samples: list[int] = []
    try:
        ready = wait_ready_sampling(server, samples)
        peak_sync = proc_status(server.process.pid).get("VmHWM", 0)
        # The ANN index is built in the background after the first sync: indexing ends when it is ready.
        from vask_server.adapters import store

        ann_wait = time.monotonic()
        large = server.status()["chunks"] >= getattr(store, "VECTOR_INDEX_MIN_ROWS", float("inf"))
        while large and "vector index of" not in log_path.read_text() and time.monotonic() - ann_wait < 600:
            rss = proc_status(server.process.pid).get("VmRSS")
            if rss:
                samples.append(rss)
            time.sleep(0.5)
        ann_s = time.monotonic() - ann_wait
        peak = proc_status(server.process.pid).get("VmHWM", 0)
        idle, searched = rss_at_rest_and_after_searching(server, 50)
        after = proc_status(server.process.pid)
        status = server.status()
    finally:
        server.stop()
    size = disk_bytes(args.index_dir)
    compacted = asyncio.run(_compact(args.index_dir))
    record = {
        "vault": str(args.vault),
        "model": args.model,
        "notes": status["notes"],
        "chunks": status["chunks"],
        "first_sync_s": round(ready, 2),
        "ann_index_after_sync_s": round(ann_s, 2),
        "peak_rss_first_sync_bytes": peak_sync,
        "peak_rss_indexing_bytes": peak,
        "idle_rss_bytes": idle,
        "rss_after_50_searches_bytes": searched,
        "peak_rss_overall_bytes": after.get("VmHWM"),
        "rss_samples_mib": [round(s / 2**20) for s in samples[:: max(1, len(samples) // 40)]],
        "index_bytes": size,
        "index_bytes_compacted": compacted,
        "bytes_per_1000_chunks": round(compacted / status["chunks"] * 1000) if status["chunks"] else None,
    }
    mib = 2**20
    print_table(
        f"memory and disk, vask serve indexing {status['notes']} notes ({status['chunks']} chunks) from scratch",
        [
            ("first sync", f"{ready:.1f} s, then the ANN index {ann_s:.1f} s"),
            ("peak RSS, first sync", f"{peak_sync / mib:.0f} MiB"),
            ("peak RSS, sync + ANN index", f"{peak / mib:.0f} MiB"),
            ("idle RSS afterwards", f"{idle / mib:.0f} MiB"),
            ("RSS after 50 searches", f"{searched / mib:.0f} MiB"),
            ("index size as the server left it", f"{size / mib:.1f} MiB (versions of the last 10 s kept)"),
            ("index size, old versions dropped", f"{compacted / mib:.1f} MiB"),
            ("per 1,000 chunks", f"{(record['bytes_per_1000_chunks'] or 0) / mib:.2f} MiB"),
        ],
    )
    write_json(args.json, record)
    return record


def run_responsive(args: argparse.Namespace) -> dict[str, Any]:
    """First sync, then a resync of every note, watched from outside: see scripts/bench_responsive.py."""
    from scripts.bench_responsive import run_responsive as run

    return run(args)


def wait_ready_sampling(server: Server, samples: list[int], timeout: float = 1800.0) -> float:
    """Like wait_ready, sampling the server's RSS twice a second meanwhile."""
    while True:
        if server.process.poll() is not None:
            raise SystemExit(f"vask serve exited with {server.process.returncode}")
        rss = proc_status(server.process.pid).get("VmRSS")
        if rss:
            samples.append(rss)
        with contextlib.suppress(OSError, urllib.error.URLError):
            status = server.status()
            if status["state"] == "idle" and status["pending"] == 0 and status["model"]:
                return time.monotonic() - server.started
        if time.monotonic() - server.started > timeout:
            raise SystemExit(f"vask serve not ready after {timeout} s")
        time.sleep(0.5)


# -- query latency, in-process server --------------------------------------------------------------


def make_queries(n: int, seed: int = 11) -> list[str]:
    """Short keyword queries and questions in the synthetic vault's vocabulary."""
    from scripts.synth_vault import _ADJ, _WORDS

    rng = random.Random(seed)
    out = []
    for _ in range(n):
        words = rng.sample(_WORDS, rng.randint(2, 5))
        if rng.random() < 0.4:
            out.append(f"what did I write about {' '.join(words)}?")
        elif rng.random() < 0.5:
            out.append(f"{rng.choice(_ADJ)} {' '.join(words)}")
        else:
            out.append(" ".join(words))
    return out


async def _query_bench(
    vault: Path, index_dir: Path, host: str, model: str, queries: list[str], mode: str
) -> dict[str, Any]:
    import aiohttp
    from aiohttp import web

    from vask_server.config import load_settings
    from vask_server.core.retrieve import topic_query
    from vask_server.web.app import create_app
    from vask_server.web.keys import LIVE, SERVICES

    claim_bench_dir(index_dir)  # the app syncs --vault into it
    settings = load_settings(
        env={}, vault=vault, index_dir=index_dir, ollama_host=host, embed_model=model, chat_model="extractive"
    )
    app = create_app(settings, watch=False)
    handler_s: list[float] = []

    @web.middleware
    async def timing(request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> Any:
        started = time.perf_counter()
        try:
            return await handler(request)
        finally:
            if request.path == "/v1/search":
                handler_s.append(time.perf_counter() - started)

    app.middlewares.insert(0, timing)  # outermost: auth, host check and JSON encoding are inside
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    port = free_port()
    site = web.TCPSite(runner, "127.0.0.1", port)
    await site.start()
    try:
        live = app[LIVE]
        await live.wait_idle(timeout=600)
        services = app[SERVICES]
        ann_started = time.perf_counter()
        await _wait_background(services.store)  # a large index's ANN index, built in the background
        ann_wait = time.perf_counter() - ann_started
        searcher = services.searcher
        index = searcher.active()
        real = searcher._embedder(index.model)
        # Query embedding is measured apart and excluded: vectors are made once, up front.
        vectors: dict[str, np.ndarray] = {}
        embed_started = time.perf_counter()
        for query in queries:
            # as a search does: the question and its topic (for the "not in your notes" rule) in one call
            texts = [query, *filter(None, [topic_query(query)])]
            for text, vector in zip(texts, await real.embed(texts, query=True), strict=True):
                vectors[text] = vector
        embed_each = (time.perf_counter() - embed_started) / len(queries)

        async def cached(texts: Sequence[str], **_: object) -> np.ndarray:
            return np.stack([vectors[t] for t in texts])

        own = await _own_paragraphs_found(services.store, index, real)
        real.embed = cached  # type: ignore[method-assign]
        token = (index_dir / "token").read_text().strip()
        headers = {"Authorization": f"Bearer {token}"}
        client_s: list[float] = []
        hits = 0
        async with aiohttp.ClientSession(f"http://127.0.0.1:{port}", headers=headers) as session:

            async def one(query: str) -> int:
                started = time.perf_counter()
                async with session.post("/v1/search", json={"query": query, "mode": mode}) as response:
                    body = await response.json()
                    assert response.status == 200, body
                client_s.append(time.perf_counter() - started)
                return len(body["hits"])

            await one(queries[0])  # the first search after a sync builds the calibration cache
            first_s = handler_s[-1]
            handler_s.clear()
            client_s.clear()
            for query in queries:
                hits += await one(query)
        chunks = await services.store.count_chunks(index.suffix, index.dimension)
        table = await services.store.chunks(index.suffix, index.dimension)
        indices = await table.list_indices()
        # Recall of the vector list the search fuses (its 50 candidates) against exact search.
        recalls = []
        for query in queries:
            vector = vectors[query].astype(np.float32)
            got = await services.store.vector_search(index.suffix, index.dimension, vector, 50)
            exact = await (
                table.query()
                .nearest_to(vector)
                .distance_type("cosine")
                .limit(50)
                .bypass_vector_index()
                .select(["id", "_distance"])
                .to_arrow()
            )
            wanted = set(exact["id"].to_pylist())
            recalls.append(len(wanted & {row["id"] for row in got}) / max(1, len(wanted)))
        return {
            "chunks": chunks,
            "mode": mode,
            "queries": len(queries),
            "server": summary_ms(handler_s),
            "client_round_trip": summary_ms(client_s),
            "first_search_after_sync_ms": round(first_s * 1000, 1),
            "query_embedding_ms_each": round(embed_each * 1000, 2),
            "mean_hits": round(hits / len(queries), 2),
            "indices": [f"{i.index_type}({', '.join(i.columns)})" for i in indices],
            "ann_index_wait_s": round(ann_wait, 2),
            "vector_recall_at_50": {
                "mean": round(float(np.mean(recalls)), 4),
                "min": round(min(recalls), 4),
            },
            "own_paragraph_found": own,
        }
    finally:
        await runner.cleanup()


async def _own_paragraphs_found(store: Any, index: Any, embedder: Any, samples: int = 100) -> dict[str, int]:
    """A note found from one of its own paragraphs: `samples` passages (one a note, seeded), each
    embedded as a question and searched by vector as the product searches (its ANN index), counted
    when its note is among the first 10 notes."""
    rows = await store.all_chunk_rows(index.suffix, index.dimension, ["id", "path"], where="kind = 'chunk'")
    ids, paths = rows["id"].to_pylist(), rows["path"].to_pylist()
    first: dict[str, str] = {}
    for chunk_id, path in zip(ids, paths, strict=True):
        first.setdefault(path, chunk_id)
    rng = np.random.default_rng(5)
    picked = [str(i) for i in rng.choice(sorted(first.values()), min(samples, len(first)), replace=False)]
    texts = await store.texts_for_ids(index.suffix, index.dimension, picked)
    path_of = dict(zip(ids, paths, strict=True))
    found = 0
    for chunk_id in picked:
        vector = (await embedder.embed([texts[chunk_id]], query=True))[0]
        got = await store.vector_search(index.suffix, index.dimension, vector, 50)
        notes = list(dict.fromkeys(row["path"] for row in got))[:10]
        found += path_of[chunk_id] in notes
    return {"found": found, "of": len(picked)}


def run_query(args: argparse.Namespace) -> dict[str, Any]:
    queries = make_queries(args.queries, seed=args.seed)
    record = asyncio.run(_query_bench(args.vault, args.index_dir, args.ollama_host, args.model, queries, args.mode))
    s = record["server"]
    print_table(
        f"/v1/search at {record['chunks']} chunks ({record['mode']}, {record['queries']} queries)",
        [
            ("server-side median", f"{s['median_ms']:.1f} ms"),
            ("server-side p95", f"{s['p95_ms']:.1f} ms"),
            ("client round trip median", f"{record['client_round_trip']['median_ms']:.1f} ms"),
            ("first search after a sync", f"{record['first_search_after_sync_ms']:.0f} ms"),
            ("query embedding (excluded)", f"{record['query_embedding_ms_each']:.1f} ms each"),
            ("indices", ", ".join(record["indices"])),
            (
                "vector recall@50 vs exact",
                f"mean {record['vector_recall_at_50']['mean']:.3f}, min {record['vector_recall_at_50']['min']:.2f}",
            ),
        ],
    )
    write_json(args.json, record)
    return record


async def _related_bench(vault: Path, index_dir: Path, host: str, model: str, calls: int, seed: int) -> dict[str, Any]:
    import aiohttp
    from aiohttp import web

    from vask_server.config import load_settings
    from vask_server.web.app import create_app
    from vask_server.web.keys import LIVE, SERVICES

    claim_bench_dir(index_dir)  # the app syncs --vault into it
    settings = load_settings(
        env={}, vault=vault, index_dir=index_dir, ollama_host=host, embed_model=model, chat_model="extractive"
    )
    app = create_app(settings, watch=False)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    port = free_port()
    site = web.TCPSite(runner, "127.0.0.1", port)
    await site.start()
    try:
        await app[LIVE].wait_idle(timeout=1800)
        services = app[SERVICES]
        await _wait_background(services.store)
        notes = sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*.md"))
        paths = random.Random(seed).sample(notes, min(len(notes), calls + 1))  # a note switch each call
        # How late a 5 ms timer fires during each call, at worst: how long the loop could do nothing
        # else (stream an answer's tokens, say).
        stall = 0.0
        stalls: list[float] = []
        done = asyncio.Event()

        async def heartbeat() -> None:
            nonlocal stall
            while not done.is_set():
                started = time.perf_counter()
                await asyncio.sleep(0.005)
                stall = max(stall, time.perf_counter() - started - 0.005)

        token = (index_dir / "token").read_text().strip()
        times: list[float] = []
        async with aiohttp.ClientSession(
            f"http://127.0.0.1:{port}", headers={"Authorization": f"Bearer {token}"}
        ) as session:
            beat = asyncio.create_task(heartbeat())
            for path in paths:
                stall = 0.0
                started = time.perf_counter()
                async with session.get("/v1/related", params={"path": path}) as response:
                    body = await response.json()
                    assert response.status == 200, body
                times.append(time.perf_counter() - started)
                stalls.append(stall)
            done.set()
            await beat
        indexed, others = await services.store.note_statuses(services.searcher.active().suffix)
        return {
            "notes": indexed + len(others),
            "calls": len(times) - 1,
            "first_call_ms": round(times[0] * 1000, 1),
            "first_call_longest_loop_stall_ms": round(stalls[0] * 1000, 1),
            "related": summary_ms(times[1:]),
            "longest_loop_stall": summary_ms(stalls[1:]),
        }
    finally:
        await runner.cleanup()


def run_related(args: argparse.Namespace) -> dict[str, Any]:
    """/v1/related, each call for another note (as the plugin does on every note switch)."""
    record = asyncio.run(
        _related_bench(args.vault, args.index_dir, args.ollama_host, args.model, args.calls, args.seed)
    )
    r, stall = record["related"], record["longest_loop_stall"]
    print_table(
        f"/v1/related on {record['notes']} notes ({record['calls']} calls after the first)",
        [
            ("median", f"{r['median_ms']:.1f} ms"),
            ("p95", f"{r['p95_ms']:.1f} ms"),
            (
                "first call",
                f"{record['first_call_ms']:.0f} ms (longest stall {record['first_call_longest_loop_stall_ms']:.0f} ms)",
            ),
            ("longest event loop stall in a call", f"median {stall['median_ms']:.0f} ms, max {stall['max_ms']:.0f} ms"),
        ],
    )
    write_json(args.json, record)
    return record


# -- everything ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    small_notes: int
    large_notes: int
    overhead_notes: int
    restarts: int
    queries: int
    edits: int


FULL = Plan(small_notes=1000, large_notes=10000, overhead_notes=100, restarts=5, queries=300, edits=100)
QUICK = Plan(small_notes=100, large_notes=300, overhead_notes=5, restarts=2, queries=30, edits=5)


def run_all(args: argparse.Namespace) -> dict[str, Any]:
    from scripts.synth_vault import generate

    plan = QUICK if args.quick else FULL
    work: Path = args.work
    # Every index folder the steps will replace, checked before the minutes of work that precede some.
    repeats = 1 if args.quick else args.repeat
    for name in ("instant", "large", "small", "memory", *(f"overhead-{n}" for n in range(repeats))):
        check_bench_dir(work / f"index-{name}")
    work.mkdir(parents=True, exist_ok=True)
    host = args.ollama_host
    started = time.monotonic()
    record: dict[str, Any] = {"machine": machine(), "quick": args.quick, "plan": plan.__dict__, "steps": {}}
    steps = record["steps"]
    print(json.dumps(record["machine"], indent=2))

    vaults = {}
    for name, notes in (("small", plan.small_notes), ("large", plan.large_notes), ("overhead", plan.overhead_notes)):
        vaults[name] = work / f"vault-{notes}"
        counts = generate(vaults[name], notes, seed=args.seed)
        print(f"vault {vaults[name]}: {counts}")
        steps.setdefault("vaults", {})[name] = {"path": str(vaults[name]), **counts}

    def ns(**kw: Any) -> argparse.Namespace:
        base = {"ollama_host": host, "json": None, "seed": args.seed, "work": work}
        return argparse.Namespace(**{**base, **kw})

    with ollama_running(host, start=not args.no_shim):
        # 1. the pipeline's own throughput: zero-cost in-process embedder, and hash-embed over HTTP
        steps["index_instant"] = run_index_subprocess(vaults["large"], work / "index-instant", host, "instant")
        steps["index_fast"] = run_index_subprocess(vaults["large"], work / "index-large", host, FAST_MODEL)
        steps["index_fast_small"] = run_index_subprocess(vaults["small"], work / "index-small", host, FAST_MODEL)
        # 2. the real model's overhead ratio
        steps["overhead"] = run_overhead(
            ns(
                vault=vaults["overhead"],
                model=REAL_MODEL,
                batch_size=None,
                concurrency=None,
                repeat=repeats,
                provider="ollama",
            )
        )
        # 3. restart with nothing changed
        steps["restart"] = run_restart(
            ns(vault=vaults["large"], index_dir=work / "index-large", model=FAST_MODEL, runs=plan.restarts, searches=50)
        )
        # 4. query latency at both sizes
        for size in ("small", "large"):
            steps[f"query_{size}"] = run_query(
                ns(
                    vault=vaults[size],
                    index_dir=work / f"index-{size}",
                    model=FAST_MODEL,
                    queries=plan.queries,
                    mode="hybrid",
                )
            )
        # 5. edits: save-to-searchable and disk growth
        steps["edits"] = run_edits(
            ns(
                vault=vaults["large"],
                index_dir=work / "index-large",
                model=FAST_MODEL,
                edits=plan.edits,
                debounce_ms=250,
            )
        )
        # 6. memory: vask serve indexing the large vault from scratch
        steps["memory"] = run_memory(ns(vault=vaults["large"], index_dir=work / "index-memory", model=FAST_MODEL))
    record["seconds"] = round(time.monotonic() - started, 1)
    record["figures"] = figures(record)
    print_figures(record["figures"])
    write_json(args.json, record)
    return record


# The vaults of `sizes`: notes -> (seed, median words a note). 100,000 notes are shorter, so that the
# three sizes reach ~124,000, ~494,000 and ~550,000 chunks (issue 16's vaults).
SIZE_VAULTS = {10_000: (1, 850.0), 40_000: (7, 850.0), 100_000: (7, 350.0)}


def run_sizes(args: argparse.Namespace) -> dict[str, Any]:
    """Every size of `--sizes` at each of `--dimensions`: a vault (with `--topics`, one whose notes
    cluster), a full index in a fresh process (peak RSS by phase, with hash-embed's vectors made
    in-process), restarts with nothing changed, /v1/search latency and recall of the ANN list, and with
    `--serve-sync` `vask serve`'s own first sync of the vault (its peak and idle RSS; needs a fast model
    server at --ollama-host: scripts.hash_ollama); then the figures side by side."""
    from scripts.synth_vault import MEDIAN_WORDS, generate

    work: Path = args.work
    record: dict[str, Any] = {"machine": machine(), "topics": args.topics, "sizes": {}}
    for notes in args.sizes:
        seed, median = SIZE_VAULTS.get(notes, (args.seed, MEDIAN_WORDS))
        topics = f"-t{args.topics}" if args.topics else ""
        vault = work / f"vault-{notes}-s{seed}-m{int(median)}{topics}"
        if not (vault / ".obsidian").is_dir() or args.fresh_vaults:
            print(f"generating {vault} ...")
            generate(vault, notes, seed=seed, median_words=median, topics=args.topics)
        for dimension in args.dimensions:
            one = _one_size(args, vault, notes, dimension, seed, median)
            key = str(notes) if args.dimensions == [384] else f"{notes}x{dimension}"
            record["sizes"][key] = one
            write_json(args.json, record)  # after each size: a long run keeps what it measured
    print_sizes(record)
    write_json(args.json, record)
    return record


def _one_size(
    args: argparse.Namespace, vault: Path, notes: int, dimension: int, seed: int, median: float
) -> dict[str, Any]:
    work: Path = args.work
    model = hash_model(dimension)
    suffix = "" if dimension == 384 else f"-d{dimension}"
    index_dir = work / f"index-size-{notes}{suffix}"
    check_bench_dir(index_dir)
    one: dict[str, Any] = {"vault": str(vault), "seed": seed, "median_words": median, "dimension": dimension}
    extra = ["--timeline", "--dimension", str(dimension)]
    # The process's own memory and speed: with the zero-cost embedder (hash-local's feature
    # cache, ~170 MiB at 100,000 notes, would be counted as vask's), into a folder dropped after.
    instant_dir = work / f"index-size-{notes}{suffix}-instant"
    check_bench_dir(instant_dir)
    one["index_instant"] = run_index_subprocess(vault, instant_dir, args.ollama_host, "instant", extra)
    shutil.rmtree(instant_dir)
    # The index searched below: hash-embed's vectors, made in-process.
    one["index"] = run_index_subprocess(vault, index_dir, args.ollama_host, LOCAL_HASH, extra)

    def ns(**kw: Any) -> argparse.Namespace:
        base = {"ollama_host": args.ollama_host, "json": None, "seed": args.seed, "work": work}
        return argparse.Namespace(**{**base, **kw})

    one["restart"] = run_restart(ns(vault=vault, index_dir=index_dir, model=model, runs=args.restarts, searches=50))
    one["query"] = run_query(ns(vault=vault, index_dir=index_dir, model=model, queries=args.queries, mode="hybrid"))
    if args.later_sync:
        one["later_sync"] = run_later_sync(
            ns(vault=vault, index_dir=index_dir, model=model, dimension=dimension, notes=args.later_sync, queries=100)
        )
    if args.serve_sync:
        serve_dir = work / f"index-serve-{notes}{suffix}"
        one["serve"] = run_memory(ns(vault=vault, index_dir=serve_dir, model=model))
        shutil.rmtree(serve_dir)
    return one


def run_later_sync(args: argparse.Namespace) -> dict[str, Any]:
    """A later sync of an indexed vault with `args.notes` of its notes edited (a paragraph added to
    each, taken out again after): how long it takes, the index on disk after it, and /v1/search's
    latency and the recall of its vector list after it (what a first build's figures cannot show: a
    compaction that damaged the vector index went unseen so)."""
    notes = sorted(p for p in args.vault.rglob("*.md") if ".obsidian" not in p.parts)
    picked = random.Random(args.seed).sample(notes, min(args.notes, len(notes)))
    originals = {path: path.read_bytes() for path in picked}
    try:
        for n, path in enumerate(picked):
            path.write_bytes(originals[path] + f"\n\nA paragraph added later, number {n}.\n".encode())
        sync = asyncio.run(
            _index_once(args.vault, args.index_dir, args.ollama_host, LOCAL_HASH, None, None, dimension=args.dimension)
        )
        query = run_query(argparse.Namespace(**{**vars(args), "mode": "hybrid"}))
    finally:
        for path, data in originals.items():
            path.write_bytes(data)
    return {"notes_changed": len(picked), "sync_s": sync["total_s"], "index_bytes": sync["index_bytes"], "query": query}


def _later_recall(one: dict[str, Any]) -> dict[str, float]:
    return dict(one["later_sync"]["query"]["vector_recall_at_50"])


def size_rows(record: dict[str, Any]) -> list[tuple[str, list[str]]]:
    """The figures of each size, one row per figure."""
    mib = 2**20
    sizes = record["sizes"]

    def each(fn: Callable[[dict[str, Any]], Any]) -> list[str]:
        out = []
        for one in sizes.values():
            try:
                out.append(str(fn(one)))
            except (KeyError, TypeError):
                out.append("—")
        return out

    return [
        ("notes", each(lambda o: f"{o['index']['notes']:,}")),
        ("chunks", each(lambda o: f"{o['index']['chunks_stored']:,}")),
        ("full index, zero-cost embedder (s)", each(lambda o: f"{o['index_instant']['total_s']:.0f}")),
        ("… throughput (chunks/s)", each(lambda o: f"{o['index_instant']['chunks_per_s']:,.0f}")),
        ("… peak RSS (MiB)", each(lambda o: f"{o['index_instant']['peak_rss_bytes'] / mib:.0f}")),
        ("full index, hash-local (s)", each(lambda o: f"{o['index']['total_s']:.0f}")),
        ("… throughput (chunks/s)", each(lambda o: f"{o['index']['chunks_per_s']:,.0f}")),
        ("… ANN build, in the sync or after it (s)", each(lambda o: f"{ann_build_s(o['index']):.1f}")),
        ("… peak RSS, its embedder's cache in it (MiB)", each(lambda o: f"{o['index']['peak_rss_bytes'] / mib:.0f}")),
        ("index on disk (MiB)", each(lambda o: f"{o['index']['index_bytes'] / mib:,.0f}")),
        # (the index's overhead: its bytes against those of the vectors it holds, as 16-bit floats)
        ("… ÷ the 16-bit vectors' own size", each(lambda o: f"{o['index']['index_bytes'] / _vector_bytes(o):.2f}")),
        ("restart: ready (s, median)", each(lambda o: f"{o['restart']['ready_median_s']:.2f}")),
        ("restart: embeddings", each(lambda o: o["restart"]["embeddings_max"])),
        ("restart: first search (ms)", each(lambda o: f"{o['restart']['first_search_median_s'] * 1000:.0f}")),
        ("serve idle after restart (MiB)", each(lambda o: f"{o['restart']['idle_rss_mib']:.0f}")),
        ("… after 50 searches (MiB)", each(lambda o: f"{o['restart']['rss_after_searches_mib']:.0f}")),
        ("/v1/search median (ms)", each(lambda o: f"{o['query']['server']['median_ms']:.1f}")),
        ("/v1/search p95 (ms)", each(lambda o: f"{o['query']['server']['p95_ms']:.1f}")),
        ("first search after a sync (ms)", each(lambda o: f"{o['query']['first_search_after_sync_ms']:.0f}")),
        ("recall@50, mean", each(lambda o: f"{o['query']['vector_recall_at_50']['mean']:.3f}")),
        ("recall@50, worst query", each(lambda o: f"{o['query']['vector_recall_at_50']['min']:.2f}")),
        (
            "a note found from its own paragraph (of 100)",
            each(lambda o: f"{o['query']['own_paragraph_found']['found']}"),
        ),
        ("a later sync: notes edited", each(lambda o: f"{o['later_sync']['notes_changed']:,}")),
        ("… its time (s)", each(lambda o: f"{o['later_sync']['sync_s']:.1f}")),
        ("… recall@50 after it, mean", each(lambda o: f"{_later_recall(o)['mean']:.3f}")),
        ("… recall@50 after it, worst", each(lambda o: f"{_later_recall(o)['min']:.2f}")),
        ("… /v1/search median after it (ms)", each(lambda o: f"{o['later_sync']['query']['server']['median_ms']:.1f}")),
        ("… index on disk after it (MiB)", each(lambda o: f"{o['later_sync']['index_bytes'] / mib:,.0f}")),
        ("serve's first sync (s)", each(lambda o: f"{o['serve']['first_sync_s']:.0f}")),
        ("… peak RSS, sync + ANN index (MiB)", each(lambda o: f"{o['serve']['peak_rss_indexing_bytes'] / mib:.0f}")),
        ("… idle RSS afterwards (MiB)", each(lambda o: f"{o['serve']['idle_rss_bytes'] / mib:.0f}")),
    ]


# The rows of the index made with hash-local's vectors: its time and peak are the stand-in's as much as
# vask's (the zero-cost embedder's rows give vask's own).
_HASH_LOCAL_ROWS = (5, 6, 8)


def sizes_table(record: dict[str, Any], *, own_only: bool = False) -> str:
    """The sizes side by side as a Markdown table: what docs/BENCHMARKS.md shows of docs/bench/sizes.json.
    `own_only`: without the rows of the hash-local index's time and peak."""
    header = ["figure", *(_size_label(key) for key in record["sizes"])]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    # (a figure no size has, from a record older than the figure, is left out)
    every = [row for n, row in enumerate(size_rows(record)) if not (own_only and n in _HASH_LOCAL_ROWS)]
    rows = [(name, values) for name, values in every if set(values) != {"—"}]
    lines += [f"| {name} | " + " | ".join(values) + " |" for name, values in rows]
    return "\n".join(lines)


def _vector_bytes(one: dict[str, Any]) -> int:
    """The stored vectors' own bytes: 16-bit floats, one vector a chunk."""
    return int(one["index"]["chunks_stored"]) * int(one.get("dimension", 384)) * 2


def _size_label(key: str) -> str:
    """ "10,000 notes", or "10,000 notes, 1,024-d" for a run at several dimensions."""
    notes, _, dimension = key.partition("x")
    return f"{int(notes):,} notes" + (f", {int(dimension):,}-d" if dimension else "")


def print_sizes(record: dict[str, Any]) -> None:
    print("\n" + sizes_table(record))


TARGETS = {
    "pipeline_chunks_per_s": (">=", 2000.0),
    "overhead_ratio": ("<=", 1.15),
    "restart_ready_s": ("<", 3.0),
    "restart_embeddings": ("==", 0),
    "save_to_searchable_median_s": ("<=", 1.0),
    "search_100k_median_ms": ("<=", 30.0),
    "search_100k_p95_ms": ("<=", 80.0),
    "peak_rss_indexing_mib": ("<=", 500.0),
    "idle_rss_mib": ("<=", 300.0),
}


def figures(record: dict[str, Any]) -> list[dict[str, Any]]:
    s = record["steps"]
    mib = 2**20
    measured: dict[str, Any] = {
        "pipeline_chunks_per_s": s["index_instant"]["chunks_per_s"],
        "pipeline_chunks_per_s_hash_embed": s["index_fast"]["chunks_per_s"],
        "overhead_ratio": s["overhead"]["ratio_median"],
        "restart_ready_s": s["restart"]["ready_median_s"],
        "restart_ready_max_s": s["restart"]["ready_max_s"],
        "restart_embeddings": s["restart"]["embeddings_max"],
        "restart_first_search_s": s["restart"]["first_search_median_s"],
        "save_to_searchable_median_s": round(s["edits"]["save_to_searchable"]["median_ms"] / 1000, 3),
        "save_to_searchable_p95_s": round(s["edits"]["save_to_searchable"]["p95_ms"] / 1000, 3),
        "search_10k_chunks": s["query_small"]["chunks"],
        "search_10k_median_ms": s["query_small"]["server"]["median_ms"],
        "search_10k_p95_ms": s["query_small"]["server"]["p95_ms"],
        "search_100k_chunks": s["query_large"]["chunks"],
        "search_100k_median_ms": s["query_large"]["server"]["median_ms"],
        "search_100k_p95_ms": s["query_large"]["server"]["p95_ms"],
        "search_100k_vector_recall_at_50": s["query_large"]["vector_recall_at_50"]["mean"],
        "peak_rss_first_sync_mib": round(s["memory"]["peak_rss_first_sync_bytes"] / mib),
        "peak_rss_indexing_mib": round(s["memory"]["peak_rss_indexing_bytes"] / mib),
        "idle_rss_mib": round(s["memory"]["idle_rss_bytes"] / mib),
        "rss_after_50_searches_mib": round(s["memory"]["rss_after_50_searches_bytes"] / mib),
        "index_mib_per_1000_chunks": round(s["memory"]["bytes_per_1000_chunks"] / mib, 2),
        "index_mib_before_edits": round(s["edits"]["index_bytes_before"] / mib, 1),
        "index_mib_after_edits": round(s["edits"]["index_bytes_after"] / mib, 1),
        "index_mib_after_edits_compacted": round(s["edits"]["index_bytes_after_final_compaction"] / mib, 1),
    }
    out = []
    for name, value in measured.items():
        op, target = TARGETS.get(name, ("", None))
        met = None
        if target is not None:
            met = {
                ">=": value >= target,
                "<=": value <= target,
                "<": value < target,
                "==": value == target,
            }[op]
        out.append(
            {"figure": name, "target": f"{op} {target}" if target is not None else "", "measured": value, "met": met}
        )
    return out


def print_figures(rows: list[dict[str, Any]]) -> None:
    print_table(
        "figures",
        [
            (
                r["figure"],
                f"{r['measured']}  "
                + (f"(target {r['target']}: {'met' if r['met'] else 'NOT met'})" if r["target"] else ""),
            )
            for r in rows
        ],
    )


# -- command line ----------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)

    def common(p: argparse.ArgumentParser, model: str = FAST_MODEL) -> None:
        p.add_argument("--ollama-host", default=DEFAULT_HOST)
        p.add_argument("--model", default=model, help="embedding model ('instant': zero-cost, in-process)")
        p.add_argument("--json", type=Path, default=None, help="write the record here")
        p.add_argument("--seed", type=int, default=1)
        p.add_argument("--work", type=Path, default=Path("/tmp/vask-bench"))
        p.add_argument(
            "--dimension",
            type=int,
            choices=DIMENSIONS,
            default=384,
            help="the hashing models' dimension (hash-embed: 384; hash-embed-1024, the default model's)",
        )

    p = sub.add_parser("all", help="every step on synthetic vaults; prints the figures table")
    p.add_argument("--quick", action="store_true", help="small vaults: ~3 minutes on 2 cores")
    p.add_argument("--repeat", type=int, default=2, help="overhead-ratio runs (the median is reported)")
    p.add_argument("--no-shim", action="store_true", help="never start ../shared/ollama-shim")
    common(p)

    p = sub.add_parser("sizes", help="index, restart and query at each vault size; figures side by side")
    p.add_argument("--sizes", default="10000,40000,100000", type=lambda v: [int(x) for x in v.split(",")])
    p.add_argument("--queries", type=int, default=300)
    p.add_argument("--restarts", type=int, default=3)
    p.add_argument("--fresh-vaults", action="store_true", help="generate the vaults even if they exist")
    p.add_argument(
        "--dimensions",
        default=[384],
        type=lambda v: [int(x) for x in v.split(",")],
        help="hash-embed's dimensions to run at, e.g. 384,1024 (figures side by side)",
    )
    p.add_argument("--topics", type=int, default=None, help="vaults whose notes cluster in this many topics")
    p.add_argument("--serve-sync", action="store_true", help="also vask serve's first sync (a fast model server)")
    p.add_argument(
        "--later-sync", type=int, default=0, metavar="N", help="also a later sync of N edited notes, recall after it"
    )
    common(p)

    p = sub.add_parser("index", help="full index of --vault into a fresh --index-dir, time split by stage")
    p.add_argument("--vault", type=Path, required=True)
    p.add_argument("--index-dir", type=Path, required=True)
    p.add_argument("--batch-size", type=int, default=None)
    p.add_argument("--concurrency", type=int, default=None)
    p.add_argument("--timeline", action="store_true", help="sample RSS by phase of the sync")
    p.add_argument("--tracemalloc", action="store_true", help="also Python's allocations (slower)")
    common(p)

    p = sub.add_parser("overhead", help="real model: full index time ÷ direct embedding time")
    p.add_argument("--vault", type=Path, required=True)
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=None)
    p.add_argument("--concurrency", type=int, default=None)
    p.add_argument(
        "--provider",
        choices=("ollama", "openai"),
        default="ollama",
        help="the API to embed through: Ollama's, or the OpenAI-compatible one at --ollama-host + /v1",
    )
    common(p, REAL_MODEL)

    p = sub.add_parser("restart", help="restart vask serve with nothing changed: time to ready, embeddings")
    p.add_argument("--vault", type=Path, required=True)
    p.add_argument("--index-dir", type=Path, required=True)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--searches", type=int, default=50, help="searches before the second RSS reading")
    common(p)

    p = sub.add_parser("query", help="/v1/search server-side latency (query embedding excluded)")
    p.add_argument("--vault", type=Path, required=True)
    p.add_argument("--index-dir", type=Path, required=True)
    p.add_argument("--queries", type=int, default=300)
    p.add_argument("--mode", choices=("hybrid", "vector"), default="hybrid")
    common(p)

    p = sub.add_parser("related", help="/v1/related latency, a different note each call")
    p.add_argument("--vault", type=Path, required=True)
    p.add_argument("--index-dir", type=Path, required=True)
    p.add_argument("--calls", type=int, default=50)
    common(p)

    p = sub.add_parser("edits", help="save-to-searchable over many edits; disk before and after")
    p.add_argument("--vault", type=Path, required=True, help="edited in place: use a synthetic vault")
    p.add_argument("--index-dir", type=Path, required=True)
    p.add_argument("--edits", type=int, default=100)
    p.add_argument("--debounce-ms", type=int, default=250)
    common(p)

    p = sub.add_parser("memory", help="vask serve indexing from scratch: peak and idle RSS, disk")
    p.add_argument("--vault", type=Path, required=True)
    p.add_argument("--index-dir", type=Path, required=True, help="replaced")
    common(p)

    p = sub.add_parser("responsive", help="/v1/status, /v1/search and progress while vask serve syncs")
    p.add_argument("--vault", type=Path, required=True, help="every note's mtime is moved 1 s: a synthetic vault")
    p.add_argument("--index-dir", type=Path, required=True, help="replaced")
    p.add_argument("--queries", type=int, default=40, help="search queries, asked idle and cycled during the sync")
    p.add_argument("--timeout", type=float, default=3600.0, help="seconds each sync may take")
    common(p)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from vask_server.adapters.memory import set_process_memory_policy

    args = build_parser().parse_args(argv)
    set_process_memory_policy()  # as `vask` sets it: the steps run in this process measure what it runs
    if args.command == "all":
        run_all(args)
        return 0
    handlers: dict[str, Callable[[argparse.Namespace], dict[str, Any]]] = {
        "index": run_index,
        "overhead": run_overhead,
        "restart": run_restart,
        "query": run_query,
        "related": run_related,
        "edits": run_edits,
        "memory": run_memory,
        "responsive": run_responsive,
        "sizes": run_sizes,
    }
    if getattr(args, "index_dir", None) is not None:
        check_bench_dir(args.index_dir)  # before anything starts (the step claims it when it runs)
    needs_ollama = not (args.command == "index" and args.model in ("instant", LOCAL_HASH))
    with ollama_running(args.ollama_host) if needs_ollama else contextlib.nullcontext():
        handlers[args.command](args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
