"""Cosines moved onto the scale the ranking's weights were chosen on (core/scale.py): a model whose
cosines spread over a quarter of all-minilm's range ranks by meaning, as all-minilm does, not by the
fixed amounts added to its cosines (keywords in fusion, links and titles between connected notes)."""

import numpy as np
import pytest

from vask_server.adapters.calibration import Calibration
from vask_server.core.retrieve import fuse_convex
from vask_server.core.scale import IDENTITY, REFERENCE_MEAN, REFERENCE_SPREAD, CosineScale
from vask_server.services.query import connections
from vask_server.services.query.ranking import cosine_scale

# An index of a model like multilingual-e5-small: unrelated text near 0.79, a spread of 0.025
E5_LIKE = CosineScale(0.79, 0.025)


def test_the_index_level_and_spread_map_onto_the_reference():
    assert E5_LIKE(0.79) == pytest.approx(REFERENCE_MEAN)
    assert E5_LIKE(0.79 + 0.025) == pytest.approx(REFERENCE_MEAN + REFERENCE_SPREAD)
    assert CosineScale(0.9, 0.01)(1.0) == 1.0  # (never above what an identical text scores)
    assert [IDENTITY(c) for c in (-0.2, 0.0, 0.25, 0.9, 1.0)] == pytest.approx([-0.2, 0.0, 0.25, 0.9, 1.0])
    assert np.allclose(E5_LIKE.array(np.array([0.79, 0.815])), [REFERENCE_MEAN, REFERENCE_MEAN + REFERENCE_SPREAD])


def test_the_scale_comes_from_a_calibration_measured_with_questions():
    assert cosine_scale(Calibration("v", 60, 0.79, 0.025, "questions")) == E5_LIKE
    assert cosine_scale(Calibration("v", 60, 0.79, 0.025, "passages")) == IDENTITY  # (the model could not be asked)
    assert cosine_scale(Calibration("v", 1, 0.0, 0.0, "questions")) == IDENTITY
    assert cosine_scale(None) == IDENTITY


def rows(*specs: tuple[str, float]) -> list[dict]:
    return [{"id": path, "path": path, "title": path, "text": f"about {path}", "score": cos} for path, cos in specs]


def test_fusion_weighs_meaning_on_the_index_scale_not_the_raw_cosine():
    # "Close" is clearly the nearest by meaning on this model (2.4 spreads above unrelated text), "Keyword"
    # barely above it but the best keyword match
    vector_rows = rows(("Close.md", 0.85), ("Keyword.md", 0.80))
    text_rows = [
        {**row, "similarity": cos}
        for row, cos in zip(rows(("Keyword.md", 5.0), ("Other.md", 4.0)), (0.8, 0.5), strict=True)
    ]
    raw = fuse_convex(vector_rows, text_rows, query="when is the swim club meet")
    scaled = fuse_convex(vector_rows, text_rows, query="when is the swim club meet", scale=E5_LIKE)
    assert [r.row["path"] for r in raw][:2] == ["Keyword.md", "Close.md"]  # (the keyword share outweighs meaning)
    assert [r.row["path"] for r in scaled][:2] == ["Close.md", "Keyword.md"]
    assert [r.similarity for r in scaled][:2] == [0.85, 0.80]  # each keeps its own cosine


class Graph:
    def title(self, path: str) -> str:
        return path.removesuffix(".md")

    def link_count(self, path: str) -> int:
        return 1


def test_a_link_adds_what_it_adds_on_all_minilm_scale_not_more():
    """A note linked with the seed but barely closer than unrelated text does not pass one far closer
    in meaning on a model whose cosines spread little; on all-minilm's scale the link counts as before."""

    def ranked(scale: CosineScale) -> list[str]:
        seed = np.array([[1.0, 0.0]], dtype=np.float32)

        def at(cos: float) -> list[float]:
            return [cos, float(np.sqrt(1 - cos * cos))]

        candidates = [
            {"id": "a", "path": "Unlinked.md", "vector": at(0.86)},
            {"id": "b", "path": "Linked.md", "vector": at(0.80)},
        ]
        found = connections._rank(Graph(), candidates, seed, ["Seed"], {"Linked.md": "links to"}, None, {}, 10, scale)  # type: ignore[arg-type]
        return [c.path for c in found]

    assert ranked(IDENTITY) == ["Linked.md", "Unlinked.md"]
    assert ranked(E5_LIKE) == ["Unlinked.md", "Linked.md"]
