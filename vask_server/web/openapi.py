"""The OpenAPI 3.1 description of the HTTP API, served at GET /v1/openapi.json: its paths, each
operation's responses and errors; the named schemas they refer to are in web/openapi_schemas.py."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from vask_server import __version__
from vask_server.errors import (
    BadRequest,
    DeviceNotAllowed,
    ForbiddenHost,
    ForbiddenOrigin,
    MethodNotAllowed,
    ModelMissing,
    NotFound,
    NotIndexed,
    OllamaFailed,
    OllamaUnavailable,
    PayloadTooLarge,
    PullUnsupported,
    RegistryNotAllowed,
    ScopeNotFound,
    TooManyAttempts,
    Unauthorized,
    VaskError,
)
from vask_server.web import openapi_proposals
from vask_server.web.openapi_schemas import SCHEMAS

_ERROR = {"$ref": "#/components/schemas/Error"}
# What any request can meet: the token check (and its limit on failures), the Host check, an unexpected failure
_ALWAYS: tuple[type[VaskError], ...] = (Unauthorized, ForbiddenHost, TooManyAttempts, VaskError)
# What an answer's stream can end with instead of "done" (the response is already 200 by then)
_STREAM_ERRORS: tuple[type[VaskError], ...] = (NotIndexed, OllamaUnavailable, ModelMissing, OllamaFailed, VaskError)
# What a model's pull can end with instead of "done", once its progress has begun
_PULL_STREAM_ERRORS: tuple[type[VaskError], ...] = (OllamaUnavailable, OllamaFailed, VaskError)


def _json(schema: dict[str, Any], description: str = "OK") -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _codes(classes: Iterable[type[VaskError]]) -> str:
    return "; ".join(f"{cls.code}: {cls.summary}" for cls in classes)


def _errors(*specific: type[VaskError], always: tuple[type[VaskError], ...] = _ALWAYS) -> dict[str, Any]:
    """An operation's error responses by status, each naming its codes: built from the error
    classes (vask_server/errors.py), so the document cannot name a code the server does not have."""
    by_status: dict[int, list[type[VaskError]]] = {}
    for cls in (*specific, *always):
        if cls not in by_status.setdefault(cls.status, []):
            by_status[cls.status].append(cls)
    responses = {}
    for status, classes in sorted(by_status.items()):
        narrowed = {"properties": {"error": {"properties": {"code": {"enum": [c.code for c in classes]}}}}}
        responses[str(status)] = _json({"allOf": [_ERROR, narrowed]}, _codes(classes))
    return responses


_EVENT = {
    "type": "object",
    "required": ["type"],
    "properties": {
        "type": {"type": "string", "enum": ["sources", "token", "done", "error"]},
        "code": {"type": "string", "enum": [cls.code for cls in _STREAM_ERRORS], "description": "of an error"},
    },
}

_PULL_EVENT = {
    "type": "object",
    "required": ["type"],
    "properties": {
        "type": {"type": "string", "enum": ["progress", "done", "error"]},
        "status": {"type": "string", "description": "of progress: Ollama's step, e.g. 'pulling 8eeb52dfb3bb'"},
        "completed": {"type": ["integer", "null"], "description": "of progress: bytes of this step so far"},
        "total": {"type": ["integer", "null"], "description": "of progress: bytes of this step"},
        "model": {"type": "string", "description": "of done: the model now served"},
        "code": {"type": "string", "enum": [cls.code for cls in _PULL_STREAM_ERRORS], "description": "of an error"},
    },
}

_CHECK = {
    "type": "object",
    "required": ["name", "ok", "detail", "fix", "required"],
    "properties": {
        "name": {"type": "string", "description": "what was checked: 'Ollama (embeddings and answers)', 'index'"},
        "ok": {"type": "boolean"},
        "detail": {"type": "string", "description": "what was found"},
        "fix": {"type": "string", "description": "when not ok: the command or step that fixes it"},
        "required": {"type": "boolean", "description": "false: said, but not a reason for ok to be false"},
    },
}

_PREFLIGHT = {
    "summary": "CORS preflight (no token needed): allowed for Obsidian's origins only",
    "security": [],
    "parameters": [
        {"name": "Origin", "in": "header", "required": True, "schema": {"type": "string"}},
        {"name": "Access-Control-Request-Method", "in": "header", "required": True, "schema": {"type": "string"}},
    ],
    "responses": {
        "204": {"description": "Allowed: Access-Control-Allow-Origin, -Methods, -Headers and -Max-Age"},
        **_errors(ForbiddenHost, ForbiddenOrigin, always=()),
    },
}


def _body(schema_name: str) -> dict[str, Any]:
    return {
        "required": True,
        "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{schema_name}"}}},
    }


def openapi_document() -> dict[str, Any]:
    document = _document()
    for item in document["paths"].values():
        item["options"] = _PREFLIGHT  # the CORS layer answers a preflight on every path alike
        in_path = {p["name"]: p for op in item.values() for p in op.get("parameters", []) if p["in"] == "path"}
        if in_path:  # (a path's own parameters, such as a proposal's id, are the preflight's too)
            item["options"] = {**_PREFLIGHT, "parameters": [*_PREFLIGHT["parameters"], *in_path.values()]}
    return document


def _document() -> dict[str, Any]:
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "vask",
            "version": __version__,
            "description": (
                "Ask questions across an Obsidian vault. Every endpoint except the bare health check needs "
                "'Authorization: Bearer <token>', one token per device (`vask token` prints the default device's, "
                "`vask token add NAME` makes another, `vask token revoke NAME` stops one at the next request). "
                f"20 failed token checks from one address within 60 s answer 429 {TooManyAttempts.code} to "
                "every request from it, with Retry-After. With --tls-cert the server speaks only HTTPS. "
                "Errors share one shape: "
                '{"error": {"code", "message", "hint"}}; each operation lists the codes it can answer with, '
                "and ErrorCode lists them all. With a valid token, a path the API does not have answers "
                f"404 {NotFound.code} and a method a path does not take 405 {MethodNotAllowed.code}."
            ),
        },
        "servers": [
            {"url": "http://127.0.0.1:8765", "description": "the default: this machine only"},
            {
                "url": "https://{host}:8765",
                "description": "vask serve --tls-cert … --allow-remote (or behind an https proxy)",
                "variables": {"host": {"default": "vask.home.arpa"}},
            },
        ],
        "components": {
            "schemas": {**SCHEMAS, **openapi_proposals.SCHEMAS},
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer", "description": "a device's token (vask token)"}
            },
        },
        "security": [{"bearer": []}],
        "paths": {
            "/v1/health": {
                "get": {
                    "summary": "Liveness; with a token also the model servers, models, this device and the index",
                    "security": [{}, {"bearer": []}],
                    "responses": {"200": _json({"type": "object", "required": ["status"]}), **_errors()},
                }
            },
            "/v1/models": {
                "get": {
                    "summary": "The models each model server serves (embeddings', answers'), for choosing a chat model",
                    "responses": {
                        "200": _json(
                            {
                                "type": "object",
                                "required": ["embed", "chat"],
                                "properties": {
                                    role: {
                                        "type": "object",
                                        "required": ["provider", "url", "configured", "models"],
                                        "properties": {
                                            "provider": {"type": "string", "enum": ["ollama", "openai"]},
                                            "url": {"type": "string"},
                                            "configured": {"type": "string", "description": "the model vask uses"},
                                            "models": {"type": "array", "items": {"type": "string"}},
                                        },
                                    }
                                    for role in ("embed", "chat")
                                },
                            }
                        ),
                        **_errors(OllamaUnavailable, OllamaFailed),
                    },
                }
            },
            "/v1/models/pull": {
                "post": {
                    "summary": (
                        "Download a model into Ollama (its /api/pull): NDJSON events progress…, done (or error). "
                        "The default device's token only; from Ollama's registry, or one VASK_PULL_REGISTRIES names"
                    ),
                    "requestBody": {
                        "required": True,
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "additionalProperties": False,
                                    "required": ["model"],
                                    "properties": {
                                        "model": {"type": "string", "minLength": 1, "maxLength": 200},
                                        "role": {
                                            "type": "string",
                                            "enum": ["embed", "chat"],
                                            "description": "which model server pulls it (they may differ); "
                                            "default: embed for the embedding model's name, else chat",
                                        },
                                    },
                                }
                            }
                        },
                    },
                    "responses": {
                        "200": {
                            "description": (
                                'One JSON object per line: {"type": "progress", "status", "completed", "total"} as '
                                'Ollama reports each step, last {"type": "done", "model"} or '
                                '{"type": "error", "code", "message", "hint"}, whose code is one of '
                                f"{_codes(_PULL_STREAM_ERRORS)}."
                            ),
                            "content": {"application/x-ndjson": {"schema": _PULL_EVENT}},
                        },
                        **_errors(
                            BadRequest,
                            DeviceNotAllowed,
                            RegistryNotAllowed,
                            PayloadTooLarge,
                            PullUnsupported,
                            OllamaUnavailable,
                            OllamaFailed,
                        ),
                    },
                }
            },
            "/v1/doctor": {
                "get": {
                    "summary": "The checks of `vask doctor --json`: model servers, models, vault, index, TLS, plugin",
                    "responses": {
                        "200": _json(
                            {
                                "type": "object",
                                "required": ["ok", "checks"],
                                "properties": {
                                    "ok": {"type": "boolean", "description": "every required check passed"},
                                    "checks": {"type": "array", "items": _CHECK},
                                },
                            }
                        ),
                        **_errors(),
                    },
                }
            },
            "/v1/status": {
                "get": {
                    "summary": "Index detail: state, pending, in progress, skipped and failed files with reasons",
                    "responses": {"200": _json({"type": "object"}), **_errors()},
                }
            },
            "/v1/search": {
                "post": {
                    "summary": "Retrieve passages (falls back to keyword search when Ollama is down)",
                    "requestBody": _body("SearchRequest"),
                    "responses": {
                        "200": _json({"$ref": "#/components/schemas/SearchResponse"}),
                        **_errors(BadRequest, ScopeNotFound, NotIndexed, PayloadTooLarge, OllamaFailed),
                    },
                }
            },
            "/v1/ask": {
                "post": {
                    "summary": "Answer a question: NDJSON events sources, token…, done (or error)",
                    "requestBody": _body("AskRequest"),
                    "responses": {
                        "200": {
                            "description": (
                                'One JSON object per line: {"type": "sources", "sources", "mode", "time_range", '
                                '"scope", "connection", "notice"?} (a notice when only keyword matches were found or '
                                "passages were left out to fit the context window, or how the question was "
                                "read; connection as in /v1/search), then "
                                '{"type": "token", "text"} as the model '
                                "writes, last "
                                '{"type": "done", "answer", "citations", "sources", "declined", "time_range", '
                                '"scope"} or '
                                '{"type": "error", "code", "message", "hint"}, whose code is one of '
                                f"{_codes(_STREAM_ERRORS)}."
                            ),
                            "content": {"application/x-ndjson": {"schema": _EVENT}},
                        },
                        **_errors(BadRequest, ScopeNotFound, PayloadTooLarge),
                    },
                }
            },
            "/v1/related": {
                "get": {
                    "summary": "Notes most related to a note (links both ways, similar text)",
                    "parameters": [
                        {"name": "path", "in": "query", "required": True, "schema": {"type": "string", "minLength": 1}},
                        {
                            "name": "top_k",
                            "in": "query",
                            "required": False,
                            "schema": {"type": "integer", "minimum": 1, "maximum": 50},
                        },
                    ],
                    "responses": {"200": _json({"type": "object"}), **_errors(BadRequest, NotFound, NotIndexed)},
                }
            },
            "/v1/reindex": {
                "post": {
                    "summary": "Queue notes (or, without paths, the whole vault) for indexing",
                    "requestBody": {
                        "required": False,
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ReindexRequest"}}},
                    },
                    "responses": {
                        "202": _json({"type": "object", "properties": {"queued": {"type": "integer"}}}, "Queued"),
                        **_errors(BadRequest, PayloadTooLarge),
                    },
                }
            },
            "/v1/index/pause": {
                "post": {
                    "summary": "Pause indexing (kept over a restart); searches go on",
                    "responses": {
                        "200": _json({"type": "object", "properties": {"paused": {"type": "boolean"}}}),
                        **_errors(),
                    },
                }
            },
            "/v1/index/resume": {
                "post": {
                    "summary": "Resume indexing where it stopped",
                    "responses": {
                        "200": _json({"type": "object", "properties": {"paused": {"type": "boolean"}}}),
                        **_errors(),
                    },
                }
            },
            "/v1/index/first": {
                "post": {
                    "summary": "Index these notes before the others (the notes open in Obsidian)",
                    "requestBody": {
                        "required": True,
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ReindexRequest"}}},
                    },
                    "responses": {
                        "200": _json({"type": "object", "properties": {"moved": {"type": "integer"}}}),
                        **_errors(BadRequest, PayloadTooLarge),
                    },
                }
            },
            "/v1/events": {
                "get": {
                    "summary": "Server-Sent Events: `event: status` with index progress; a heartbeat every 15 s",
                    "responses": {
                        "200": {
                            "description": "An event stream",
                            "content": {"text/event-stream": {"schema": {"type": "string"}}},
                        },
                        **_errors(),
                    },
                }
            },
            "/v1/openapi.json": {
                "get": {
                    "summary": "This document",
                    "responses": {"200": _json({"type": "object"}), **_errors()},
                }
            },
            **openapi_proposals.paths(_errors, _json),
            "/mcp": {method: _mcp_operation(method) for method in ("post", "get", "delete")},
        },
    }


# The MCP door's Streamable HTTP endpoint (docs/MCP.md): JSON-RPC messages of the Model Context Protocol,
# which the MCP SDK answers; vask's own checks (token, Host, Origin, body size) come first, in its shape.
_MCP_SUMMARY = {
    "post": "MCP (Streamable HTTP): a JSON-RPC request or notification; the answer as JSON or an SSE stream",
    "get": "MCP (Streamable HTTP): the session's stream of server messages (SSE)",
    "delete": "MCP (Streamable HTTP): end the session",
}


def _mcp_operation(method: str) -> dict[str, Any]:
    answer = {
        "description": "The Model Context Protocol's answer (its own JSON-RPC shapes: docs/MCP.md)",
        "content": {
            "application/json": {"schema": {"type": "object"}},
            "text/event-stream": {"schema": {"type": "string"}},
        },
    }
    operation: dict[str, Any] = {
        "summary": _MCP_SUMMARY[method],
        "responses": {"200": answer, **_errors(ForbiddenOrigin, PayloadTooLarge)},
    }
    if method == "post":
        operation["requestBody"] = {"content": {"application/json": {"schema": {"type": "object"}}}}
    return operation
