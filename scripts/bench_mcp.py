"""The MCP door's costs, on a 10,000-note index (scripts/synth_vault.py) embedded with the stand-in's
`hash-embed` (served by scripts.hash_ollama, in its own process):

- `vask mcp`'s readiness: spawn → the client's `initialize` answered (the MCP SDK's own stdio client), over
  several launches (aimed at: 2 s);
- a `search_notes` call over stdio against `POST /v1/search` on a `vask serve` of the same index, the same
  questions interleaved, in the same run (aimed at: the tool's median at most 1.2 × the endpoint's); each
  from its client's side (what an agent and the plugin wait), the query embedded over HTTP by both;
- `vask serve`'s start (spawn → ready) and idle memory with the `/mcp` mount and without it (as before it
  existed), and its memory once `/mcp` has been called (the SDK loaded).

    uv run python -m scripts.bench_mcp --json docs/bench/mcp.json     # ~10 min here, most of it indexing

Vault, index and logs go under --work (default /tmp/vask-bench-mcp), never into the repository.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
import urllib.error
from pathlib import Path
from typing import Any

from scripts.benchkit import (
    ROOT,
    claim_bench_dir,
    free_port,
    http_json,
    machine,
    make_queries,
    print_table,
    settled_rss,
    summary_ms,
    vask_env,
    write_json,
)

MODEL = "hash-embed"


def _hash_ollama(port: int, log: Path) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(
        [sys.executable, "-m", "scripts.hash_ollama", "--port", str(port)],
        cwd=ROOT,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 60
    while True:
        try:
            http_json(f"http://127.0.0.1:{port}/api/tags", timeout=2)
            return process
        except (OSError, urllib.error.URLError):
            if process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"scripts.hash_ollama did not start; see {log}") from None
            time.sleep(0.3)


def _indexed(index_dir: Path) -> bool:
    from vask_server.adapters.meta import read_meta

    active = read_meta(index_dir).active if (index_dir / "index.json").exists() else None
    return bool(active and active.get("model") == MODEL)


def _index(vault: Path, index_dir: Path, host: str, log: Path) -> float:
    started = time.monotonic()
    env = vask_env(index_dir, host, MODEL)
    with log.open("w") as out:
        subprocess.run(
            [sys.executable, "-m", "vask_server.cli", "index", "--vault", str(vault), "--quiet"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            check=True,
        )
    return time.monotonic() - started


# `vask serve` as before the MCP door: the same command, without the /mcp mount
_SERVE_WITHOUT_MCP = (
    "import sys\n"
    "from vask_server import cli\n"
    "from vask_server.web import server\n"
    "run = server.run_server\n"
    "server.run_server = lambda settings, **kw: run(settings, **{**kw, 'mounts': []})\n"
    "sys.exit(cli.main(sys.argv[1:]))\n"
)


def _serve(vault: Path, index_dir: Path, host: str, port: int, log: Path, *, mcp: bool) -> subprocess.Popen[str]:
    args = ["serve", "--vault", str(vault), "--port", str(port), "--no-watch"]
    command = (
        [sys.executable, "-m", "vask_server.cli", *args] if mcp else [sys.executable, "-c", _SERVE_WITHOUT_MCP, *args]
    )
    return subprocess.Popen(
        command,
        cwd=ROOT,
        env=vask_env(index_dir, host, MODEL),
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
        text=True,
    )


def _ready(process: subprocess.Popen[str], base: str, token: str, started: float) -> tuple[float, float]:
    listening = None
    while True:
        if process.poll() is not None:
            raise SystemExit(f"vask serve exited with {process.returncode}")
        try:
            status = http_json(base + "/v1/status", token=token, timeout=10)
        except (OSError, urllib.error.URLError):
            time.sleep(0.02)
            continue
        listening = listening or time.monotonic() - started
        if status["state"] == "idle" and status["pending"] == 0 and status["model"]:
            return listening, time.monotonic() - started
        time.sleep(0.02)


def _stop(process: subprocess.Popen[Any]) -> None:
    process.terminate()
    try:
        process.wait(15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(5)


def serve_starts(vault: Path, index_dir: Path, host: str, work: Path, rounds: int) -> dict[str, Any]:
    """Spawn → ready and idle RSS, with the mount and without, alternating; and RSS after /mcp is used."""
    token = (index_dir / "token").read_text().strip()
    found: dict[str, dict[str, list[float]]] = {
        kind: {"ready_s": [], "idle_rss_mib": []} for kind in ("with_mcp", "without_mcp")
    }
    after_mcp: list[float] = []
    for _ in range(rounds):
        for kind in ("without_mcp", "with_mcp"):
            port = free_port()
            started = time.monotonic()
            process = _serve(vault, index_dir, host, port, work / f"serve-{kind}.log", mcp=kind == "with_mcp")
            try:
                _, ready = _ready(process, f"http://127.0.0.1:{port}", token, started)
                found[kind]["ready_s"].append(ready)
                found[kind]["idle_rss_mib"].append(settled_rss(process.pid) / 2**20)
                if kind == "with_mcp":
                    asyncio.run(_one_mcp_call(f"http://127.0.0.1:{port}/mcp", token))
                    after_mcp.append(settled_rss(process.pid) / 2**20)
            finally:
                _stop(process)
    return {
        kind: {name: round(statistics.median(values), 3) for name, values in measured.items()}
        for kind, measured in found.items()
    } | {"with_mcp_after_a_call_rss_mib": round(statistics.median(after_mcp), 1)}


async def _one_mcp_call(url: str, token: str) -> None:
    from tests.mcp_helpers import http_session

    async with http_session(url, token) as client:
        await client.call_tool("index_status", {})


async def mcp_ready(settings_env: dict[str, str], vault: Path, launches: int) -> dict[str, Any]:
    """Spawn → `initialize` answered, as an agent's launch of `vask mcp`."""
    from mcp import Client, StdioServerParameters

    times = []
    for _ in range(launches):
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "vask_server.cli", "mcp", "--vault", str(vault)],
            env=settings_env,
            cwd=str(ROOT),
        )
        started = time.perf_counter()
        async with Client(params, mode="legacy") as client:
            times.append(time.perf_counter() - started)
            assert client.server_info is not None
    return {
        "launches": launches,
        "median_s": round(statistics.median(times), 3),
        "max_s": round(max(times), 3),
        "all_s": [round(t, 3) for t in times],
    }


def mcp_ready_cpu(env: dict[str, str], vault: Path, launches: int) -> dict[str, Any]:
    """The same readiness from a raw pipe (an `initialize` written, its answer read), with the CPU time
    the process had used by then: on a machine other work keeps busy, the wall time grows with the
    load, the CPU time does not (what a launch costs on an idle machine)."""
    ticks = os.sysconf("SC_CLK_TCK")
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"},
        },
    }
    walls, cpus = [], []
    for _ in range(launches):
        started = time.perf_counter()
        process = subprocess.Popen(
            [sys.executable, "-m", "vask_server.cli", "mcp", "--vault", str(vault)],
            cwd=ROOT,
            env={**os.environ, **env},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write((json.dumps(hello) + "\n").encode())
        process.stdin.flush()
        answer = json.loads(process.stdout.readline())
        walls.append(time.perf_counter() - started)
        fields = Path(f"/proc/{process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        cpus.append((int(fields[11]) + int(fields[12])) / ticks)  # (utime, stime)
        assert answer["result"]["serverInfo"]["name"] == "vask", answer
        process.stdin.close()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)
    return {
        "launches": launches,
        "wall_median_s": round(statistics.median(walls), 3),
        "cpu_median_s": round(statistics.median(cpus), 3),
        "cpu_max_s": round(max(cpus), 3),
    }


async def search_costs(
    settings_env: dict[str, str], vault: Path, base: str, token: str, queries: list[str]
) -> dict[str, Any]:
    """Each question through /v1/search and through search_notes over stdio, interleaved."""
    import aiohttp
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "vask_server.cli", "mcp", "--vault", str(vault)],
        env=settings_env,
        cwd=str(ROOT),
    )
    api: list[float] = []
    tool: list[float] = []
    same = 0
    async with (
        aiohttp.ClientSession(base, headers={"Authorization": f"Bearer {token}"}) as http,
        Client(params, mode="legacy", read_timeout_seconds=120) as client,
    ):

        async def both(query: str) -> tuple[float, float, bool]:
            started = time.perf_counter()
            async with http.post("/v1/search", json={"query": query}) as response:
                body = await response.json()
            api_s = time.perf_counter() - started
            started = time.perf_counter()
            result = await client.call_tool("search_notes", {"question": query})
            tool_s = time.perf_counter() - started
            assert not result.is_error, result
            wanted = list(dict.fromkeys(h["path"] for h in body["hits"]))[:6]
            got = list(dict.fromkeys(p["path"] for p in result.structured_content["passages"]))[:6]
            return api_s, tool_s, wanted == got

        for query in queries[:10]:  # (each side's first searches: the table opened, the calibration read)
            await both(query)
        for query in queries:
            api_s, tool_s, agreed = await both(query)
            api.append(api_s)
            tool.append(tool_s)
            same += agreed
    ratio = statistics.median(tool) / statistics.median(api)
    return {
        "queries": len(api),
        "v1_search": summary_ms(api),
        "search_notes_stdio": summary_ms(tool),
        "median_ratio": round(ratio, 3),
        "same_first_six_notes": same,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "vask-bench-mcp")
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--launches", type=int, default=10)
    parser.add_argument("--serve-rounds", type=int, default=3)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument(
        "--steps", default="ready,search,serve", help="which to run, comma-separated: ready, search, serve"
    )
    args = parser.parse_args()
    from scripts.synth_vault import generate

    work = args.work
    work.mkdir(parents=True, exist_ok=True)
    vault = work / f"vault-{args.notes}"
    index_dir = work / f"index-{args.notes}"
    record: dict[str, Any] = {"machine": machine(), "notes": args.notes, "model": MODEL}
    port = free_port()
    host = f"http://127.0.0.1:{port}"
    embedder = _hash_ollama(port, work / "hash-ollama.log")
    try:
        if not _indexed(index_dir):  # (one a run before left complete is used again)
            record["vault"] = generate(vault, args.notes, seed=1)
            claim_bench_dir(index_dir, fresh=True)
            record["index_s"] = round(_index(vault, index_dir, host, work / "index.log"), 1)
        from vask_server.adapters.token import ensure_token

        token = ensure_token(index_dir)
        env = {k: v for k, v in vask_env(index_dir, host, MODEL).items() if k != "VASK_VAULT"}
        steps = set(args.steps.split(","))
        if "ready" in steps:
            record["vask_mcp_ready"] = asyncio.run(mcp_ready(env, vault, args.launches))
            record["vask_mcp_ready_cpu"] = mcp_ready_cpu(env, vault, args.launches)
        if "search" in steps:
            serve_port = free_port()
            started = time.monotonic()
            server = _serve(vault, index_dir, host, serve_port, work / "serve.log", mcp=True)
            try:
                base = f"http://127.0.0.1:{serve_port}"
                _ready(server, base, token, started)
                queries = make_queries(args.queries, seed=5)
                record["search"] = asyncio.run(search_costs(env, vault, base, token, queries))
            finally:
                _stop(server)
        if "serve" in steps:
            record["serve"] = serve_starts(vault, index_dir, host, work, args.serve_rounds)
    finally:
        _stop(embedder)
    record["load_at_end"] = Path("/proc/loadavg").read_text().split(" ")[0]
    rows = []
    if "vask_mcp_ready" in record:
        ready, cpu = record["vask_mcp_ready"], record["vask_mcp_ready_cpu"]
        rows.append(("vask mcp ready (spawn → initialize)", f"median {ready['median_s']} s, max {ready['max_s']} s"))
        rows.append(("the same: CPU time used by then", f"median {cpu['cpu_median_s']} s, max {cpu['cpu_max_s']} s"))
    if "search" in record:
        search = record["search"]
        rows.append(("POST /v1/search", "median {median_ms} ms, p95 {p95_ms} ms".format(**search["v1_search"])))
        rows.append(
            ("search_notes over stdio", "median {median_ms} ms, p95 {p95_ms} ms".format(**search["search_notes_stdio"]))
        )
        rows.append(("ratio of medians", f"{search['median_ratio']} (aimed at: at most 1.2)"))
        rows.append(("same first six notes", f"{search['same_first_six_notes']} of {search['queries']}"))
    if "serve" in record:
        serve = record["serve"]
        for kind, label in (("without_mcp", "without /mcp"), ("with_mcp", "with /mcp")):
            rows.append(
                (f"vask serve ready, {label}", "{ready_s} s, idle {idle_rss_mib:.0f} MiB".format(**serve[kind]))
            )
        rows.append(("vask serve after one /mcp call", f"{serve['with_mcp_after_a_call_rss_mib']:.0f} MiB"))
    print_table(f"the MCP door on {args.notes:,} notes ({MODEL})", rows)
    write_json(args.json, record)
    print(json.dumps({k: v for k, v in record.items() if k != "machine"}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
