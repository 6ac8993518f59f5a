"""The `vask` command line: the parser and its dispatch (command.py), and each command's own work and printing."""

from vask_server.cli.command import main

__all__ = ["main"]
