"""The ANN index: parameters from the table's size, rebuilt as the table outgrows it, and searches
that stay close to exact. Real LanceDB tables on disk, small (thresholds lowered for the test)."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from lancedb.index import IvfSq

from vask_server.adapters import ann_plan as ann_module
from vask_server.adapters.ann_plan import ann_nprobes, ann_partitions_of, ann_plan, ann_refine
from vask_server.adapters.meta import IndexRecord
from vask_server.adapters.schema import chunk_schema, hit_records
from vask_server.adapters.store import Store
from vask_server.adapters.tables import SearchOptions

DIM = 16
SUFFIX = "test_model_16"
INDEX = IndexRecord("test-model", DIM, SUFFIX)


def _rows(start: int, count: int, rng: np.random.Generator, centres: np.ndarray) -> pa.Table:
    """`count` chunk rows, 20 to a note, vectors scattered around `centres` (clustered, as text
    embeddings are)."""
    schema = chunk_schema(DIM)
    picks = rng.integers(0, len(centres), count)
    vectors = centres[picks] + 0.35 * rng.standard_normal((count, DIM))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ids = [f"c{start + i}" for i in range(count)]
    paths = [f"note{(start + i) // 20}.md" for i in range(count)]
    columns: dict[str, list[object]] = {
        "id": ids,
        "path": paths,
        "folder": [""] * count,
        "title": paths,
        "heading": [""] * count,
        "anchor": [""] * count,
        "line_start": [1] * count,
        "line_end": [2] * count,
        "ordinal": [i % 20 for i in range(count)],
        "kind": ["chunk"] * count,
        "hash": ids,
        "text": ids,
        "search_text": ids,
        "tags": [[] for _ in range(count)],
        "date": [None] * count,
        "date_end": [None] * count,
        "date_source": [None] * count,
        "modified": [None] * count,
        "page": [None] * count,
    }
    columns["hit"] = list(hit_records(columns))
    arrays = [pa.array(columns[name], type=schema.field(name).type) for name in schema.names if name != "vector"]
    flat = pa.array(vectors.astype(np.float16).reshape(-1), pa.float16())
    return pa.Table.from_arrays([*arrays, pa.FixedSizeListArray.from_arrays(flat, DIM)], schema=schema)


async def _indexed(tmp_path: Path, seed: int, rows: int) -> tuple[Store, Any, np.random.Generator, np.ndarray]:
    """A store whose chunk table has `rows` clustered rows and its ANN index, built as a sync does."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((40, DIM))
    store = await Store.open(tmp_path)
    table = await store.tables(INDEX).chunks()
    await table.add(_rows(0, rows, rng, centres))
    await store.tables(INDEX).index_vectors_later()
    await store.wait_background()
    return store, table, rng, centres


@pytest.fixture
def small_plan(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ann_module, "VECTOR_INDEX_MIN_ROWS", 1_000)
    monkeypatch.setattr(ann_module, "_ANN_ROWS_PER_PARTITION", 100)


def test_the_plan_grows_with_the_table_and_probes_a_share_of_its_partitions() -> None:
    sizes = [30_000, 124_000, 500_000, 2_000_000, 50_000_000]
    plans = [ann_plan(rows) for rows in sizes]
    partitions = [plan.partitions for plan in plans]
    assert partitions == sorted(partitions) and partitions[0] < partitions[-2]
    assert partitions[-1] == ann_module._ANN_MAX_PARTITIONS  # bounded: the centroids are searched whole
    for plan in plans:
        assert 1 <= plan.nprobes <= plan.partitions
        assert plan.nprobes == plan.partitions  # (every partition: see _ANN_PROBE_SHARE)
        assert ann_partitions_of(plan.index_name) == plan.partitions
    assert ann_nprobes(1) == 1
    # re-ranking reads cost the same at any size: a small index, quick to scan, re-ranks more of them;
    # wider vectors' codes estimate closer, so fewer are re-ranked
    for dimension in (384, 1024):
        refines = [ann_refine(plan.partitions, dimension) for plan in plans]
        assert refines == sorted(refines, reverse=True) and refines[0] > refines[-1] >= 1
        assert ann_refine(None, dimension) == refines[-1]  # an index from before the plan: its size unknown
    assert ann_refine(plans[-1].partitions, 1024) < ann_refine(plans[-1].partitions, 384)
    assert ann_refine(plans[0].partitions, 1024) == ann_refine(plans[0].partitions, 384)  # (small: measured alike)
    assert ann_partitions_of("vector_idx") is None  # LanceDB's own name: an index from before the plan
    assert ann_partitions_of("vector_ivf60") is None  # the 8-bit index of earlier versions: replaced


async def test_the_index_is_built_from_the_plan_and_searches_find_the_exact_neighbours(
    tmp_path: Path, small_plan: None
) -> None:
    store, table, rng, centres = await _indexed(tmp_path, 1, 2_000)
    plan = ann_plan(2_000)
    assert [i.name for i in await table.list_indices() if "vector" in i.columns] == [plan.index_name]

    queries = centres[:20] + 0.35 * rng.standard_normal((20, DIM))
    recalls = []
    for query in queries.astype(np.float32):
        got = await store.tables(INDEX).vector_search(query, 50)
        exact = await table.query().nearest_to(query).distance_type("cosine").limit(50).bypass_vector_index().to_arrow()
        recalls.append(len({r["id"] for r in got} & set(exact["id"].to_pylist())) / 50)
        scores = [r["score"] for r in got]
        assert scores == sorted(scores, reverse=True)  # re-ranked with the full vectors
    assert np.mean(recalls) >= 0.95 and min(recalls) >= 0.8, recalls


async def test_an_outgrown_index_is_built_again_and_another_process_reads_its_plan(
    tmp_path: Path, small_plan: None
) -> None:
    store, table, rng, centres = await _indexed(tmp_path, 2, 1_000)
    first = ann_plan(1_000).index_name

    await table.add(_rows(1_000, 500, rng, centres))  # 1.5x: not outgrown yet
    await store.tables(INDEX).index_vectors_later()
    await store.wait_background()
    assert [i.name for i in await table.list_indices() if "vector" in i.columns] == [first]

    await table.add(_rows(1_500, 1_500, rng, centres))  # 3x the rows it was trained on
    await store.tables(INDEX).index_vectors_later()
    await store.wait_background()
    grown = ann_plan(3_000)
    assert grown.partitions >= 2 * ann_plan(1_000).partitions
    assert [i.name for i in await table.list_indices() if "vector" in i.columns] == [grown.index_name]

    other = await Store.open(tmp_path)  # a later process: the plan is read from the index's name
    await other.tables(INDEX).chunks()
    assert other.database.ann.built[f"chunks_{SUFFIX}"] == grown.partitions


async def test_an_index_from_before_the_plan_is_replaced_by_one_built_from_it(tmp_path: Path, small_plan: None) -> None:
    rng = np.random.default_rng(3)
    centres = rng.standard_normal((40, DIM))
    store = await Store.open(tmp_path)
    table = await store.tables(INDEX).chunks()
    await table.add(_rows(0, 1_200, rng, centres))
    await table.create_index("vector", config=IvfSq(distance_type="cosine"))  # type: ignore[arg-type]
    legacy = await Store.open(tmp_path)
    await legacy.tables(INDEX).chunks()
    assert legacy.database.ann.built == {f"chunks_{SUFFIX}": None}  # indexed, parameters unknown
    hits = await legacy.tables(INDEX).vector_search(centres[0].astype(np.float32), 10)
    assert len(hits) == 10  # the old index serves meanwhile
    await legacy.tables(INDEX).index_vectors_later()
    await legacy.wait_background()
    table = await legacy.tables(INDEX).chunks()
    names = [i.name for i in await table.list_indices() if "vector" in i.columns]
    assert names == [ann_plan(1_200).index_name]


async def test_filtered_searches_through_the_index_probe_further_until_enough_rows_pass(
    tmp_path: Path, small_plan: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, table, rng, centres = await _indexed(tmp_path, 5, 3_000)
    # A broad filter (half the rows): the same neighbours as the exact filtered search, or nearly.
    broad = "ordinal < 10"
    for probe in (centres[:10] + 0.35 * rng.standard_normal((10, DIM))).astype(np.float32):
        got = await store.tables(INDEX).vector_search(probe, 50, broad, SearchOptions(approximate_filter=True))
        wanted = await store.tables(INDEX).vector_search(probe, 50, broad)
        assert all(int(h["id"][1:]) % 20 < 10 for h in got)
        assert len({h["id"] for h in got} & {h["id"] for h in wanted}) >= 45
    # One note's 20 rows, scattered over the partitions, with 2 of the 30 probed at first: only
    # probing further finds them all.
    monkeypatch.setattr(ann_module, "_ANN_PROBE_SHARE", 0.05)
    query = centres[0].astype(np.float32)
    one_note = "path = 'note7.md'"
    hits = await store.tables(INDEX).vector_search(query, 50, one_note, SearchOptions(approximate_filter=True))
    assert sorted(h["id"] for h in hits) == sorted(f"c{i}" for i in range(140, 160))
    exact = await store.tables(INDEX).vector_search(query, 50, one_note)
    assert [h["id"] for h in hits] == [h["id"] for h in exact]
    unwidened = (
        await table.query().nearest_to(query).distance_type("cosine").limit(50).where(one_note).nprobes(2).to_arrow()
    )
    assert unwidened.num_rows < 20  # what a fixed probe count finds: the case the widening is for


def _vector_index_uuids(indices: list) -> list[str]:
    return [i.index_uuid for i in indices if "vector" in i.columns]


async def test_a_compaction_leaves_the_vector_index_alone_until_one_is_due_and_then_drops_it_first(
    tmp_path: Path, small_plan: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """LanceDB's optimize can lose rows of an IVF-RQ index it folds new rows into (measured on a
    121,736-chunk table: recall@50 1.000 -> 0.967): the index is never optimized, only made anew."""
    import vask_server.adapters.upkeep as upkeep_module

    store, table, rng, centres = await _indexed(tmp_path, 6, 2_000)
    built = _vector_index_uuids(await table.list_indices())
    assert len(built) == 1

    for start in range(2_000, 2_100, 20):  # five small writes, a note each: not enough to be due
        await table.add(_rows(start, 20, rng, centres))
    assert await store.tables(INDEX).compact() is False
    assert _vector_index_uuids(await table.list_indices()) == built  # untouched
    fragments = (await table.stats())["fragment_stats"]["num_fragments"]
    assert fragments >= 6  # (and not compacted: that would have optimized the index)
    # rows written since the index was built are found all the same (searched exactly beside it)
    stored = await table.query().where("id = 'c2040'").select(["vector"]).to_arrow()
    query = np.asarray(stored["vector"][0].as_py(), np.float32)
    assert "c2040" in {hit["id"] for hit in await store.tables(INDEX).vector_search(query, 5)}

    monkeypatch.setattr(upkeep_module, "_COMPACT_INDEXED_FRAGMENTS", 5)
    assert await store.tables(INDEX).compact() is True
    table = await store.tables(INDEX).chunks()
    assert _vector_index_uuids(await table.list_indices()) == []  # dropped before the optimize
    assert (await table.stats())["fragment_stats"]["num_fragments"] < fragments
    plan = await store.tables(INDEX).missing_vector_index()
    assert plan == ann_plan(2_100)  # what the sync builds next ("vector index")
    await store.tables(INDEX).index_vectors_now(plan)
    assert len(_vector_index_uuids(await table.list_indices())) == 1


async def test_deleted_rows_make_a_compaction_due(tmp_path: Path, small_plan: None) -> None:
    """An edited note's old passages are deleted rows, which searches still step over."""
    store, _table, _rng, _centres = await _indexed(tmp_path, 7, 2_000)
    await store.tables(INDEX).delete_notes(["note1.md"])  # 20 of 2,000 rows: 1%
    assert await store.tables(INDEX).compact() is False
    await store.tables(INDEX).delete_notes(["note2.md", "note3.md"])  # 3%
    assert await store.tables(INDEX).compact() is True


async def test_the_purge_drops_the_vector_index_before_its_compaction_and_no_old_index_file_stays(
    tmp_path: Path, small_plan: None
) -> None:
    store, table, _rng, centres = await _indexed(tmp_path, 8, 2_000)
    old = _vector_index_uuids(await table.list_indices())
    await store.tables(INDEX).delete_notes(["note3.md"])  # an excluded note: rows c60..c79
    await store.tables(INDEX).purge()
    table = await store.tables(INDEX).chunks()
    assert _vector_index_uuids(await table.list_indices()) == []  # the sync builds it again, as after `compact`
    assert not set(old) & {p.name for p in tmp_path.rglob("_indices/*")}
    plan = await store.tables(INDEX).missing_vector_index()
    assert plan is not None
    await store.tables(INDEX).index_vectors_now(plan)
    new = _vector_index_uuids(await table.list_indices())
    assert len(new) == 1 and new != old
    for query in centres.astype(np.float32):
        assert not any(hit["path"] == "note3.md" for hit in await store.tables(INDEX).vector_search(query, 50))


async def test_rows_a_held_back_compaction_leaves_outside_the_keyword_index_are_indexed_from_a_threshold(
    tmp_path: Path, small_plan: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each row outside the full-text index costs every keyword search a scan of it."""
    import vask_server.adapters.upkeep as upkeep_module

    monkeypatch.setattr(upkeep_module, "_KEYWORD_STALE_ROWS", 100)
    store, table, rng, centres = await _indexed(tmp_path, 9, 2_000)
    await store.tables(INDEX).ensure_fts()
    vector_index = _vector_index_uuids(await table.list_indices())

    def outside(indices: list) -> int:
        return next(i.num_unindexed_rows for i in indices if "search_text" in i.columns)

    await table.add(_rows(2_000, 60, rng, centres))
    assert await store.tables(INDEX).compact() is False  # held back: not due
    assert await store.tables(INDEX).refresh_keyword_index() is False  # 60 outside: under the line
    assert outside(await table.list_indices()) == 60
    await table.add(_rows(2_060, 60, rng, centres))
    assert await store.tables(INDEX).refresh_keyword_index() is True
    indices = await table.list_indices()
    assert outside(indices) == 0
    assert _vector_index_uuids(indices) == vector_index  # the vector index untouched
    hits = await store.tables(INDEX).text_search("c2100", 5)
    assert [hit["id"] for hit in hits][:1] == ["c2100"]


async def test_the_index_is_built_again_in_the_background_once_enough_rows_are_outside_it(
    tmp_path: Path, small_plan: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows outside the vector index are searched exactly beside it, a cost per search each."""
    monkeypatch.setattr(ann_module, "REBUILD_UNINDEXED_ROWS", 300)
    store, table, rng, centres = await _indexed(tmp_path, 10, 2_000)
    first = _vector_index_uuids(await table.list_indices())

    def outside(indices: list) -> int:
        return next(i.num_unindexed_rows for i in indices if "vector" in i.columns)

    await table.add(_rows(2_000, 200, rng, centres))
    await store.tables(INDEX).index_vectors_later()
    await store.wait_background()
    assert _vector_index_uuids(await table.list_indices()) == first  # 200 outside: not yet
    await table.add(_rows(2_200, 200, rng, centres))
    await store.tables(INDEX).index_vectors_later()
    await store.wait_background()
    indices = await table.list_indices()
    assert _vector_index_uuids(indices) != first and outside(indices) == 0
    assert [i.name for i in indices if "vector" in i.columns] == [ann_plan(2_400).index_name]  # as planned now


class _Heard(logging.Handler):
    """Sets an event when a record whose message holds `words` is logged (from the event loop's thread)."""

    def __init__(self, words: str) -> None:
        super().__init__(logging.INFO)
        self.words = words
        self.event = asyncio.Event()

    def emit(self, record: logging.LogRecord) -> None:
        if self.words in record.getMessage():
            self.event.set()


@pytest.mark.reliability
@pytest.mark.parametrize("upkeep", ["purge", "compact"])
async def test_a_purge_or_compaction_asked_for_during_a_vector_index_build_waits_for_it(
    tmp_path: Path, small_plan: None, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, upkeep: str
) -> None:
    """The purge cleans files no version references (`delete_unverified`), which LanceDB calls safe only
    with no write in progress, and an index being built is one until it commits; a compaction drops the
    old index the build replaces. The build is held at its start by an event: deterministic, no sleeps."""
    import vask_server.adapters.upkeep as upkeep_module

    store, table, rng, centres = await _indexed(tmp_path, 11, 1_000)
    await table.add(_rows(1_000, 2_000, rng, centres))  # outgrown: rebuilt in the background
    building, release = asyncio.Event(), asyncio.Event()
    create = store.database.ann.create
    order: list[str] = []

    async def held_create(name: str, table: Any, plan: Any) -> None:
        building.set()
        await release.wait()
        await create(name, table, plan)
        order.append("built")

    drop = store.database.ann.drop

    async def noted_drop(name: str, table: Any) -> None:
        order.append(f"{upkeep} drops the index")
        await drop(name, table)

    monkeypatch.setattr(store.database.ann, "create", held_create)
    monkeypatch.setattr(store.database.ann, "drop", noted_drop)
    monkeypatch.setattr(upkeep_module, "_COMPACT_INDEXED_FRAGMENTS", 1)  # (a compaction is due)
    await store.tables(INDEX).index_vectors_later()
    await building.wait()
    await store.tables(INDEX).delete_notes(["note3.md"])  # the excluded note (writes go on during a build)

    heard = _Heard("waits for the vector index being built")
    caplog.set_level(logging.INFO, logger=upkeep_module.__name__)
    logging.getLogger(upkeep_module.__name__).addHandler(heard)
    try:
        work = asyncio.create_task(store.tables(INDEX).purge() if upkeep == "purge" else store.tables(INDEX).compact())
        waiting = asyncio.create_task(heard.event.wait())
        await asyncio.wait({work, waiting}, return_when=asyncio.FIRST_COMPLETED)
        assert not work.done(), f"the {upkeep} ran while the vector index was being built"
        assert order == []
        release.set()
        await work
        await store.wait_background()
    finally:
        logging.getLogger(upkeep_module.__name__).removeHandler(heard)
        release.set()
    assert order == ["built", f"{upkeep} drops the index"]

    # the table reads whole and right, and takes a new index
    table = await store.tables(INDEX).chunks()
    assert await table.count_rows() == 3_000 - 20
    assert _vector_index_uuids(await table.list_indices()) == []  # dropped by the purge or compaction
    if upkeep == "purge":
        assert len(await table.list_versions()) == 1  # no older version keeps the excluded note
    plan = await store.tables(INDEX).missing_vector_index()
    assert plan == ann_plan(2_980)
    await store.tables(INDEX).index_vectors_now(plan)
    assert len(_vector_index_uuids(await table.list_indices())) == 1
    for query in centres[:10].astype(np.float32):
        hits = await store.tables(INDEX).vector_search(query, 50)
        exact = await table.query().nearest_to(query).distance_type("cosine").limit(50).bypass_vector_index().to_arrow()
        assert not any(hit["path"] == "note3.md" for hit in hits)
        assert len({hit["id"] for hit in hits} & set(exact["id"].to_pylist())) >= 45
