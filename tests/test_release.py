"""A release is one version everywhere: the server's (vask_server/__init__.py), the plugin's manifest.json
and package.json, and versions.json (which maps it to the manifest's minAppVersion, as Obsidian reads it).
`npm run package` refuses to zip when they disagree; this test says so before anyone packages."""

from __future__ import annotations

import json
from pathlib import Path

from vask_server import __version__

PLUGIN = Path(__file__).resolve().parent.parent / "obsidian-plugin"


def read(name: str) -> dict[str, str]:
    data: dict[str, str] = json.loads((PLUGIN / name).read_text("utf-8"))
    return data


def test_the_server_and_the_plugin_have_one_version() -> None:
    manifest = read("manifest.json")
    assert manifest["version"] == __version__
    assert read("package.json")["version"] == __version__
    assert read("versions.json")[__version__] == manifest["minAppVersion"]


def test_the_manifest_is_what_the_community_review_asks_for() -> None:
    manifest = read("manifest.json")
    assert manifest["id"] == "vask" and "obsidian" not in manifest["id"]
    description = manifest["description"]
    assert len(description) <= 250 and description.endswith(".")
    assert manifest["isDesktopOnly"] is False  # (mobile uses a remote server; the desktop parts load only there)
