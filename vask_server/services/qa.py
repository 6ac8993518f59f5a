"""ask(question) → an async stream of events: sources, tokens, done (or error).

The CLI prints these events and the HTTP API sends them as NDJSON, so both say the same thing.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from vask_server.adapters.gateway import ModelGateway
from vask_server.core.citations import extract_citations, unique_sources
from vask_server.core.prompt import ANSWER_TOKENS, DECLINE_MESSAGE, fit_prompt, previous_question
from vask_server.core.question import Understood
from vask_server.core.retrieve import Filters
from vask_server.errors import ModelMissing, VaskError
from vask_server.services.ranking import Ranking
from vask_server.services.search import Searcher

Event = dict[str, Any]


@dataclass(frozen=True)
class AskRequest:
    question: str
    top_k: int
    min_similarity: float
    history: Sequence[dict[str, str]] = ()
    filters: Filters | None = None
    current_note: str | None = None  # "ask about this note": its passages come first
    open_note: str | None = None  # the note open in Obsidian: what "this note" in a connection question means
    chat_model: str | None = None
    retrieval: Ranking | None = None  # how to retrieve; None: the searcher's own (eval compares)
    today: date | None = None  # when it is asked, for "last month"; None: the server's local date
    read_time: bool = True  # read the time the question names; off: "ask again without it"
    connect: bool = True  # read "what connects to [[X]]" as a seed; off: the chip's "search as asked"
    understood: Understood | None = None  # the question already read (scope and time), if the caller did


class QAService:
    def __init__(self, searcher: Searcher, gateway: ModelGateway, chat_model: str, context_tokens: int) -> None:
        self.searcher = searcher
        self.gateway = gateway
        self.chat_model = chat_model
        self.context_tokens = context_tokens  # Ollama's num_ctx for answers; the sources are fitted into it

    async def ask(self, request: AskRequest) -> AsyncGenerator[Event, None]:
        try:
            async for event in self._ask(request):
                yield event
        except VaskError as exc:
            yield {"type": "error", **exc.to_dict()}

    async def complete(self, request: AskRequest) -> Event:
        """The whole answer at once, as the final `done` event (for `vask eval --answers`); a failure,
        such as a missing chat model, raises instead of becoming an event."""
        done: Event = {}
        async for event in self._ask(request):
            if event["type"] == "done":
                done = event
        return done

    async def _ask(self, request: AskRequest) -> AsyncIterator[Event]:
        today = request.today or date.today()
        result = await self.searcher.search_question(
            request.question,
            today=today,
            previous=previous_question(request.history),
            top_k=request.top_k,
            min_similarity=request.min_similarity,
            filters=request.filters,
            read_time=request.read_time,
            config=request.retrieval,
            understood=request.understood,
            current_note=request.open_note or request.current_note,
            connect=request.connect,
        )
        query = result.query or request.question
        hits = result.hits
        if request.current_note and result.seed is None:
            # "Ask about the current note": its best passages come first, the rest of the vault after.
            # (Not when the question asks what connects to it: then its own passages are not the answer.)
            focus = await self.searcher.search(
                query,
                top_k=max(2, request.top_k // 2),
                min_similarity=0.0,
                filters=Filters(paths=(request.current_note,)),
            )
            seen = {hit.chunk_id for hit in focus.hits}
            hits = focus.hits + [hit for hit in hits if hit.chunk_id not in seen]
        prompt = fit_prompt(
            request.question,
            hits,
            request.history,
            request.current_note,
            context_tokens=self.context_tokens,
            today=today,
            time_range=result.time_range,
            seed_title=result.seed_title,
        )
        hits = prompt.hits  # the sources shown are the ones the model reads
        notices = [result.notice] if result.notice else []
        if prompt.dropped:
            notices.append(
                f"{prompt.dropped} of the weakest passages were left out to fit the chat model's context window "
                f"of {self.context_tokens} tokens (VASK_CHAT_CONTEXT)."
            )
        sources = [hit.to_dict(n) for n, hit in enumerate(unique_sources(hits), start=1)]
        time_range = result.time_range.to_dict() if result.time_range else None
        scope = result.scope.to_dict() if result.scope else None
        yield {
            "type": "sources",
            "sources": sources,
            "mode": result.mode,
            "time_range": time_range,
            "scope": scope,
            "connection": result.connection_dict(),
            **({"notice": " ".join(notices)} if notices else {}),
        }
        if not hits:
            yield {"type": "token", "text": DECLINE_MESSAGE}
            yield {
                "type": "done",
                "answer": DECLINE_MESSAGE,
                "citations": [],
                "sources": [],
                "declined": True,
                "time_range": time_range,
                "scope": scope,
            }
            return
        messages = prompt.messages
        parts: list[str] = []
        model = request.chat_model or self.chat_model
        try:
            async for text in self.gateway.chat_stream(
                model,
                messages,
                # The answer gets the room the prompt left it, no more: Ollama's default is to write
                # until stopped, and a small model that loops would never end.
                options={"temperature": 0.1, "num_ctx": self.context_tokens, "num_predict": ANSWER_TOKENS},
            ):
                parts.append(text)
                yield {"type": "token", "text": text}
        except ModelMissing as exc:
            if request.chat_model:  # chosen by the client (the plugin's setting), not the server
                exc.hint = (
                    f"Pull it with `ollama pull {model}`, or clear the chat model in the plugin's settings "
                    f"to use the server's default ({self.chat_model})."
                )
            raise
        answer = "".join(parts).strip()
        citations = extract_citations(answer, hits)
        yield {
            "type": "done",
            "answer": answer,
            "citations": [c.to_dict() for c in citations],
            "sources": sources,
            "declined": False,
            "time_range": time_range,
            "scope": scope,
        }
