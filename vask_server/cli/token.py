"""`vask token`: print the default device's token; `add NAME`, `list`, `revoke NAME` for the others, and
`allow-apply NAME` / `deny-apply NAME`: whether a device may apply proposed changes to notes."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from vask_server.adapters.token import add_device, allow_apply, ensure_token, list_devices, revoke_device
from vask_server.errors import ConfigError

ACTIONS = ("add", "list", "revoke", "allow-apply", "deny-apply")
_NAMED = ("add", "revoke", "allow-apply", "deny-apply")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "action",
        nargs="?",
        choices=ACTIONS,
        help="add NAME: a new device's token (printed once, last line); list: the devices, when made and last "
        "used (never their tokens); revoke NAME: that token stops working at once; allow-apply NAME / deny-apply "
        "NAME: that device may (or may not) apply, reject and undo proposed changes to notes (the default device "
        "always may). Without one: print the default device's token (made on first use)",
    )
    parser.add_argument("name", nargs="?", help="the device's name, such as phone or laptop")
    parser.add_argument("--json", action="store_true", help="list: as JSON")
    parser.add_argument(
        "--may-apply", action="store_true", help="add: the new device may apply proposed changes to notes too"
    )


def run(args: argparse.Namespace, index_dir: Path) -> int:
    action, name = args.action, args.name
    if action in _NAMED and not name:
        raise ConfigError(f"`vask token {action}` needs a device name.", f"For example: vask token {action} phone")
    if action in (None, "list") and name:
        raise ConfigError(f"Unexpected {name!r}.", "Did you mean `vask token add NAME` or `vask token revoke NAME`?")
    if action is None:
        print(ensure_token(index_dir))
    elif action in ("allow-apply", "deny-apply"):
        allow_apply(index_dir, name, action == "allow-apply")
        may = "may now" if action == "allow-apply" else "may no longer"
        print(f"Device {name!r} {may} apply, reject and undo proposed changes to notes (from its next request).")
    elif action == "add":
        token = add_device(index_dir, name, may_apply=args.may_apply)
        print(f"Device {name!r} added. Paste this token into the plugin's settings on that device;")
        print("it is not stored anywhere in plain text and cannot be shown again.")
        print(token)
    elif action == "revoke":
        revoke_device(index_dir, name)
        print(f"Device {name!r} revoked: its token stops working at the next request (no restart needed).")
    else:
        devices = list_devices(index_dir)
        if args.json:
            rows = [
                {"name": d.name, "created": d.created, "last_used": d.last_used, "may_apply": d.may_apply}
                for d in devices
            ]
            print(json.dumps({"devices": rows}, indent=2))
        elif not devices:
            print("No devices. `vask token` makes the default one, `vask token add NAME` another.")
        else:
            width = max(len(d.name) for d in devices)
            print(f"{'device':<{width}}  {'created':<20}  {'last used':<20}  applies changes")
            for d in devices:
                applies = "yes" if d.may_apply else "no"
                print(f"{d.name:<{width}}  {d.created or '?':<20}  {d.last_used or 'never':<20}  {applies}")
    return 0
