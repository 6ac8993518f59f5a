"""scripts/bench.py replaces only folders it made itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from scripts import bench
from vask_server.adapters.meta import IndexMeta, write_meta


def _real_index(folder: Path) -> Path:
    """A folder as a vault's own index looks: index.json, tables."""
    (folder / "lancedb" / "chunks_x.lance").mkdir(parents=True)
    (folder / "lancedb" / "chunks_x.lance" / "data").write_text("rows")
    write_meta(folder, IndexMeta(active={"model": "all-minilm", "dimension": 384, "suffix": "all_minilm_384_f16"}))
    return folder


def _files(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*")}


def _index(vault: Path, index_dir: Path) -> None:
    bench.main(["index", "--vault", str(vault), "--index-dir", str(index_dir), "--model", "instant"])


@pytest.mark.parametrize("kind", ["a vask index", "other files"])
def test_index_refuses_a_folder_it_did_not_make_and_leaves_it_alone(small_vault, tmp_path, capsys, kind):
    folder = tmp_path / "mine"
    if kind == "a vask index":
        _real_index(folder)
    else:
        folder.mkdir()
        (folder / "notes.txt").write_text("keep me")
    before = _files(folder)
    with pytest.raises(SystemExit) as exited:
        _index(small_vault, folder)
    assert exited.value.code == 2
    assert _files(folder) == before
    message = capsys.readouterr().err
    assert str(folder) in message and "benchmark did not make" in message and "--index-dir" in message


def test_a_real_index_is_refused_by_every_step_that_writes_to_it(small_vault, tmp_path):
    folder = _real_index(tmp_path / "index")
    before = _files(folder)
    for step in ("restart", "query", "related", "edits", "memory"):
        with pytest.raises(SystemExit) as exited:
            bench.main(
                [step, "--vault", str(small_vault), "--index-dir", str(folder), "--ollama-host", "http://127.0.0.1:9"]
            )
        assert exited.value.code == 2, step
    assert _files(folder) == before


def test_a_new_or_empty_folder_is_used_marked_and_may_be_replaced_next_time(small_vault, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    for folder in (tmp_path / "new", empty):
        _index(small_vault, folder)
        assert (folder / bench.BENCH_MARKER).is_file() and (folder / "index.json").is_file()
        (folder / "stale").write_text("from the run before")
        _index(small_vault, folder)  # the benchmark's own index: replaced
        assert not (folder / "stale").exists() and (folder / bench.BENCH_MARKER).is_file()


def test_all_checks_its_index_folders_before_any_work(tmp_path):
    _real_index(tmp_path / "index-large")
    with pytest.raises(SystemExit) as exited:
        bench.main(["all", "--quick", "--work", str(tmp_path), "--no-shim", "--ollama-host", "http://127.0.0.1:9"])
    assert exited.value.code == 2
    assert not list(tmp_path.glob("vault-*"))  # no vault generated
