"""The ANN index's plan: from how many rows a table gets one, and how it is built and searched at each
size (partitions, probes, re-ranking). Pure numbers; the store builds and searches by them."""

from __future__ import annotations

from dataclasses import dataclass

# Exact vector search reads every stored vector, so its cost grows with the rows; from this many on,
# an ANN index (IVF partitions of RaBitQ codes, 2 bits a dimension) is built in the background, off the
# request path; searches then probe its partitions and re-rank the best `refine` x limit candidates
# with the full vectors, so scores stay exact cosines. Every parameter comes from `ann_plan`; the
# figures each rests on: docs/BENCHMARKS.md, "The vector index".
VECTOR_INDEX_MIN_ROWS = 30_000
_ANN_ROWS_PER_PARTITION = 8_192
_ANN_MAX_PARTITIONS = 1_024
# Recall follows the share of partitions probed, on vectors that cluster by topic too, and probing
# all costs little more than most: it scans only the codes, a quarter the size of the 8-bit ones
# used before.
_ANN_PROBE_SHARE = 1.0  # of the partitions
# What an index whose partitions are not known (named otherwise: replaced at the next sync) is
# searched with meanwhile: LanceDB's own default.
UNKNOWN_INDEX_PROBES = 20
# The best refine x limit candidates by their 2-bit codes are re-ranked by their full vectors, each read
# from the table: on a large index those reads are most of the vector search. They cost the same at
# any size while the code scan grows with the rows, so a smaller index, whose search is quick,
# re-ranks twice as many and keeps full recall. (3- and 4-bit codes need fewer re-ranked for the same
# recall, but hold more in a serving process.)
_ANN_REFINE = 10
# RaBitQ's estimate of a cosine is closer the more dimensions a code has, so wider vectors need fewer
# re-ranked for the same recall, and each of their reads costs more. From this width on, refine 6.
_ANN_REFINE_WIDE = 6
_ANN_WIDE_DIMENSIONS = 768
_ANN_REFINE_SMALL = 20
_ANN_SMALL_PARTITIONS = 32  # ~260,000 rows
# An index trained on a table this many times smaller than it is now is made again (in the
# background; the old one serves until the new one is ready): rows added later only join the
# partitions trained before them, which grow and lose their shape.
REBUILD_GROWTH = 2.0
# Rows written since the index was built are searched exactly beside it, each adding to every
# search: from this many, the index is built again in the background, the old one serving meanwhile
# (an optimize, which would fold them in, damages it: adapters/upkeep.py).
REBUILD_UNINDEXED_ROWS = 2_000
# + the partition count: what a later process reads the plan from. (An index named otherwise, such as
# the 8-bit `vector_ivf<N>` of earlier versions or LanceDB's default name, is replaced once.)
_ANN_INDEX_PREFIX = "vector_rq2_"


@dataclass(frozen=True)
class AnnPlan:
    """How the ANN index of a table of some size is built and searched."""

    partitions: int
    nprobes: int

    @property
    def index_name(self) -> str:
        return f"{_ANN_INDEX_PREFIX}{self.partitions}"


def ann_nprobes(partitions: int) -> int:
    """Partitions a search probes in an index of `partitions`."""
    return min(partitions, max(1, round(partitions * _ANN_PROBE_SHARE)))


def ann_refine(partitions: int | None, dimension: int) -> int:
    """How many times the limit a search in an index of `partitions` over vectors of `dimension`
    re-ranks by full vectors (None: an index from before the plan, its size unknown)."""
    if partitions is not None and partitions < _ANN_SMALL_PARTITIONS:
        return _ANN_REFINE_SMALL
    return _ANN_REFINE_WIDE if dimension >= _ANN_WIDE_DIMENSIONS else _ANN_REFINE


def ann_plan(rows: int) -> AnnPlan:
    """The ANN index for a table of `rows` rows: the one place its parameters are chosen (and
    `ann_refine`, how deep its searches re-rank)."""
    partitions = max(1, min(_ANN_MAX_PARTITIONS, round(rows / _ANN_ROWS_PER_PARTITION)))
    return AnnPlan(partitions=partitions, nprobes=ann_nprobes(partitions))


def ann_partitions_of(index_name: str) -> int | None:
    """The partition count an index built by `ann_plan` has in its name; None for any other
    (LanceDB's default name, from before the plan: its partitions are not known)."""
    digits = index_name.removeprefix(_ANN_INDEX_PREFIX)
    return int(digits) if index_name.startswith(_ANN_INDEX_PREFIX) and digits.isdigit() else None
