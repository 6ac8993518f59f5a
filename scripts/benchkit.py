"""The pieces every benchmark script shares: where the repository and the Ollama stand-in are, the
models the benchmarks use, statistics and tables, a process's memory, the folders a benchmark owns,
`vask serve` as a subprocess, the model server's stand-ins in-process, and the synthetic vault's
queries. Imports nothing of the benchmarks themselves, so each of them can import it.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import os
import platform
import random
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
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


def cpu_seconds(pid: int) -> float | None:
    """User and system CPU seconds a process has used so far (None when it is gone): on a shared
    machine, steadier than its wall time."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


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
    (path / BENCH_MARKER).write_text("made by a benchmark in scripts/, which may delete this folder\n")
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


# -- the model's stand-ins, in-process -------------------------------------------------------------


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


# -- an index in this process -----------------------------------------------------------------------


async def wait_background(store: Any) -> None:
    """Until the store's background work (a new ANN index) is done. (Checkouts from before it
    existed have none: the benchmarks also run against them, for before/after figures.)"""
    wait = getattr(store, "wait_background", None)
    if wait is not None:
        await wait()


def active_tables(store: Any) -> Any:
    """The tables of the store's complete index."""
    return store.tables(store.read_meta().active)


# -- vask serve as a subprocess --------------------------------------------------------------------


@dataclass
class Server:
    process: subprocess.Popen[str]
    base: str
    token: str
    started: float  # monotonic time of the spawn

    @property
    def pid(self) -> int:
        """The `vask serve` process itself: under `uv run`, uv's child (uv waits for it)."""
        return vask_pid(self.process.pid) or self.process.pid

    def status(self) -> Any:
        return http_json(self.base + "/v1/status", token=self.token, timeout=10)

    def health(self) -> Any:
        return http_json(self.base + "/v1/health", token=self.token, timeout=10)

    def stop(self) -> None:
        child = vask_pid(self.process.pid)
        if child is not None:  # (uv passes a terminate on too; asked directly, it cannot be missed)
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, signal.SIGTERM)
        self.process.terminate()
        try:
            self.process.wait(15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(5)


def vask_pid(pid: int) -> int | None:
    """The process under `pid` (itself or a descendant) running `vask_server` or the `vask` script;
    None when there is none (yet)."""
    seen = [pid]
    while seen:
        current = seen.pop(0)
        with contextlib.suppress(OSError):
            argv = Path(f"/proc/{current}/cmdline").read_bytes().split(b"\0")
            if any(b"vask_server" in arg or arg.endswith(b"/vask") for arg in argv[:3]):
                return current
        for task in Path(f"/proc/{current}/task").glob("*"):  # (uv starts its child from another thread)
            with contextlib.suppress(OSError):
                seen += [int(c) for c in (task / "children").read_text().split()]
    return None


LAUNCHERS = ("uv", "python")  # `uv run vask serve` in the checkout, or its interpreter run directly


def start_server(
    vault: Path,
    index_dir: Path,
    host: str,
    model: str,
    port: int,
    log: Path | None = None,
    *,
    checkout: Path = ROOT,
    launcher: str = "python",
    **extra_env: str,
) -> Server:
    """`vask serve` of `checkout` (this one unless told: another lets the same benchmark time the code
    before a change), started as a person would (`uv`: `uv run vask serve` in it) or its interpreter
    directly (`python`)."""
    from vask_server.adapters.token import ensure_token

    claim_bench_dir(index_dir)  # the server syncs --vault into it
    token = ensure_token(index_dir)
    env = vask_env(index_dir, host, model, **extra_env)
    serve = ["serve", "--vault", str(vault), "--port", str(port)]
    if launcher == "uv":
        uv = shutil.which("uv") or str(Path.home() / ".local" / "bin" / "uv")
        command = [uv, "run", "vask", *serve]
    else:
        python = checkout / ".venv" / "bin" / "python"
        command = [str(python) if python.exists() else sys.executable, "-m", "vask_server.cli", *serve]
    output = open(log, "w") if log else subprocess.DEVNULL  # noqa: SIM115 (closed with the process)
    started = time.monotonic()
    process = subprocess.Popen(command, cwd=checkout, env=env, stdout=output, stderr=subprocess.STDOUT, text=True)
    return Server(process, f"http://127.0.0.1:{port}", token, started)


def wait_current(server: Server, *, poll: float = 0.05, timeout: float = 600.0) -> tuple[float, float]:
    """Seconds from the spawn until the port answers, and until `/v1/health` says the vault is
    confirmed current: an index, nothing pending (what a client that starts the server waits for)."""
    listening: float | None = None
    while True:
        now = time.monotonic()
        if now - server.started > timeout:
            raise SystemExit(f"vask serve not current after {timeout} s")
        if server.process.poll() is not None:
            raise SystemExit(f"vask serve exited with {server.process.returncode}")
        try:
            health = server.health()
        except (OSError, urllib.error.URLError):
            time.sleep(poll)
            continue
        if listening is None:
            listening = now - server.started
        index = health.get("index", {})
        if index.get("pending") == 0 and index.get("model"):
            return listening, time.monotonic() - server.started
        time.sleep(poll)


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


# -- the synthetic vault's queries ------------------------------------------------------------------


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


_PROSE_WORD = re.compile(r"[a-z]{4,}")


def vault_questions(vault: Path, short: int, long: int, seed: int = 5) -> tuple[list[str], list[str]]:
    """Questions of this vault as people ask them: `short` of four words as typed into a search box
    (words of one note, lower case, no punctuation), and `long` passages pasted in (a paragraph of
    a note, 40 to 120 words). Deterministic for the vault and the seed."""
    from scripts.synth_vault import _COMMON

    common = set(_COMMON)
    rng = random.Random(seed)
    notes = sorted(p for p in vault.rglob("*.md") if ".obsidian" not in p.parts)
    shorts: list[str] = []
    longs: list[str] = []
    while len(shorts) < short or len(longs) < long:
        text = rng.choice(notes).read_text("utf-8", errors="replace")
        paragraphs = [p for p in text.split("\n\n") if p[:1].isalpha() and len(p.split()) >= 40]
        if len(shorts) < short:
            words = sorted({w for w in _PROSE_WORD.findall(text.lower()) if w not in common})
            if len(words) >= 4:
                shorts.append(" ".join(rng.sample(words, 4)))
        if len(longs) < long and paragraphs:
            longs.append(" ".join(rng.choice(paragraphs).split()[:120]))
    return shorts, longs


def timed_search(server: Server, query: str, mode: str = "hybrid") -> float:
    """Seconds a `/v1/search` takes as its client waits for it (the question's embedding included)."""
    started = time.perf_counter()
    answer = http_json(server.base + "/v1/search", {"query": query, "mode": mode}, server.token)
    elapsed = time.perf_counter() - started
    if "hits" not in answer:
        raise SystemExit(f"/v1/search answered {answer}")
    return elapsed


@contextlib.asynccontextmanager
async def served(app: Any) -> AsyncIterator[tuple[int, list[float]]]:
    """vask's aiohttp `app` served on a free port of 127.0.0.1 for the time of the block: the port, and
    the time each `/v1/search` spent in the server, recorded by a middleware put outermost (the token
    and host checks and the JSON encoding are inside it)."""
    from aiohttp import web

    handler_s: list[float] = []

    @web.middleware
    async def timing(request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> Any:
        started = time.perf_counter()
        try:
            return await handler(request)
        finally:
            if request.path == "/v1/search":
                handler_s.append(time.perf_counter() - started)

    app.middlewares.insert(0, timing)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        yield port, handler_s
    finally:
        await runner.cleanup()
