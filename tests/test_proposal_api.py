"""/v1/proposals against a running app: a connection the related pane shows unlinked is linked through the
API, the running server's watcher re-indexes the note so that it shows linked, undo puts the bytes back;
a phone's token may propose but decides only once the person allowed it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from tests.web_helpers import Api, running_app
from vask_server.adapters.token import add_device, allow_apply

NOTE = "02 Areas/Cooking/Sourdough starter log.md"


async def related(api: Api, path: str) -> list[dict[str, Any]]:
    response = await api.get("/v1/related", params={"path": path})
    assert response.status == 200, await response.text()
    rows: list[dict[str, Any]] = (await response.json())["related"]
    return rows


async def test_an_unlinked_connection_linked_through_the_api_is_linked_after_the_watchers_reindex(
    fake_ollama, vault: Path, settings_for
) -> None:
    async with running_app(settings_for(vault), watch=True) as api:
        unlinked = [row for row in await related(api, NOTE) if not row["linked"]]
        assert unlinked, "the sample note has connections not linked yet"
        target = unlinked[0]["path"]
        before = (vault / NOTE).read_bytes()
        response = await api.post("/v1/proposals/link", {"path": NOTE, "target": target})
        assert response.status == 201
        body = await response.json()
        proposal = body["proposal"]
        assert body["new"] and body["message"] == "Proposed, waiting for approval." and proposal["state"] == "pending"
        assert proposal["source"] == "links" and proposal["link"]["target"] == target
        assert proposal["diff"].startswith(f"--- a/{NOTE}\n+++ b/{NOTE}\n") and proposal["before"] == before.decode()
        assert (vault / NOTE).read_bytes() == before  # proposing writes nothing
        listed = await (await api.get("/v1/proposals", params={"state": "pending"})).json()
        assert [p["id"] for p in listed["proposals"]] == [proposal["id"]] and listed["counts"]["pending"] == 1
        assert "diff" not in listed["proposals"][0]  # lists stay small: the texts are in GET /v1/proposals/{id}
        shown = await (await api.get(f"/v1/proposals/{proposal['id'][:6]}")).json()
        assert shown["proposal"]["diff"] == proposal["diff"]

        applied = await api.post(f"/v1/proposals/{proposal['id']}/apply", {})
        assert applied.status == 200, await applied.text()
        assert (await applied.json())["proposal"]["undoable"] is True
        assert (vault / NOTE).read_bytes() == proposal["after"].encode("utf-8")
        for _ in range(200):  # the watcher sees the rename, as it sees any save, and the note is read again
            rows = {row["path"]: row for row in await related(api, NOTE)}
            if rows.get(target, {}).get("linked"):
                break
            await asyncio.sleep(0.1)
        assert rows[target]["linked"] is True and rows[target]["reason"] == "links to"

        undone = await api.post(f"/v1/proposals/{proposal['id']}/undo", {})
        assert undone.status == 200 and (await undone.json())["proposal"]["state"] == "undone"
        assert (vault / NOTE).read_bytes() == before


async def test_a_phone_proposes_but_decides_only_once_allowed(fake_ollama, vault: Path, settings_for, tmp_path) -> None:
    index = tmp_path / "index"
    phone = {"Authorization": f"Bearer {add_device(index, 'phone')}"}
    tablet = {"Authorization": f"Bearer {add_device(index, 'tablet', may_apply=True)}"}
    async with running_app(settings_for(vault)) as api:
        health = await (await api.get("/v1/health", headers=phone)).json()
        assert health["device"] == {"name": "phone", "can_pull": False, "can_apply": False}
        assert (await (await api.get("/v1/health")).json())["device"]["can_apply"] is True
        edit = {"path": "Home.md", "edits": [{"old": "# Home\n", "new": "# Start here\n"}], "source": "phone-agent"}
        response = await api.post("/v1/proposals", edit, headers=phone)
        assert response.status == 201, await response.text()
        proposal_id = (await response.json())["proposal"]["id"]
        assert (await (await api.get(f"/v1/proposals/{proposal_id}", headers=phone)).json())["proposal"]["device"] == (
            "phone"
        )
        before = (vault / "Home.md").read_bytes()
        for action in ("apply", "reject", "undo"):
            refused = await api.post(f"/v1/proposals/{proposal_id}/{action}", {}, headers=phone)
            error = (await refused.json())["error"]
            assert refused.status == 403 and error["code"] == "apply_not_allowed"
            assert "vask token allow-apply phone" in error["hint"]
        assert (vault / "Home.md").read_bytes() == before

        allow_apply(index, "phone", True)  # from its next request, no restart
        assert (await (await api.get("/v1/health", headers=phone)).json())["device"]["can_apply"] is True
        result = await api.post("/v1/proposals/apply-all", {"source": "phone-agent"}, headers=phone)
        assert [row["id"] for row in (await result.json())["applied"]] == [proposal_id]
        assert (vault / "Home.md").read_bytes() != before
        allow_apply(index, "phone", False)
        refused = await api.post(f"/v1/proposals/{proposal_id}/undo", {}, headers=phone)
        assert refused.status == 403
        undone = await api.post(f"/v1/proposals/{proposal_id}/undo", {}, headers=tablet)  # allowed when added
        assert undone.status == 200 and (vault / "Home.md").read_bytes() == before


async def test_bad_requests_say_what_is_wrong(fake_ollama, vault: Path, settings_for) -> None:
    async with running_app(settings_for(vault)) as api:
        cases = [
            ({"path": "Home.md", "edits": [{"old": "no such words", "new": "x"}]}, "exactly"),
            ({"path": "Home.md", "edits": [{"old": "Home"}]}, "'edits' must be a list"),
            ({"path": "Home.md", "content": "x", "edits": [{"old": "Home", "new": "x"}]}, "one of the two"),
            ({"path": "Home.md", "kind": "move", "content": "x"}, "'kind' must be"),
            ({"path": "../outside.md", "content": "x"}, "leaves the vault"),
            ({"path": "Sample.canvas", "kind": "create", "content": "{}"}, "Markdown note"),
            ({"path": "Home.md", "content": "x", "source": "s" * 65}, "at most 64"),
        ]
        for body, said in cases:
            response = await api.post("/v1/proposals", body)
            error = (await response.json())["error"]
            assert response.status == 400 and said in error["message"] + error["hint"], (body, error)
        response = await api.post("/v1/proposals/link", {"path": "Home.md", "target": "Home.md"})
        assert response.status == 400 and "itself" in (await response.json())["error"]["message"]
