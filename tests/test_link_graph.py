"""The link graph built from the notes' names and, a batch at a time, their links: links read by
Arrow's JSON reader, and what it does with links that resolve to nothing, to the note itself, twice,
or are no JSON."""

from __future__ import annotations

import gc
import json
import weakref

import numpy as np
import pyarrow as pa

from vask_server.adapters.manifest import resolved_links
from vask_server.services.query.graph import LinkGraph


def _links(*targets: str | None) -> str:
    fields = {"heading": "Plan", "block": None, "alias": "shown", "embed": False}
    return json.dumps([{"target": str(t), "resolved": t, **fields} for t in targets], ensure_ascii=False)


def _notes(rows: list[tuple[str, str | None]]) -> pa.Table:
    paths, titles = zip(*rows, strict=True)
    return pa.table(
        {
            "path": pa.array(paths),
            "title": pa.array(titles),
            "aliases": pa.array([["also " + p] for p in paths], pa.list_(pa.string())),
            "tags": pa.array([["project", "x/y"] for _ in paths], pa.list_(pa.string())),
        }
    )


def _batch(rows: list[tuple[str, str | None]], kind: pa.DataType | None = None) -> pa.RecordBatch:
    paths, links = zip(*rows, strict=True)
    kind = kind or pa.string()
    return pa.record_batch({"path": pa.array(paths, kind), "links": pa.array(links, kind)})


def test_resolved_links_gives_each_link_its_row_and_target_whatever_else_it_holds():
    odd = 'Ünïcode "quoted"\\ and\nline.md'
    rows, targets = resolved_links(
        pa.array([_links("b.md", None, "c.md"), None, "[]", _links(odd), json.dumps([{"resolved": "d.md"}])])
    )
    assert rows.tolist() == [0, 0, 0, 3, 4]
    assert targets.to_pylist() == ["b.md", None, "c.md", odd, "d.md"]


def test_a_row_that_is_no_json_is_skipped_and_the_others_are_read(caplog):
    rows, targets = resolved_links(pa.array([_links("b.md"), "{not json", _links("c.md", "a.md"), "42"]))
    assert rows.tolist() == [0, 2, 2]
    assert targets.to_pylist() == ["b.md", "c.md", "a.md"]
    assert "not all JSON; reading them note by note" in caplog.text and "not json" not in caplog.text


def test_the_graph_keeps_links_between_notes_only_once_and_never_to_the_note_itself():
    notes = _notes([("a.md", "A"), ("b.md", "B"), ("c.md", None), ("é/d.md", "D")])
    first = _batch(
        [
            ("a.md", _links("b.md", "b.md", "a.md", "missing.md", None)),  # twice, itself, no note, unresolved
            ("b.md", None),
        ]
    )
    # in another order, as large strings, with a note the names did not have (written between the reads)
    second = _batch([("é/d.md", "[]"), ("new.md", _links("a.md")), ("c.md", _links("a.md", "b.md"))], pa.large_string())
    graph = LinkGraph.from_batches(notes, [first, second])
    assert list(graph) == ["a.md", "b.md", "c.md", "é/d.md"]
    assert graph.links_to("a.md") == {"b.md"}
    assert graph.linked_from("a.md") == {"c.md"}
    assert graph["b.md"] == {"a.md", "c.md"}
    assert graph["é/d.md"] == frozenset()
    assert graph.link_count("c.md") == 2 and graph.link_count("nowhere.md") == 0
    assert graph.title("a.md") == "A" and graph.title("c.md") is None and graph.title("nowhere.md") is None
    assert "é/d.md" in graph and "new.md" not in graph and 3 not in graph
    assert graph.directory.by_name["also a.md"] == ["a.md"]
    assert graph.directory.by_name["d"] == ["é/d.md"]
    assert graph.directory.sorted_tags == ["project", "x/y"]


def test_each_of_20000_notes_is_found_by_its_path():
    paths = [f"notes/{i:05d}.md" for i in range(20_000)]
    linked = np.random.default_rng(3).integers(0, len(paths), size=len(paths))
    batches = [
        _batch([(paths[i], _links(paths[int(linked[i])])) for i in range(start, start + 5_000)])
        for start in range(0, len(paths), 5_000)
    ]
    graph = LinkGraph.from_batches(_notes([(p, p) for p in paths]), batches)
    for i in range(0, len(paths), 997):
        assert graph.links_to(paths[i]) == (set() if int(linked[i]) == i else {paths[int(linked[i])]})
        assert graph.title(paths[i]) == paths[i]


def test_a_graph_and_its_directory_are_freed_as_soon_as_nothing_holds_them():
    """No reference cycle: a graph replaced after a write goes at once, not at a full collection."""
    notes = _notes([("a.md", "A"), ("b.md", "B")])
    graph = LinkGraph.from_batches(notes, [_batch([("a.md", _links("b.md")), ("b.md", "[]")])])
    assert graph.directory.by_name["a"] == ["a.md"]
    gone = weakref.ref(graph)
    gc.disable()
    try:
        del graph
        assert gone() is None
    finally:
        gc.enable()
