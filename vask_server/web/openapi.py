"""The OpenAPI 3.1 description of the HTTP API, served at GET /v1/openapi.json."""

from __future__ import annotations

from typing import Any

from vask_server import __version__

_ERROR = {"$ref": "#/components/schemas/Error"}


def _json(schema: dict[str, Any], description: str = "OK") -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _errors(*statuses: int) -> dict[str, Any]:
    names = {
        400: "Invalid request",
        401: "Missing or wrong token",
        403: "Host not allowed",
        404: "Not found",
        409: "Not indexed yet",
        413: "Body too large",
        503: "Ollama unavailable",
    }
    return {str(s): _json(_ERROR, names[s]) for s in statuses}


def _body(schema_name: str) -> dict[str, Any]:
    return {
        "required": True,
        "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{schema_name}"}}},
    }


_STRINGS = {"type": "array", "items": {"type": "string", "minLength": 1}, "maxItems": 200}

_SCHEMAS: dict[str, Any] = {
    "Error": {
        "type": "object",
        "required": ["error"],
        "properties": {
            "error": {
                "type": "object",
                "required": ["code", "message", "hint"],
                "properties": {"code": {"type": "string"}, "message": {"type": "string"}, "hint": {"type": "string"}},
            }
        },
    },
    "Filters": {
        "type": "object",
        "additionalProperties": False,
        "properties": {"folders": _STRINGS, "exclude_folders": _STRINGS, "tags": _STRINGS, "paths": _STRINGS},
    },
    "SearchRequest": {
        "type": "object",
        "additionalProperties": False,
        "required": ["query"],
        "properties": {
            "query": {"type": "string", "minLength": 1, "maxLength": 4000},
            "top_k": {"type": "integer", "minimum": 1, "maximum": 50},
            "min_similarity": {"type": "number", "minimum": 0, "maximum": 1},
            "filters": {"$ref": "#/components/schemas/Filters"},
            "mode": {"type": "string", "enum": ["vector", "hybrid"]},
        },
    },
    "Hit": {
        "type": "object",
        "required": ["path", "title", "heading", "line_start", "line_end", "score", "text"],
        "properties": {
            "path": {"type": "string", "description": "vault-relative, forward slashes, with .md"},
            "title": {"type": "string"},
            "heading": {"type": "string", "description": "heading path, e.g. 'Plan > Risks'"},
            "anchor": {"type": "string", "description": "heading to open; empty for the top of the note"},
            "link": {"type": "string", "description": "Obsidian link text: path without .md, then #anchor"},
            "line_start": {"type": "integer"},
            "line_end": {"type": "integer"},
            "score": {
                "type": "number",
                "minimum": 0,
                "maximum": 1,
                "description": (
                    "what ranked it, 0–1: in hybrid mode 0.9 × cosine + 0.1 × BM25 relative to the best keyword "
                    "match; in vector mode the cosine; in keyword mode (Ollama down) BM25 as a share of the best "
                    "match, 1 for the first"
                ),
            },
            "similarity": {"type": ["number", "null"], "description": "cosine; null in keyword mode"},
            "text": {"type": "string"},
        },
    },
    "SearchResponse": {
        "type": "object",
        "required": ["hits", "mode"],
        "properties": {
            "hits": {"type": "array", "items": {"$ref": "#/components/schemas/Hit"}},
            "mode": {
                "type": "string",
                "enum": ["vector", "hybrid", "keyword"],
                "description": "keyword: Ollama was unavailable, so these are keyword matches only",
            },
            "notice": {"type": "string"},
        },
    },
    "AskRequest": {
        "type": "object",
        "additionalProperties": False,
        "required": ["question"],
        "properties": {
            "question": {"type": "string", "minLength": 1, "maxLength": 4000},
            "history": {
                "type": "array",
                "maxItems": 50,
                "items": {
                    "type": "object",
                    "required": ["role", "content"],
                    "properties": {
                        "role": {"type": "string", "enum": ["user", "assistant"]},
                        "content": {"type": "string"},
                    },
                },
            },
            "top_k": {"type": "integer", "minimum": 1, "maximum": 50},
            "min_similarity": {"type": "number", "minimum": 0, "maximum": 1},
            "filters": {"$ref": "#/components/schemas/Filters"},
            "current_note": {"type": "string", "minLength": 1},
            "chat_model": {"type": "string", "minLength": 1},
        },
    },
    "ReindexRequest": {
        "type": "object",
        "additionalProperties": False,
        "properties": {"paths": _STRINGS},
    },
}


def openapi_document() -> dict[str, Any]:
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "vask",
            "version": __version__,
            "description": (
                "Ask questions across an Obsidian vault. Every endpoint except the bare health check needs "
                "'Authorization: Bearer <token>' (`vask token` prints it). Errors share one shape: "
                '{"error": {"code", "message", "hint"}}.'
            ),
        },
        "servers": [{"url": "http://127.0.0.1:8765"}],
        "components": {
            "schemas": _SCHEMAS,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
        "security": [{"bearer": []}],
        "paths": {
            "/v1/health": {
                "get": {
                    "summary": "Liveness; with a token also Ollama, models and index state",
                    "security": [{}, {"bearer": []}],
                    "responses": {"200": _json({"type": "object", "required": ["status"]}), **_errors(401, 403)},
                }
            },
            "/v1/status": {
                "get": {
                    "summary": "Index detail: state, pending, in progress, skipped and failed files with reasons",
                    "responses": {"200": _json({"type": "object"}), **_errors(401, 403)},
                }
            },
            "/v1/search": {
                "post": {
                    "summary": "Retrieve passages (falls back to keyword search when Ollama is down)",
                    "requestBody": _body("SearchRequest"),
                    "responses": {
                        "200": _json({"$ref": "#/components/schemas/SearchResponse"}),
                        **_errors(400, 401, 403, 409, 413),
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
                                'One JSON object per line: {"type": "sources", "sources", "mode", "notice"?} (a '
                                "notice when only keyword matches were found or passages were left out to fit the "
                                'context window), then {"type": "token", '
                                '"text"} as the model writes, last {"type": "done", "answer", "citations", "sources", '
                                '"declined"} or {"type": "error", "code", "message", "hint"}.'
                            ),
                            "content": {"application/x-ndjson": {"schema": {"type": "object"}}},
                        },
                        **_errors(400, 401, 403, 413),
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
                    "responses": {"200": _json({"type": "object"}), **_errors(400, 401, 403, 404, 409)},
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
                        **_errors(400, 401, 403, 413),
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
                        **_errors(401, 403),
                    },
                }
            },
            "/v1/openapi.json": {
                "get": {
                    "summary": "This document",
                    "responses": {"200": _json({"type": "object"}), **_errors(401, 403)},
                }
            },
        },
    }
