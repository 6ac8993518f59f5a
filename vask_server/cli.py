"""The `vask` command: index, ask (and bare `vask "question"`), search, status, serve, token, eval."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import logging
import sys
import time
from collections.abc import Callable, Sequence
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from vask_server import __version__, token_cli
from vask_server.config import SETTINGS, Settings, load_settings
from vask_server.core.citations import location, sources_block, written_on
from vask_server.core.metrics import parse_questions
from vask_server.core.models import Hit
from vask_server.core.progress import SyncProgress, describe_eta
from vask_server.core.retrieve import Filters
from vask_server.core.scope import Scope
from vask_server.core.timeexpr import TimeRange, describe_range, parse_day, parse_now
from vask_server.errors import ConfigError, ModelMissing, OllamaUnavailable, VaskError

if TYPE_CHECKING:
    from vask_server.services.context import Services
    from vask_server.services.search import SearchResult

# The database library takes seconds to import, so services are imported only by the commands that
# need them: `vask index` with nothing changed, `vask token` and `--help` stay instant.

INTERNAL_ERROR = 70  # (sysexits' EX_SOFTWARE: 2 is a clear error of the user's, 130 an interrupt)

COMMANDS = ("index", "ask", "search", "status", "serve", "token", "eval", "doctor", "pause", "resume")
DOCTOR_FOUND_PROBLEMS = 3  # `vask doctor`: a check failed (each is printed with its fix)

# Which settings each command takes as flags: the ones it uses (docs/REFERENCE.md's settings table says
# the same, and a test holds the two together). Every setting can also come from the environment.
_EVERY = ("vault", "index_dir", "log_level")
_OLLAMA = (
    "provider",
    "ollama_host",
    "ollama_headers",
    "openai_base_url",
    "openai_api_key",
    "embed_model",
    "ollama_timeout",
    "ollama_retries",
)
_INDEXING = (
    "chunk_tokens",
    "chunk_max_chars",
    "max_note_bytes",
    "embed_batch_size",
    "embed_concurrency",
    "date_keys",
    "exclude",
    "obsidian_excluded",
    "index_canvas",
    "index_pdf",
    "max_pdf_bytes",
    "pdf_timeout",
    "keyword_tokenizer",
)
_RETRIEVAL = ("top_k", "min_similarity", "decline_sigmas")
_ANSWERS = ("chat_model", "chat_context", "chat_provider", "chat_base_url")
FLAGS: dict[str, tuple[str, ...]] = {
    "index": (*_EVERY, *_OLLAMA, *_INDEXING),
    "ask": (*_EVERY, *_OLLAMA, *_RETRIEVAL, *_ANSWERS),
    "search": (*_EVERY, *_OLLAMA, *_RETRIEVAL),
    "status": (*_EVERY, "embed_model"),
    "serve": tuple(s.name for s in SETTINGS),
    # (what the checks read: the model servers, the vault as indexing scans it, serve's address and TLS)
    "doctor": (
        *_EVERY,
        *_OLLAMA,
        *_ANSWERS,
        "host",
        "port",
        "tls_cert",
        "tls_key",
        "date_keys",
        "exclude",
        "obsidian_excluded",
        "index_canvas",
        "index_pdf",
    ),
    "token": _EVERY,
    "pause": _EVERY,
    "resume": _EVERY,
    # the seed design's index (`--compare`) is built with the indexing settings
    "eval": (*_EVERY, *_OLLAMA, *_INDEXING, *_RETRIEVAL, *_ANSWERS),
}


def _add_setting_flags(parser: argparse.ArgumentParser, names: Sequence[str]) -> None:
    group = parser.add_argument_group("settings (flag, else environment variable, else default)")
    for spec in SETTINGS:
        if spec.name not in names:
            continue
        help_text = f"{spec.help} [env {spec.env}; default {spec.default}]"
        # Values stay strings here: load_settings parses and validates them as it does the
        # environment's, so a bad value gets the same error and hint from either.
        if spec.default is False:
            group.add_argument(
                spec.flag, dest=spec.name, action="store_const", const="true", default=None, help=help_text
            )
        elif isinstance(spec.default, tuple):  # a list: the flag can be repeated
            group.add_argument(spec.flag, dest=spec.name, action="append", default=None, help=help_text)
        else:
            group.add_argument(spec.flag, dest=spec.name, default=None, help=help_text)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="vask",
        description="Ask questions across an Obsidian vault, answered only from your notes.",
        epilog='Bare `vask "question"` is short for `vask ask "question"`.',
    )
    parser.add_argument("--version", action="version", version=f"vask {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("index", help="index the vault (only what changed since the last run)")
    p.add_argument("--full", action="store_true", help="re-read and re-chunk every note (vectors still reused)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    _add_setting_flags(p, FLAGS["index"])

    p = sub.add_parser("ask", help="answer a question from your notes, with sources")
    p.add_argument("question", nargs="+")
    p.add_argument("--json", action="store_true", help="print the event stream as JSON lines")
    _add_filter_flags(p)
    _add_time_flags(p)
    _add_setting_flags(p, FLAGS["ask"])

    p = sub.add_parser("search", help="retrieve passages without asking the chat model")
    p.add_argument("query", nargs="+")
    p.add_argument("--json", action="store_true", help='print {"hits": [...]}')
    p.add_argument(
        "--mode",
        choices=("hybrid", "vector"),
        default="hybrid",
        help="hybrid: keyword (BM25) and vector results fused (default); vector: vector search only",
    )
    _add_filter_flags(p)
    _add_time_flags(p)
    _add_setting_flags(p, FLAGS["search"])

    p = sub.add_parser("status", help="what is indexed, with which model, what failed and why")
    p.add_argument("--json", action="store_true")
    _add_setting_flags(p, FLAGS["status"])

    p = sub.add_parser("serve", help="run the HTTP sidecar for the Obsidian plugin")
    p.add_argument("--no-watch", action="store_true", help="do not watch the vault for changes")
    p.add_argument(
        "--pair-file",
        type=Path,
        default=None,
        help="once listening, write the address and the default device's token to this file (mode 0600) "
        "for the program that started vask (the Obsidian plugin); removed on exit",
    )
    p.add_argument("--pair-nonce", default="", help="with --pair-file: the starter's nonce, written into the file")
    p.add_argument(
        "--stop-with-stdin", action="store_true", help="stop when standard input closes (the starter has gone)"
    )
    _add_setting_flags(p, FLAGS["serve"])

    p = sub.add_parser("pause", help="pause indexing by `vask serve` (a laptop on battery); searches go on")
    _add_setting_flags(p, FLAGS["pause"])
    p = sub.add_parser("resume", help="resume indexing where it stopped")
    _add_setting_flags(p, FLAGS["resume"])

    p = sub.add_parser("token", help="the bearer tokens the plugin needs, one per device: print, add, list, revoke")
    token_cli.add_arguments(p)
    _add_setting_flags(p, FLAGS["token"])

    p = sub.add_parser(
        "doctor", help="check the model servers, models, vault, index, port, TLS and plugin; say how to fix each"
    )
    p.add_argument("--json", action="store_true")
    _add_setting_flags(p, FLAGS["doctor"])

    p = sub.add_parser("eval", help="measure retrieval on a JSON-lines question set")
    p.add_argument("questions", type=Path, help="JSON lines: {id, question, expected: [paths], type}")
    p.add_argument("--json", action="store_true", help="print the full report as JSON")
    p.add_argument("--split", default=None, help="only questions of this split (e.g. dev, heldout, fresh)")
    p.add_argument(
        "--compare",
        action="store_true",
        help="run baseline (seed design: vector only, no structure, top-6, 0.25), vector, hybrid (what ask "
        "does), hybrid-depth10 (ten distinct notes, one passage each: how far down a miss sits), hybrid-rrf "
        "(reciprocal-rank fusion) and hybrid+graph side by side, and hybrid with the previous decline rule "
        "(hybrid-question-decline); all but baseline and hybrid-depth10 retrieve as ask does (--top-k)",
    )
    p.add_argument("--configs", default=None, help="comma-separated presets to run (default: hybrid)")
    p.add_argument(
        "--answers",
        action="store_true",
        help="also ask each question with the chat model, as `vask ask` would (top-k passages), and count "
        "answers that say the notes don't hold it and answers citing a right note (slow: one answer per "
        "question and configuration)",
    )
    p.add_argument(
        "--now",
        type=_now_flag,
        default=None,
        help="the day questions without their own asked_at are asked (default: today); time questions carry one",
    )
    _add_setting_flags(p, FLAGS["eval"])
    return parser


def _day_flag(value: str) -> date:
    try:
        return parse_day(value, "the date")
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _now_flag(value: str) -> date:
    try:
        return parse_now(value, "the moment")
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _add_time_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--since", type=_day_flag, default=None, help="only what was written on or after this ISO date")
    parser.add_argument("--until", type=_day_flag, default=None, help="only what was written on or before this date")
    parser.add_argument(
        "--now",
        type=_now_flag,
        default=None,
        help='when the question is asked, for "last month" (ISO date or date-time; default: now)',
    )
    parser.add_argument("--no-time", action="store_true", help='do not read the time the question names ("last month")')


def _add_filter_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--folder", action="append", default=[], help="only notes in this folder (repeatable)")
    parser.add_argument("--exclude-folder", action="append", default=[], help="leave this folder out")
    parser.add_argument("--tag", action="append", default=[], help="only notes with this tag (repeatable)")
    parser.add_argument(
        "--note",
        default=None,
        help='the note "this note" means in "what connects to this note?" (vault-relative path)',
    )
    parser.add_argument(
        "--no-connect", action="store_true", help='read "what connects to [[X]]" as a question in [[X]], not about X'
    )


def _filters(args: argparse.Namespace) -> Filters | None:
    filters = Filters(
        folders=tuple(args.folder),
        exclude_folders=tuple(args.exclude_folder),
        tags=tuple(args.tag),
        date_from=args.since,
        date_to=args.until,
    )
    if filters.date_from and filters.date_to and filters.date_from > filters.date_to:
        raise ConfigError("--since is after --until.", "Give the earlier date with --since.")
    return None if filters.is_empty() else filters


def _connection_line(connection: dict[str, Any] | None) -> str | None:
    """ "Notes connected to [[Launch Tidepool app]]": the seed of a connection question."""
    if not connection:
        return None
    return f"Notes connected to [[{connection['title']}]] ({connection['seed']})"


def _note_flag(value: str | None) -> str | None:
    """--note: a vault-relative path, as Obsidian writes it."""
    return value.replace("\\", "/").lstrip("/") if value else None


def _range_line(time_range: dict[str, Any] | None) -> str | None:
    """ "Notes from 1 Feb – 28 Feb 2026 ("last month")": what the search was limited to."""
    if not time_range:
        return None
    start, end = time_range.get("from"), time_range.get("to")
    described = describe_range(
        TimeRange(date.fromisoformat(start) if start else None, date.fromisoformat(end) if end else None, "")
    )
    line = f'{described} ("{time_range["text"]}")' if time_range.get("text") else described
    # (a day the calendar lacks: the notice says which real day was read, before the colon's list)
    return f"{time_range['notice']}\n{line}" if time_range.get("notice") else line


def _scope_line(scope: dict[str, list[str]] | None) -> str | None:
    """'Within [[Launch Tidepool app]], #project': what the question's mentions limited it to."""
    if not scope:
        return None
    return "Within " + Scope(tuple(scope["notes"]), tuple(scope["tags"]), tuple(scope["folders"])).describe()


def _settings(args: argparse.Namespace) -> Settings:
    flags = {spec.name: getattr(args, spec.name, None) for spec in SETTINGS}
    # a repeated flag (--exclude A --exclude B) reads as the variable would: "A,B"
    return load_settings(flags={k: ",".join(v) if isinstance(v, list) else v for k, v in flags.items()})


# How many words may follow each command's name for it to be that command; more, and the words are a
# question: `vask status` runs the command, `vask status of my tax return?` asks (docs/REFERENCE.md).
_TOKEN_ACTIONS = ("add", "list", "revoke")


def _is_command(name: str, words: list[str]) -> bool:
    if name in ("ask", "search"):
        return True  # (their words are the question: `vask search tax return` searches for "tax return")
    if name in ("index", "status", "serve", "doctor"):
        return not words
    if name == "token":
        return not words or (words[0] in _TOKEN_ACTIONS and len(words) <= 2)
    if name == "eval":
        return len(words) == 1
    return False


def _flags_taking_values() -> set[str]:
    """Every flag of every command that is followed by a value (`--vault V`), read from the parser."""
    flags: set[str] = set()
    for action in build_parser()._actions:  # (argparse keeps its subcommands' parsers only here)
        if not isinstance(action, argparse._SubParsersAction):
            continue
        for parser in action.choices.values():
            for option in parser._actions:
                if option.option_strings and option.nargs != 0:
                    flags.update(option.option_strings)
    return flags


def normalise_argv(argv: Sequence[str]) -> list[str]:
    """`vask "question"` (and `vask --vault V "question"`) → `vask ask ...`; a question whose first word
    is a command's name is asked unless the words after it are that command's own (`_is_command`); the
    command's name goes first, so flags may come before it."""
    args = list(argv)
    takes_value = _flags_taking_values()
    words: list[str] = []  # the words that are not flags
    first = 0  # where the first of them is
    position = 0
    while position < len(args):
        token = args[position]
        if token in ("-h", "--help", "--version"):
            return args
        if token == "--":
            return ["ask", *args]  # (`vask -- status of my tax return?`: what follows is a question)
        if token.startswith("-"):
            position += 2 if token in takes_value else 1
            continue
        first = position if not words else first
        words.append(token)
        position += 1
    if not words:
        return args
    if words[0] in COMMANDS and _is_command(words[0], words[1:]):
        return [words[0], *args[:first], *args[first + 1 :]]  # (`vask --vault V status` as `vask status --vault V`)
    return ["ask", *args]


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(normalise_argv(sys.argv[1:] if argv is None else argv))
    try:
        settings = _settings(args)
        logging.basicConfig(
            level=settings.log_level.upper(), format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr
        )
        logging.getLogger("httpx").setLevel(logging.WARNING)
        if args.command in ("index", "ask", "search", "status", "serve", "eval", "doctor"):
            from vask_server.adapters.memory import set_process_memory_policy

            set_process_memory_policy()  # (before the database's threads start: they read it once)
        if args.command == "serve":
            from vask_server.web.server import Launch, run_server  # the web layer only when serving

            launch = Launch(args.pair_file, args.pair_nonce, args.stop_with_stdin)
            return int(run_server(settings, watch=not args.no_watch, launch=launch))
        if args.command == "token":
            return token_cli.run(args, settings.resolved_index_dir())
        if args.command in ("pause", "resume"):
            return _pause(settings, paused=args.command == "pause")
        if args.command == "doctor":
            return asyncio.run(_doctor(args, settings))
        return asyncio.run(_run(args, settings))
    except VaskError as exc:
        _print_error(exc)
        return 2
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # a bug: said as one, with its own exit code, never a bare traceback
        logging.getLogger("vask").debug("unexpected error", exc_info=True)
        _print_error(
            VaskError(
                f"vask failed unexpectedly ({type(exc).__name__}: {exc}).",
                "This is a bug in vask: run the command again with --log-level debug for the details, and report it.",
            )
        )
        return INTERNAL_ERROR


def _print_error(exc: VaskError) -> None:
    print(f"error: {exc.message}", file=sys.stderr)
    if exc.hint:
        print(f"hint: {exc.hint}", file=sys.stderr)


async def _run(args: argparse.Namespace, settings: Settings) -> int:
    if args.command == "index" and not args.full and _nothing_changed(settings):
        return 0
    from vask_server.services.context import open_services

    async with open_services(settings) as services:
        handler = {
            "index": _index,
            "ask": _ask,
            "search": _search,
            "status": _status,
            "eval": _eval,
        }[args.command]
        return await handler(args, services)


def _pause(settings: Settings, *, paused: bool) -> int:
    """Kept in the index's index.json, where a running `vask serve` hears it within a second."""
    from vask_server.adapters.meta import read_meta, write_meta

    index_dir = settings.resolved_index_dir()
    if not (index_dir / "index.json").exists():
        raise VaskError(f"There is no index in {index_dir} to pause or resume.", "Check --vault / --index-dir.")
    meta = read_meta(index_dir)
    if paused:
        meta.extra["paused"] = True
    else:
        meta.extra.pop("paused", None)
    write_meta(index_dir, meta)
    if paused:
        print("indexing paused: `vask serve` stops after its current batch and keeps what it embedded.")
        print("Searches go on. `vask resume` goes on where it stopped (also after a restart).")
    else:
        print("indexing resumed.")
    return 0


class ProgressBar:
    """Notes done, percent and time left; a bar on a terminal, a line every 10% elsewhere.
    `estimate`: the sync's progress (core/progress.py), which measures by bytes and knows the pace."""

    def __init__(
        self, stream: TextIO, enabled: bool = True, estimate: Callable[[], SyncProgress | None] | None = None
    ) -> None:
        self.stream = stream
        self.enabled = enabled
        self.estimate = estimate
        self.started = time.perf_counter()
        self.tty = stream.isatty()
        self._last_decile = -1

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled or total == 0:
            return
        elapsed = max(time.perf_counter() - self.started, 1e-6)
        rate = done / elapsed
        progress = self.estimate() if self.estimate is not None else None
        fraction = progress.fraction() if progress is not None else done / total
        left = describe_eta(progress.eta_seconds()) if progress is not None and done < total else ""
        tail = f"  {left}" if left else ""
        if self.tty:
            width = 30
            filled = int(width * fraction)
            bar = "#" * filled + "." * (width - filled)
            self.stream.write(
                f"\rindexing [{bar}] {100 * fraction:3.0f}%  {done}/{total} notes  {rate:.1f} notes/s{tail}\x1b[K"
            )
            if done == total:
                self.stream.write("\n")
            self.stream.flush()
        else:
            decile = int(10 * fraction)
            if decile != self._last_decile:
                self._last_decile = decile
                line = f"indexing: {100 * fraction:.0f}%, {done}/{total} notes ({rate:.1f} notes/s){tail}"
                print(line, file=self.stream)


def _nothing_changed(settings: Settings) -> bool:
    """The fast path: a directory scan that matches the last complete sync needs no database."""
    from vask_server.adapters.meta import read_meta
    from vask_server.adapters.snapshot import index_is_current
    from vask_server.adapters.vault import Vault
    from vask_server.services.options import excluder_for, index_options, known_keyword_terms

    started = time.perf_counter()
    vault_root = settings.require_vault()
    index_dir = settings.resolved_index_dir()
    meta = read_meta(index_dir)
    if not meta.active or meta.active.get("model") != settings.embed_model:
        return False  # (before the scan: a changed model needs no look at the files)
    vault = Vault(vault_root)
    terms = known_keyword_terms(settings.keyword_tokenizer, meta.active)
    if terms is None or meta.active.get("not_english") is None:
        return False  # (the notes are read to choose how keyword text is cut, and to tell their language)
    options = dataclasses.replace(index_options(settings, vault), keyword_terms=terms)
    scan = vault.scan(excluder_for(options, vault), options.file_types)
    fingerprint = options.fingerprint()
    if not index_is_current(index_dir, meta, settings.embed_model, fingerprint, scan.notes):
        return False
    print(f"indexed {vault_root} with {meta.active['model']} ({meta.active['dimension']}-d) into {index_dir}")
    print(
        f"{len(scan.notes)} notes scanned, 0 changed, 0 deleted; chunks: 0 embedded, 0 reused, 0 removed; "
        f"nothing to do; {time.perf_counter() - started:.2f} s"
    )
    for path, reason in sorted(scan.problems.items()):
        print(f"  failed  {path}: {reason}")
    for path, reason in sorted(scan.skipped.items()):
        print(f"  skipped {path}: {reason}")
    return True


async def _index(args: argparse.Namespace, services: Services) -> int:
    progress = ProgressBar(sys.stderr, enabled=not args.quiet, estimate=lambda: services.indexer.progress)
    result = await services.indexer.sync(force=args.full, progress=progress)
    await services.store.wait_background()  # a large index's ANN index, before this process exits
    print(f"indexed {services.vault_root} with {result.model} ({result.dimension}-d) into {services.index_dir}")
    print(result.summary())
    for path, reason in result.failed:
        print(f"  failed  {path}: {reason}")
    for path, reason in result.skipped:
        print(f"  skipped {path}: {reason}")
    for warning in result.warnings:
        print(f"  warning {warning}")
    return 0


async def _ask(args: argparse.Namespace, services: Services) -> int:
    from vask_server.services.qa import AskRequest

    settings = services.settings
    request = AskRequest(
        question=" ".join(args.question),
        top_k=settings.top_k,
        min_similarity=settings.min_similarity,
        filters=_filters(args),
        today=args.now,
        read_time=not args.no_time,
        open_note=_note_flag(args.note),
        connect=not args.no_connect,
    )
    sources: list[dict[str, Any]] = []
    status = 0
    async for event in services.qa.ask(request):
        if args.json:
            print(json.dumps(event, ensure_ascii=False), flush=True)
            status = 2 if event["type"] == "error" else status
            continue
        kind = event["type"]
        if kind == "sources":
            sources = event["sources"]
            if event.get("notice"):
                print(f"note: {event['notice']}", file=sys.stderr)
            if line := _scope_line(event.get("scope")):
                print(f"{line}:", file=sys.stderr)
            if line := _range_line(event.get("time_range")):
                print(f"{line}:", file=sys.stderr)
            if line := _connection_line(event.get("connection")):
                print(f"{line}:", file=sys.stderr)
        elif kind == "token":
            sys.stdout.write(event["text"])
            sys.stdout.flush()
        elif kind == "done":
            print()
            if sources:
                print()
                print(sources_block([_hit_from_source(s) for s in sources]))
        elif kind == "error":
            print()
            print(f"error: {event['message']}", file=sys.stderr)
            if event.get("hint"):
                print(f"hint: {event['hint']}", file=sys.stderr)
            status = 2
    return status


def _hit_from_source(source: dict[str, Any]) -> Hit:
    return Hit(
        chunk_id="",
        path=source["path"],
        title=source["title"],
        heading=source["heading"],
        anchor=source["anchor"],
        line_start=source["line_start"],
        line_end=source["line_end"],
        score=source["score"],
        text="",
        date=date.fromisoformat(source["date"]) if source.get("date") else None,
        date_end=date.fromisoformat(source["date_end"]) if source.get("date_end") else None,
        date_source=source.get("date_source"),
        page=source.get("page"),
    )


async def _search(args: argparse.Namespace, services: Services) -> int:
    settings = services.settings
    config = dataclasses.replace(services.searcher.config, mode=args.mode)  # the settings' decline rule too
    result = await services.searcher.search_question(
        " ".join(args.query),
        today=args.now or date.today(),
        top_k=settings.top_k,
        min_similarity=settings.min_similarity,
        filters=_filters(args),
        read_time=not args.no_time,
        config=config,
        current_note=_note_flag(args.note),
        connect=not args.no_connect,
    )
    if result.notice:
        print(f"note: {result.notice}", file=sys.stderr)
    time_range = result.time_range.to_dict() if result.time_range else None
    scope = result.scope.to_dict() if result.scope else None
    if args.json:
        hits = [{**hit.to_dict(), "text": hit.text} for hit in result.hits]
        payload = {
            "hits": hits,
            "mode": result.mode,
            "time_range": time_range,
            "scope": scope,
            "order": result.order,
            "connection": result.connection_dict(),
        }
        print(json.dumps(payload, ensure_ascii=False, indent=2))
        return 0
    if line := _scope_line(scope):
        print(f"{line}:")
    if line := _range_line(time_range):
        print(f"{line}:")
    if result.seed is not None:
        _print_connections(result)
        return 0
    if not result.hits:
        print("Nothing in your notes comes close enough to this (VASK_DECLINE_SIGMAS, VASK_MIN_SIMILARITY).")
    elif result.order:
        print(f"The closest matches by date, {result.order} first; then the rest by score:")
    for n, hit in enumerate(result.hits, start=1):
        _print_hit(n, hit)
    return 0


def _print_hit(n: int, hit: Hit, also: str = "") -> None:
    when = f"{written_on(hit)}, " if hit.date else ""
    print(f"{n}. {hit.score:.3f}  [[{hit.link}]]  ({when}{location(hit)}{also})")
    snippet = " ".join(hit.text.split())
    print(f"   {snippet[:200]}{'…' if len(snippet) > 200 else ''}")


def _print_connections(result: SearchResult) -> None:
    """The notes connected to the seed: those not linked yet first (what a person most wants to see),
    then those already linked; each with the passage that connects and the seed's part it is near."""
    print(f"{_connection_line(result.connection_dict())}:")
    if not result.hits:
        print("No other note connects to it within what the question asked.")
        return
    groups = (
        ("Not linked yet", [h for h in result.hits if h.linked == "unlinked"]),
        ("Already linked", [h for h in result.hits if h.linked != "unlinked"]),
    )
    n = 0
    for title, hits in groups:
        if hits:
            print(f"\n{title}:")
        for hit in hits:
            n += 1
            how = f"; {hit.linked}" if hit.linked != "unlinked" else ""
            _print_hit(n, hit, f"{how}; near its part “{hit.near}”" if hit.near else how)


async def _status(args: argparse.Namespace, services: Services) -> int:
    from vask_server.services.context import index_status

    status = await index_status(services, check=True)
    if args.json:
        print(json.dumps(status, ensure_ascii=False, indent=2))
        return 0
    if status.get("paused"):
        print("indexing is paused (`vask resume` goes on where it stopped).")
    if not status["model"]:
        print(f"{status['vault']} is not indexed yet (index folder {status['index_dir']}).")
        if status["building"]:
            print("Its first index is being built; meanwhile searches find what is embedded so far.")
        else:
            print("Run `vask index` to build it.")
        return 0
    print(f"vault:      {status['vault']}")
    print(f"index:      {status['index_dir']}")
    print(f"model:      {status['model']} ({status['dimension']}-d)")
    if status["configured_model"] != status["model"]:
        print(f"configured: {status['configured_model']} (run `vask index` to switch)")
    print(f"notes:      {status['notes']}  chunks: {status['chunks']}  last sync: {status['last_sync']}")
    if status["language"]["advice"]:
        print(f"language:   {status['language']['advice']}")
    embed, chat = status["servers"]["embed"], status["servers"]["chat"]
    key = f"; API key {status['servers']['api_key']}" if "api_key" in status["servers"] else ""
    answers = "the same" if chat == embed else f"{chat['provider']} at {chat['url']}"
    print(f"servers:    embeddings {embed['provider']} at {embed['url']}; answers {answers}{key}")
    excluded = status.get("excluded") or {}
    if excluded:
        rules = "; ".join(f"{count} by {rule}" for rule, count in excluded.items())
        print(f"excluded:   {sum(excluded.values())} notes ({rules})")
    for item in status["failed"]:
        print(f"  failed  {item['path']}: {item['reason']}")
    for item in status["skipped"]:
        print(f"  skipped {item['path']}: {item['reason']}")
    for problem in status["store_errors"]:
        print(f"  error   {problem['message']}. {problem['hint']}")
    return 0


async def _eval(args: argparse.Namespace, services: Services) -> int:
    from vask_server.services.evaluate import (
        COMPARE_CONFIGS,
        DEFAULT_CONFIGS,
        PRESETS,
        TIME_CONFIGS,
        evaluate,
        preset,
        report,
        seed_index,
    )
    from vask_server.services.qa import QAService

    path: Path = args.questions
    try:
        lines = path.read_text("utf-8").splitlines()
    except OSError as exc:
        raise ConfigError(f"Cannot read {path}: {exc.strerror}", "Check the path of the questions file.") from None
    questions = parse_questions(lines, str(path))
    if args.split:
        questions = [q for q in questions if q.split == args.split]
    names = COMPARE_CONFIGS if args.compare else DEFAULT_CONFIGS
    if args.compare and any(q.range is not None for q in questions):
        names = (*names, *(n for n in TIME_CONFIGS if n not in names))  # time read and not, side by side
    if args.configs:
        names = tuple(n.strip() for n in args.configs.split(",") if n.strip())
    unknown = [n for n in names if n not in PRESETS]
    if unknown:
        raise ConfigError(f"Unknown eval config(s): {', '.join(unknown)}", f"Choose from: {', '.join(PRESETS)}.")
    settings = services.settings
    configs = [preset(name, settings.min_similarity, settings.decline_sigmas, settings.top_k) for name in names]
    chat_model = settings.chat_model if args.answers else None
    if chat_model:  # a missing model stops the run here, not after the baseline index is built
        reachable, missing = await services.chat_gateway.probe([chat_model])
        if not reachable:
            raise OllamaUnavailable(services.chat_gateway.host, server=services.chat_gateway.server)
        if missing:
            raise ModelMissing(chat_model, services.chat_gateway.host, server=services.chat_gateway.server)
    reports = []
    for config in configs:
        async with contextlib.AsyncExitStack() as stack:
            searcher = await stack.enter_async_context(seed_index(services)) if config.seed_index else services.searcher
            answerer = (
                QAService(searcher, services.chat_gateway, chat_model, settings.chat_context) if chat_model else None
            )
            outcomes = await evaluate(
                searcher, questions, config, answerer=answerer, answer_top_k=settings.top_k, today=args.now
            )
        reports.append(report(config, outcomes, chat_model=chat_model))
    if args.json:
        print(json.dumps({"questions": str(path), "reports": reports}, indent=2, ensure_ascii=False))
    else:
        print(render_eval(reports))
    return 0


async def _doctor(args: argparse.Namespace, settings: Settings) -> int:
    from vask_server.services.doctor import healthy, report, run_checks

    checks = await run_checks(settings)
    ok = healthy(checks)
    if args.json:
        print(json.dumps(report(checks), ensure_ascii=False, indent=2))
    else:
        for check in checks:
            mark = "ok " if check.ok else ("!! " if check.required else "-- ")
            print(f"{mark} {check.name}: {check.detail}")
            if not check.ok and check.fix:
                print(f"    fix: {check.fix}")
        print("All is well." if ok else "Fix the lines marked !! above, then run `vask doctor` again.")
    return 0 if ok else DOCTOR_FOUND_PROBLEMS


def render_eval(reports: list[dict[str, Any]]) -> str:
    lines: list[str] = []
    width = max([14, *(len(rep["config"]) + 2 for rep in reports)])
    header = (
        f"{'config':<{width}}{'n':>4}{'hit@1':>8}{'hit@3':>8}{'hit@6':>8}{'hit@10':>8}{'MRR@10':>8}"
        f"{'absent declined':>17}{'answerable declined':>21}"
    )
    lines.append(header)
    for rep in reports:
        o = rep["overall"]
        lines.append(
            f"{rep['config']:<{width}}{o['count']:>4}{o.get('hit@1', 0):>8.3f}{o.get('hit@3', 0):>8.3f}"
            f"{o.get('hit@6', 0):>8.3f}{o.get('hit@10', 0):>8.3f}{o['mrr@10']:>8.3f}"
            f"{o['absent_declined']:>12}/{o['absent']:<4}{o['answerable_declined']:>17}/{o['count']:<3}"
        )
    answered = [rep for rep in reports if "answers" in rep["overall"]]
    if answered:
        lines.append("")
        lines.append(
            f'answers by {answered[0]["settings"]["chat_model"]}: "not in your notes" from the search or the model'
        )
        lines.append(f"{'config':<{width}}{'absent declined':>17}{'answerable declined':>21}{'cite a right note':>19}")
        for rep in answered:
            o, a = rep["overall"], rep["overall"]["answers"]
            lines.append(
                f"{rep['config']:<{width}}{a['absent_declined']:>12}/{o['absent']:<4}"
                f"{a['answerable_declined']:>17}/{o['count']:<3}{a['answerable_citing_expected']:>15}/{o['count']:<3}"
            )
    timed = [rep for rep in reports if "time" in rep["overall"]]
    if timed:
        lines.append("")
        lines.append("time questions: range read as meant; share of the first 6 notes dated in the range")
        lines.append(f"{'config':<{width}}{'n':>4}{'range read':>12}{'in-range@6':>12}{'shown out of range':>20}")
        for rep in timed:
            t = rep["overall"]["time"]
            lines.append(
                f"{rep['config']:<{width}}{t['questions']:>4}{t['range_understood']:>12.3f}"
                f"{t['in_range_precision@6']:>12.3f}{t['out_of_range_shown']:>20.3f}"
            )
            if t["misread"]:
                lines.append(f"  range read otherwise: {', '.join(t['misread'])}")
    paged = [rep for rep in reports if "page@6" in rep["overall"]]
    if paged:
        lines.append("")
        lines.append("questions answered on a PDF page: the PDF in the first 6, its best passage on that page")
        for rep in paged:
            o = rep["overall"]
            lines.append(f"{rep['config']:<{width}}{o['page_questions']:>4}  page@6 {o['page@6']:.3f}")
    for split in sorted({name for rep in reports for name in rep["by_split"]}):
        lines.append("")
        lines.append(f"{split} split:")
        for rep in reports:
            o = rep["by_split"].get(split)
            if o:
                lines.append(
                    f"  {rep['config']:<{width}}{o['count']:>4}  hit@1 {o.get('hit@1', 0):.3f}"
                    f"  hit@6 {o.get('hit@6', 0):.3f}"
                    f"  MRR@10 {o['mrr@10']:.3f}  absent declined {o['absent_declined']}/{o['absent']}"
                    f"  answerable declined {o['answerable_declined']}"
                )
    for rep in reports:
        lines.append("")
        lines.append(f"by type ({rep['config']}):")
        for name, o in rep["by_type"].items():
            if o["count"]:
                lines.append(
                    f"  {name:<12}{o['count']:>4}  hit@1 {o.get('hit@1', 0):.2f}  hit@6 {o.get('hit@6', 0):.2f}"
                    f"  MRR {o['mrr@10']:.2f}"
                )
            else:
                lines.append(f"  {name:<12}{o['absent']:>4}  declined {o['absent_declined']}/{o['absent']}")
        lines.append(f"failures ({rep['config']}):")
        for failure in rep["failures"]:
            lines.append(f"  {failure['id']} [{failure['type']}] {failure['problem']}: {failure['question']}")
            if failure.get("expected"):
                lines.append(f"      expected {failure['expected']}")
            lines.append(f"      got      {failure['returned']}")
            if "answer" in failure:
                lines.append(f"      answer   {failure['answer']!r}")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
