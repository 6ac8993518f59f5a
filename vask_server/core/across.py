"""What an unrelated question in another language looks like to a model that reads both. Pure.

A multilingual model puts a question and a passage in two languages further apart than two texts in
one, related or not: an English question about a Chinese note scores below the unrelated Chinese
pairs the decline line is calibrated on, and would always be declined. So for a vault written in
Chinese or Japanese the calibration also measures these everyday English topics, asked as questions,
against its passages in those languages (services/query/calibrator.py); an English question whose
closest passage is in Chinese or Japanese is then held to that line (services/query/search.py).
Everyday things, so that few of them are what any note is about: one that is barely moves the figures.

The same probes rank such a question (`AcrossCentre`). What every English question shares pulls it
towards the same few passages whatever it asks (those with English words in them above all): the
probes' mean is that shared part, and it is taken out of the question before the passages are ranked,
the way a language's mean is taken out of multilingual sentence vectors to compare meaning across
languages (Libovický, Rosa and Fraser, 2020).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

ACROSS_PROBES = (
    "train tickets from Berlin to Prague",
    "sourdough proofing time overnight",
    "set up a VPN on the router",
    "knee pain physiotherapy exercises",
    "income tax return deadline",
    "birthday present ideas for dad",
    "marathon training plan weekly mileage",
    "watering tomato plants in summer",
    "car insurance renewal price",
    "wedding guest list seating",
    "apartment rent increase letter",
    "python list comprehension syntax",
    "best hiking boots for winter",
    "how to descale a kettle",
    "flight delay compensation claim",
    "learning Spanish verb conjugation",
    "chocolate cake recipe without eggs",
    "cat vaccination schedule",
    "mortgage interest rate comparison",
    "replace bicycle brake pads",
    "job interview questions to prepare",
    "meditation for better sleep",
    "quarterly sales report numbers",
    "fix a leaking bathroom tap",
    "museum opening hours on Sunday",
    "vitamin D dosage in winter",
    "print photos at home",
    "change the phone battery",
    "book club next novel",
    "electricity bill too high",
    "guitar chords for beginners",
    "moving house checklist",
)


@dataclass(frozen=True)
class AcrossCentre:
    """What the probes, asked as questions, share against an index's passages in Chinese or Japanese:
    their mean vector, and their mean cosine to those passages (the calibration's `across_mean`)."""

    centre: np.ndarray
    level: float

    def query(self, question: np.ndarray) -> np.ndarray:
        """The vector to search with: the question without what every English question shares.
        (Its cosines order passages as `scores` does: every passage vector has length one.)"""
        searched: np.ndarray = question - self.centre
        return searched

    def scores(self, question: np.ndarray, passages: np.ndarray) -> np.ndarray:
        """Each passage's cosine to the question, less how much closer than the probes' usual level
        the probes themselves come to it: a passage near every English question loses that lead, and
        the scores stay on the scale of cosines (the decline line and the fusion read them so)."""
        scores: np.ndarray = np.clip(passages @ question - (passages @ self.centre - self.level), -1.0, 1.0)
        return scores
