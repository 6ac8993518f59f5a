"""HTTP handlers for proposed changes to notes (/v1/proposals): propose a link, an edit or a new note;
list and show them; apply, reject, undo. Proposing needs any device's token; deciding needs the
default device's, or a device the person allowed (`vask token allow-apply NAME`)."""

from __future__ import annotations

import asyncio
from typing import Any

from aiohttp import web

from vask_server.core.proposals import DEFAULT_HEADING, ChangeRequest
from vask_server.errors import ApplyNotAllowed, BadRequest
from vask_server.services.proposals import ProposalService, ProposalView
from vask_server.web import validation as v
from vask_server.web.keys import SERVICES, TOKENS
from vask_server.web.middleware import DEVICE

routes = web.RouteTableDef()

MAX_SOURCE_CHARS = 64
MAX_REASON_CHARS = 2000
WAITING = "Proposed, waiting for approval."


def _proposals(request: web.Request) -> ProposalService:
    return request.app[SERVICES].proposals


def _may_decide(request: web.Request) -> str:
    """The device deciding, if it may apply, reject and undo proposed changes."""
    device = request[DEVICE]
    if not request.app[TOKENS].may_apply(device):
        raise ApplyNotAllowed(
            f"This device ({device}) may propose changes to notes but not apply, reject or undo them.",
            f"Decide in Obsidian on the computer vask runs on, or with `vask proposals` there; to let this device "
            f"decide too, run `vask token allow-apply {device}` on that computer.",
        )
    return device


def _label(body: dict[str, Any], name: str, default: str, max_chars: int) -> str:
    value = body.get(name)
    if value is None:
        return default
    if not isinstance(value, str) or "\x00" in value or len(value) > max_chars:
        raise BadRequest(f"'{name}' must be a string of at most {max_chars} characters.")
    return _unicode(value, name).strip() or default


def _unicode(value: str, name: str) -> str:
    """JSON can carry lone surrogates ("\\ud800"), which no note can hold."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise BadRequest(f"'{name}' contains invalid Unicode (a lone surrogate).") from None
    return value


def _proposed(view: ProposalView, new: bool) -> web.Response:
    body = {"proposal": view.detail(), "new": new, "message": WAITING if view.state == "pending" else view.state}
    return web.json_response(body, status=201 if new else 200)


@routes.get("/v1/proposals")
async def list_proposals(request: web.Request) -> web.Response:
    service = _proposals(request)
    state = request.query.get("state") or None
    source = request.query.get("source") or None

    def listed() -> dict[str, Any]:
        views, counts = service.listing(state, source)
        return {"proposals": [view.summary() for view in views], "counts": counts}

    return web.json_response(await asyncio.to_thread(listed))


@routes.post("/v1/proposals")
async def propose(request: web.Request) -> web.Response:
    """An edit of a note, or a new note, proposed through the API (an agent, a script)."""
    service = _proposals(request)
    body = await v.json_object(request, {"kind", "path", "content", "edits", "source", "reason"})
    kind = body.get("kind", "edit")
    if kind not in ("edit", "create"):
        raise BadRequest("'kind' must be 'edit' (a note's change) or 'create' (a new note).")
    path = body.get("path")
    if not isinstance(path, str) or not path:
        raise BadRequest("'path' must be a vault-relative note path, like 'Folder/Note.md'.")
    content = body.get("content")
    if content is not None and not isinstance(content, str):
        raise BadRequest("'content' must be the note's whole new text, a string.")
    if content is not None:
        _unicode(content, "content")
    request_ = ChangeRequest(
        kind=kind,
        path=path,
        content=content,
        edits=_edits(body.get("edits")),
        source=_label(body, "source", "api", MAX_SOURCE_CHARS),
        reason=_label(body, "reason", "", MAX_REASON_CHARS),
    )
    view, new = await asyncio.to_thread(service.propose, request_, device=request[DEVICE])
    return _proposed(view, new)


def _edits(value: Any) -> tuple[tuple[str, str], ...]:
    if value is None:
        return ()
    shape = '\'edits\' must be a list of {"old": text in the note, "new": its replacement}.'
    if not isinstance(value, list) or len(value) > v.MAX_LIST_ITEMS:
        raise BadRequest(shape, f"At most {v.MAX_LIST_ITEMS} edits.")
    out: list[tuple[str, str]] = []
    for item in value:
        if not isinstance(item, dict) or set(item) != {"old", "new"}:
            raise BadRequest(shape)
        old, new = item["old"], item["new"]
        if not isinstance(old, str) or not isinstance(new, str) or not old:
            raise BadRequest(shape, "'old' must be non-empty text copied from the note.")
        _unicode(old + new, "edits")
        out.append((old, new))
    return tuple(out)


@routes.post("/v1/proposals/link")
async def propose_link(request: web.Request) -> web.Response:
    """A link from a note to a connection not linked yet (the related pane's "Link")."""
    service = _proposals(request)
    body = await v.json_object(request, {"path", "target", "heading"})
    path, target = body.get("path"), body.get("target")
    if not isinstance(path, str) or not path or not isinstance(target, str) or not target:
        raise BadRequest("'path' (the note to link from) and 'target' (the note to link to) are required.")
    _unicode(path + target, "path")
    heading = _label(body, "heading", DEFAULT_HEADING, 200)
    view, new = await asyncio.to_thread(service.propose_link, path, target, heading=heading, device=request[DEVICE])
    return _proposed(view, new)


@routes.post("/v1/proposals/apply-all")
async def apply_all(request: web.Request) -> web.Response:
    service = _proposals(request)
    body = await v.json_object(request, {"source"})
    source = body.get("source")
    if not isinstance(source, str) or not source.strip():
        raise BadRequest("'source' must name whose proposals to apply, e.g. 'links'.")
    device = _may_decide(request)
    return web.json_response(await asyncio.to_thread(service.apply_all, source, by=device))


@routes.get("/v1/proposals/{id:[^/]+}")
async def show(request: web.Request) -> web.Response:
    service = _proposals(request)
    view = await asyncio.to_thread(service.get, request.match_info["id"])
    return web.json_response({"proposal": view.detail()})


@routes.post("/v1/proposals/{id:[^/]+}/apply")
async def apply(request: web.Request) -> web.Response:
    service = _proposals(request)
    body = await v.json_object(request, {"written"})
    written = v.flag(body.get("written"), "written", False)
    device = _may_decide(request)
    view = await asyncio.to_thread(service.apply, request.match_info["id"], by=device, written=written)
    return web.json_response({"proposal": view.detail()})


@routes.post("/v1/proposals/{id:[^/]+}/reject")
async def reject(request: web.Request) -> web.Response:
    service = _proposals(request)
    await v.json_object(request, set())
    device = _may_decide(request)
    view = await asyncio.to_thread(service.reject, request.match_info["id"], by=device)
    return web.json_response({"proposal": view.detail()})


@routes.post("/v1/proposals/{id:[^/]+}/undo")
async def undo(request: web.Request) -> web.Response:
    service = _proposals(request)
    body = await v.json_object(request, {"written"})
    written = v.flag(body.get("written"), "written", False)
    device = _may_decide(request)
    view = await asyncio.to_thread(service.undo, request.match_info["id"], by=device, written=written)
    return web.json_response({"proposal": view.detail()})
