"""What an unrelated question in another language looks like to a model that reads both. Pure.

A multilingual model puts a question and a passage in two languages further apart than two texts in
one, related or not: an English question about a Chinese note scores below the unrelated Chinese
pairs the decline line is calibrated on, and would always be declined. So for a vault written in
Chinese or Japanese the calibration also measures these everyday English topics, asked as questions,
against its passages in those languages (services/query/calibrator.py); an English question whose
closest passage is in Chinese or Japanese is then held to that line (services/query/search.py).
Everyday things, so that few of them are what any note is about: one that is barely moves the figures.
"""

from __future__ import annotations

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
