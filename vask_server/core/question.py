"""A question as asked → what to search for and within which limits: one place, for the command line,
the HTTP API and so the plugin alike.

The scope it names first ("in [[Project X]], …", `#tag`, `path:Folder`: core/scope.py), then the
time ("…last month", "in March") in what is left; the dates a caller gives explicitly (`--since`,
`filters.date_from`) take precedence over the question's.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date

from vask_server.core.connect import ConnectionAsk, find_connection
from vask_server.core.links import note_name
from vask_server.core.retrieve import Filters
from vask_server.core.scope import Directory, Mention, Scope, Unmatched, find_mentions, resolve
from vask_server.core.timeexpr import TimeRange, read_time


@dataclass(frozen=True)
class Understood:
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


def understand(
    question: str,
    *,
    today: date,
    filters: Filters | None = None,
    read_time_words: bool = True,
    directory: Directory | None = None,
    current_note: str | None = None,
    read_connection: bool = True,
) -> Understood:
    """`question` with its scope resolved in `directory` (what the index holds; None: mentions are
    left in the text, as before an index exists) and its time read against `today` (unless
    `read_time_words` is off: the user asked to search without it), merged with the caller's
    `filters`. A question about what connects to a note names a seed instead of a scope: the
    `[[Note]]` after the connection words, or `current_note` for "this note". Without a
    `current_note`, "this note" names none: the question is read as written, and `notice` says so."""
    given = filters or Filters()
    connection = find_connection(question) if read_connection else None
    seed: str | None = None
    seed_unmatched: list[Unmatched] = []
    notice = None
    if connection is not None and connection.open_note and current_note is None:
        notice = no_open_note(connection)
        connection = None
    if connection is not None:
        question = connection.text
        if connection.seed_name is None:
            seed = current_note
        elif directory is not None:
            found, seed_unmatched = resolve(
                [Mention("note", connection.seed_mention or "", connection.seed_name)], directory
            )
            seed = _one_note(found.notes, connection.seed_name)
    text, scope = question, None
    unmatched: tuple[Unmatched, ...] = tuple(seed_unmatched)
    mentions, without = find_mentions(question) if directory is not None else ([], question)
    if mentions and directory is not None:
        found, missing = resolve(mentions, directory)
        # "summarize [[Project X]]" leaves a word to search; "[[Project X]]" alone leaves nothing,
        # so its names are searched (within the same scope).
        text = without if any(ch.isalnum() for ch in without) else " ".join(m.value for m in mentions)
        scope = found if not found.is_empty() else None
        unmatched = (*unmatched, *missing)
        given = replace(given, scope=scope)
    understood = _with_time(text, given, today, read_time_words)
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


def _with_time(question: str, given: Filters, today: date, read_time_words: bool) -> Understood:
    if given.dated:
        return Understood(question, given, TimeRange(given.date_from, given.date_to, ""))
    time = read_time(question, today) if read_time_words else None
    if time is None:
        return Understood(question, given)
    dated = given
    if time.range is not None:
        dated = replace(given, date_from=time.range.start, date_to=time.range.end)
    return Understood(time.text or question, dated, time.range, time.order, time.recent)
