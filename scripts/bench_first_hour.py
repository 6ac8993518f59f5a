"""The first hour with a large vault, measured as a new user meets it: `vask serve` starts on a vault it
has never seen, with an embedder as slow as a real model on a laptop's CPU, and a client asks about
what the person wrote most recently and about a rare word in an old note while the first sync runs.

It measures, from the server's spawn:
- when each of the 20 most recently modified notes is found by a search of its own title with a
  passage whose vector is stored (a hit not marked `keyword_only`);
- when a word that only the oldest note holds is found (by any means);
- what `/v1/status` says of progress (notes and chunks done, `eta_seconds`), and, at the first status
  past half the chunks, how the time left it gave compares with the time the rest actually took;
- when the first sync ends.

    uv run python -m scripts.bench_first_hour --notes 3000 --rate 40 --json docs/bench/first-hour.json

The vault is `scripts/synth_vault.py`'s (same seed, same bytes), its notes' file times spread over
three years in an order unrelated to their paths; the embedder is `scripts.hash_ollama --rate`.

`--probe paragraph` asks as people ask, in their own words rather than by title: the 20 newest notes
by file time (the rest two years old), and every `--every` seconds (8) a client searches `/v1/search`
(`top_k` 6) with one paragraph of each of them (30 words or more, no link, no heading), and with a
rare word appended to an old note. A note counts as found the first time any of the six hits is
its own (by meaning or by keyword: what the person sees). It reports, per note, when that was, and
what `/v1/status` counted meanwhile.

    uv run python -m scripts.bench_first_hour --probe paragraph --json docs/bench/first-hour-paragraph.json
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
from pathlib import Path
from typing import Any

from scripts.benchkit import (
    FAST_MODEL,
    ROOT,
    Server,
    embed_inputs,
    free_port,
    http_json,
    machine,
    print_table,
    start_server,
    write_json,
)
from scripts.synth_vault import generate

RARE_WORD = "quillwortian"
RECENT = 20
PARAGRAPH_MIN_WORDS = 30
TWO_YEARS_S = 2 * 365 * 86400


def prepare_vault(out: Path, notes: int, seed: int) -> tuple[list[tuple[str, str]], str]:
    """The synthetic vault with file times spread over three years (a shuffled order): returns the
    most recent notes' (path, title) and the path of the oldest note, which gets the rare word."""
    generate(out, notes, seed)
    paths = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.md"))
    rng = random.Random(seed)
    order = paths[:]
    rng.shuffle(order)  # order[0] is the newest
    now = time.time()
    step = 3 * 365 * 86400 / len(order)
    oldest = order[-1]
    with (out / oldest).open("a", encoding="utf-8") as handle:
        handle.write(f"\n\nA note on the {RARE_WORD} meadow, seen once.\n")
    for rank, path in enumerate(order):
        when = now - rank * step
        os.utime(out / path, (when, when))
    recent = [(path, Path(path).stem) for path in order[:RECENT]]
    return recent, oldest


def prepare_paragraph_vault(out: Path, notes: int, seed: int) -> tuple[list[tuple[str, str]], str]:
    """The synthetic vault with 20 notes as the newest (the last few hours) and every other note two
    years old: returns the newest notes' (path, paragraph) and the old note given the rare word.
    The newest are drawn at random among the notes that hold such a paragraph."""
    generate(out, notes, seed)
    paths = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.md"))
    rng = random.Random(f"paragraph-{seed}")
    order = paths[:]
    rng.shuffle(order)
    recent: list[tuple[str, str]] = []
    for path in order:
        paragraphs = own_paragraphs((out / path).read_text(encoding="utf-8"))
        if paragraphs:
            recent.append((path, rng.choice(paragraphs)))
        if len(recent) == RECENT:
            break
    newest = {path for path, _ in recent}
    old = [path for path in order if path not in newest]
    rare = old[-1]
    with (out / rare).open("a", encoding="utf-8") as handle:
        handle.write(f"\n\nA note on the {RARE_WORD} meadow, seen once.\n")
    now = time.time()
    for rank, (path, _) in enumerate(recent):
        when = now - rank * 600
        os.utime(out / path, (when, when))
    for rank, path in enumerate(old):
        when = now - TWO_YEARS_S - rank * 60
        os.utime(out / path, (when, when))
    return recent, rare


def own_paragraphs(text: str) -> list[str]:
    """A note's paragraphs as a person would quote one: prose of 30 words or more, without a link,
    a tag or a heading (not a list, table, code block or callout)."""
    if text.startswith("---\n"):
        end = text.find("\n---\n", 4)
        text = text[end + 5 :] if end >= 0 else text
    found = []
    for block in text.split("\n\n"):
        block = block.strip()
        if "\n" in block or not block or block[0] in "#|->`!*[":
            continue
        if "[[" in block or "#" in block or len(block.split()) < PARAGRAPH_MIN_WORDS:
            continue
        found.append(block)
    return found


def search(server: Server, query: str) -> list[dict[str, Any]]:
    try:
        body = http_json(server.base + "/v1/search", {"query": query, "top_k": 6}, token=server.token, timeout=30)
    except (OSError, urllib.error.URLError):
        return []
    return list(body.get("hits", [])) if isinstance(body, dict) else []


def run(args: argparse.Namespace) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="vask-first-hour-"))
    vault, index_dir = work / "vault", work / "index"
    if args.probe == "paragraph":
        recent, oldest = prepare_paragraph_vault(vault, args.notes, args.seed)
    else:
        recent, oldest = prepare_vault(vault, args.notes, args.seed)
    port, embed_port = free_port(), free_port()
    embedder = None
    host = args.ollama_host
    if host is None:
        embedder = subprocess.Popen(
            [sys.executable, "-m", "scripts.hash_ollama", "--port", str(embed_port), "--rate", str(args.rate)],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.STDOUT,
        )
        time.sleep(1.5)
        host = f"http://127.0.0.1:{embed_port}"
    server = start_server(vault, index_dir, host, FAST_MODEL, port, log=work / "serve.log", VASK_LOG_LEVEL="info")
    try:
        if args.probe == "paragraph":
            probe = ParagraphProbe(server, recent, oldest)
        else:
            probe = TitleProbe(server, recent, oldest)
        watched = watch(server, probe, args, work, host)
    finally:
        server.stop()
        if embedder is not None:
            embedder.terminate()
            embedder.wait(10)
    record = report(args, probe, watched, work, host)
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return record


class TitleProbe:
    """Each round: the rare word, then each newest note not found yet by its title, counted found by
    a hit of its own whose vector is stored."""

    every = 0.0  # (the poll's own pause: `--poll`)

    def __init__(self, server: Server, recent: list[tuple[str, str]], oldest: str) -> None:
        self.server, self.recent, self.oldest = server, recent, oldest
        self.found: dict[str, float] = {}
        self.rare_at: float | None = None
        self.latencies: list[float] = []

    def round(self) -> None:
        if self.rare_at is None and any(hit.get("path") == self.oldest for hit in self._search(RARE_WORD)):
            self.rare_at = self._elapsed()
        for path, title in self.recent:
            if path in self.found:
                continue
            hits = self._search(title)
            if any(hit.get("path") == path and not hit.get("keyword_only") for hit in hits):
                self.found[path] = self._elapsed()

    def after_sync(self, done_at: float) -> None:
        """What was not found during the sync, found at its end."""
        if self.rare_at is None and any(hit.get("path") == self.oldest for hit in self._search(RARE_WORD)):
            self.rare_at = done_at
        for path, title in self.recent:
            if path not in self.found and any(hit.get("path") == path for hit in self._search(title)):
                self.found[path] = done_at

    def _elapsed(self) -> float:
        return time.monotonic() - self.server.started

    def _search(self, query: str) -> list[dict[str, Any]]:
        started = time.monotonic()
        hits = search(self.server, query)
        self.latencies.append(time.monotonic() - started)
        return hits


class ParagraphProbe(TitleProbe):
    """Each round: the rare word, and every newest note's paragraph, all of them every round (a note
    found once may be lost again: it is the first time that is reported, and how often it was
    missed after)."""

    every = 8.0

    def __init__(self, server: Server, recent: list[tuple[str, str]], oldest: str) -> None:
        super().__init__(server, recent, oldest)
        self.how: dict[str, dict[str, Any]] = {}  # the first hit of each note: its rank and kind
        self.lost: dict[str, int] = {}  # rounds a note found earlier was not in the six
        self.rounds: list[dict[str, Any]] = []

    def round(self) -> None:
        at = self._elapsed()
        rare = any(hit.get("path") == self.oldest for hit in self._search(RARE_WORD))
        if rare and self.rare_at is None:
            self.rare_at = self._elapsed()
        found_now = 0
        for path, paragraph in self.recent:
            hits = self._search(paragraph)
            rank = next((k for k, hit in enumerate(hits) if hit.get("path") == path), None)
            if rank is None:
                if path in self.found:
                    self.lost[path] = self.lost.get(path, 0) + 1
                continue
            found_now += 1
            if path not in self.found:
                self.found[path] = self._elapsed()
                self.how[path] = {"rank": rank + 1, "keyword_only": bool(hits[rank].get("keyword_only"))}
        self.rounds.append({"t": round(at, 1), "found": found_now, "rare": rare})

    def after_sync(self, done_at: float) -> None:
        pass  # (every round searched all of them: what the sync's end finds is not a first-hour figure)


def watch(server: Server, probe: TitleProbe, args: argparse.Namespace, work: Path, host: str) -> dict[str, Any]:
    """Rounds of the probe's searches, and `/v1/status` between them, until the first sync ends or
    `--timeout`."""
    halfway: dict[str, Any] | None = None
    statuses: list[dict[str, Any]] = []
    done_at: float | None = None
    next_round = 0.0
    while time.monotonic() - server.started < args.timeout:
        if server.process.poll() is not None:
            raise SystemExit(f"vask serve exited with {server.process.returncode}; see {work / 'serve.log'}")
        elapsed = time.monotonic() - server.started
        try:
            status = server.status()
        except (OSError, urllib.error.URLError):
            time.sleep(0.5)
            continue
        statuses.append({**_status_row(status, elapsed), "embedded_texts": embed_inputs(host)})
        fraction = _fraction(status)
        if halfway is None and fraction is not None and fraction >= 0.5:
            halfway = {**statuses[-1], "fraction": round(fraction, 3)}
        if status.get("state") == "idle" and status.get("pending") == 0 and status.get("model"):
            done_at = elapsed
            break
        if elapsed >= next_round:
            probe.round()
            next_round = elapsed + probe.every
        time.sleep(args.poll if not probe.every else min(args.poll, max(0.0, next_round - _since(server))))
    if done_at is not None:
        probe.after_sync(done_at)
    return {"halfway": halfway, "statuses": statuses, "done_at": done_at}


def _since(server: Server) -> float:
    return time.monotonic() - server.started


def _status_row(status: dict[str, Any], elapsed: float) -> dict[str, Any]:
    progress = status.get("progress") or {}
    return {
        "t": round(elapsed, 1),
        "state": status.get("state"),
        "done": status.get("done"),
        "total": status.get("total"),
        "pending": status.get("pending"),
        "notes": status.get("notes"),
        "chunks": status.get("chunks"),
        "keyword_only_notes": status.get("keyword_only_notes"),
        "eta_seconds": status.get("eta_seconds", progress.get("eta_seconds")),
        "chunks_done": progress.get("chunks_done"),
        "chunks_total": progress.get("chunks_total"),
    }


def report(
    args: argparse.Namespace, probe: TitleProbe, watched: dict[str, Any], work: Path, host: str
) -> dict[str, Any]:
    halfway, statuses, done_at = watched["halfway"], watched["statuses"], watched["done_at"]
    times = sorted(probe.found.values())
    eta_check = None
    if halfway is not None and done_at is not None:
        actual = done_at - halfway["t"]
        told = halfway.get("eta_seconds")
        eta_check = {
            "at_s": halfway["t"],
            "eta_seconds": told,
            "actual_rest_s": round(actual, 1),
            "ratio": round(told / actual, 3) if told is not None and actual > 0 else None,
        }
    log_lines = (work / "serve.log").read_text().splitlines()
    keyword_line = next((line for line in log_lines if "by keyword (" in line), None)
    record: dict[str, Any] = {
        "benchmark": "first-hour" if args.probe == "title" else "first-hour-paragraph",
        "probe": args.probe,
        "keyword_table_log": keyword_line,
        "notes": args.notes,
        "embed_rate": args.rate,
        "model": f"{FAST_MODEL} via "
        + (f"scripts.hash_ollama --rate {args.rate}" if args.ollama_host is None else f"{host} (its own rate)"),
        "machine": machine(),
        "recent_found": len(times),
        "recent_all_found_s": round(times[-1], 1) if len(times) == RECENT else None,
        "recent_median_s": round(statistics.median(times), 1) if times else None,
        "rare_word_found_s": None if probe.rare_at is None else round(probe.rare_at, 1),
        "first_sync_s": None if done_at is None else round(done_at, 1),
        "eta_at_halfway": eta_check,
        "search_s": {
            "n": len(probe.latencies),
            "median": round(statistics.median(probe.latencies), 3) if probe.latencies else None,
            "max": round(max(probe.latencies), 3) if probe.latencies else None,
        },
        "statuses": statuses[:: max(1, len(statuses) // 200)],
    }
    if isinstance(probe, ParagraphProbe):
        record["per_note"] = [
            {
                "path": path,
                "found_s": None if path not in probe.found else round(probe.found[path], 1),
                **probe.how.get(path, {}),
                "rounds_lost_after": probe.lost.get(path, 0),
            }
            for path, _ in probe.recent
        ]
        record["rounds"] = probe.rounds
        record["found_by_60_s"] = sum(1 for t in times if t <= 60.0)
        record["found_by_150_s"] = sum(1 for t in times if t <= 150.0)
    kind = "vector" if args.probe == "title" else "own paragraph, top 6"
    rows = [
        (f"20 most recent notes found ({kind})", f"{len(times)}; all by {record['recent_all_found_s']} s"),
        ("median of them", f"{record['recent_median_s']} s"),
    ]
    if isinstance(probe, ParagraphProbe):
        rows.append(("found within 60 s / 150 s", f"{record['found_by_60_s']} / {record['found_by_150_s']}"))
    rows += [
        ("rare word in an old note", f"{record['rare_word_found_s']} s"),
        ("eta at halfway vs actual", str(eta_check)),
        ("first sync", f"{record['first_sync_s']} s"),
        ("searches", str(record["search_s"])),
    ]
    print_table(f"first hour ({args.probe} probe): {args.notes} notes, embedder at {args.rate} texts/s", rows)
    if isinstance(probe, ParagraphProbe):
        for row in record["per_note"]:
            how = f"{row.get('rank', '-')!s:>2} {row.get('keyword_only', '')!s:5}"
            print(f"  {row['found_s']!s:>7} s  {how}  {row['path']}")
        _print_statuses(statuses)
    write_json(args.json, record)
    return record


def _print_statuses(statuses: list[dict[str, Any]]) -> None:
    """/v1/status's counts, one line about every 15 s."""
    last = -15.0
    for row in statuses:
        if row["t"] - last >= 15.0:
            last = row["t"]
            print(
                f"  status at {row['t']:>6} s: notes {row['notes']}, chunks {row['chunks']}, "
                f"keyword only {row['keyword_only_notes']}, done {row['done']}/{row['total']}, "
                f"pending {row['pending']}, eta {row['eta_seconds']}, texts embedded {row['embedded_texts']}"
            )


def _fraction(status: dict[str, Any]) -> float | None:
    progress = status.get("progress") or {}
    if progress.get("chunks_total"):
        return float(progress["chunks_done"]) / float(progress["chunks_total"])
    if status.get("total"):
        return float(status["done"]) / float(status["total"])
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rate", type=float, default=40.0, help="the embedder's texts a second")
    parser.add_argument(
        "--probe",
        choices=("title", "paragraph"),
        default="title",
        help="search each newest note by its title (a stored vector counts), or by a paragraph of its own every 8 s",
    )
    parser.add_argument("--poll", type=float, default=2.0, help="seconds between rounds of searches")
    parser.add_argument("--timeout", type=float, default=3600.0)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument(
        "--ollama-host",
        default=None,
        help="an embedder already running (e.g. ../shared/ollama-shim/run --embed-rate 40) instead of "
        "scripts.hash_ollama --rate",
    )
    parser.add_argument("--keep", action="store_true", help="keep the vault, index and serve.log in /tmp")
    run(parser.parse_args())


if __name__ == "__main__":
    main()
