"""HTTP handlers under /v1. Each parses and validates, calls a service, and shapes the answer."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
from typing import Any

from aiohttp import web

from vask_server import __version__
from vask_server.adapters.token import DEFAULT_DEVICE
from vask_server.core.model_names import OLLAMA_REGISTRIES, NotAModelName, pull_allowed, registry_host
from vask_server.core.question import Question
from vask_server.errors import BadRequest, DeviceNotAllowed, RegistryNotAllowed, VaskError
from vask_server.services.context import Services, index_status
from vask_server.services.doctor import report as doctor_report
from vask_server.services.doctor import run_checks
from vask_server.services.paths import note_path
from vask_server.services.query.related import related_notes
from vask_server.services.sync.live import LiveIndex
from vask_server.web import validation as v
from vask_server.web.keys import LIVE, SERVICES, TOKENS
from vask_server.web.middleware import AUTHENTICATED, DEVICE
from vask_server.web.openapi import openapi_document

log = logging.getLogger(__name__)
routes = web.RouteTableDef()

HEARTBEAT_SECONDS = 15.0


def _services(request: web.Request) -> Services:
    return request.app[SERVICES]


def _live(request: web.Request) -> LiveIndex:
    return request.app[LIVE]


def _vault_path(services: Services, value: str, name: str) -> str:
    """A vault-relative note path, checked to stay inside the vault."""
    return note_path(services.vault, value, name)


def _note_field(services: Services, body: dict[str, Any], name: str) -> str | None:
    """`current_note` or `open_note`: a vault-relative path, or absent."""
    value = body.get(name)
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise BadRequest(f"'{name}' must be a vault-relative path.")
    return _vault_path(services, value, name)


@routes.get("/v1/health")
async def health(request: web.Request) -> web.Response:
    if not request.get(AUTHENTICATED):
        return web.json_response({"status": "ok"})
    services, live = _services(request), _live(request)
    settings = services.settings
    embeds, chats = services.gateway, services.chat_gateway
    if chats is embeds:
        reachable, missing = await embeds.probe([settings.embed_model, settings.chat_model])
        chat_reachable = reachable
    else:
        (reachable, missing), (chat_reachable, chat_missing) = await asyncio.gather(
            embeds.probe([settings.embed_model]), chats.probe([settings.chat_model])
        )
        missing = [*missing, *chat_missing]
    counts = live.counts
    return web.json_response(
        {
            "status": "ok",
            "version": __version__,
            "vault": str(services.vault_root),
            # (the embeddings' server under its old name, which clients read)
            "ollama": {"host": embeds.host, "reachable": reachable},
            "servers": {
                "embed": {"provider": embeds.provider, "url": embeds.host, "reachable": reachable},
                "chat": {"provider": chats.provider, "url": chats.host, "reachable": chat_reachable},
            },
            "models": {"embed": settings.embed_model, "chat": settings.chat_model, "missing": missing},
            # which device's token this is, and whether it may download a missing model (POST /v1/models/pull)
            # (and whether it may apply, reject and undo proposed changes to notes)
            "device": {
                "name": request[DEVICE],
                "can_pull": request[DEVICE] == DEFAULT_DEVICE,
                "can_apply": request.app[TOKENS].may_apply(request[DEVICE]),
            },
            "index": {
                "notes": counts.get("notes", 0),
                "chunks": counts.get("chunks", 0),
                "pending": live.pending,
                "model": counts.get("model"),
                "dimension": counts.get("dimension"),
                "last_sync": counts.get("last_sync"),
            },
        }
    )


@routes.get("/v1/models")
async def models(request: web.Request) -> web.Response:
    """What each model server serves, for choosing a chat model (the plugin's settings suggest them)."""
    services = _services(request)
    settings = services.settings
    roles = {"embed": (services.gateway, settings.embed_model), "chat": (services.chat_gateway, settings.chat_model)}
    listed = await asyncio.gather(*(gateway.models() for gateway, _ in roles.values()))
    return web.json_response(
        {
            role: {"provider": gateway.provider, "url": gateway.host, "configured": model, "models": names}
            for (role, (gateway, model)), names in zip(roles.items(), listed, strict=True)
        }
    )


# A model's name as Ollama takes it ("qwen2.5:14b", "library/x:tag", "hf.co/user/repo:Q4_K_M"): no spaces,
# no control characters, nothing a shell or a path could read otherwise.
_MODEL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,199}")


@routes.post("/v1/models/pull")
async def pull_model(request: web.Request) -> web.StreamResponse:
    """Download a model into the model server (Ollama's /api/pull), its progress as an NDJSON stream.
    Only the default device may, and only from Ollama's registry or one VASK_PULL_REGISTRIES names: a
    download fills the model server's disk and runs what it fetched, so a phone's token cannot start one."""
    services = _services(request)
    settings = services.settings
    if request.get(DEVICE) != DEFAULT_DEVICE:
        raise DeviceNotAllowed(
            f"This device ({request.get(DEVICE)}) may not download models; only the computer vask runs on may.",
            "Download it on that computer: the plugin there offers it, or run `ollama pull NAME` beside the model "
            "server.",
        )
    body = await v.json_object(request, {"model", "role"})
    model = body.get("model")
    if not isinstance(model, str) or not _MODEL_NAME.fullmatch(model):
        raise BadRequest("'model' must be a model's name, e.g. 'qwen2.5:14b'.")
    try:
        host = registry_host(model)
    except NotAModelName as exc:
        raise BadRequest(f"'model' must be a model's name: {exc}.", "For example 'qwen2.5:14b'.") from None
    if not pull_allowed(host, settings.pull_registries):
        raise RegistryNotAllowed(
            f"'{model}' would be downloaded from {host}, which is not Ollama's registry.",
            f"vask downloads models from {' or '.join(OLLAMA_REGISTRIES)} only. To allow {host}, start vask "
            f"with VASK_PULL_REGISTRIES={host} (--pull-registries), or pull it yourself: `ollama pull {model}`.",
        )
    role = body.get("role", "embed" if model == settings.embed_model else "chat")
    if role not in ("embed", "chat"):
        raise BadRequest("'role' must be 'embed' or 'chat': which model server pulls the model.")
    gateway = services.gateway if role == "embed" else services.chat_gateway
    # The first step is awaited before the stream starts, so a server that cannot pull, or cannot be
    # reached, is an HTTP error like any other; what fails later ends the stream with an error event.
    steps = gateway.pull(model)
    try:
        first = await anext(steps)
    except StopAsyncIteration:
        first = None
    response = web.StreamResponse(
        headers={"Content-Type": "application/x-ndjson", "Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    )
    await response.prepare(request)

    async def send(event: dict[str, Any]) -> None:
        await response.write((json.dumps(event, ensure_ascii=False) + "\n").encode("utf-8"))

    try:
        if first is not None:
            await send({"type": "progress", **first.to_dict()})
            async for step in steps:
                await send({"type": "progress", **step.to_dict()})
        await send({"type": "done", "model": model})
    except VaskError as exc:
        await send({"type": "error", **exc.to_dict()})
    except (ConnectionResetError, asyncio.CancelledError):
        log.info("client went away; the pull of %s stopped", model)
        raise
    except Exception:
        log.exception("pull failed")
        await send({"type": "error", **VaskError("Internal error.", "See the vask server log.").to_dict()})
    finally:
        await steps.aclose()
    await response.write_eof()
    return response


@routes.get("/v1/doctor")
async def doctor(request: web.Request) -> web.Response:
    """The checks of `vask doctor --json`, run by this server (the plugin's settings show them)."""
    services = _services(request)
    checks = await run_checks(services.settings, serving=f"{request.scheme}://{request.host}")
    return web.json_response(doctor_report(checks))


@routes.get("/v1/status")
async def status(request: web.Request) -> web.Response:
    services, live = _services(request), _live(request)
    detail = await index_status(services, check=True, disk=True)
    error = live.last_error
    report = live.last_report
    snapshot = live.snapshot()
    return web.json_response(
        {
            "state": snapshot["state"],
            "paused": snapshot["paused"],
            "progress": snapshot["progress"],
            "eta_seconds": snapshot["eta_seconds"],
            "notes": detail["notes"],
            "chunks": detail["chunks"],
            "keyword_only_notes": detail["keyword_only_notes"],
            "disk_bytes": detail["disk_bytes"],
            "disk_bytes_per_10000_notes": detail["disk_bytes_per_10000_notes"],
            "pending": live.pending,
            "in_progress": live.in_progress,
            "done": live.done,
            "total": live.total,
            "stage": live.stage,
            "stage_seconds": live.stage_seconds,
            "skipped": detail["skipped"],
            "failed": detail["failed"],
            "store_errors": detail["store_errors"],
            "model": detail["model"],
            "dimension": detail["dimension"],
            "building": detail["building"],
            "last_sync": detail["last_sync"],
            "excluded": detail["excluded"],
            "language": detail["language"],
            "instructions": detail["instructions"],
            "servers": detail["servers"],
            "last_error": error.to_dict() if error else None,
            "last_report": (
                {
                    "changed": report.changed,
                    "touched": report.touched,
                    "deleted": report.deleted,
                    "chunks_embedded": report.chunks_embedded,
                    "chunks_reused": report.chunks_reused,
                    "seconds": round(report.seconds, 3),
                    "warnings": report.warnings[:100],
                }
                if report
                else None
            ),
        }
    )


@routes.post("/v1/search")
async def search(request: web.Request) -> web.Response:
    services = _services(request)
    body = await v.json_object(
        request,
        {
            "query",
            "top_k",
            "min_similarity",
            "filters",
            "mode",
            "now",
            "read_time",
            "current_note",
            "open_note",
            "connect",
        },
    )
    text = v.text(body, "query")
    # (here `current_note` is the note open, by its older name: what "this note" means)
    open_note = _note_field(services, body, "open_note") or _note_field(services, body, "current_note")
    settings = services.settings
    question = Question(
        text,
        top_k=v.integer(body.get("top_k"), "top_k", settings.top_k, 1, v.MAX_TOP_K),
        min_similarity=v.number(body.get("min_similarity"), "min_similarity", settings.min_similarity, 0.0, 1.0),
        mode=v.mode(body),
        today=v.today(body.get("now")),
        filters=v.filters(body.get("filters")),
        read_time=v.flag(body.get("read_time"), "read_time", True),
        open_note=open_note,
        connect=v.flag(body.get("connect"), "connect", True),
    )
    result = await services.searcher.search_question(question)
    payload: dict[str, Any] = {
        "hits": [{**hit.to_dict(), "text": hit.text} for hit in result.hits],
        "mode": result.mode,
        "time_range": result.time_range.to_dict() if result.time_range else None,
        "scope": result.scope.to_dict() if result.scope else None,
        "order": result.order,
        "connection": result.connection_dict(),
    }
    if result.notice:
        payload["notice"] = result.notice
    return web.json_response(payload)


@routes.post("/v1/ask")
async def ask(request: web.Request) -> web.StreamResponse:
    services = _services(request)
    settings = services.settings
    body = await v.json_object(
        request,
        {
            "question",
            "history",
            "top_k",
            "min_similarity",
            "filters",
            "current_note",
            "open_note",
            "chat_model",
            "now",
            "read_time",
            "connect",
        },
    )
    about_note = _note_field(services, body, "current_note")
    open_note = _note_field(services, body, "open_note")
    chat_model = body.get("chat_model")
    if chat_model is not None and (not isinstance(chat_model, str) or not chat_model.strip()):
        raise BadRequest("'chat_model' must be a model name.")
    if chat_model is not None:
        v.string_list([chat_model], "chat_model")
    question = Question(
        v.text(body, "question"),
        top_k=v.integer(body.get("top_k"), "top_k", settings.top_k, 1, v.MAX_TOP_K),
        min_similarity=v.number(body.get("min_similarity"), "min_similarity", settings.min_similarity, 0.0, 1.0),
        history=tuple(v.history(body.get("history"))),
        filters=v.filters(body.get("filters")),
        about_note=about_note,
        open_note=open_note,
        today=v.today(body.get("now")),
        read_time=v.flag(body.get("read_time"), "read_time", True),
        connect=v.flag(body.get("connect"), "connect", True),
    )
    # A [[Note]] or #tag that names nothing is the request's fault: a 400 before the stream starts.
    understood = await services.qa.understand(question)
    events = services.qa.ask(understood, chat_model=chat_model.strip() if chat_model else None)
    response = web.StreamResponse(
        headers={"Content-Type": "application/x-ndjson", "Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    )
    await response.prepare(request)
    try:
        async with contextlib.aclosing(events):
            async for event in events:
                await response.write((json.dumps(event, ensure_ascii=False) + "\n").encode("utf-8"))
    except (ConnectionResetError, asyncio.CancelledError):
        log.info("client went away; answer generation stopped")
        raise
    except Exception:
        log.exception("ask failed")
        error = {"type": "error", **VaskError("Internal error.", "See the vask server log.").to_dict()}
        await response.write((json.dumps(error) + "\n").encode())
    await response.write_eof()
    return response


@routes.get("/v1/related")
async def related(request: web.Request) -> web.Response:
    services = _services(request)
    path = request.query.get("path", "")
    if not path:
        raise BadRequest("Query parameter 'path' is required.", "GET /v1/related?path=Folder/Note.md")
    path = _vault_path(services, path, "path")
    try:
        top_k = int(request.query.get("top_k", "10"))
    except ValueError:
        raise BadRequest("'top_k' must be an integer.") from None
    top_k = v.integer(top_k, "top_k", 10, 1, v.MAX_TOP_K)
    index = services.searcher.active()
    related = await related_notes(services.searcher, index, path, top_k)
    return web.json_response({"path": path, "related": related})


@routes.post("/v1/reindex")
async def reindex(request: web.Request) -> web.Response:
    services, live = _services(request), _live(request)
    body = await v.json_object(request, {"paths"})
    paths = body.get("paths")
    if paths is None:
        queued = live.request(None)
    else:
        items = v.string_list(paths, "paths")
        queued = live.request([_vault_path(services, p, "paths") for p in items])
    return web.json_response({"queued": queued}, status=202)


@routes.post("/v1/index/pause")
async def pause_indexing(request: web.Request) -> web.Response:
    _live(request).pause(True)
    return web.json_response({"paused": True})


@routes.post("/v1/index/resume")
async def resume_indexing(request: web.Request) -> web.Response:
    _live(request).pause(False)
    return web.json_response({"paused": False})


@routes.post("/v1/index/first")
async def index_first(request: web.Request) -> web.Response:
    """Notes to index before the others (the plugin sends those open or opened last)."""
    services, live = _services(request), _live(request)
    body = await v.json_object(request, {"paths"})
    items = v.string_list(body.get("paths"), "paths")
    moved = live.prioritize([_vault_path(services, p, "paths") for p in items])
    return web.json_response({"moved": moved})


@routes.get("/v1/events")
async def events(request: web.Request) -> web.StreamResponse:
    live = _live(request)
    response = web.StreamResponse(
        headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    )
    await response.prepare(request)
    queue = live.subscribe()

    async def send(event: dict[str, Any]) -> None:
        await response.write(f"event: status\ndata: {json.dumps(event, ensure_ascii=False)}\n\n".encode())

    try:
        await send(live.snapshot())
        while True:
            try:
                event = await asyncio.wait_for(queue.get(), HEARTBEAT_SECONDS)
            except TimeoutError:
                await response.write(b": ping\n\n")
                await send(live.snapshot())
                continue
            if event.get("type") == "closed":
                break
            await send(event)
    except ConnectionResetError:
        pass
    finally:
        live.unsubscribe(queue)
    return response


@routes.get("/v1/openapi.json")
async def openapi(request: web.Request) -> web.Response:
    return web.json_response(openapi_document())
