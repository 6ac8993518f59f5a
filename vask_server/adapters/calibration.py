"""The search calibration of the last index version it was measured on, kept beside the index.

Measuring it reads a sample of passages (on a small index, every chunk's path first: docs/BENCHMARKS.md,
"Speed") and embeds a few dozen probes as questions: kept on disk, a restart with nothing changed has it at once
instead of making the first search wait. It holds four numbers (six for a vault in Chinese or
Japanese), what they were measured on, and the version they belong to; nothing of any note.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from vask_server.adapters.atomic import write_atomic

CALIBRATION_FILE = "calibration.json"


@dataclass(frozen=True)
class Calibration:
    version: str  # the index version measured: its table suffix and last sync
    notes: int  # notes the sample was drawn from
    pair_mean: float  # similarity of unrelated pairs: the model's "unrelated" level
    pair_std: float
    # What the pairs were: "questions", a passage's topic embedded as a question (with the model's
    # query instruction) against passages of other notes, the kind of cosine the decline rule
    # compares; "passages", passage against passage, measured when the model could not be asked
    # (never kept on disk: measured again once it can be).
    kind: str = "questions"
    # In a vault written in Chinese or Japanese, with a model that reads them: everyday English topics
    # asked as questions against its passages in those languages (core/across.py), the level an
    # English question about such a note is held to; None elsewhere
    across_mean: float | None = None
    across_std: float | None = None


def read_calibration(index_dir: Path, version: str) -> Calibration | None:
    """The kept calibration if it was measured on this version; None otherwise, or when the file is
    missing or unreadable (it is measured again)."""
    try:
        data = json.loads((index_dir / CALIBRATION_FILE).read_text("utf-8"))
        saved = Calibration(
            str(data["version"]),
            int(data["notes"]),
            float(data["pair_mean"]),
            float(data["pair_std"]),
            str(data.get("kind", "passages")),
            _figure(data.get("across_mean")),
            _figure(data.get("across_std")),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return saved if saved.version == version and saved.kind == "questions" else None


def _figure(value: object) -> float | None:
    if value is None:
        return None
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise ValueError(f"not a figure: {value!r}")
    return float(value)


def write_calibration(index_dir: Path, calibration: Calibration) -> None:
    write_atomic(index_dir / CALIBRATION_FILE, json.dumps(asdict(calibration)))
