"""`vask token`: print the default device's token; `add NAME`, `list`, `revoke NAME` for the others."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from vask_server.adapters.token import add_device, ensure_token, list_devices, revoke_device
from vask_server.errors import ConfigError

ACTIONS = ("add", "list", "revoke")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "action",
        nargs="?",
        choices=ACTIONS,
        help="add NAME: a new device's token (printed once, last line); list: the devices, when made and last "
        "used (never their tokens); revoke NAME: that token stops working at once. Without one: print the "
        "default device's token (made on first use)",
    )
    parser.add_argument("name", nargs="?", help="the device's name, such as phone or laptop")
    parser.add_argument("--json", action="store_true", help="list: as JSON")


def run(args: argparse.Namespace, index_dir: Path) -> int:
    action, name = args.action, args.name
    if action in ("add", "revoke") and not name:
        raise ConfigError(f"`vask token {action}` needs a device name.", f"For example: vask token {action} phone")
    if action in (None, "list") and name:
        raise ConfigError(f"Unexpected {name!r}.", "Did you mean `vask token add NAME` or `vask token revoke NAME`?")
    if action is None:
        print(ensure_token(index_dir))
    elif action == "add":
        token = add_device(index_dir, name)
        print(f"Device {name!r} added. Paste this token into the plugin's settings on that device;")
        print("it is not stored anywhere in plain text and cannot be shown again.")
        print(token)
    elif action == "revoke":
        revoke_device(index_dir, name)
        print(f"Device {name!r} revoked: its token stops working at the next request (no restart needed).")
    else:
        devices = list_devices(index_dir)
        if args.json:
            rows = [{"name": d.name, "created": d.created, "last_used": d.last_used} for d in devices]
            print(json.dumps({"devices": rows}, indent=2))
        elif not devices:
            print("No devices. `vask token` makes the default one, `vask token add NAME` another.")
        else:
            width = max(len(d.name) for d in devices)
            print(f"{'device':<{width}}  {'created':<20}  last used")
            for d in devices:
                print(f"{d.name:<{width}}  {d.created or '?':<20}  {d.last_used or 'never'}")
    return 0
