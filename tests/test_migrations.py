"""Index migrations: each step runs once per index, in order, and index.json records it."""

import json

from vask_server.adapters import migrations
from vask_server.adapters.meta import META_FILE
from vask_server.adapters.store import Store


def _write_index_json(index_dir, data):
    index_dir.mkdir(parents=True, exist_ok=True)
    (index_dir / META_FILE).write_text(json.dumps(data))


async def test_an_index_without_its_keyword_terms_records_the_simple_ones_once(tmp_path):
    active = {"model": "m", "dimension": 4, "suffix": "m_4_f16_d1_p1_h1", "completed_at": "x"}
    _write_index_json(tmp_path, {"active": active, "building": None, "last_sync": None, "extra": {}})
    store = await Store.open(tmp_path)
    on_disk = json.loads((tmp_path / META_FILE).read_text())
    assert on_disk["active"]["keyword_terms"] == "simple"  # (written: an older vask reads it too)
    assert on_disk["extra"][migrations.APPLIED] == [step.__name__ for step in migrations.MIGRATIONS]
    assert store.read_meta().active.keyword_terms == "simple"
    # (applied once: the next open runs nothing)
    assert await migrations.migrate(tmp_path, store.database.connection) == []


async def test_an_index_not_built_yet_runs_and_records_no_step(tmp_path):
    store = await Store.open(tmp_path)
    assert await migrations.migrate(tmp_path, store.database.connection) == []
    assert not (tmp_path / META_FILE).exists()


async def test_a_recorded_choice_is_kept(tmp_path):
    active = {"model": "m", "dimension": 4, "suffix": "s", "keyword_terms": "cjk"}
    _write_index_json(tmp_path, {"active": active, "extra": {}})
    store = await Store.open(tmp_path)
    assert store.read_meta().active.keyword_terms == "cjk"


async def test_a_new_index_is_written_in_the_current_format_and_runs_no_step(fake_ollama, small_vault, settings_for):
    from vask_server.services.context import open_services

    async with open_services(settings_for(small_vault)) as services:
        await services.indexer.sync()
        assert services.store.read_meta().extra[migrations.APPLIED] == migrations.current_format()
        assert await migrations.migrate(services.index_dir, services.store.database.connection) == []


async def test_a_fingerprint_that_held_the_keyword_terms_loses_them_so_nothing_is_chunked_again(tmp_path):
    from vask_server.adapters.snapshot import SNAPSHOT_FILE
    from vask_server.core.plan import IndexOptions

    options = IndexOptions(keyword_terms="cjk")
    old = json.loads(options.fingerprint())
    old["keyword_terms"] = "cjk"  # as vask wrote it when the fingerprint held them
    active = {"model": "m", "dimension": 4, "suffix": "s", "keyword_terms": "cjk"}
    extra = {"chunking": json.dumps(old, sort_keys=True), migrations.APPLIED: ["m001_keyword_terms_recorded"]}
    _write_index_json(tmp_path, {"active": active, "extra": extra})
    (tmp_path / SNAPSHOT_FILE).write_text("{}")
    store = await Store.open(tmp_path)
    assert store.read_meta().extra["chunking"] == options.fingerprint()
    assert not (tmp_path / SNAPSHOT_FILE).exists()  # (it named the old fingerprint)
    # one that never held them is left as it was
    other = tmp_path / "other"
    extra = {"chunking": IndexOptions().fingerprint(), migrations.APPLIED: ["m001_keyword_terms_recorded"]}
    _write_index_json(other, {"active": active, "extra": extra})
    (other / SNAPSHOT_FILE).write_text("{}")
    store = await Store.open(other)
    assert store.read_meta().extra["chunking"] == IndexOptions().fingerprint() and (other / SNAPSHOT_FILE).exists()
