"""The OpenAPI document's named schemas (components/schemas): the error shape, the requests of
/v1/search and /v1/ask and what they answer. web/openapi.py refers to them from its paths."""

from __future__ import annotations

from typing import Any, get_args

from vask_server.errors import ScopeKind, http_errors

_STRINGS = {"type": "array", "items": {"type": "string", "minLength": 1}, "maxItems": 200}
_DATE = {"type": "string", "format": "date"}
_DATE_OR_NULL = {"type": ["string", "null"], "format": "date"}
# What /v1/search and /v1/ask take about the note open and the notes connected to it
_CONNECTION_FIELDS: dict[str, Any] = {
    "open_note": {
        "type": "string",
        "minLength": 1,
        "description": "the note open in Obsidian: what 'this note' / 'this project' means in 'what connects to this "
        "note?'; it limits and orders nothing else",
    },
    "connect": {
        "type": "boolean",
        "description": "false: read no seed ('what connects to [[X]]' is searched as asked, [[X]] as a scope)",
    },
}
# What /v1/search and /v1/ask take about time (docs/TIME.md)
_TIME_FIELDS = {
    "now": {
        "type": "string",
        "description": "when the question is asked (ISO date or date-time, the asker's local time): what "
        "'last month' is resolved against; default the server's local now",
    },
    "read_time": {
        "type": "boolean",
        "default": True,
        "description": "read the time the question names ('last month'); false searches every date",
    },
}

SCHEMAS: dict[str, Any] = {
    "Error": {
        "type": "object",
        "required": ["error"],
        "properties": {
            "error": {
                "type": "object",
                "required": ["code", "message", "hint"],
                "properties": {
                    "code": {"$ref": "#/components/schemas/ErrorCode"},
                    "message": {"type": "string"},
                    "hint": {"type": "string", "description": "what to do about it; may be empty"},
                    "misses": {
                        "type": "array",
                        "description": "scope_not_found only: each mention that names nothing, with its closest names",
                        "items": {
                            "type": "object",
                            "required": ["kind", "written", "closest"],
                            "properties": {
                                "kind": {"type": "string", "enum": list(get_args(ScopeKind))},
                                "written": {"type": "string", "description": "the mention as the question wrote it"},
                                "closest": {
                                    **_STRINGS,
                                    "description": "how to write the nearest names the index holds, closest first",
                                },
                            },
                        },
                    },
                    "closest": {
                        **_STRINGS,
                        "description": "scope_not_found only: every miss's closest names in one list (see misses)",
                    },
                },
            }
        },
    },
    "ErrorCode": {
        "type": "string",
        "enum": [cls.code for cls in http_errors()],
        "description": "; ".join(f"{cls.code} ({cls.status}): {cls.summary}" for cls in http_errors()),
    },
    "Filters": {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "folders": _STRINGS,
            "exclude_folders": _STRINGS,
            "tags": _STRINGS,
            "paths": _STRINGS,
            "date_from": {**_DATE, "description": "only passages written on or after this day (inclusive)"},
            "date_to": {**_DATE, "description": "only passages written on or before this day (inclusive)"},
        },
    },
    "TimeRange": {
        "type": ["object", "null"],
        "description": "the dates searched within (inclusive), from the question's words or the filters; null: any",
        "required": ["from", "to", "text"],
        "properties": {
            "from": {**_DATE_OR_NULL, "description": "null: from the beginning"},
            "to": {**_DATE_OR_NULL, "description": "null: up to now"},
            "text": {"type": "string", "description": "the words understood, e.g. 'last month'; '' from filters"},
            "notice": {
                "type": ["string", "null"],
                "description": (
                    "set when the words name a day the calendar lacks ('31 April', '29 February 2025'): "
                    "the nearest real day was read instead, and this says so"
                ),
            },
        },
    },
    "Scope": {
        "type": ["object", "null"],
        "description": (
            "what the question's [[Note]], #tag and path:Folder mentions limited it to (a passage in any of them); "
            "null: no mention"
        ),
        "required": ["notes", "tags", "folders"],
        "properties": {
            "notes": {**_STRINGS, "description": "vault-relative paths"},
            "tags": {**_STRINGS, "description": "the tags named and the nested tags under them, without '#'"},
            "folders": _STRINGS,
        },
    },
    "Connection": {
        "type": ["object", "null"],
        "description": "set when the question asks what connects to a note (the seed): the hits are other notes",
        "required": ["seed", "title", "words"],
        "properties": {
            "seed": {"type": "string", "description": "the seed's vault-relative path"},
            "title": {"type": "string"},
            "words": {"type": "string", "description": "the words that asked, e.g. 'connect to'"},
        },
    },
    "SearchRequest": {
        "type": "object",
        "additionalProperties": False,
        "required": ["query"],
        "properties": {
            "query": {
                "type": "string",
                "minLength": 1,
                "maxLength": 4000,
                "description": 'may name its scope: [[Note]], #tag, path:Folder or path:"Folder with spaces"',
            },
            "top_k": {"type": "integer", "minimum": 1, "maximum": 50},
            "min_similarity": {"type": "number", "minimum": 0, "maximum": 1},
            "filters": {"$ref": "#/components/schemas/Filters"},
            "mode": {"type": "string", "enum": ["vector", "hybrid"]},
            "current_note": {"type": "string", "minLength": 1, "description": "the note open: what 'this note' means"},
            **_CONNECTION_FIELDS,
            **_TIME_FIELDS,
        },
    },
    "Hit": {
        "type": "object",
        "required": ["path", "title", "heading", "line_start", "line_end", "score", "text"],
        "properties": {
            "path": {
                "type": "string",
                "description": "vault-relative, forward slashes, with its extension: .md, .canvas or .pdf",
            },
            "title": {"type": "string", "description": "a PDF's from its metadata, else its file name"},
            "heading": {"type": "string", "description": "heading path, e.g. 'Plan > Risks'; 'Handbook > Page 3'"},
            "anchor": {
                "type": "string",
                "description": "heading to open; empty for the top of the note, and for a canvas or a PDF",
            },
            "link": {
                "type": "string",
                "description": (
                    "Obsidian link text: a note's path without .md, then #anchor; a canvas's path; a PDF's path "
                    "then #page=N"
                ),
            },
            "page": {
                "type": ["integer", "null"],
                "minimum": 1,
                "description": "a PDF passage's page (a passage never spans two); null for notes and canvases",
            },
            "line_start": {"type": "integer"},
            "line_end": {"type": "integer"},
            "score": {
                "type": "number",
                "description": (
                    "what ranked it, higher first: in hybrid mode 0.9 × cosine + 0.1 × keyword (BM25 as a share of "
                    "the best keyword match, + 1 for a passage holding every content word), + 1 for an exact match "
                    "ranked first; in vector mode the cosine; in keyword mode (Ollama down) BM25 as a share of the "
                    "best match, 1 for the first; in connections mode the passage's cosine to the seed's closest "
                    "passage, + 0.15 when the notes are linked"
                ),
            },
            "linked": {
                "type": "string",
                "enum": ["links to", "linked from", "both", "unlinked", "seed"],
                "description": "connections mode only: 'links to': the seed links to this note; 'linked from': it "
                "links to the seed; 'unlinked': a connection not linked yet; 'seed': the seed's own passage, first, "
                "kept when the question may be about the seed itself ('what could help with [[X]]?')",
            },
            "near": {"type": "string", "description": "connections mode only: the seed's heading it is closest to"},
            "similarity": {"type": ["number", "null"], "description": "cosine; null in keyword mode"},
            "text": {"type": "string"},
            "date": {
                **_DATE_OR_NULL,
                "description": "when it was written (first day); null in an index from before dates",
            },
            "date_end": {**_DATE_OR_NULL, "description": "last day it covers (a weekly note, two dated sections)"},
            "date_source": {
                "type": ["string", "null"],
                "description": (
                    "daily-note, weekly-note, monthly-note, quarterly-note, yearly-note, frontmatter:<key>, heading, "
                    "table-row, file-name, or file-time (only the file's modification time says so: a weak signal)"
                ),
            },
        },
    },
    "SearchResponse": {
        "type": "object",
        "required": ["hits", "mode"],
        "properties": {
            "hits": {"type": "array", "items": {"$ref": "#/components/schemas/Hit"}},
            "mode": {
                "type": "string",
                "enum": ["vector", "hybrid", "keyword", "connections"],
                "description": (
                    "keyword: Ollama was unavailable, so these are keyword matches only; connections: the notes "
                    "connected to the question's seed (see connection)"
                ),
            },
            "notice": {"type": "string"},
            "time_range": {"$ref": "#/components/schemas/TimeRange"},
            "scope": {"$ref": "#/components/schemas/Scope"},
            "connection": {"$ref": "#/components/schemas/Connection"},
            "order": {
                "type": ["string", "null"],
                "enum": ["latest", "earliest", None],
                "description": (
                    "set for 'when did I last/first…' questions: the closest matches are listed by date, latest "
                    "or earliest first, then the rest by score; null: the hits are in the order of their scores"
                ),
            },
        },
    },
    "AskRequest": {
        "type": "object",
        "additionalProperties": False,
        "required": ["question"],
        "properties": {
            "question": {
                "type": "string",
                "minLength": 1,
                "maxLength": 4000,
                "description": "may name its scope: [[Note]], #tag, path:Folder (see SearchRequest.query)",
            },
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
            "current_note": {
                "type": "string",
                "minLength": 1,
                "description": "ask about this note: its passages first (and what 'this note' means)",
            },
            **_CONNECTION_FIELDS,
            "chat_model": {"type": "string", "minLength": 1},
            **_TIME_FIELDS,
        },
    },
    "ReindexRequest": {
        "type": "object",
        "additionalProperties": False,
        "properties": {"paths": _STRINGS},
    },
}
