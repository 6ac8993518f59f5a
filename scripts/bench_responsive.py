"""`scripts.bench responsive`: does `vask serve` stay responsive while it syncs a large vault?

Two syncs of a real `vask serve` subprocess, each watched from threads of this process while it runs:
`GET /v1/status` every 0.25 s (latency, and when its `done` figure moves), `POST /v1/search` every
second (latency, HTTP status, hits), unauthenticated `GET /v1/health` every 0.25 s (it answers without
touching the index, so its latency is the event loop's own), and the `/v1/events` stream (the gaps
between its events).

(a) the first sync of --vault into an empty --index-dir: searches answer 409 `not_indexed` until it
    ends, and should do so at once;
(b) a resync of every note with the index in place: every note's modification time moved 1 s, its
    contents unchanged (what a git checkout or a file-sync tool does), then `POST /v1/reindex`: every
    note is read and hashed again, nothing is embedded. Searches answer with hits; their latency is
    set beside the same queries' on the idle server just before.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import re
import socket
import statistics
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scripts import benchkit

STATUS_EVERY = 0.25
SEARCH_EVERY = 1.0
REPORT_FIELDS = ("changed", "touched", "chunks_embedded", "chunks_reused", "seconds")  # of a status's last_report


@dataclass
class Call:
    at: float  # monotonic time it was sent
    seconds: float
    status: int  # HTTP status; 0 when nothing answered (refused, reset, timed out)
    body: Any = None

    @property
    def answered_at(self) -> float:
        return self.at + self.seconds

    def label(self) -> str:
        if self.status == 0:
            return "no answer"
        code = self.body.get("error", {}).get("code") if isinstance(self.body, dict) else None
        return f"{self.status} {code}" if code else str(self.status)


def timed_call(url: str, body: Any = None, token: str | None = None, timeout: float = 30.0) -> Call:
    """One request, its latency and HTTP status, whatever it answers."""
    data = json.dumps(body).encode() if body is not None else None
    headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {token}"} if token else {})}
    started = time.monotonic()
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data=data, headers=headers), timeout=timeout) as r:
            answer = json.loads(r.read())
            return Call(started, time.monotonic() - started, r.status, answer)
    except urllib.error.HTTPError as exc:
        payload: Any = None
        with contextlib.suppress(OSError, ValueError):
            payload = json.loads(exc.read())
        return Call(started, time.monotonic() - started, exc.code, payload)
    except (OSError, urllib.error.URLError, ValueError):
        return Call(started, time.monotonic() - started, 0)


@dataclass
class Watch:
    """Threads that poll a running server until `stop`; what they saw, in order."""

    server: benchkit.Server
    queries: Sequence[str]
    status: list[Call] = field(default_factory=list)
    health: list[Call] = field(default_factory=list)
    searches: list[Call] = field(default_factory=list)
    events: list[tuple[float, dict[str, Any]]] = field(default_factory=list)  # (monotonic, event)
    _stop: threading.Event = field(default_factory=threading.Event)
    _threads: list[threading.Thread] = field(default_factory=list)
    _events_socket: socket.socket | None = None

    def __enter__(self) -> Watch:
        for target in (self._poll_status, self._poll_health, self._poll_search, self._read_events):
            thread = threading.Thread(target=target, daemon=True, name=f"watch-{target.__name__}")
            thread.start()
            self._threads.append(thread)
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        if self._events_socket is not None:
            with contextlib.suppress(OSError):
                self._events_socket.shutdown(socket.SHUT_RDWR)
        for thread in self._threads:
            thread.join(70)

    def _every(self, seconds: float, call: Any, into: list[Call]) -> None:
        while not self._stop.is_set():
            made: Call = call()
            into.append(made)
            self._stop.wait(max(0.0, seconds - made.seconds))

    def _poll_status(self) -> None:
        base, token = self.server.base, self.server.token
        self._every(STATUS_EVERY, lambda: timed_call(base + "/v1/status", token=token, timeout=30), self.status)

    def _poll_health(self) -> None:
        self._every(STATUS_EVERY, lambda: timed_call(self.server.base + "/v1/health", timeout=30), self.health)

    def _poll_search(self) -> None:
        turn = iter(range(1 << 62))

        def one() -> Call:
            query = self.queries[next(turn) % len(self.queries)]
            return timed_call(self.server.base + "/v1/search", {"query": query}, self.server.token, timeout=60)

        self._every(SEARCH_EVERY, one, self.searches)

    def _read_events(self) -> None:
        # A socket of its own rather than urllib: __exit__ shuts it down, which wakes the blocked read
        # (an open stream would otherwise hold up the server's shutdown by its 5 s grace period).
        host, port = self.server.base.removeprefix("http://").rsplit(":", 1)
        request = (
            f"GET /v1/events HTTP/1.1\r\nHost: {host}:{port}\r\nAuthorization: Bearer {self.server.token}\r\n"
            "Accept: text/event-stream\r\n\r\n"
        ).encode()
        while not self._stop.is_set():
            try:
                with socket.create_connection((host, int(port)), timeout=60) as sock:
                    self._events_socket = sock
                    if self._stop.is_set():
                        return
                    sock.sendall(request)
                    for raw in sock.makefile("rb"):
                        line = raw.decode("utf-8", "replace").rstrip("\r\n")
                        # (chunked transfer: the chunk-size lines are not "data: " lines, so skipped)
                        if line.startswith("data: "):
                            with contextlib.suppress(ValueError):
                                self.events.append((time.monotonic(), json.loads(line[6:])))
            except OSError:
                pass  # not listening yet, or the server went away, or __exit__ shut the socket
            self._stop.wait(0.1)

    def wait_in_step(self, since: float, timeout: float) -> Call:
        """The first status answer sent after `since` that says the index is in step: idle, nothing
        pending, a model."""
        checked = 0
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.server.process.poll() is not None:
                raise SystemExit(f"vask serve exited with {self.server.process.returncode}")
            calls = self.status[checked:]
            checked += len(calls)
            for call in calls:
                if call.at >= since and call.status == 200 and in_step(call.body):
                    return call
            time.sleep(0.05)
        raise SystemExit(f"vask serve not in step after {timeout} s")


def in_step(status: dict[str, Any]) -> bool:
    return status["state"] == "idle" and not status["pending"] and bool(status["model"])


# -- figures ---------------------------------------------------------------------------------------


def latency(calls: Sequence[Call]) -> dict[str, Any] | None:
    return benchkit.summary_ms([c.seconds for c in calls]) if calls else None


def by_status(calls: Sequence[Call]) -> dict[str, int]:
    return dict(sorted(Counter(c.label() for c in calls).items()))


def counts(body: dict[str, Any]) -> str:
    return f"{int(body['done'])}/{int(body['total'])}"


def counts_or_step(body: dict[str, Any]) -> str:
    """The counts, or the step a sync is in and its whole seconds (what the status bar shows)."""
    seconds = body.get("stage_seconds")
    step = f" {body['stage']} {int(seconds)} s" if body.get("stage") and seconds is not None else ""
    return counts(body) + step


def progress_intervals(
    calls: Sequence[Call], start: float, end: float, figure_of: Callable[[dict[str, Any]], str] = counts
) -> dict[str, Any]:
    """Seconds between the answers at which `figure_of` an answer changed (by default `done` or
    `total`), from `start` to `end`: the longest, where it was, and the median. Only what the polls
    saw, so ± one poll interval."""
    marks: list[tuple[float, str]] = [(start, "start")]
    last: str | None = None
    for call in calls:
        if call.status != 200 or not start <= call.answered_at <= end:
            continue
        figure = figure_of(call.body)
        if last is not None and figure != last:
            marks.append((call.answered_at, figure))
        last = figure
    marks.append((end, "in step"))
    gaps = [(later[0] - earlier[0], f"{earlier[1]} → {later[1]}") for earlier, later in itertools.pairwise(marks)]
    longest = max(gaps, default=(0.0, ""))
    return {
        "changes": len(marks) - 2,
        "longest_s": round(longest[0], 2),
        "longest_between": longest[1],
        "median_s": round(statistics.median(g for g, _ in gaps), 3) if gaps else None,
        "over_1s": sum(1 for g, _ in gaps if g > 1.0),
    }


def event_gaps(events: Sequence[tuple[float, dict[str, Any]]], start: float, end: float) -> dict[str, Any]:
    times = [at for at, _ in events if start <= at <= end]
    gaps = [b - a for a, b in itertools.pairwise([start, *times, end])]
    return {
        "events": len(times),
        "longest_gap_s": round(max(gaps), 2) if gaps else None,
        "median_gap_s": round(statistics.median(gaps), 3) if gaps else None,
    }


def phase_record(watch: Watch, start: float, end: float, earlier: Any = None) -> dict[str, Any]:
    """What `watch` saw from `start` to `end`; `earlier`: the last sync report before (not listed)."""

    def within(calls: list[Call]) -> list[Call]:
        return [c for c in calls if start <= c.at <= end]

    status, health, searches = within(watch.status), within(watch.health), within(watch.searches)
    ok = [c for c in searches if c.status == 200]
    reports = [earlier]
    for call in status:
        report = call.body.get("last_report") if call.status == 200 else None
        if report and report not in reports:
            reports.append(report)
    return {
        "seconds": round(end - start, 2),
        "status": {"latency": latency(status), "answers": by_status(status)},
        "health": {"latency": latency(health), "answers": by_status(health)},
        "search": {
            "latency": latency(searches),
            "latency_200": latency(ok),
            "latency_not_200": latency([c for c in searches if c.status != 200]),
            "answers": by_status(searches),
            "answered_with_hits": sum(1 for c in ok if c.body.get("hits")),
        },
        "progress": progress_intervals(status, start, end),
        # (the steps after the notes move only their seconds: LanceDB reports nothing from inside)
        "progress_or_step": progress_intervals(status, start, end, counts_or_step),
        "events": event_gaps(watch.events, start, end),
        "sync_reports": [{k: r[k] for k in REPORT_FIELDS} for r in reports[1:]],
        # how latency went as the sync went on: [seconds into the window, ms, done/total or HTTP status]
        "status_timeline": _thinned(
            [[round(c.at - start, 1), round(c.seconds * 1000), _figure(c)] for c in status if c.status == 200]
        ),
        "search_timeline": _thinned([[round(c.at - start, 1), round(c.seconds * 1000), c.label()] for c in searches]),
    }


def _figure(call: Call) -> str:
    return f"{call.body['done']}/{call.body['total']}"


def _thinned(rows: list[list[Any]], most: int = 60) -> list[list[Any]]:
    return rows[:: max(1, -(-len(rows) // most))]


# -- the run ---------------------------------------------------------------------------------------


def touch_every_note(vault: Path) -> int:
    """Every file's modification time 1 s later, contents unchanged; hidden folders (.obsidian) left."""
    count = 0
    for root, dirs, files in os.walk(vault):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in files:
            path = Path(root) / name
            stat = path.stat()
            os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
            count += 1
    return count


ANN_READY = re.compile(r"vector index of \S+ ready in ([0-9.]+) s")


def ann_build(log: Path, chunks: int, timeout: float = 600.0) -> dict[str, Any] | None:
    """How long the first sync's ANN index took to build (the server logs it), and whether it was
    ready when the sync was (a step of the sync) or after it (in the background); None when the
    index is too small to get one."""
    from vask_server.adapters import store

    if chunks < getattr(store, "VECTOR_INDEX_MIN_ROWS", float("inf")):
        return None
    in_sync = ANN_READY.search(log.read_text(errors="replace")) is not None
    started = time.monotonic()
    while (found := ANN_READY.search(log.read_text(errors="replace"))) is None:
        if time.monotonic() - started > timeout:
            return {"in_sync": False, "build_s": None, "ready_after_sync_s": None}
        time.sleep(0.25)
    waited = 0.0 if in_sync else round(time.monotonic() - started, 2)
    return {"in_sync": in_sync, "build_s": float(found.group(1)), "ready_after_sync_s": waited}


def run_responsive(args: argparse.Namespace) -> dict[str, Any]:
    benchkit.claim_bench_dir(args.index_dir, fresh=True)
    log = args.work / "responsive-serve.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    queries = benchkit.make_queries(args.queries, seed=args.seed)
    load_before = os.getloadavg()
    server = benchkit.start_server(
        args.vault, args.index_dir, args.ollama_host, args.model, benchkit.free_port(), log=log, VASK_LOG_LEVEL="info"
    )
    try:
        # (a) the first sync, watched from the first status answer on
        with Watch(server, queries) as first:
            in_step = first.wait_in_step(0.0, args.timeout)
        listening = next(c for c in first.status if c.status == 200)
        first_sync = phase_record(first, listening.at, in_step.answered_at)
        first_sync["listening_s"] = round(listening.answered_at - server.started, 2)
        first_sync["in_step_s"] = round(in_step.answered_at - server.started, 2)
        notes, chunks = int(in_step.body["notes"]), int(in_step.body["chunks"])
        print(f"first sync: {notes} notes, {chunks} chunks in step {first_sync['in_step_s']} s after the spawn")
        ann = ann_build(log, chunks)
        first_peak = benchkit.proc_status(server.process.pid).get("VmHWM")  # the first sync's and its ANN build's

        # (b) the same queries on the idle server, then during a resync of every note
        idle = [timed_call(server.base + "/v1/search", {"query": q}, server.token, timeout=60) for q in queries]
        start = time.monotonic()
        with Watch(server, queries) as resync:
            touched = touch_every_note(args.vault)
            reindex = timed_call(server.base + "/v1/reindex", {}, server.token)
            if reindex.status != 202:
                raise SystemExit(f"POST /v1/reindex answered {reindex.label()}")
            done = resync.wait_in_step(reindex.answered_at, args.timeout)
        second = phase_record(resync, start, done.answered_at, in_step.body["last_report"])
        second["touched"] = touched
        rss = benchkit.proc_status(server.process.pid)
    finally:
        server.stop()
    idle_ok = [c for c in idle if c.status == 200]
    record = {
        "vault": args.vault.name,
        "model": args.model,
        "notes": notes,
        "chunks": chunks,
        "load_before": [round(x, 2) for x in load_before],
        "load_after": [round(x, 2) for x in os.getloadavg()],
        "status_every_s": STATUS_EVERY,
        "search_every_s": SEARCH_EVERY,
        "first_sync": first_sync,
        "ann_index": ann,
        "idle_search": {
            "latency": latency(idle_ok),
            "answers": by_status(idle),
            "answered_with_hits": sum(1 for c in idle_ok if c.body.get("hits")),
        },
        "resync": second,
        "peak_rss_first_sync_bytes": first_peak,
        "peak_rss_bytes": rss.get("VmHWM"),
    }
    print_responsive(record)
    benchkit.write_json(args.json, record)
    return record


def _ms(summary: dict[str, Any] | None) -> str:
    if not summary:
        return "—"
    return f"{summary['median_ms']:.0f} / {summary['p95_ms']:.0f} / {summary['max_ms']:.0f} ms (n {summary['n']})"


def _answers(counts: dict[str, int]) -> str:
    return ", ".join(f"{label}: {n}" for label, n in counts.items()) or "none"


def _phase_rows(name: str, phase: dict[str, Any]) -> list[tuple[str, str]]:
    p, e = phase["progress"], phase["events"]
    q = phase.get("progress_or_step", p)  # (a record from before it was measured)
    return [
        (f"{name}: duration", f"{phase['seconds']:.1f} s watched"),
        (f"{name}: /v1/status median / p95 / max", _ms(phase["status"]["latency"])),
        (f"{name}: /v1/status answers", _answers(phase["status"]["answers"])),
        (f"{name}: /v1/health (no index work)", _ms(phase["health"]["latency"])),
        (f"{name}: /v1/search all answers", _ms(phase["search"]["latency"])),
        (f"{name}: /v1/search answers", _answers(phase["search"]["answers"])),
        (f"{name}: /v1/search 200 with hits", str(phase["search"]["answered_with_hits"])),
        (
            f"{name}: progress (done) changes",
            f"{p['changes']}; longest still {p['longest_s']:.2f} s ({p['longest_between']}), "
            f"median {p['median_s']} s, {p['over_1s']} gaps > 1 s",
        ),
        (
            f"{name}: progress or step seconds changes",
            f"{q['changes']}; longest still {q['longest_s']:.2f} s ({q['longest_between']}), {q['over_1s']} gaps > 1 s",
        ),
        (f"{name}: /v1/events", f"{e['events']} events, longest gap {e['longest_gap_s']} s"),
    ]


def print_responsive(record: dict[str, Any]) -> None:
    first, second = record["first_sync"], record["resync"]
    reports = "; ".join(
        f"{r['changed']} changed, {r.get('touched', 0)} touched, {r['chunks_embedded']} embedded, {r['seconds']:.1f} s"
        for r in second["sync_reports"]
    )
    rows = [
        ("load (1/5/15 min) before, after", f"{record['load_before']}, {record['load_after']}"),
        ("first sync: listening, in step", f"{first['listening_s']:.1f} s, {first['in_step_s']:.1f} s after spawn"),
        *_phase_rows("first sync", first),
        ("ANN index of the first sync", _ann(record.get("ann_index"))),
        ("peak RSS of serve: first sync and ANN build", _mib(record.get("peak_rss_first_sync_bytes"))),
        ("… by the end", _mib(record.get("peak_rss_bytes"))),
        ("idle /v1/search median / p95 / max", _ms(record["idle_search"]["latency"])),
        ("idle /v1/search answers", _answers(record["idle_search"]["answers"])),
        ("resync: notes touched, syncs seen", f"{second['touched']}; {reports or 'none'}"),
        *_phase_rows("resync", second),
        (
            "/v1/search idle vs during resync (200s)",
            f"median {_field(record['idle_search']['latency'], 'median_ms')} vs "
            f"{_field(second['search']['latency_200'], 'median_ms')} ms, p95 "
            f"{_field(record['idle_search']['latency'], 'p95_ms')} vs "
            f"{_field(second['search']['latency_200'], 'p95_ms')} ms",
        ),
    ]
    benchkit.print_table(f"responsiveness during a sync ({record['notes']} notes, {record['chunks']} chunks)", rows)
    if any(k.startswith("409") for k in first["search"]["answers"]):
        print("  (during the first build /v1/search answers 409 not_indexed: there is no index to search yet)")


def _mib(value: int | None) -> str:
    return "—" if not value else f"{value / 2**20:.0f} MiB"


def _field(summary: dict[str, Any] | None, key: str) -> str:
    return "—" if not summary else f"{summary[key]:.0f}"


def _ann(ann: dict[str, Any] | None) -> str:
    if ann is None:
        return "none (too few chunks)"
    if ann["build_s"] is None:
        return "not ready (see the server's log)"
    when = "a step of the sync" if ann["in_sync"] else f"ready {ann['ready_after_sync_s']:.1f} s after it"
    return f"built in {ann['build_s']:.1f} s, {when}"
