"""The growth curve of a `scripts.bench sizes` record as a PNG for docs/BENCHMARKS.md: peak memory,
idle memory, search latency and the restart, each against the chunks indexed, with the issue's
targets drawn in. matplotlib is in the `plot` dependency group, which the product and the tests do
not need:

    uv run --group plot python -m scripts.plot_sizes docs/bench/sizes.json docs/bench/sizes.png
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

MIB = 2**20


def series(record: dict[str, Any]) -> dict[str, list[float | None]]:
    """Each plotted figure, one value a size (None where the run did not measure it)."""

    def each(path: tuple[str, ...], scale: float = 1.0) -> list[float | None]:
        out: list[float | None] = []
        for one in record["sizes"].values():
            value: Any = one
            for key in path:
                value = value.get(key) if isinstance(value, dict) else None
            out.append(None if value is None else float(value) * scale)
        return out

    return {
        "chunks": each(("index", "chunks_stored")),
        "peak_index": each(("index_instant", "peak_rss_bytes"), 1 / MIB),
        "peak_index_hash_local": each(("index", "peak_rss_bytes"), 1 / MIB),
        "idle_serve": each(("restart", "idle_rss_mib")),
        "idle_searched": each(("restart", "rss_after_searches_mib")),
        "search_median": each(("query", "server", "median_ms")),
        "search_p95": each(("query", "server", "p95_ms")),
        "ready": each(("restart", "ready_median_s")),
        "recall_mean": each(("query", "vector_recall_at_50", "mean")),
    }


def plot(record: dict[str, Any], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")  # a file, no display
    import matplotlib.pyplot as plt

    s = series(record)
    chunks = [c / 1000 for c in s["chunks"] if c is not None]
    notes = [f"{int(n) // 1000}k notes" for n in record["sizes"]]
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8), constrained_layout=True)

    def line(ax: Any, key: str, label: str, style: str = "o-") -> None:
        points = [(x, y, n) for x, y, n in zip(chunks, s[key], notes, strict=False) if y is not None]
        if not points:
            return
        first = not ax.lines
        ax.plot([p[0] for p in points], [p[1] for p in points], style, label=label)
        if first:  # the vault of each point, on the panel's first line (40k and 100k lie close)
            for i, (x, y, name) in enumerate(points):
                offset = (-28, 7) if i % 2 else (4, -11)
                ax.annotate(name, (x, y), xytext=offset, textcoords="offset points", fontsize=7)

    memory, latency, restart = axes
    line(memory, "peak_index", "peak of a full index (zero-cost embedder)")
    line(memory, "peak_index_hash_local", "… with hash-local's cache in the process", "o--")
    line(memory, "idle_serve", "serve, idle after restart")
    line(memory, "idle_searched", "serve, after searching")
    memory.axhline(600, color="grey", ls="--", lw=0.8)
    memory.text(chunks[0], 606, "target at 100k notes: 600", fontsize=7, color="grey")
    memory.axhline(400, color="grey", ls=":", lw=0.8)
    memory.text(chunks[0], 406, "idle target: 400", fontsize=7, color="grey")
    memory.set(title="Memory (RSS, MiB)", xlabel="chunks (thousands)", ylim=(0, None))

    line(latency, "search_median", "/v1/search median")
    line(latency, "search_p95", "/v1/search p95")
    latency.axhline(30, color="grey", ls="--", lw=0.8)
    latency.axhline(80, color="grey", ls=":", lw=0.8)
    latency.set(title="Search, server side (ms)", xlabel="chunks (thousands)", ylim=(0, None))

    line(restart, "ready", "ready after a restart (s)")
    restart.axhline(3, color="grey", ls="--", lw=0.8)
    restart.set(title="Restart, nothing changed (s)", xlabel="chunks (thousands)", ylim=(0, None))

    for ax in axes:
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="lower right")
    machine = record.get("machine", {})
    fig.suptitle(
        f"vask at three vault sizes ({machine.get('nproc', '?')} cores, commit {machine.get('commit', '?')})",
        fontsize=10,
    )
    fig.savefig(out, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("record", type=Path, help="a scripts.bench sizes --json record")
    parser.add_argument("out", type=Path, help="the PNG to write")
    args = parser.parse_args()
    plot(json.loads(args.record.read_text("utf-8")), args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
