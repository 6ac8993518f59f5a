"""A cosine of one embedding model, re-expressed on the scale vask's ranking weights were chosen on. Pure.

Each model spreads cosines its own way: multilingual-e5-small puts unrelated text far higher than
all-minilm does, and spreads it far less (docs/EVALUATION.md, "Two embedding models"). The ranking adds
fixed amounts to cosines (the keyword share in fusion, a link's bonus between connected notes, a
title's); on a model whose cosines spread less, those amounts weigh more, and keywords and links decide
where meaning should. So before anything is added to them, cosines are moved onto the scale those amounts
were chosen on, by the index's own calibration (services/calibrator.py): its unrelated level maps to
REFERENCE_MEAN and its spread to REFERENCE_SPREAD. Ranking by cosine alone is unchanged by it (the map
keeps the order); the decline rule keeps comparing raw cosines with the calibrated line.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# The unrelated level and spread (a topic asked as a question, against passages of other notes) of the
# model the weights were chosen with: all-minilm on sample_vault (docs/EVALUATION.md).
REFERENCE_MEAN = 0.12
REFERENCE_SPREAD = 0.10


@dataclass(frozen=True)
class CosineScale:
    """The index's unrelated level and spread; the default maps every cosine to itself."""

    mean: float = REFERENCE_MEAN
    spread: float = REFERENCE_SPREAD

    @property
    def factor(self) -> float:
        return REFERENCE_SPREAD / self.spread

    def __call__(self, cosine: float) -> float:
        """On the reference scale, at most 1 (what an identical text scores there)."""
        return min(1.0, REFERENCE_MEAN + (cosine - self.mean) * self.factor)

    def array(self, cosines: np.ndarray) -> np.ndarray:
        moved: np.ndarray = np.minimum(1.0, REFERENCE_MEAN + (cosines - self.mean) * self.factor)
        return moved


IDENTITY = CosineScale()
