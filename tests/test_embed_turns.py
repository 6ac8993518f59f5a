"""A search's question and a sync's passages share one model server, which embeds one call at a time,
first come first served (as Ollama serves an embedding model). Played out call by call against such a
server, on a clock the test moves: a question waits for at most a small slice of the sync's passages
once a person is searching, and the sync's calls are whole and concurrent again when they stop."""

import asyncio
from collections.abc import Sequence

import numpy as np

from vask_server.adapters.embed_turns import SEARCH_WAIT_S, SEARCHING_FOR_S, EmbedTurns
from vask_server.adapters.ollama import Embedder
from vask_server.core.embed_prompts import EmbedPrompts

NONE = EmbedPrompts()  # (a model with no instructions)

PACE = 40.0  # texts a second: a CPU-bound model
DIMENSION = 400


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class OneCallAtATime:
    """A model server's queue: calls wait in the order they were sent until `answer_next`, which
    takes the oldest, lets its texts' seconds pass at PACE and answers it. Each text "p<i>" or
    "q<i>" is embedded as the unit vector along axis i, so the order of the answer can be checked."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.queue: list[tuple[list[str], asyncio.Future[list[list[float]]]]] = []
        self.answered: list[tuple[str, int]] = []  # ("q" or "p", texts) in the order answered

    async def embed(self, model: str, texts: Sequence[str]) -> list[list[float]]:
        future: asyncio.Future[list[list[float]]] = asyncio.get_running_loop().create_future()
        self.queue.append((list(texts), future))
        return await future

    async def answer_next(self) -> None:
        await settle()
        texts, future = self.queue.pop(0)
        self.clock.now += len(texts) / PACE
        vectors = []
        for text in texts:
            vector = [0.0] * DIMENSION
            vector[int(text[1:])] = 1.0
            vectors.append(vector)
        future.set_result(vectors)
        self.answered.append((texts[0][0], len(texts)))
        await settle()

    def waiting(self) -> list[tuple[str, int]]:
        return [(texts[0][0], len(texts)) for texts, _ in self.queue]


async def settle() -> None:
    for _ in range(50):
        await asyncio.sleep(0)


async def ask(server: OneCallAtATime, searcher: Embedder, number: int) -> list[tuple[str, int]]:
    """A question sent while the sync runs: what the server answered from then until it was answered."""
    question = asyncio.ensure_future(searcher.embed([f"q{number}"], query=True))
    await settle()
    before = len(server.answered)
    while not question.done():
        await server.answer_next()
    assert int(np.argmax(question.result()[0])) == number
    return server.answered[before:]


async def test_a_question_waits_for_a_slice_of_the_syncs_passages_while_a_person_searches() -> None:
    clock = Clock()
    server = OneCallAtATime(clock)
    turns = EmbedTurns(clock=clock)
    sync_embedder = Embedder(server, "m", prompts=NONE, batch_size=32, concurrency=2, turns=turns)  # type: ignore[arg-type]
    searcher = Embedder(server, "m", prompts=NONE, batch_size=2, concurrency=1, turns=turns)  # type: ignore[arg-type]
    passages = [f"p{i}" for i in range(DIMENSION)]
    sync = asyncio.ensure_future(sync_embedder.embed(passages))
    await settle()
    assert server.waiting() == [("p", 32), ("p", 32)]  # nobody searching: whole calls, two at once
    await server.answer_next()
    await server.answer_next()

    # The first question finds two of the sync's calls sent already: it waits for them, no more.
    first = await ask(server, searcher, 0)
    assert sum(n for kind, n in first if kind == "p") <= 2 * 32 and first[-1] == ("q", 1)
    # A person searching: the next question waits for one slice at most, as long as SEARCH_WAIT_S
    # at the pace the sync's calls showed, and the sync sends one call at a time meanwhile.
    for number in (1, 2, 3):
        for _ in range(3):  # (the person reads the answer; the sync goes on, one call at a time)
            assert len(server.waiting()) == 1
            await server.answer_next()
        waited = await ask(server, searcher, number)
        behind = [n for kind, n in waited if kind == "p"]
        assert len(behind) <= 1 and sum(behind) <= PACE * SEARCH_WAIT_S
    # Questions stopped: the sync's calls are whole and two at once again.
    clock.now += SEARCHING_FOR_S + 1
    await server.answer_next()
    await settle()
    assert server.waiting() == [("p", 32), ("p", 32)]
    while not sync.done():
        await server.answer_next()
    vectors = sync.result()
    assert vectors.shape == (DIMENSION, DIMENSION)
    assert list(np.argmax(vectors, axis=1)) == list(range(DIMENSION))  # every passage's own, in order


async def test_every_embedder_of_one_model_server_takes_turns_through_the_same_queue() -> None:
    server = OneCallAtATime(Clock())
    other = OneCallAtATime(Clock())
    one, two = Embedder(server, "m", prompts=NONE), Embedder(server, "m", prompts=NONE, batch_size=2)  # type: ignore[arg-type]
    assert one.turns is two.turns and Embedder(other, "m", prompts=NONE).turns is not one.turns  # type: ignore[arg-type]
