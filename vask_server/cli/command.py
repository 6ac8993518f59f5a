"""The `vask` command: index, ask (and bare `vask "question"`), search, status, serve, mcp, token, eval,
doctor, pause, resume, proposals. This module builds the parser, reads the settings and runs the command
asked for; each command's own work and printing is in its module (ask_cli, index_cli, eval_cli,
token_cli, proposals_cli), each imported only by its command where it is heavy."""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import logging
import sys
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from vask_server import __version__
from vask_server.cli import proposals as proposals_cli
from vask_server.cli import token as token_cli
from vask_server.config import SETTINGS, Settings, load_settings
from vask_server.core.time.ranges import parse_day, parse_now
from vask_server.errors import VaskError

if TYPE_CHECKING:
    # what add_subparsers returns: private in argparse, named so by typeshed, and not subscriptable at run time
    Subparsers = argparse._SubParsersAction[argparse.ArgumentParser]

# The database library takes seconds to import, so services are imported only by the commands that
# need them: `vask index` with nothing changed, `vask token` and `--help` stay instant. The commands'
# own modules too (reading time words compiles a grammar): `vask mcp` answers an agent's handshake sooner.

INTERNAL_ERROR = 70  # (sysexits' EX_SOFTWARE: 2 is a clear error of the user's, 130 an interrupt)

COMMANDS = (
    "index",
    "ask",
    "search",
    "status",
    "serve",
    "mcp",
    "token",
    "eval",
    "doctor",
    "pause",
    "resume",
    "proposals",
)
DOCTOR_FOUND_PROBLEMS = 3  # `vask doctor`: a check failed, something stops vask (each printed with its fix)

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
    "query_prefix",
    "document_prefix",
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
_ANSWERS = ("chat_model", "chat_context", "chat_provider", "chat_base_url", "chat_api_key")
FLAGS: dict[str, tuple[str, ...]] = {
    "index": (*_EVERY, *_OLLAMA, *_INDEXING),
    "ask": (*_EVERY, *_OLLAMA, *_RETRIEVAL, *_ANSWERS),
    "search": (*_EVERY, *_OLLAMA, *_RETRIEVAL),
    "status": (*_EVERY, "embed_model", "query_prefix", "document_prefix"),
    "serve": tuple(s.name for s in SETTINGS),
    # (a reader of the index: the query's model server and ranking, and the rules that keep notes out)
    "mcp": (*_EVERY, *_OLLAMA, *_RETRIEVAL, "exclude", "obsidian_excluded", "max_note_bytes"),
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
    # (which notes may be changed: the exclusions, and how large a note may be)
    "proposals": (*_EVERY, "exclude", "obsidian_excluded", "max_note_bytes"),
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
        # (argparse formats help with %: a literal one, as in %LOCALAPPDATA%, is written %%)
        help_text = f"{spec.help} [env {spec.env}; default {spec.default}]".replace("%", "%%")
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
    _add_query_commands(sub)
    _add_server_commands(sub)
    _add_eval_command(sub)
    return parser


def _add_query_commands(sub: Subparsers) -> None:
    """The commands a person runs on the vault: index, ask, search, status."""
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


def _add_server_commands(sub: Subparsers) -> None:
    """The commands for the server and what it keeps: serve, mcp, pause, resume, token, proposals, doctor."""
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

    p = sub.add_parser(
        "mcp",
        help="the MCP server over stdio, for agents (Claude, Cursor, VS Code, LM Studio): searches and reads "
        "the notes from the index as it stands, read-only (docs/MCP.md)",
    )
    _add_setting_flags(p, FLAGS["mcp"])

    p = sub.add_parser("pause", help="pause indexing by `vask serve` (a laptop on battery); searches go on")
    _add_setting_flags(p, FLAGS["pause"])
    p = sub.add_parser("resume", help="resume indexing where it stopped")
    _add_setting_flags(p, FLAGS["resume"])

    p = sub.add_parser("token", help="the bearer tokens the plugin needs, one per device: print, add, list, revoke")
    token_cli.add_arguments(p)
    _add_setting_flags(p, FLAGS["token"])

    p = sub.add_parser(
        "proposals", help="proposed changes to notes: list, show one's diff, apply, reject, undo (as in the plugin)"
    )
    proposals_cli.add_arguments(p)
    _add_setting_flags(p, FLAGS["proposals"])

    p = sub.add_parser(
        "doctor", help="check the model servers, models, vault, index, port, TLS and plugin; say how to fix each"
    )
    p.add_argument("--json", action="store_true")
    _add_setting_flags(p, FLAGS["doctor"])


def _add_eval_command(sub: Subparsers) -> None:
    """`vask eval`: retrieval measured on a question set."""
    p = sub.add_parser("eval", help="measure retrieval on a JSON-lines question set")
    p.add_argument("questions", type=Path, help="JSON lines: {id, question, expected: [paths], type}")
    p.add_argument("--json", action="store_true", help="print the full report as JSON")
    p.add_argument("--split", default=None, help="only the questions whose split field is this value")
    p.add_argument(
        "--compare",
        action="store_true",
        help="run baseline (seed design: vector only, no structure, top-6, 0.25), vector, hybrid (what ask "
        "does), hybrid-depth10 (ten distinct notes, one passage each: how far down a miss sits), hybrid-raw-cosines "
        "(the model's cosines fused as they come, not moved onto the fusion's scale), hybrid-rrf "
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


def _settings(args: argparse.Namespace) -> Settings:
    flags = {spec.name: getattr(args, spec.name, None) for spec in SETTINGS}
    # a repeated flag (--exclude A --exclude B) reads as the variable would: "A,B"
    return load_settings(flags={k: ",".join(v) if isinstance(v, list) else v for k, v in flags.items()})


# How many words may follow each command's name for it to be that command; more, and the words are a
# question: `vask status` runs the command, `vask status of my tax return?` asks (docs/REFERENCE.md).
_TOKEN_ACTIONS = token_cli.ACTIONS


def _is_command(name: str, words: list[str]) -> bool:
    if name in ("ask", "search"):
        return True  # (their words are the question: `vask search tax return` searches for "tax return")
    if name in ("index", "status", "serve", "mcp", "doctor", "pause", "resume"):
        return not words
    if name == "token":
        return not words or (words[0] in _TOKEN_ACTIONS and len(words) <= 2)
    if name == "eval":
        return len(words) == 1
    if name == "proposals":
        return not words or words[0] in proposals_cli.ACTIONS
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


def _never_stopped_by_a_character() -> None:
    """A character the output's encoding lacks is written escaped instead of stopping the command: on
    Windows a pipe (the plugin's, or `> file`) is in the ANSI code page, where a vault's Chinese, Greek
    or emoji names are not, and `vask serve` would stop at the line that names the vault."""
    for stream in (sys.stdout, sys.stderr):
        encoding = (getattr(stream, "encoding", None) or "").lower().replace("-", "").replace("_", "")
        if encoding not in ("utf8", "utf8sig") and isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")


def main(argv: Sequence[str] | None = None) -> int:
    _never_stopped_by_a_character()
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
            from vask_server.mcp.http import McpMount  # (the SDK itself only once /mcp is called)
            from vask_server.web.server import Launch, run_server  # the web layer only when serving

            launch = Launch(args.pair_file, args.pair_nonce, args.stop_with_stdin)
            return int(run_server(settings, watch=not args.no_watch, launch=launch, mounts=[McpMount()]))
        if args.command == "mcp":
            from vask_server.mcp.stdio import run_stdio  # (the MCP SDK, and the services once the index opens)

            return run_stdio(settings)
        if args.command == "token":
            return token_cli.run(args, settings.resolved_index_dir())
        if args.command == "proposals":
            return proposals_cli.run(args, settings)
        if args.command in ("pause", "resume"):
            from vask_server.cli import index as index_cli

            return index_cli.pause(settings, paused=args.command == "pause")
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
    from vask_server.cli import index as index_cli

    if args.command == "index":  # (the index's one writer: the other commands here only read it)
        with index_cli.writer(settings):
            return await _command(args, settings)
    return await _command(args, settings)


async def _command(args: argparse.Namespace, settings: Settings) -> int:
    from vask_server.cli import ask as ask_cli
    from vask_server.cli import eval as eval_cli
    from vask_server.cli import index as index_cli

    if args.command == "index" and not args.full and index_cli.nothing_changed(settings):
        return 0
    from vask_server.services.context import open_services

    async with open_services(settings) as services:
        handler = {
            "index": index_cli.index,
            "ask": ask_cli.ask,
            "search": ask_cli.search,
            "status": index_cli.status,
            "eval": eval_cli.run,
        }[args.command]
        return await handler(args, services)


async def _doctor(args: argparse.Namespace, settings: Settings) -> int:
    from vask_server.services.doctor import healthy, report, run_checks, worst

    checks = await run_checks(settings)
    ok = healthy(checks)
    if args.json:
        print(json.dumps(report(checks), ensure_ascii=False, indent=2))
    else:
        for check in checks:
            print(f"{_DOCTOR_MARKS[check.level]} {check.name}: {check.detail}")
            if check.level != "ok" and check.fix:
                print(f"      {'see' if check.level == 'info' else 'fix'}: {check.fix}")
        if not ok:
            print("Fix the lines marked FAIL above, then run `vask doctor` again.")
        elif worst(checks) == "warn":
            print("Nothing stops vask; the lines marked warn say what would make it work better.")
        else:
            print("All is well.")
    return 0 if ok else DOCTOR_FOUND_PROBLEMS


# `vask doctor`'s mark for each level, one width, so that the names line up
_DOCTOR_MARKS = {"ok": "ok   ", "info": "info ", "warn": "warn ", "fail": "FAIL "}


if __name__ == "__main__":
    raise SystemExit(main())
