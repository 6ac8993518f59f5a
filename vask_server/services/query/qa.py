"""ask(question) → an async stream of events: sources, tokens, done (or error).

The CLI prints these events and the HTTP API sends them as NDJSON, so both say the same thing.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from vask_server.adapters.gateway import ModelGateway
from vask_server.core.citations import Citation, extract_citations, unique_sources
from vask_server.core.models import Hit
from vask_server.core.prompt import ANSWER_TOKENS, DECLINE_MESSAGE, Prompt, fit_prompt
from vask_server.core.question import Question, Understood
from vask_server.core.retrieve import Filters
from vask_server.errors import ModelMissing, VaskError
from vask_server.services.query.ranking import Ranking
from vask_server.services.query.search import Searcher, SearchResult

Event = dict[str, Any]


class QAService:
    def __init__(self, searcher: Searcher, gateway: ModelGateway, chat_model: str, context_tokens: int) -> None:
        self.searcher = searcher
        self.gateway = gateway
        self.chat_model = chat_model
        self.context_tokens = context_tokens  # Ollama's num_ctx for answers; the sources are fitted into it

    async def understand(self, question: Question) -> Understood:
        """The question read, for a caller that must hear what is wrong with it before an answer starts
        (a [[Note]] that names nothing raises ScopeNotFound); `ask` takes what it returns."""
        return await self.searcher.understand(question)

    async def ask(
        self, question: Question | Understood, *, chat_model: str | None = None, ranking: Ranking | None = None
    ) -> AsyncGenerator[Event, None]:
        """The answer as events; what fails, reading the question included, is the last event.
        `chat_model`: the client's choice instead of the server's; `ranking`: instead of the searcher's own
        (what `vask eval` compares)."""
        try:
            async for event in self._ask(question, chat_model, ranking):
                yield event
        except VaskError as exc:
            yield {"type": "error", **exc.to_dict()}

    async def complete(self, question: Question, *, ranking: Ranking | None = None) -> Event:
        """The whole answer at once, as the final `done` event (for `vask eval --answers`); a failure,
        such as a missing chat model, raises instead of becoming an event."""
        done: Event = {}
        async for event in self._ask(question, None, ranking):
            if event["type"] == "done":
                done = event
        return done

    async def _ask(
        self, question: Question | Understood, chat_model: str | None, ranking: Ranking | None
    ) -> AsyncIterator[Event]:
        understood = question if isinstance(question, Understood) else await self.understand(question)
        asked = understood.question
        result = await self.searcher.search_question(understood, ranking=ranking)
        hits = await self._with_note_asked_about(asked, result)
        prompt = fit_prompt(
            asked.text,
            hits,
            asked.history,
            asked.about_note,
            context_tokens=self.context_tokens,
            today=asked.today,
            time_range=result.time_range,
            seed_title=result.seed_title,
        )
        sources = [hit.to_dict(n) for n, hit in enumerate(unique_sources(prompt.hits), start=1)]
        yield self._sources_event(result, prompt, sources)
        if not prompt.hits:  # (the sources shown are the ones the model reads)
            yield {"type": "token", "text": DECLINE_MESSAGE}
            yield _done(result, DECLINE_MESSAGE, [], declined=True)
            return
        parts: list[str] = []
        async with contextlib.aclosing(self._answer(prompt, chat_model)) as written:
            async for text in written:
                parts.append(text)
                yield {"type": "token", "text": text}
        answer = "".join(parts).strip()
        yield _done(result, answer, sources, citations=extract_citations(answer, prompt.hits))

    async def _with_note_asked_about(self, asked: Question, result: SearchResult) -> list[Hit]:
        """ "Ask about the current note": its best passages come first, the rest of the vault after.
        (Not when the question asks what connects to it: then its own passages are not the answer.)"""
        if not asked.about_note or result.seed is not None:
            return result.hits
        focus = await self.searcher.search(
            result.query or asked.text,
            top_k=max(2, asked.top_k // 2),
            min_similarity=0.0,
            filters=Filters(paths=(asked.about_note,)),
        )
        seen = {hit.chunk_id for hit in focus.hits}
        return focus.hits + [hit for hit in result.hits if hit.chunk_id not in seen]

    def _sources_event(self, result: SearchResult, prompt: Prompt, sources: list[dict[str, Any]]) -> Event:
        """What was found and how the question was read, before the answer."""
        notices = [result.notice] if result.notice else []
        if prompt.dropped:
            notices.append(
                f"{prompt.dropped} of the weakest passages were left out to fit the chat model's context window "
                f"of {self.context_tokens} tokens (VASK_CHAT_CONTEXT)."
            )
        return {
            "type": "sources",
            "sources": sources,
            "mode": result.mode,
            "time_range": result.time_range.to_dict() if result.time_range else None,
            "scope": result.scope.to_dict() if result.scope else None,
            "connection": result.connection_dict(),
            **({"notice": " ".join(notices)} if notices else {}),
        }

    async def _answer(self, prompt: Prompt, chosen: str | None) -> AsyncGenerator[str, None]:
        """The chat model's answer as it writes it: the client's `chosen` model, else the server's."""
        model = chosen or self.chat_model
        try:
            async for text in self.gateway.chat_stream(
                model,
                prompt.messages,
                # The answer gets the room the prompt left it, no more: Ollama's default is to write
                # until stopped, and a small model that loops would never end.
                options={"temperature": 0.1, "num_ctx": self.context_tokens, "num_predict": ANSWER_TOKENS},
            ):
                yield text
        except ModelMissing as exc:
            if chosen:  # chosen by the client (the plugin's setting), not the server
                exc.hint = (
                    f"Pull it with `ollama pull {model}`, or clear the chat model in the plugin's settings "
                    f"to use the server's default ({self.chat_model})."
                )
            raise


def _done(
    result: SearchResult,
    answer: str,
    sources: list[dict[str, Any]],
    *,
    declined: bool = False,
    citations: list[Citation] | None = None,
) -> Event:
    return {
        "type": "done",
        "answer": answer,
        "citations": [c.to_dict() for c in citations or []],
        "sources": sources,
        "declined": declined,
        "time_range": result.time_range.to_dict() if result.time_range else None,
        "scope": result.scope.to_dict() if result.scope else None,
    }
