"""/v1/related and the link graph it shares with the search's graph boost."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from tests.web_helpers import Api, running_app
from vask_server.adapters.meta import IndexRecord
from vask_server.adapters.schema import vector_matrix
from vask_server.adapters.sql import sql_string
from vask_server.adapters.store import Store
from vask_server.core.cjk import keyword_text
from vask_server.core.scale import IDENTITY, CosineScale
from vask_server.services.query import connections
from vask_server.services.query.ranking_variants import RankingVariant
from vask_server.services.query.search import Searcher
from vask_server.services.sync import indexer
from vask_server.web.keys import SERVICES

LINKER = "Daily/2026-03-14.md"
TARGET = "04 Archive/Ideas.md"


def _count(monkeypatch: pytest.MonkeyPatch, store: Store, names: list[str]) -> dict[str, int]:
    """Counts calls of these store methods (those that exist)."""
    calls = dict.fromkeys(names, 0)
    for name in names:
        method = getattr(store, name, None)
        if method is None:
            continue

        def counted(*args: Any, _name: str = name, _method: Callable[..., Any] = method, **kwargs: Any) -> Any:
            calls[_name] += 1
            return _method(*args, **kwargs)

        monkeypatch.setattr(store, name, counted)
    return calls


async def _related(api: Api, path: str, top_k: int = 10) -> list[dict[str, Any]]:
    response = await api.get("/v1/related", params={"path": path, "top_k": str(top_k)})
    body = await response.json()
    assert response.status == 200, body
    result: list[dict[str, Any]] = body["related"]
    return result


async def test_the_graph_is_read_once_for_every_related_call_and_the_graph_boost(
    fake_ollama, vault, settings_for, monkeypatch
):
    async with running_app(settings_for(vault)) as api:
        services = api.client.app[SERVICES]
        # Every read of the manifest opens the notes table: `notes` counts them, whatever the reader.
        calls = _count(monkeypatch, services.store, ["notes", "manifest", "note_links"])
        assert await _related(api, "Home.md")
        first = dict(calls)
        assert await _related(api, LINKER)
        assert await _related(api, "Home.md")
        searcher = services.searcher
        config = RankingVariant(graph=True)
        assert (await searcher.search("running plan", top_k=5, min_similarity=0.0, config=config)).hits
        assert calls == first, "a later call, or the graph boost, read the manifest again"
        assert calls["manifest"] == 0  # only the columns the graph needs


async def test_an_added_link_is_related_after_the_sync_even_within_the_same_second(
    fake_ollama, vault, settings_for, monkeypatch
):
    # Every sync records the same last_sync, as two syncs within one second do: only the store's
    # count of its writes can tell the graph it is stale.
    monkeypatch.setattr(indexer, "now_iso", lambda: "2026-01-01T00:00:00+00:00")
    async with running_app(settings_for(vault)) as api:
        before = {r["path"]: r["reason"] for r in await _related(api, TARGET, top_k=50)}
        assert before.get(LINKER) != "linked from"
        note = vault / LINKER
        note.write_text(note.read_text() + "\nSee also [[04 Archive/Ideas]].\n", encoding="utf-8")
        assert (await api.post("/v1/reindex", {"paths": [LINKER]})).status == 202
        await asyncio.sleep(0.05)
        await api.live.wait_idle()
        after = {r["path"]: r["reason"] for r in await _related(api, TARGET, top_k=50)}
        assert after.get(LINKER) == "linked from"
        assert {r["path"]: r["reason"] for r in await _related(api, LINKER, top_k=50)}[TARGET] == "links to"

        (vault / LINKER).unlink()
        assert (await api.post("/v1/reindex", {"paths": [LINKER]})).status == 202
        await asyncio.sleep(0.05)
        await api.live.wait_idle()
        assert LINKER not in {r["path"] for r in await _related(api, TARGET, top_k=50)}
        assert (await api.get("/v1/related", params={"path": LINKER})).status == 404


async def _related_from_the_manifest(
    store: Store, index: IndexRecord, path: str, top_k: int, scale: CosineScale = IDENTITY
) -> list[dict[str, Any]]:
    """/v1/related recomputed from the rows themselves and every note's manifest links. The candidates
    are the passages the product looks at (the 60 closest to the note's passages' mean, exact here;
    the title's 30 best keyword matches; every passage of a linked note neither reached); each other
    note scores its candidate passage closest to any of the note's passages, blended with its closeness
    to the note as a whole (cosines on the scale of `scale`), plus the title's keyword share, + 0.15 when
    the two are linked."""
    tables = store.tables(index)
    manifest = await tables.manifest()
    record = manifest[path]
    outgoing = {link.get("resolved") for link in json.loads(record.links or "[]")} - {None, path}
    incoming = {
        other.path
        for other in manifest.values()
        if other.path != path and any(link.get("resolved") == path for link in json.loads(other.links or "[]"))
    }
    rows = await tables.all_chunk_rows(["id", "path", "vector"], where="kind = 'chunk'")
    paths, ids = rows["path"].to_pylist(), rows["id"].to_pylist()
    vectors = vector_matrix(rows["vector"], index.dimension)
    own = vectors[[i for i, p in enumerate(paths) if p == path]]
    if len(own) > connections._SEED_PASSAGES:  # a long note: that many of its passages, spread over it
        own = own[np.linspace(0, len(own) - 1, connections._SEED_PASSAGES).round().astype(int)]
    whole = own.mean(axis=0) / (float(np.linalg.norm(own.mean(axis=0))) or 1.0) if len(own) else None
    share = connections._PASSAGE_SHARE
    # the note's title as keywords, as the product asks the keyword index (BM25 as a share of the best)
    title = record.title or path
    where = f"path != {sql_string(path)} AND kind = 'chunk'"
    words = keyword_text(title, index.keyword_terms)  # (cut as the index cuts its keyword text)
    by_name = await tables.text_search(words, 30, where)
    top = max((float(r["score"]) for r in by_name), default=0.0)
    named = {r["id"]: float(r["score"]) / top for r in by_name} if top > 0 else {}
    # the candidates: the 60 passages nearest the mean (of all rows, note records included, as the
    # unfiltered search sees them), less the note's own and the records; the keyword matches
    all_rows = await tables.all_chunk_rows(["id", "path", "kind", "vector"])
    near = vector_matrix(all_rows["vector"], index.dimension) @ whole if whole is not None else np.zeros(0)
    nearest = np.argsort(-near, kind="stable")[:60]
    candidates = {
        all_rows["id"][int(i)].as_py()
        for i in nearest
        if all_rows["path"][int(i)].as_py() != path and all_rows["kind"][int(i)].as_py() == "chunk"
    } | set(named)
    reached = {paths[i] for i in range(len(ids)) if ids[i] in candidates}
    candidates |= {ids[i] for i in range(len(ids)) if paths[i] in (outgoing | incoming) - reached}
    scores: dict[str, float] = {}
    for i, other in enumerate(paths):
        if ids[i] in candidates and whole is not None:
            closeness = share * scale(float((own @ vectors[i]).max())) + (1 - share) * scale(float(vectors[i] @ whole))
            closeness += connections.TITLE_WEIGHT * named.get(ids[i], 0.0)
            scores[other] = max(scores.get(other, -1.0), closeness)
    for other in outgoing | incoming:
        if other in manifest:
            scores[other] = scores.get(other, 0.0) + 0.15
    reasons = {p: ("links to" if p in outgoing else "linked from" if p in incoming else "similar") for p in scores}
    ordered = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
    # the linked notes first, and at least a third of the places for notes not linked yet (more when
    # fewer are linked); a note linking to over 100 others is a list, never shown as one not linked
    linking = {
        p: len({link.get("resolved") for link in json.loads(r.links or "[]")} - {None, p}) for p, r in manifest.items()
    }
    linked = [item for item in ordered if reasons[item[0]] != "similar"]
    similar = [item for item in ordered if reasons[item[0]] == "similar" and linking.get(item[0], 0) <= 100]
    shown = similar[: max(top_k // 3, top_k - len(linked))]
    ranked = sorted(linked[: top_k - len(shown)] + shown, key=lambda i: (-i[1], i[0]))
    return [
        {"path": p, "title": manifest[p].title if p in manifest else p, "score": round(s, 4), "reason": reasons[p]}
        for p, s in ranked
    ]


def _graph_from_the_manifest(manifest: dict[str, Any]) -> dict[str, set[str]]:
    """The graph boost's graph as it was built before (Searcher._graph)."""
    graph: dict[str, set[str]] = {path: set() for path in manifest}
    for record in manifest.values():
        for link in json.loads(record.links or "[]"):
            target = link.get("resolved")
            if target and target != record.path and target in graph:
                graph[record.path].add(target)
                graph[target].add(record.path)
    return graph


async def test_related_and_the_graph_are_what_the_manifest_says_on_sample_vault(fake_ollama, vault, settings_for):
    async with running_app(settings_for(vault)) as api:
        services = api.client.app[SERVICES]
        searcher: Searcher = services.searcher
        index = searcher.active()
        manifest = await services.store.tables(index).manifest()
        graph = await searcher.graphs.get(index)
        assert {path: set(linked) for path, linked in graph.items()} == _graph_from_the_manifest(manifest)
        assert sum(len(linked) for linked in graph.values()) > 100  # sample_vault is well linked
        assert len(manifest) > 50
        for path in sorted(manifest):
            shown = [{k: r[k] for k in ("path", "title", "score", "reason")} for r in await _related(api, path)]
            expected = await _related_from_the_manifest(
                services.store, index, path, 10, await searcher.cosine_scale(index)
            )
            # (the same figures, up to the last digit shown: float32 in the product, float64 here)
            assert [{**r, "score": None} for r in shown] == [{**r, "score": None} for r in expected], path
            assert [r["score"] for r in shown] == pytest.approx([r["score"] for r in expected], abs=2e-4), path
