"""index.json's index records: typed, and read and written by vask versions before and after this one."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from vask_server.adapters.meta import META_FILE, IndexMeta, IndexRecord, read_meta, write_meta
from vask_server.adapters.store import Store
from vask_server.core.keyword_choice import KeywordChoice, VaultLanguage
from vask_server.errors import NotIndexed

# index.json as the vask before typed records wrote it after a first sync, then a second model's
# sync under way (its record as `Indexer._start` wrote it)
WRITTEN_BEFORE = {
    "active": {
        "model": "all-minilm",
        "dimension": 384,
        "suffix": "all_minilm_384_f16_d1_p1_h1",
        "completed_at": "2026-01-02T03:04:05+00:00",
        "keyword_terms": "simple",
        "not_english": 0.125,
        "keyword_choice": {"setting": "auto", "notes_read": 40, "cjk_notes": 0, "rule": 2},
    },
    "building": {"model": "bge-m3", "dimension": 1024, "suffix": "bge_m3_1024_f16_d1_p1_h1", "keyword_terms": "simple"},
    "last_sync": "2026-01-02T03:04:05+00:00",
    "extra": {"syncs": 3, "migrations": ["m001_keyword_terms_recorded", "m002_keyword_terms_out_of_the_fingerprint"]},
}


def _write(index_dir: Path, data: dict[str, object]) -> None:
    index_dir.mkdir(parents=True, exist_ok=True)
    (index_dir / META_FILE).write_text(json.dumps(data), "utf-8")


def _on_disk(index_dir: Path) -> object:
    return json.loads((index_dir / META_FILE).read_text("utf-8"))


def test_an_index_json_written_before_reads_typed_and_is_written_back_unchanged(tmp_path: Path) -> None:
    _write(tmp_path, WRITTEN_BEFORE)
    meta = read_meta(tmp_path)
    assert meta.active == IndexRecord(
        "all-minilm",
        384,
        "all_minilm_384_f16_d1_p1_h1",
        "simple",
        completed_at="2026-01-02T03:04:05+00:00",
        not_english=0.125,
        keyword_choice=KeywordChoice("simple", "auto", 40, 0, 2),
    )
    assert meta.building is not None and not meta.building.complete and meta.building.dimension == 1024
    assert meta.searched() is meta.active  # (the complete one, while another is built)
    write_meta(tmp_path, meta)
    assert _on_disk(tmp_path) == WRITTEN_BEFORE


def test_what_another_vask_version_wrote_and_this_one_does_not_know_is_kept(tmp_path: Path) -> None:
    newer = json.loads(json.dumps(WRITTEN_BEFORE))
    newer["active"]["reranker"] = {"model": "tiny"}  # a record's key this version does not know
    newer["active"]["not_english"] = None  # (written by a sync of a few notes after a model switch)
    newer["active"]["keyword_choice"] = {"setting": "auto"}  # not a whole one: not read, but kept
    newer["schema"] = 7  # ... and a key beside the records
    _write(tmp_path, newer)
    meta = read_meta(tmp_path)
    assert meta.active is not None and meta.active.keyword_choice is None and meta.active.not_english is None
    assert meta.active.keyword_reason() == (
        "chosen before vask recorded why; the next whole sync (`vask index`) chooses again"
    )
    meta.set_paused(True)
    write_meta(tmp_path, meta)
    assert _on_disk(tmp_path) == {**newer, "extra": {**newer["extra"], "paused": True}}
    # what a sync reads of the notes replaces what it could not read, and nothing else
    language = VaultLanguage(KeywordChoice("simple", "auto", 10, 0), 0.0)
    read = meta.active.with_language(language).to_json()
    assert read["keyword_choice"] == language.keyword.to_record() and read["not_english"] == 0.0
    assert read["reranker"] == {"model": "tiny"}


def test_a_record_written_now_reads_as_the_vask_before_read_it(tmp_path: Path) -> None:
    """The keys and values an older vask looks up (by name, in a dict) are the ones it wrote."""
    record = IndexRecord.building("bge-m3", 1024, "cjk")
    assert record.to_json() == {
        "model": "bge-m3",
        "dimension": 1024,
        "suffix": "bge_m3_1024_f16_d1_p1_h1",
        "keyword_terms": "cjk",
        "document_prompt": "",  # (the instructions it is embedded with: bge-m3's card gives none)
        "query_prompt": "",
    }
    language = VaultLanguage(KeywordChoice("cjk", "auto", 40, 12), 0.5)
    done = record.with_language(language)
    assert done.to_json() == {**record.to_json(), "not_english": 0.5, "keyword_choice": language.keyword.to_record()}
    write_meta(tmp_path, IndexMeta(active=done, last_sync="x"))
    assert _on_disk(tmp_path) == {"active": done.to_json(), "building": None, "last_sync": "x", "extra": {}}


def test_a_record_that_names_no_index_is_none_and_said_so(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    _write(tmp_path, {"active": {"dimension": 384, "suffix": "s"}, "building": "x"})
    with caplog.at_level(logging.WARNING):
        meta = read_meta(tmp_path)
    assert meta.active is None and meta.building is None
    assert "without its 'model'" in caplog.text
    with pytest.raises(NotIndexed):
        meta.searched()


async def test_an_index_is_one_tables_object_until_it_is_dropped(tmp_path: Path) -> None:
    store = await Store.open(tmp_path)
    record = IndexRecord("m", 4, "m_4")
    tables = store.tables(record)
    assert store.tables(IndexRecord("m", 4, "m_4", "cjk", complete=False)) is tables  # (any record of it)
    assert store.tables(IndexRecord("n", 4, "n_4")) is not tables
    await tables.count_chunks()  # (its tables exist)
    assert await store.drop("m_4") == {}
    assert store.tables(record) is not tables
