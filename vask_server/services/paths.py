"""A note's path as a caller gives it, checked at every door alike: inside the vault (no `..`, no
absolute path, no symlink out), and the name of a file vask indexes."""

from __future__ import annotations

from vask_server.adapters.vault import Vault
from vask_server.core.arguments import string_list
from vask_server.core.filetypes import file_type
from vask_server.errors import BadRequest


def note_path(vault: Vault, value: str, name: str) -> str:
    """A vault-relative note path, as Obsidian writes it (forward slashes, no leading slash)."""
    string_list([value], name)  # NUL bytes and invalid Unicode
    vault.resolve(value)  # raises BadRequest for .., absolute paths and symlinks out
    if file_type(value) is None:
        raise BadRequest(
            f"'{name}' must be the path of a note (.md), a canvas (.canvas) or a PDF (.pdf).",
            "Give a vault-relative path like 'Projects/Plan.md'.",
        )
    return value.replace("\\", "/").lstrip("/")
