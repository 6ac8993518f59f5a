"""Hostile vault content: each file is skipped or indexed with its reason in /v1/status; nothing crashes."""

import os
import pathlib

import pytest

from tests.web_helpers import running_app
from vask_server.adapters.vault import Vault

pytestmark = pytest.mark.reliability


async def test_bad_vault_content_is_reported_and_the_rest_is_indexed(
    fake_ollama, vault, settings_for, tmp_path, monkeypatch
):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("The outside secret is ZANZIBAR-77.\n")
    bad = vault / "Bad"
    bad.mkdir()
    (bad / "huge.md").write_text("lorem ipsum " * 300_000)  # 3.6 MB
    (bad / "binary.md").write_bytes(os.urandom(2048) + b"\x00" * 16)
    (bad / "latin1.md").write_bytes("Notes from the caf\xe9: espresso and croissants.\n".encode("latin-1"))
    (bad / "nested.md").write_text("".join("  " * depth + f"- level {depth}\n" for depth in range(800)))
    (bad / "loop").symlink_to(bad, target_is_directory=True)
    (bad / "secret.md").symlink_to(outside / "secret.md")
    (bad / "outside-folder").symlink_to(outside, target_is_directory=True)
    (bad / "vanishing.md").write_text("Here now, gone when read.\n")
    (bad / "locked.md").write_text("Nobody may read this.\n")

    real_open = pathlib.Path.open

    def flaky_open(self: pathlib.Path, *args, **kwargs):  # type: ignore[no-untyped-def]
        if self.name == "vanishing.md":
            self.unlink(missing_ok=True)  # deleted between the directory scan and the read
        if self.name == "locked.md":
            raise PermissionError(13, "Permission denied")  # as root, chmod 000 would not stop us
        return real_open(self, *args, **kwargs)

    monkeypatch.setattr(pathlib.Path, "open", flaky_open)

    # no watcher here: it would see the vanished file's deletion and (rightly) drop it at once
    async with running_app(settings_for(vault), watch=False) as api:
        status = await (await api.get("/v1/status")).json()
        assert status["state"] == "idle"
        reasons = {item["path"]: item["reason"] for item in status["skipped"] + status["failed"]}
        assert "too large" in reasons["Bad/huge.md"]
        assert "binary" in reasons["Bad/binary.md"]
        assert "vanished" in reasons["Bad/vanishing.md"]
        assert "permission denied" in reasons["Bad/locked.md"]
        assert "outside the vault" in reasons["Bad/secret.md"]
        assert "outside the vault" in reasons["Bad/outside-folder"]
        # the same words as `vask index`: "failed" could not be read, "skipped" was left out on purpose
        words = {item["path"]: word for word in ("failed", "skipped") for item in status[word]}
        assert words["Bad/locked.md"] == "failed"
        for path in ("Bad/huge.md", "Bad/binary.md", "Bad/vanishing.md", "Bad/secret.md", "Bad/outside-folder"):
            assert words[path] == "skipped", path
        event = api.live.snapshot()
        assert (event["failed"], event["skipped"]) == (len(status["failed"]), len(status["skipped"]))
        warnings = "\n".join(status["last_report"]["warnings"])
        assert "Bad/latin1.md: invalid UTF-8" in warnings
        # each problem once
        listed = [item["path"] for item in status["skipped"] + status["failed"]]
        assert len(listed) == len(set(listed))

        # what could be read was indexed; what lies outside the vault never was
        assert (await api.search("espresso croissants café", top_k=3))["hits"][0]["path"] == "Bad/latin1.md"
        assert any(h["path"] == "Bad/nested.md" for h in (await api.search("level 799", top_k=10))["hits"])
        everything = await api.search("outside secret ZANZIBAR-77", top_k=20)
        assert all("ZANZIBAR" not in hit["text"] for hit in everything["hits"])
        assert status["notes"] >= 60

        # the server is still healthy, and the next sync forgets the vanished note
        health = await (await api.get("/v1/health")).json()
        assert health["status"] == "ok" and health["index"]["pending"] == 0
        api.live.request(None)
        await api.live.wait_idle(30)
        status = await (await api.get("/v1/status")).json()
        assert "Bad/vanishing.md" not in {item["path"] for item in status["skipped"] + status["failed"]}


def test_the_scan_never_follows_a_symlink_out_of_the_vault(tmp_path):
    root = tmp_path / "vault"
    root.mkdir()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "private.md").write_text("private")
    (root / "inside.md").write_text("inside")
    (root / "out").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    (root / "loop").symlink_to(root, target_is_directory=True)
    scan = Vault(root).scan()
    assert list(scan.notes) == ["inside.md"]
    assert "out" in scan.skipped and not scan.problems  # left out on purpose: "skipped", not "failed"
