"""Render the generated parts of the docs from the records they rest on, so a figure cannot drift
from its record, nor the command reference from the parser.

    uv run python -m scripts.render_docs           # rewrite every generated block in place
    uv run python -m scripts.render_docs --check   # exit 1, naming the blocks, when one differs

A generated block sits between `<!-- generated: NAME -->` and `<!-- end -->`; the prose around it is
hand-written. tests/test_render_docs.py holds the checked-in docs to what this renders.

What is generated:
- docs/BENCHMARKS.md: `bench-all` (docs/bench/results.json, `scripts.bench all`), `bench-sizes`
  (docs/bench/sizes.json, through `scripts.bench_sizes.sizes_table`), `bench-first-hour`
  (docs/bench/first-hour-before/after.json), `bench-first-hour-paragraph`
  (docs/bench/first-hour-paragraph-*.json), `bench-related` (docs/bench/related*.json), `bench-overhead`
  (docs/bench/overhead-*.json).
- docs/EVALUATION.md: `eval-results` and `eval-pooled` (docs/eval/<set>.json), `eval-time`
  (docs/eval/time.json), `eval-connections` (docs/eval/connections-*.json and their first runs), `eval-named`
  (docs/eval/named-*.json and their first runs),
  `eval-non-english` (docs/eval/non-english/blind-*.json), `eval-failures` (the failures listed in
  the records of the sets never tuned on), `eval-models` and `eval-models-more` (docs/eval/models/<model>/,
  each embedding model's runs of every set).
- docs/CLI.md: `cli`, every command's usage, help and arguments, from `vask_server.cli.command.build_parser()`.
- docs/MODEL-SERVERS.md: `model-instructions`, the instructions each model family is sent, from
  `vask_server.core.embed_prompts.FAMILIES`.

Left hand-written, because no record of them is kept in the repository: in BENCHMARKS.md the
responsiveness during a sync (its records were kept beside the vaults), search latency with time
reading, the cost of choosing the keyword terms (`scripts/bench_keyword_sample.py` prints), the
plugin's note suggestions and chat history (Node scripts that print), the PDF libraries and the
machine; in EVALUATION.md the "not in your notes" sweep (`scripts/decline_sweep.py`
prints) and the keyword tokenizers (`scripts/bench_keyword_tokenizers.py` prints); the README's
summary figures, and the settings tables of the README and docs/REFERENCE.md (held to
`vask_server/settings.py` by tests/test_docs.py). `vask eval --json` does not record the embedding model,
so the model named above each evaluation table is this script's (`EVAL_MODEL`).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
BENCH = DOCS / "bench"
EVAL = DOCS / "eval"
MIB = 2**20

BLOCK = re.compile(r"(<!-- generated: ([\w-]+) -->\n)(.*?)(<!-- end -->)", re.S)


def load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text("utf-8"))
    return data


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def cell(text: str) -> str:
    return text.replace("|", "\\|")


def made_by(command: str, model: str, record: str, commit: str | None = None) -> str:
    """The line above a table: the command and model that made its figures, and their record."""
    code = f" at `{commit}`" if commit else ""
    return f"Made by `{command}`{code}; model: {model}; record: {record}.\n\n"


# -- docs/BENCHMARKS.md ----------------------------------------------------------------------------


def bench_all() -> str:
    record = load(BENCH / "results.json")
    s = record["steps"]
    idx, fast, over = s["index_instant"], s["index_fast"], s["overhead"]
    restart, edits, mem = s["restart"], s["edits"], s["memory"]
    small, large = s["query_small"], s["query_large"]
    ratios = {run["order"]: run["ratio"] for run in over["runs"]}
    ratio = statistics.median(ratios.values())
    saved = edits["save_to_searchable"]
    peak, idle, searched = (
        mem["peak_rss_indexing_bytes"],
        mem["idle_rss_bytes"],
        mem["rss_after_50_searches_bytes"],
    )

    def both(value: int, target_mb: int) -> str:
        mib_ok, mb_ok = value / MIB <= target_mb, value / 1e6 <= target_mb
        if mib_ok == mb_ok:
            return "yes" if mib_ok else "no"
        return f"{'yes' if mib_ok else 'no'} in MiB, {'yes' if mb_ok else 'no'} in decimal MB"

    def search(q: dict[str, Any]) -> str:
        return f"{q['server']['median_ms']:.1f} ms median, p95 {q['server']['p95_ms']:.1f} ms"

    growth = ", ".join(f"{n}: {size / MIB:.0f}" for n, size in edits["index_bytes_by_edits"])
    grew = edits["index_bytes_after"] > edits["index_bytes_before"]
    rows = [
        [
            "pipeline throughput, zero-cost embedder (in-process)",
            "≥ 2,000 chunks/s",
            f"**{idx['chunks_per_s']:,.0f} chunks/s** ({idx['chunks_stored']:,} chunks in {idx['total_s']:.1f} s)",
            "yes" if idx["chunks_per_s"] >= 2000 else "no",
        ],
        ["the same through HTTP with `hash-embed`", "—", f"{fast['chunks_per_s']:,.0f} chunks/s", ""],
        [
            f"overhead with `{over['model']}`: full index ÷ embedding the same {over['texts']:,} texts directly",
            "≤ 1.15",
            f"**{ratio:.3f}** (median of "
            + ", ".join(f"{value:.3f} ({order})" for order, value in ratios.items())
            + ")",
            "yes" if ratio <= 1.15 else "no",
        ],
        [
            "restart with nothing changed: spawn → ready",
            "< 3 s",
            f"**{restart['ready_median_s']:.2f} s** median of {len(restart['runs'])}, "
            f"max {restart['ready_max_s']:.2f} s",
            "yes" if restart["ready_median_s"] < 3 else "no",
        ],
        [
            "… embeddings made",
            "0",
            f"**{restart['embeddings_max']}**",
            "yes" if restart["embeddings_max"] == 0 else "no",
        ],
        ["… first search after ready", "—", f"{restart['first_search_median_s'] * 1000:.0f} ms", ""],
        [
            f"save-to-searchable, {saved['n']} edits, debounce {edits['debounce_ms']} ms included",
            "median ≤ 1.0 s",
            f"**{saved['median_ms']:.0f} ms** median, p95 {saved['p95_ms']:.0f} ms",
            "yes" if saved["median_ms"] <= 1000 else "no",
        ],
        [f"`/v1/search` server-side, {small['chunks']:,} chunks", "—", search(small), ""],
        [
            f"`/v1/search` server-side, {large['chunks']:,} chunks",
            "median ≤ 30 ms, p95 ≤ 80 ms",
            f"**{search(large)}**",
            ", ".join(
                "yes" if ok else "no" for ok in (large["server"]["median_ms"] <= 30, large["server"]["p95_ms"] <= 80)
            ),
        ],
        [
            "… recall@50 of the ANN list against exact search",
            "—",
            f"{large['vector_recall_at_50']['mean']:.3f} (worst query {large['vector_recall_at_50']['min']:.2f})",
            "",
        ],
        [
            "peak RSS of `vask serve` indexing from scratch (first sync, then its ANN index)",
            "≤ 500 MB",
            f"**{peak / MIB:.0f} MiB ({peak / 1e6:.0f} MB)**",
            both(peak, 500),
        ],
        ["idle RSS after that", "≤ 300 MB", f"**{idle / MIB:.0f} MiB ({idle / 1e6:.0f} MB)**", both(idle, 300)],
        ["… after 50 searches", "—", f"{searched / MIB:.0f} MiB ({searched / 1e6:.0f} MB)", ""],
        [
            "index size per 1,000 chunks (old versions dropped)",
            "—",
            f"{mem['bytes_per_1000_chunks'] / MIB:.2f} MiB",
            "",
        ],
        [
            "index size by edits made (MiB)",
            "no unbounded growth",
            f"{growth}; {edits['index_bytes_after_final_compaction'] / MIB:.0f} after a last compaction",
            "no" if grew else "yes",
        ],
    ]
    machine = record["machine"]
    intro = made_by(
        "uv run python -m scripts.bench all --json docs/bench/results.json",
        f"`{fast['model']}` (the stand-in's), `{over['model']}` for the overhead",
        "[bench/results.json](bench/results.json)",
        machine["commit"],
    )
    return intro + table(["figure (10,000 notes unless said)", "target", "measured", "met"], rows)


def bench_sizes() -> str:
    from scripts.bench_sizes import sizes_table

    record = load(BENCH / "sizes.json")
    intro = made_by(
        "uv run python -m scripts.bench sizes --sizes 10000,40000,100000 --work $W "
        "--ollama-host http://127.0.0.1:11620 --queries 100 --restarts 3 --json docs/bench/sizes.json",
        "`instant` and `hash-local` to index, `hash-embed` through `scripts.hash_ollama` to search",
        "[bench/sizes.json](bench/sizes.json)",
        record["machine"]["commit"],
    )
    return intro + sizes_table(record)


def bench_sizes_1024() -> str:
    from scripts.bench_sizes import sizes_table

    record = load(BENCH / "sizes-1024.json")
    intro = made_by(
        "uv run python -m scripts.bench sizes --sizes 10000 --dimensions 384,1024 --topics 200 --serve-sync "
        "--later-sync 100 --ollama-host http://127.0.0.1:11620 --json …; the same with --sizes 100000 "
        "--topics 1000 --queries 100 --later-sync 1000",
        "`instant` to index, `hash-embed` / `hash-embed-1024` through `scripts.hash_ollama`",
        "[bench/sizes-1024.json](bench/sizes-1024.json)",
        record["machine"]["commit"],
    )
    return intro + sizes_table(record, own_only=True)


def bench_first_hour() -> str:
    before, after = load(BENCH / "first-hour-before.json"), load(BENCH / "first-hour-after.json")

    def found(r: dict[str, Any]) -> str:
        when = (
            f"all by {r['recent_all_found_s']} s"
            if r["recent_all_found_s"] is not None
            else "not all before the sync ended"
        )
        return f"{r['recent_found']} of 20, {when} (median {r['recent_median_s']} s)"

    def eta(r: dict[str, Any]) -> str:
        half = r["eta_at_halfway"]
        if half["eta_seconds"] is None:
            return f"none (at {half['at_s']} s)"
        return f"{half['eta_seconds']} s told, {half['actual_rest_s']} s taken (ratio {half['ratio']})"

    rows = [
        ["the 20 newest notes found by their title, by meaning", found(before), found(after), "within 60 s"],
        [
            "a word only the oldest note holds",
            f"{before['rare_word_found_s']} s",
            f"{after['rare_word_found_s']} s",
            "within 30 s",
        ],
        ["`eta_seconds` at half the work", eta(before), eta(after), "within ±25%"],
        ["first sync, whole", f"{before['first_sync_s']} s", f"{after['first_sync_s']} s", "no worse"],
    ]
    intro = made_by(
        f"uv run python -m scripts.bench_first_hour --notes {after['notes']} --rate {after['embed_rate']:g}",
        f"`{after['model']}`",
        "[bench/first-hour-before.json, -after.json](bench/)",
    )
    header = [
        "seconds from the server's start",
        f"before (`{before['machine']['commit'].split()[0]}` with this probe)",
        f"now (`{after['machine']['commit'].split()[0]}`)",
        "aimed at",
    ]
    return intro + table(header, rows)


def bench_first_hour_paragraph() -> str:
    """Two runs before and after, each column one run: a paragraph of each newest note every 8 s."""
    runs = {
        side: [load(BENCH / f"first-hour-paragraph-{side}-{n}.json") for n in (1, 2)] for side in ("before", "after")
    }

    def both(side: str, what: Callable[[dict[str, Any]], str]) -> str:
        return "; ".join(what(r) for r in runs[side])

    def found(r: dict[str, Any]) -> str:
        when = f"all by {r['recent_all_found_s']} s" if r["recent_all_found_s"] is not None else "not all"
        return f"{r['recent_found']} of 20, {when} (median {r['recent_median_s']} s)"

    def status_at_end(r: dict[str, Any]) -> str:
        last = r["statuses"][-1]
        keyword = last.get("keyword_only_notes")
        also = f", {keyword:,} by keyword only" if keyword is not None else ""
        return f"notes {last['notes']:,}, chunks {last['chunks']:,}{also} (done {last['done']:,})"

    rows = [
        ["the 20 newest notes found by a paragraph of their own", both("before", found), both("after", found)],
        [
            "... of them found within 60 s",
            both("before", lambda r: str(r["found_by_60_s"])),
            both("after", lambda r: str(r["found_by_60_s"])),
        ],
        [
            "a word only an old note holds",
            both("before", lambda r: f"{r['rare_word_found_s']} s"),
            both("after", lambda r: f"{r['rare_word_found_s']} s"),
        ],
        [
            "a search during the sync (median, longest)",
            both("before", lambda r: f"{r['search_s']['median']}, {r['search_s']['max']} s"),
            both("after", lambda r: f"{r['search_s']['median']}, {r['search_s']['max']} s"),
        ],
        [
            "rounds of 21 searches in 150 s",
            both("before", lambda r: str(len(r["rounds"]))),
            both("after", lambda r: str(len(r["rounds"]))),
        ],
        ["`/v1/status` at the end", both("before", status_at_end), both("after", status_at_end)],
    ]
    after = runs["after"][0]
    intro = made_by(
        "uv run python -m scripts.bench_first_hour --probe paragraph --timeout 150",
        f"`{after['model']}`",
        "[bench/first-hour-paragraph-before-1.json, …-after-2.json](bench/)",
    )
    header = [
        "after 150 s (two runs each)",
        f"before (`{runs['before'][0]['machine']['commit'].split()[0]}` with this probe)",
        f"now (`{after['machine']['commit'].split()[0]}`)",
    ]
    return intro + table(header, rows)


def bench_related() -> str:
    rows = []
    for name, label in (
        ("related-before-connections.json", "one unfiltered search from the note's mean (before connections)"),
        ("related.json", "the mean's 60 closest rows, unfiltered, + the title as keywords (now)"),
    ):
        r = load(BENCH / name)
        rows.append(
            [
                label,
                f"{r['related']['median_ms']:.1f} ms",
                f"{r['related']['p95_ms']:.1f} ms",
                f"{r['longest_loop_stall']['median_ms']:.0f}, {r['longest_loop_stall']['max_ms']:.0f} ms",
                f"{r['first_call_ms']:.0f} ms",
            ]
        )
    calls = load(BENCH / "related.json")
    intro = made_by(
        f"uv run python -m scripts.bench related --calls {calls['calls']}",
        "`hash-embed`",
        "[bench/related.json, related-before-connections.json](bench/)",
    )
    header = ["`/v1/related`", "median", "p95", "longest event-loop stall in a call (median, max)", "first call"]
    return intro + table(header, rows)


def bench_overhead() -> str:
    rows = []
    for provider, api in (("ollama", "Ollama's (`/api/embed`)"), ("openai", "OpenAI-compatible (`/v1/embeddings`)")):
        r = load(BENCH / f"overhead-{provider}-api.json")
        ratios = [run["ratio"] for run in r["runs"]]
        totals = [run["index"]["total_s"] for run in r["runs"]]
        rows.append(
            [
                api,
                ", ".join(f"{value:.3f}" for value in ratios),
                f"**{statistics.median(ratios):.3f}**",
                f"{min(totals):.1f}–{max(totals):.1f} s",
                "≤ 1.05",
            ]
        )
    r = load(BENCH / "overhead-ollama-api.json")
    intro = made_by(
        f"uv run python -m scripts.bench overhead --provider ollama|openai --repeat {len(r['runs'])}",
        f"`{r['model']}` (the Ollama stand-in's, serving both APIs)",
        "[bench/overhead-ollama-api.json, -openai-api.json](bench/)",
    )
    return intro + table(["API", "ratios", "median", "one full index", "target"], rows)


# -- docs/EVALUATION.md ----------------------------------------------------------------------------

EVAL_MODEL = "`all-minilm` (the Ollama stand-in's)"
# set name -> (its record, its questions file, how it is labelled)
EVAL_SETS: dict[str, tuple[str, str, str]] = {
    "unseen": ("unseen.json", "questions-unseen.jsonl", "unseen (run once)"),
    "untuned-half-absent": ("untuned-half-absent.json", "questions-untuned-half-absent.jsonl", "untuned-half-absent"),
    "untuned-mostly-answerable": (
        "untuned-mostly-answerable.json",
        "questions-untuned-mostly-answerable.jsonl",
        "untuned-mostly-answerable",
    ),
    "untuned-absent-mix": ("untuned-absent-mix.json", "questions-untuned-absent-mix.jsonl", "untuned-absent-mix"),
    "target": ("target.json", "questions.jsonl", "target (`questions.jsonl`)"),
    "tuned-fusion": ("tuned-fusion.json", "questions-tuned-fusion.jsonl", "tuned-fusion"),
    "tuned-exact-match": ("tuned-exact-match.json", "questions-tuned-exact-match.jsonl", "tuned-exact-match"),
    "tuned-decline": ("tuned-decline.json", "questions-tuned-decline.jsonl", "tuned-decline"),
    "tuned-quoted-terms": ("tuned-quoted-terms.json", "questions-tuned-quoted-terms.jsonl", "tuned-quoted-terms"),
    "files": ("files.json", "questions-files.jsonl", "files (not blind)"),
    "files-blind": ("files-blind.json", "questions-files-blind.jsonl", "files-blind"),
    "time": ("time.json", "questions-time.jsonl", "time"),
}
NEVER_TUNED = ("untuned-half-absent", "untuned-mostly-answerable", "untuned-absent-mix", "unseen")


def report(name: str, config: str) -> dict[str, Any]:
    record = load(EVAL / EVAL_SETS[name][0])
    (found,) = [r for r in record["reports"] if r["config"] == config]
    return found


def eval_row(label: str, config: str, o: dict[str, Any]) -> list[str]:
    page = f"{o['page@6']:.3f}" if o.get("page_questions") else "–"
    return [
        label,
        config,
        str(o["count"]),
        f"{o['hit@1']:.3f}",
        f"{o['hit@3']:.3f}",
        f"{o['hit@6']:.3f}",
        f"{o['mrr@10']:.3f}",
        page,
        f"{o['absent_declined']}/{o['absent']}",
        f"{o['answerable_declined']}/{o['count']}",
    ]


EVAL_HEADER = [
    "set",
    "config",
    "n",
    "hit@1",
    "hit@3",
    "hit@6",
    "MRR@10",
    "page@6",
    "absent declined",
    "answerable declined",
]


def eval_results() -> str:
    rows = []
    for name, (_, _, label) in EVAL_SETS.items():
        rows.append(eval_row(label, "baseline", report(name, "baseline")["overall"]))
        rows.append(eval_row("", "**hybrid**", report(name, "hybrid")["overall"]))
    intro = made_by(
        "uv run vask eval tests/eval/QUESTIONS.jsonl --vault sample_vault --compare --json",
        EVAL_MODEL,
        "[docs/eval/](eval/)`<set>.json`",
    )
    return intro + table(EVAL_HEADER, rows)


def pooled(names: tuple[str, ...], config: str) -> dict[str, Any]:
    overall = [report(name, config)["overall"] for name in names]
    count = sum(o["count"] for o in overall)
    out: dict[str, Any] = {"count": count}
    for key in ("hit@1", "hit@3", "hit@6", "mrr@10"):
        out[key] = sum(o[key] * o["count"] for o in overall) / count
    for key in ("absent", "absent_declined", "answerable_declined"):
        out[key] = sum(o[key] for o in overall)
    return out


def eval_pooled() -> str:
    rows = []
    for label, names in (
        ("never tuned on for ranking: " + ", ".join(NEVER_TUNED), NEVER_TUNED),
        (f"all {len(EVAL_SETS)} sets", tuple(EVAL_SETS)),
    ):
        for config in ("baseline", "hybrid"):
            o = pooled(names, config)
            row = eval_row(label if config == "baseline" else "", config, o)
            del row[7]  # (page@6 is not pooled)
            if config == "hybrid":
                row[1:] = [f"**{value}**" for value in row[1:]]
            rows.append(row)
    header = [h for h in EVAL_HEADER if h != "page@6"]
    header[0] = "sets"
    return table(header, rows)


def eval_time() -> str:
    def row(label: str, o: dict[str, Any]) -> list[str]:
        t = o["time"]
        return [
            label,
            f"{t['questions']} ({o['count']})",
            f"{o['hit@1']:.3f}",
            f"{o['hit@6']:.3f}",
            f"{o['mrr@10']:.3f}",
            f"{t['range_understood']:.3f}",
            f"{t['in_range_precision@6']:.3f}",
            f"{t['out_of_range_shown']:.3f}",
            f"{o['absent_declined']}/{o['absent']}",
            f"{o['answerable_declined']}/{o['count']}",
        ]

    hybrid = report("time", "hybrid")
    rows = [
        row("**hybrid**, all", hybrid["overall"]),
        row("hybrid, held-out split", hybrid["by_split"]["heldout"]),
        row("hybrid, dev split", hybrid["by_split"]["dev"]),
        row("hybrid-no-time (time words not read), all", report("time", "hybrid-no-time")["overall"]),
    ]
    header = [
        "",
        "questions (answerable)",
        "hit@1",
        "hit@6",
        "MRR@10",
        "range read as meant",
        "in-range precision@6",
        "shown a note from outside the range",
        "absent declined",
        "answerable declined",
    ]
    intro = made_by(
        "uv run vask eval tests/eval/questions-time.jsonl --vault sample_vault --compare --json",
        EVAL_MODEL,
        "[docs/eval/time.json](eval/time.json)",
    )
    return intro + table(header, rows)


def eval_connections() -> str:
    def row(label: str, run: str, s: dict[str, Any]) -> list[str]:
        def share(key: str) -> str:
            return "–" if s[key] is None else f"{s[key]:.3f}"

        return [
            label,
            run,
            str(s["questions"]),
            str(s["seed understood"]),
            share("linked@10"),
            share("unlinked@10"),
            share("connected@6"),
            share("in range"),
            str(s["seed passages in first 6 (max)"]),
        ]

    rows = []
    sets = (
        ("hub", "hub (`connections-hub.jsonl`)", "first run, blind"),
        ("hub-blind", "hub, second set (`connections-hub-blind.jsonl`)", "first run, blind"),
        ("sample", "sample (`connections-sample.jsonl`)", "first run"),
        ("sample-blind", "sample, second set (`connections-sample-blind.jsonl`)", "first run, blind"),
        ("hub-phrasings", "hub, phrasings (`connections-hub-phrasings.jsonl`)", "first run, blind"),
        ("sample-phrasings", "sample, phrasings (`connections-sample-phrasings.jsonl`)", "first run, blind"),
    )
    for name, label, first_run in sets:
        first = load(EVAL / "first-runs" / f"connections-{name}-first-run.json")["summary"]
        now = load(EVAL / f"connections-{name}.json")["summary"]
        rows.append(row(label, first_run, first))
        rows.append(row("", "as the product stands", now))
    rows.append(["target", "", "", "", "≥ 0.90", "≥ 0.60", "≥ 0.95", "≥ 0.95", "≤ 1"])
    header = [
        "set",
        "run",
        "questions",
        "seed read",
        "linked@10",
        "unlinked@10",
        "connected@6",
        "in range",
        "seed in first 6",
    ]
    intro = made_by(
        "uv run python scripts/eval_connections.py tests/eval/connections/connections-SET.jsonl --vault VAULT",
        EVAL_MODEL,
        "[docs/eval/](eval/)`connections-*.json`, first runs in [docs/eval/first-runs/](eval/first-runs/)",
    )
    return intro + table(header, rows)


def eval_named() -> str:
    def row(label: str, run: str, s: dict[str, Any]) -> list[str]:
        return [
            label,
            run,
            str(s["questions"]),
            str(s["read as connections"]),
            str(s["named seed dropped"]),
            str(s["lost"]),
            f"{s['expected@6 as read']:.3f}",
            f"{s['expected@6 as written']:.3f}",
        ]

    rows = []
    sets = (
        ("notes-sample", "sample, blind (`named-notes-sample.jsonl`)"),
        ("notes-hub", "hub, blind (`named-notes-hub.jsonl`)"),
        (
            "phrases-sample",
            "sample, a relation's words used in ordinary ways, not blind (`named-phrases-sample.jsonl`)",
        ),
    )
    for name, label in sets:
        first = load(EVAL / "first-runs" / f"named-{name}-first-run.json")["summary"]
        rows.append(row(label, "first run, before", first))
        rows.append(row("", "as the product stands", load(EVAL / f"named-{name}.json")["summary"]))
    rows.append(["target", "", "", "", "0", "0", "", ""])
    header = [
        "set",
        "run",
        "questions",
        "read as connections",
        "named seed left out",
        "named note lost",
        "expected@6 as read",
        "as written",
    ]
    intro = made_by(
        "uv run python scripts/eval_named.py tests/eval/named/named-SET.jsonl --vault VAULT",
        EVAL_MODEL,
        "[docs/eval/](eval/)`named-*.json`, first runs in [docs/eval/first-runs/](eval/first-runs/)",
    )
    return intro + table(header, rows)


def eval_non_english() -> str:
    """The questions in Chinese or Japanese of each blind set (not those in English, nor the absent
    ones, which have their own column), run by run."""
    folder = EVAL / "non-english"

    def figures(name: str) -> list[str]:
        (r,) = load(folder / f"{name}.json")["reports"]
        kinds = {k: v for k, v in r["by_type"].items() if k not in ("absent", "cross-language")}
        n = sum(v["count"] for v in kinds.values())

        def mean(key: str) -> str:
            return f"{sum(v[key] * v['count'] for v in kinds.values()) / n:.3f}"

        absent = r["by_type"]["absent"]
        declined = sum(v["answerable_declined"] for v in kinds.values())
        return [
            str(n),
            mean("hit@1"),
            mean("hit@6"),
            mean("mrr@10"),
            f"{absent['absent_declined']}/{absent['absent']}",
            str(declined),
        ]

    runs = {"before": "first run, before CJK terms", "half": "declined below half held", "now": "as it stands"}
    sets = (
        ("blind-zh", "help, Chinese (71 notes)", ("before", "half", "now")),
        ("blind-ja", "help, Japanese (64)", ("before", "half", "now")),
        ("notes-zh-tuned", "notes, Chinese (2,245), tuned on", ("half", "now")),
        ("notes-zh-unseen", "notes, Chinese (2,245), unseen", ("half", "now")),
    )
    rows = [
        [label if k == 0 else "", runs[run], *figures(f"{name}-{run}")]
        for name, label, order in sets
        for k, run in enumerate(order)
    ]
    rows.append(["target (Chinese)", "", "", "≥ 0.70", "≥ 0.95", "≥ 0.80", "≥ 2/4", ""])
    header = ["set", "run", "n", "hit@1", "hit@6", "MRR@10", "absent declined", "answerable declined"]
    intro = made_by(
        "uv run vask eval docs/eval/non-english/questions-SET.jsonl --vault COPY --index-dir IDX "
        "--embed-model all-minilm --json",
        EVAL_MODEL,
        "[docs/eval/non-english/](eval/non-english/)`SET-RUN.json`",
    )
    return intro + table(header, rows)


# The two embedding models side by side: docs/eval/models/<model>/<set>.json, each run as `vask eval`
# or the eval script runs it, on the same copy of each vault (file dates included).
MODELS = EVAL / "models"
MODEL_RUNS = (
    ("all-minilm", "`all-minilm`"),
    ("multilingual-e5-small-bare", "`multilingual-e5-small`, no instructions"),
    ("multilingual-e5-small", "`multilingual-e5-small`, `query: ` / `passage: `"),
)


def model_record(model: str, name: str) -> dict[str, Any] | None:
    path = MODELS / model / f"{name}.json"
    return load(path) if path.exists() else None


def model_overall(model: str, name: str, config: str = "hybrid") -> dict[str, Any] | None:
    record = model_record(model, name)
    if record is None:
        return None
    (found,) = [r for r in record["reports"] if r["config"] == config]
    overall: dict[str, Any] = found["overall"]
    return overall


def model_figures(o: dict[str, Any] | None) -> str:
    if o is None:
        return "not measured"
    declined = f", {o['absent_declined']}/{o['absent']} declined" if o["absent"] else ""
    lost = f", {o['answerable_declined']} answerable declined" if "answerable_declined" in o else ""
    return f"{o['hit@1']:.3f} / {o['hit@6']:.3f} / {o['mrr@10']:.3f}{declined}{lost}"


def models_pooled(model: str, config: str) -> dict[str, Any] | None:
    """Every sample_vault set of one model's runs pooled, as `eval-pooled` pools them."""
    runs = [model_overall(model, name, config) for name in EVAL_SETS]
    if not runs or any(o is None for o in runs):
        return None
    found = [o for o in runs if o is not None]
    n = sum(o["count"] for o in found)
    return {
        **{key: sum(o[key] * o["count"] for o in found) / n for key in ("hit@1", "hit@6", "mrr@10")},
        "absent": sum(o["absent"] for o in found),
        "absent_declined": sum(o["absent_declined"] for o in found),
        "answerable_declined": sum(o["answerable_declined"] for o in found),
    }


def eval_models() -> str:
    """Every sample_vault set, then all of them pooled: hit@1 / hit@6 / MRR@10 and absent declined."""
    rows: list[list[str]] = []
    for name, (_, _, label) in EVAL_SETS.items():
        figures = [model_overall(model, name) for model, _ in MODEL_RUNS]
        count = next((o["count"] + o["absent"] for o in figures if o is not None), None)
        rows.append([label, "–" if count is None else str(count), *(model_figures(o) for o in figures)])
    pooled = [models_pooled(model, "hybrid") for model, _ in MODEL_RUNS]
    rows.append(["**all, pooled**", "", *(f"**{model_figures(o)}**" for o in pooled)])
    raw = [models_pooled(model, "hybrid-raw-cosines") for model, _ in MODEL_RUNS]
    rows.append(["all, pooled, cosines as the model gives them (`hybrid-raw-cosines`)", "", *map(model_figures, raw)])
    header = ["set", "questions", *(label for _, label in MODEL_RUNS)]
    intro = made_by(
        "uv run vask eval tests/eval/QUESTIONS.jsonl --vault COPY --index-dir IDX --embed-model MODEL "
        "--configs hybrid,hybrid-raw-cosines --json",
        "each column's, through the Ollama stand-in",
        "[docs/eval/models/](eval/models/)`MODEL/<set>.json`",
    )
    return intro + table(header, rows)


def eval_models_more() -> str:
    """Connection and named-note sets, and the non-English ones, on each model."""

    def connection(model: str, name: str) -> str:
        record = model_record(model, name)
        if record is None:
            return "not measured"
        s = record["summary"]
        if "linked@10" in s:
            return f"{s['linked@10']:.3f} / {s['unlinked@10']:.3f} / {s['connected@6']:.3f}"
        return f"{s['expected@6 as read']:.3f}, {s['lost']} lost"

    def non_english(model: str, name: str, kind: str) -> str:
        record = model_record(model, name)
        if record is None:
            return "not measured"
        (found,) = [r for r in record["reports"] if r["config"] == "hybrid"]
        types = found["by_type"]
        if kind == "absent":
            a = types.get("absent")
            return f"{a['absent_declined']}/{a['absent']} declined" if a else "–"
        chosen = [v for k, v in types.items() if (k == "cross-language") == (kind == "English") and k != "absent"]
        n = sum(v["count"] for v in chosen)
        if not n:
            return "–"
        hit1, hit6 = (sum(v[key] * v["count"] for v in chosen) / n for key in ("hit@1", "hit@6"))
        return f"{hit1:.3f} / {hit6:.3f} (n {n})"

    rows = []
    for name, label in (
        ("connections-sample", "sample, connections"),
        ("connections-sample-blind", "sample, connections, second set"),
        ("connections-sample-phrasings", "sample, connections, phrasings"),
        ("connections-hub", "hub, connections"),
        ("connections-hub-blind", "hub, connections, second set"),
        ("connections-hub-phrasings", "hub, connections, phrasings"),
        ("named-notes-sample", "sample, named notes (expected@6)"),
        ("named-phrases-sample", "sample, named phrases (expected@6)"),
        ("named-notes-hub", "hub, named notes (expected@6)"),
    ):
        rows.append([label, *(connection(model, name) for model, _ in MODEL_RUNS)])
    for name, label in (
        ("zh-blind", "help, Chinese, blind"),
        ("zh-english-blind", "help, Chinese, English questions (blind, then read)"),
        ("zh-help-fresh", "help, Chinese, second blind set"),
        ("notes-zh-english", "notes (2,245), Chinese, English questions (blind)"),
        ("zh-dev", "help, Chinese, tuning set"),
        ("ja-blind", "help, Japanese, blind"),
        ("ja-dev", "help, Japanese, tuning set"),
        ("notes-zh-unseen", "notes (2,245), Chinese, unseen"),
        ("notes-zh-tuned", "notes (2,245), Chinese, tuned on"),
    ):
        if all(model_record(model, name) is None for model, _ in MODEL_RUNS):
            rows.append([label, *("not measured" for _ in MODEL_RUNS)])
            continue
        for kind in ("in the notes' language", "English", "absent"):
            cells = [non_english(model, name, kind) for model, _ in MODEL_RUNS]
            if all(c == "–" for c in cells):
                continue
            rows.append([f"{label}: {kind}", *cells])
    header = ["set", *(label for _, label in MODEL_RUNS)]
    intro = (
        "Connections: linked@10 / unlinked@10 / connected@6 (`scripts/eval_connections.py`); named notes: "
        "expected@6 as read and named notes lost (`scripts/eval_named.py`); other languages: hit@1 / hit@6 "
        "of the questions in the notes' language and of those in English, and the absent ones declined. "
        "Records: [docs/eval/models/](eval/models/).\n\n"
    )
    return intro + table(header, rows)


def title(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name[:-3] if name.endswith(".md") else name


def eval_failures() -> str:
    rows, absent = [], []
    for name in NEVER_TUNED:
        failures = report(name, "hybrid")["failures"]
        absent.append(f"{name} {sum(1 for f in failures if f['type'] == 'absent')}")
        for f in failures:
            if f["type"] == "absent":
                continue
            expected = ", ".join(title(p) for p in f["expected"])
            rows.append([name, f["id"], f["problem"], cell(f["question"]), expected])
    header = ["set", "id", "problem", "question", "expected"]
    tail = f"\n\nAbsent questions answered instead of declined: {', '.join(absent)} (each listed in its record)."
    return table(header, rows) + tail


# -- docs/MODEL-SERVERS.md -------------------------------------------------------------------------


def model_instructions() -> str:
    """The instructions vask sends each model family, from its table (core/embed_prompts.py)."""
    from vask_server.core.embed_prompts import FAMILIES

    def shown(prompt: str) -> str:
        return "none" if not prompt else "`" + cell(prompt.replace("\n", "\\n")) + "`"

    rows = [
        [
            ", ".join(f"`{name}`" for name in family.examples),
            shown(family.prompts.query),
            shown(family.prompts.document),
            f"[card]({family.card})",
        ]
        for family in FAMILIES
    ]
    return table(["models (as servers name them)", "before a question", "before a passage", "from"], rows)


# -- docs/CLI.md -----------------------------------------------------------------------------------


def usage_part(action: argparse.Action) -> str:
    if not action.option_strings:
        name = "{" + ",".join(map(str, action.choices)) + "}" if action.choices else (action.metavar or action.dest)
        name = str(name).upper() if not action.choices else str(name)
        return {"+": f"{name}...", "?": f"[{name}]", "*": f"[{name}...]"}.get(str(action.nargs), name)
    flag = action.option_strings[-1] if len(action.option_strings) > 1 else action.option_strings[0]
    if action.nargs == 0:
        return f"[{flag}]"
    if action.choices:
        return f"[{flag} {{{','.join(map(str, action.choices))}}}]"
    return f"[{flag} {action.metavar or action.dest.upper()}]"


def cli() -> str:
    from vask_server.cli.command import build_parser
    from vask_server.config import SETTINGS

    settings = {spec.name: spec for spec in SETTINGS}
    parser = build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    helps = {a.dest: a.help or "" for a in sub._choices_actions}
    out = [f"`{parser.prog} [--version] COMMAND ...`: {parser.description} {parser.epilog}"]
    for name, command in sub.choices.items():
        own = [
            a
            for a in command._actions
            if a.dest not in settings and a.help != argparse.SUPPRESS and not isinstance(a, argparse._HelpAction)
        ]
        flags = [a.option_strings[0] for a in command._actions if a.dest in settings]
        usage = " ".join([f"vask {name}", *(usage_part(a) for a in own)])
        what = helps[name].rstrip(".")
        out.append(f"### vask {name}\n\n{what[:1].upper() + what[1:]}.\n\n```\n{usage}\n```")
        if own:
            rows = [[f"`{usage_part(a).strip('[]')}`", cell(a.help or "–")] for a in own]
            out.append(table(["Argument", "What"], rows))
        listed = ", ".join(f"`{flag}`" for flag in flags)
        out.append(f"Settings it takes as flags ([each in full](REFERENCE.md#settings)): {listed}.")
    return "\n\n".join(out)


# -- the blocks ------------------------------------------------------------------------------------

RENDERERS: dict[Path, dict[str, Callable[[], str]]] = {
    DOCS / "BENCHMARKS.md": {
        "bench-all": bench_all,
        "bench-sizes": bench_sizes,
        "bench-sizes-1024": bench_sizes_1024,
        "bench-first-hour": bench_first_hour,
        "bench-first-hour-paragraph": bench_first_hour_paragraph,
        "bench-related": bench_related,
        "bench-overhead": bench_overhead,
    },
    DOCS / "EVALUATION.md": {
        "eval-results": eval_results,
        "eval-pooled": eval_pooled,
        "eval-time": eval_time,
        "eval-connections": eval_connections,
        "eval-named": eval_named,
        "eval-non-english": eval_non_english,
        "eval-models": eval_models,
        "eval-models-more": eval_models_more,
        "eval-failures": eval_failures,
    },
    DOCS / "CLI.md": {"cli": cli},
    DOCS / "MODEL-SERVERS.md": {"model-instructions": model_instructions},
}


def render(path: Path, text: str) -> str:
    """`text` (the doc at `path`) with each generated block rendered anew; every renderer of the doc
    must have its block, and every block its renderer."""
    renderers = RENDERERS[path]
    found = [m.group(2) for m in BLOCK.finditer(text)]
    missing, unknown = set(renderers) - set(found), set(found) - set(renderers)
    if missing or unknown or len(found) != len(set(found)):
        raise ValueError(f"{path.name}: blocks missing {sorted(missing)}, unknown {sorted(unknown)}, found {found}")
    return BLOCK.sub(lambda m: m.group(1) + renderers[m.group(2)]().rstrip("\n") + "\n" + m.group(4), text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 when a doc differs")
    args = parser.parse_args(argv)
    stale = []
    for path in RENDERERS:
        text = path.read_text("utf-8")
        rendered = render(path, text)
        if rendered != text:
            stale.append(path.relative_to(ROOT))
            if not args.check:
                path.write_text(rendered, "utf-8")
    if stale:
        print(("out of date: " if args.check else "rendered: ") + ", ".join(map(str, stale)))
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
