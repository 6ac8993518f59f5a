"""How many absent and answerable questions "not in your notes" declines at each VASK_DECLINE_SIGMAS,
over every question set of sample_vault but the unseen one, as `vask eval` counts them.

    uv run python scripts/decline_sweep.py --vault sample_vault 0.75,1,1.5,2
    uv run python scripts/decline_sweep.py --vault sample_vault --instruction 0.75,1,1.5,2

`--instruction` puts mxbai-embed-large's query instruction before every question (and the calibration's
probes) of a model that has none, such as the stand-in's all-minilm (as `--query-prefix`): what the default
model's prefix does to the rule, measured with a model that can run here. It uses an index of its own (beside the
vault's usual one), so the two calibrations are kept apart. Needs a running Ollama (or the stand-in)
with the model of VASK_EMBED_MODEL. Eval only: nothing here is on the product's path.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
from pathlib import Path

from vask_server.cli.command import main as vask
from vask_server.core.embed_prompts import prompts_for

ROOT = Path(__file__).resolve().parent.parent
# Every set the factor may be chosen on: the unseen set is left out, to judge the choice.
HELD_OUT = "questions-unseen.jsonl"
NOW = "2026-04-01"  # the day the questions without a day of their own are asked


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sigmas", help="comma-separated values of VASK_DECLINE_SIGMAS")
    parser.add_argument("--vault", type=Path, required=True)
    parser.add_argument("--index-dir", type=Path, default=Path("/tmp/vask-decline-sweep"))
    parser.add_argument("--instruction", action="store_true", help="put a search instruction before questions")
    args = parser.parse_args()
    index_dir = args.index_dir / ("instruction" if args.instruction else "plain")
    # mxbai-embed-large's query instruction, as a setting (its card's for mxbai-embed-large itself)
    instruction = ["--query-prefix", prompts_for("mxbai-embed-large").query] if args.instruction else []
    _run(["index", "--vault", str(args.vault), "--index-dir", str(index_dir), "--quiet", *instruction])
    sets = [p for p in sorted((ROOT / "tests" / "eval").glob("questions*.jsonl")) if p.name != HELD_OUT]
    for sigma in args.sigmas.split(","):
        absent = absent_declined = answerable = answerable_declined = 0
        for path in sets:
            report = json.loads(
                _run(
                    [
                        *("eval", str(path), "--vault", str(args.vault), "--index-dir", str(index_dir), "--json"),
                        *("--decline-sigmas", sigma, "--now", NOW, *instruction),
                    ]
                )
            )["reports"][0]["overall"]
            absent += report["absent"]
            absent_declined += report["absent_declined"]
            answerable += report["count"]
            answerable_declined += report["answerable_declined"]
        print(
            f"sigma {sigma}: absent declined {absent_declined}/{absent}, "
            f"answerable declined {answerable_declined}/{answerable}",
            flush=True,
        )


def _run(argv: list[str]) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = vask(argv)
    if code != 0:
        raise SystemExit(f"vask {' '.join(argv)} exited {code}")
    return out.getvalue()


if __name__ == "__main__":
    main()
