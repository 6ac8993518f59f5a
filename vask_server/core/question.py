"""A question as asked → what to search for and within which limits: one place, for the command line,
the HTTP API and so the plugin alike.

`Question` is the question whole, as its asker put it: each door (the HTTP API, the command line,
`vask eval`) builds one and hands it on; nothing below re-lists its parts. `understand` reads it: the
scope it names first ("in [[Project X]], …", `#tag`, `path:Folder`: core/scope.py), then the time
("…last month", "in March") in what is left; the dates a caller gives explicitly (`--since`,
`filters.date_from`) take precedence over the question's. A follow-up is read with the question
before it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass, replace
from datetime import date
from typing import Literal

from vask_server.core.connect import ConnectionAsk, find_connection
from vask_server.core.links import note_name
from vask_server.core.retrieve import Filters
from vask_server.core.scope import Directory, Mention, Scope, Unmatched, find_mentions, resolve
from vask_server.core.time.expr import TimeRange, read_time

Mode = Literal["vector", "hybrid"]
Turn = Mapping[str, str]  # {"role": "user" | "assistant", "content": …}


@dataclass(frozen=True)
class Question:
    """A question as it was asked, with everything that says how to search for it and answer it.

    - `text`: the words asked, as written (its [[Note]] mentions and time words included).
    - `today`: the asker's day: what "last month" and "recently" are read against.
    - `top_k`: how many passages to return, at most.
    - `min_similarity`: the cosine below which a passage is not shown (unless keywords vouch for it).
    - `filters`: the limits the caller set explicitly (folders, tags, paths, dates), beside those the
      question names; its dates take precedence over the question's time words.
    - `read_time`: read the time the words name; off, every date is searched ("ask again without it").
    - `connect`: read "what connects to [[X]] / this note?" as asking for X's connections; off, the
      question is searched as written, [[X]] a scope like any other (the chip's "search as asked").
    - `history`: the conversation before it, oldest first: a follow-up ("and in March?") is searched
      together with the `previous` question, and an answer sees the recent turns.
    - `open_note`: the note open in Obsidian, what "this note" means; it limits and orders nothing else.
    - `about_note`: the note the question is asked about ("ask about this note"): its passages come
      first among an answer's sources. The note in view, so "this note" too when none is said to be open.
    - `mode`: how to search, "vector" or "hybrid" (vector and keyword lists fused); None: the searcher's own.
    """

    text: str
    _: KW_ONLY
    today: date
    top_k: int
    min_similarity: float
    filters: Filters | None = None
    read_time: bool = True
    connect: bool = True
    history: tuple[Turn, ...] = ()
    open_note: str | None = None
    about_note: str | None = None
    mode: Mode | None = None

    @property
    def previous(self) -> str | None:
        """The last question the user asked before this one, if any."""
        asked = [turn["content"] for turn in self.history if turn.get("role") == "user" and turn.get("content")]
        return asked[-1] if asked else None

    @property
    def this_note(self) -> str | None:
        """The note "this note" means: the one open, else the one asked about."""
        return self.open_note or self.about_note


@dataclass(frozen=True)
class Understood:
    """A question as read (`understand`): what to search for, within which limits."""

    question: Question  # as it was asked
    text: str  # what is embedded and searched: the question without the words that set its limits
    filters: Filters
    time_range: TimeRange | None = None  # what the question (or the caller) limited the dates to
    order: str | None = None  # "latest" or "earliest": "when did I last/first…"
    recent: bool = False  # "recently": a window that may be widened when it holds nothing
    scope: Scope | None = None  # the notes, tags and folders the question named, as the index holds them
    unmatched: tuple[Unmatched, ...] = ()  # mentions that name nothing in the index (the caller says so)
    # "what connects to [[X]]?" (core/connect.py): the seed note whose connections are asked for, and
    # the words that asked; the filters then apply to the connected notes, never to the seed.
    connection: ConnectionAsk | None = None
    seed: str | None = None  # the seed's path
    notice: str | None = None  # what the caller should be told of how it was read ("this" with no note open)


def understand(question: Question, directory: Directory | None = None) -> Understood:
    """`question` with its scope resolved in `directory` (what the index holds; None: mentions are
    left in the text, as before an index exists) and its time read against its `today` (unless
    `read_time` is off), merged with the caller's `filters`. A question about what connects to a note
    names a seed instead of a scope: the `[[Note]]` after the connection words, or for "this note" its
    `this_note`; with none, the question is read as written, and `notice` says so.

    A follow-up is searched with the question before it, within its own time and scope or else the
    previous one's ("and in March?", "what else about it?"). A previous mention that no longer
    resolves (its note was deleted since) limits nothing: only the question's own are `unmatched`."""
    own = _read(question, directory)
    if question.previous is None:
        return own
    # (the question before, read as it was written then: no note known to be open)
    before = replace(question, text=question.previous, history=(), open_note=None, about_note=None, connect=True)
    prior = _read(before, directory)
    timed = own if own.time_range or own.order else prior
    scope = own.scope or prior.scope
    return replace(
        timed,
        question=question,
        text=f"{prior.text}\n{own.text}",
        scope=scope,
        filters=replace(timed.filters, scope=scope),
        unmatched=own.unmatched,
    )


def _read(question: Question, directory: Directory | None) -> Understood:
    """One question's words read: its connection, scope and time."""
    given = question.filters or Filters()
    text = question.text
    connection = find_connection(text) if question.connect else None
    seed: str | None = None
    seed_unmatched: list[Unmatched] = []
    notice = None
    if connection is not None and connection.open_note and question.this_note is None:
        notice = no_open_note(connection)
        connection = None
    if connection is not None:
        text = connection.text
        if connection.seed_name is None:
            seed = question.this_note
        elif directory is not None:
            found, seed_unmatched = resolve(
                [Mention("note", connection.seed_mention or "", connection.seed_name)], directory
            )
            seed = _one_note(found.notes, connection.seed_name)
    scope = None
    unmatched: tuple[Unmatched, ...] = tuple(seed_unmatched)
    mentions, without = find_mentions(text) if directory is not None else ([], text)
    if mentions and directory is not None:
        found, missing = resolve(mentions, directory)
        # "summarize [[Project X]]" leaves a word to search; "[[Project X]]" alone leaves nothing,
        # so its names are searched (within the same scope).
        text = without if any(ch.isalnum() for ch in without) else " ".join(m.value for m in mentions)
        scope = found if not found.is_empty() else None
        unmatched = (*unmatched, *missing)
        given = replace(given, scope=scope)
    understood = _with_time(question, text, given)
    return replace(understood, scope=scope, unmatched=unmatched, connection=connection, seed=seed, notice=notice)


def no_open_note(connection: ConnectionAsk) -> str:
    """What to say when "what connects to this note?" is asked with no note open."""
    return (
        f"“{connection.said}” would ask what connects to the note you have open, but no note was open, so the "
        "question was searched as written, in all your notes. For a note's connections, open it and ask "
        "again, or name it: [[Note name]] (--note PATH on the command line)."
    )


def _one_note(paths: tuple[str, ...], name: str) -> str | None:
    """The note a link names when several answer to its name: as Obsidian resolves a link, a note whose
    file name it is before one with it as a title or alias, then the shortest path."""
    if not paths:
        return None
    wanted = name.lower().removesuffix(".md")

    def rank(path: str) -> tuple[bool, int, str]:
        return (note_name(path).lower() != wanted and path.lower().removesuffix(".md") != wanted, len(path), path)

    return min(paths, key=rank)


def _with_time(question: Question, text: str, given: Filters) -> Understood:
    if given.dated:
        return Understood(question, text, given, TimeRange(given.date_from, given.date_to, ""))
    time = read_time(text, question.today) if question.read_time else None
    if time is None:
        return Understood(question, text, given)
    dated = given
    if time.range is not None:
        dated = replace(given, date_from=time.range.start, date_to=time.range.end)
    return Understood(question, time.text or text, dated, time.range, time.order, time.recent)
