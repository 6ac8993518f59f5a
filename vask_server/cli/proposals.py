"""`vask proposals`: the proposed changes to notes, headless: list them, show one's diff, apply, reject,
undo. The same queue as the plugin's Proposed changes view (kept with the index); deciding here is
deciding as the computer's own user, as the default device does."""

from __future__ import annotations

import argparse
import json
from typing import Any

from vask_server.adapters.vault import Vault
from vask_server.config import Settings
from vask_server.errors import ConfigError
from vask_server.services.options import index_options
from vask_server.services.proposals import CLI, STATES, ProposalService, ProposalView

ACTIONS = ("list", "show", "apply", "reject", "undo")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "action",
        nargs="?",
        choices=ACTIONS,
        default="list",
        help="list (the default): the changes waiting, newest first (--all: the decided ones too); show ID: one "
        "change's diff; apply ID…: write it into its note, only if the note is as it was when proposed; reject "
        "ID…; undo ID: put the note back as it was, only if it is unchanged since",
    )
    parser.add_argument("ids", nargs="*", metavar="ID", help="a proposal's id (or the start of it)")
    parser.add_argument("--source", default=None, help="list, apply, reject: every waiting change from this source")
    parser.add_argument("--state", choices=STATES, default=None, help="list: only those in this state")
    parser.add_argument("--all", action="store_true", help="list: the applied, rejected and undone ones too")
    parser.add_argument("--json", action="store_true", help="print JSON")


def run(args: argparse.Namespace, settings: Settings) -> int:
    service = ProposalService(Vault(settings.require_vault()), settings.resolved_index_dir(), index_options(settings))
    action = args.action
    if action == "list":
        if args.ids:
            raise ConfigError(f"Unexpected {args.ids[0]!r}.", "Did you mean `vask proposals show ID`?")
        return _list(service, args)
    if action in ("show", "undo") and len(args.ids) != 1:
        raise ConfigError(f"`vask proposals {action}` takes one proposal id.", "`vask proposals` lists them.")
    if action == "show":
        view = service.get(args.ids[0])
        if args.json:
            _print_json(view.detail())
        else:
            _show(view)
        return 0
    if action == "undo":
        view = service.undo(args.ids[0], by=CLI)
        _said(args, [view.summary()], f"Undone: {view.proposal.path} is back as it was.")
        return 0
    if args.source and args.ids:
        raise ConfigError("Give proposal ids or --source, not both.", f"For example: vask proposals {action} ID")
    if not args.source and not args.ids:
        raise ConfigError(f"`vask proposals {action}` needs proposal ids or --source.", "`vask proposals` lists them.")
    if action == "apply" and args.source:
        result = service.apply_all(args.source, by=CLI)
        if args.json:
            _print_json(result)
        else:
            for row in result["applied"]:
                print(f"applied  {row['id']}  {row['summary']}")
            for row in result["not_applied"]:
                print(f"left     {row['id']}  {row['path']}: {row['message']}")
            print(f"{len(result['applied'])} applied, {len(result['not_applied'])} left waiting.")
        return 0 if not result["not_applied"] else 2
    waiting = [v.proposal.id for v in service.select(None, args.source) if v.state in ("pending", "stale")]
    ids = args.ids or waiting[::-1]  # (oldest first)
    done = []
    for proposal_id in ids:
        view = service.apply(proposal_id, by=CLI) if action == "apply" else service.reject(proposal_id, by=CLI)
        done.append(view.summary())
        if not args.json:
            print(f"{'applied' if action == 'apply' else 'rejected'}  {view.proposal.id}  {view.proposal.summary}")
    if args.json:
        _print_json({"proposals": done})
    return 0


def _list(service: ProposalService, args: argparse.Namespace) -> int:
    views, counts = service.listing(args.state, args.source)
    if not (args.state or args.all):
        views = [v for v in views if v.state in ("pending", "stale")]
    if args.json:
        _print_json({"proposals": [v.summary() for v in views], "counts": counts})
        return 0
    if not views:
        print("No proposed changes." if args.all or args.state else "No proposed changes are waiting.")
        return 0
    for view in views:
        p = view.proposal
        state = view.state + (" (undo possible)" if view.undoable else "")
        print(f"{p.id}  {state:<9}  {p.source:<12}  {p.summary}")
    waiting = sum(1 for v in views if v.state in ("pending", "stale"))
    if waiting:
        print(f"\n`vask proposals show ID` shows a change; `apply ID`, `reject ID` decide ({waiting} waiting).")
    return 0


def _show(view: ProposalView) -> None:
    p = view.proposal
    print(f"{p.id}  {view.state}{'  (undo possible)' if view.undoable else ''}")
    print(f"{p.summary}")
    print(f"proposed {p.created} by {p.source} (device {p.device})" + (f": {p.reason}" if p.reason else ""))
    if p.decided:
        print(f"{p.status if p.status != 'undone' else 'applied'} {p.decided} by {p.decided_by}")
    if p.undone:
        print(f"undone {p.undone} by {p.undone_by}")
    if view.state == "stale":
        print("The note changed since this was proposed: it cannot be applied. Reject it, or propose it again.")
    print()
    print(view.detail()["diff"], end="")


def _said(args: argparse.Namespace, rows: list[dict[str, Any]], text: str) -> None:
    if args.json:
        _print_json({"proposals": rows})
    else:
        print(text)


def _print_json(value: object) -> None:
    print(json.dumps(value, ensure_ascii=False, indent=2))
