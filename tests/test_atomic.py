"""The one way files in the index folder are written: whole, private, and no temporary file left."""

from __future__ import annotations

import pytest

from vask_server.adapters.atomic import write_atomic


def test_a_file_is_written_whole_private_and_replaces_the_old_one(tmp_path):
    target = tmp_path / "devices.json"
    target.write_text("old", "utf-8")
    target.chmod(0o644)
    write_atomic(target, "new ✓\n")
    assert target.read_text("utf-8") == "new ✓\n"
    assert target.stat().st_mode & 0o777 == 0o600  # the new file's mode, not the old one's
    assert [p.name for p in tmp_path.iterdir()] == ["devices.json"]


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary_file(tmp_path):
    target = tmp_path / "taken"
    target.mkdir()  # a folder where the file should go: the rename fails
    (target / "inside").write_text("kept", "utf-8")
    with pytest.raises(OSError):
        write_atomic(target, "new")
    assert (target / "inside").read_text("utf-8") == "kept"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]
