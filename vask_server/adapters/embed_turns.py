"""Turns at the embedding model between what a person waits for and what a sync does meanwhile.

A model server embeds one call at a time, first come first served (Ollama serves one embedding model
so; a CPU-bound model would be no faster two at a time). A first sync keeps it busy for an hour with
calls of many passages, two at once, so a search's question, sent in between, waited behind two of
them; a person searching every few seconds found every search slowed by as much. So while questions
are being asked (one waiting, or one answered within `SEARCHING_FOR_S`), the sync's calls go one at a
time, and each holds only as many passages as the model embeds in `SEARCH_WAIT_S`, at the pace
measured on the calls answered: a question then waits for at most that slice, and the model is never
left idle for it. Once questions stop, the sync's calls are whole and concurrent again.

One `EmbedTurns` per model server connection (`EmbedTurns.of(gateway)`): every `Embedder` on the same
gateway, the sync's and the searcher's, takes turns through it.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import weakref
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

# How long after a question the model is kept ready for the next one: a person reads the answer and
# asks again within seconds.
SEARCHING_FOR_S = 30.0
# A question's longest wait for the passages the sync sent before it (one slice of them).
SEARCH_WAIT_S = 0.25
# Each of a sync's calls' share in the running measure of the model's pace.
_PACE_WEIGHT = 0.3


@dataclass
class Turn:
    """A sync's turn at the model: how many texts it may send, and how many it did."""

    size: int
    sent: int = 0


class EmbedTurns:
    """When a sync's next call goes to the model, and how large it is, while questions are asked."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._asking = 0  # questions waiting for the model or being embedded
        self._last_question: float | None = None
        self._last_answer: float | None = None  # when the model last answered a call (to time the next)
        self._background = 0  # a sync's calls sent and not answered
        self._pace: float | None = None  # texts a second, measured on a sync's calls
        # (one per event loop: a gateway can outlive a loop in tests and CLI commands)
        self._changed: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Condition] = (
            weakref.WeakKeyDictionary()
        )

    @classmethod
    def of(cls, gateway: Any) -> EmbedTurns:
        """The turns of everything that embeds through this gateway (one model server)."""
        turns = _BY_GATEWAY.get(gateway)
        if turns is None:
            turns = _BY_GATEWAY[gateway] = cls()
        return turns

    @property
    def searching(self) -> bool:
        """A question is waiting, or one was answered within SEARCHING_FOR_S."""
        if self._asking:
            return True
        return self._last_question is not None and self._clock() - self._last_question < SEARCHING_FOR_S

    @property
    def pace(self) -> float | None:
        return self._pace

    @contextlib.asynccontextmanager
    async def question(self) -> AsyncIterator[None]:
        """A question's call: sent at once; from then on a person is searching."""
        self._asking += 1
        try:
            yield
        finally:
            self._asking -= 1
            self._last_question = self._last_answer = self._clock()
            await self._notify()

    @contextlib.asynccontextmanager
    async def passages(self, wanted: int) -> AsyncIterator[Turn]:
        """A sync's call of up to `wanted` texts: waits for its turn, and yields how many texts it may
        send (`Turn.size`: fewer while questions are being asked). The caller says how many it sent
        (`Turn.sent`): the call's seconds give the model's pace, which sizes the slices."""
        changed = self._condition()
        async with changed:
            await changed.wait_for(self._passages_may_go)
            self._background += 1
        turn = Turn(self._slice(wanted) if self.searching else wanted)
        sent = self._clock()
        try:
            yield turn
            answered = self._clock()
            # (its seconds at the model: from when it was sent, or, when it waited behind another
            # call, from that call's answer)
            self._measured(turn.sent, answered - max(sent, self._last_answer or sent))
            self._last_answer = answered
        finally:
            self._background -= 1
            await self._notify()

    def _measured(self, texts: int, seconds: float) -> None:
        if texts <= 0 or seconds <= 0:
            return
        pace = texts / seconds
        self._pace = pace if self._pace is None else (1 - _PACE_WEIGHT) * self._pace + _PACE_WEIGHT * pace

    def _passages_may_go(self) -> bool:
        # (a question sent already is ahead of the call sent next: the model serves them in order)
        return not self.searching or self._background == 0

    def _slice(self, wanted: int) -> int:
        if self._pace is None:
            return wanted  # (not measured yet: the sync's first call)
        return max(1, min(wanted, int(self._pace * SEARCH_WAIT_S)))

    def _condition(self) -> asyncio.Condition:
        loop = asyncio.get_running_loop()
        changed = self._changed.get(loop)
        if changed is None:
            changed = self._changed[loop] = asyncio.Condition()
        return changed

    async def _notify(self) -> None:
        changed = self._condition()
        async with changed:
            changed.notify_all()


_BY_GATEWAY: weakref.WeakKeyDictionary[Any, EmbedTurns] = weakref.WeakKeyDictionary()
