"""The OpenAPI description of /v1/proposals (web/proposal_routes.py): its paths and named schemas, merged
into the document by web/openapi.py."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from vask_server.core.proposals import KINDS
from vask_server.errors import (
    ApplyNotAllowed,
    BadRequest,
    NoteExcluded,
    NotFound,
    PayloadTooLarge,
    ProposalClosed,
    QueueFull,
    StaleProposal,
)
from vask_server.services.proposals import STATES

_REF = {"$ref": "#/components/schemas/Proposal"}
_ONE = {"type": "object", "required": ["proposal"], "properties": {"proposal": _REF}}
_ID = {
    "name": "id",
    "in": "path",
    "required": True,
    "schema": {"type": "string", "minLength": 4, "maxLength": 12},
    "description": "a proposal's id, or its first characters (at least 4) when no other starts so",
}
_WRITTEN = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "written": {
            "type": "boolean",
            "default": False,
            "description": "the client wrote the change itself (the plugin, through Obsidian's Vault.process): it "
            "is recorded only if the note now has exactly that text",
        }
    },
}

SCHEMAS: dict[str, Any] = {
    "Proposal": {
        "type": "object",
        "required": ["id", "kind", "path", "state", "summary", "source", "device", "created", "undoable"],
        "properties": {
            "id": {"type": "string"},
            "kind": {"type": "string", "enum": list(KINDS)},
            "path": {"type": "string", "description": "the note it changes (vault-relative)"},
            "state": {
                "type": "string",
                "enum": list(STATES),
                "description": "stale: the note changed since it was proposed, so it is never applied",
            },
            "summary": {"type": "string"},
            "source": {"type": "string", "description": "who proposed it: 'links' for link suggestions"},
            "device": {"type": "string", "description": "the token it was proposed with"},
            "reason": {"type": "string"},
            "created": {"type": "string", "format": "date-time"},
            "decided": {"type": ["string", "null"]},
            "decided_by": {"type": ["string", "null"]},
            "written_by": {"type": ["string", "null"], "enum": ["server", "plugin", None]},
            "undone": {"type": ["string", "null"]},
            "undoable": {"type": "boolean", "description": "applied, and the note still has what was applied"},
            "link": {
                "type": ["object", "null"],
                "description": "a link's target, placement (mention or heading), line, shown words, markup, heading",
            },
            "diff": {"type": "string", "description": "the change as a unified diff (not in lists)"},
            "before": {"type": "string", "description": "the note's text when proposed (not in lists)"},
            "after": {"type": "string", "description": "the note's text with the change (not in lists)"},
            "base_hash": {"type": ["string", "null"], "description": "SHA-256 of the note's bytes when proposed"},
            "after_hash": {"type": "string"},
            "events": {"type": "array", "items": {"type": "object"}},
        },
    },
}


def paths(errors: Callable[..., dict[str, Any]], json: Callable[..., dict[str, Any]]) -> dict[str, Any]:
    """The /v1/proposals paths, given openapi.py's helpers for a JSON body and an operation's errors."""
    proposed = {
        "201": json(
            {
                "type": "object",
                "required": ["proposal", "new", "message"],
                "properties": {"proposal": _REF, "new": {"type": "boolean"}, "message": {"type": "string"}},
            },
            "Proposed, waiting for approval",
        ),
        "200": json({"type": "object"}, "The same change was waiting already: that proposal"),
    }

    decide = (BadRequest, PayloadTooLarge, NotFound, ApplyNotAllowed, ProposalClosed)
    return {
        "/v1/proposals": {
            "get": {
                "summary": "Proposed changes to notes, newest first, with counts by state",
                "parameters": [
                    {"name": "state", "in": "query", "required": False, "schema": {"enum": list(STATES)}},
                    {"name": "source", "in": "query", "required": False, "schema": {"type": "string"}},
                ],
                "responses": {
                    "200": json(
                        {
                            "type": "object",
                            "required": ["proposals", "counts"],
                            "properties": {"proposals": {"type": "array", "items": _REF}, "counts": {"type": "object"}},
                        }
                    ),
                    **errors(BadRequest),
                },
            },
            "post": {
                "summary": "Propose an edit of a note, or a new note: nothing changes until a person approves",
                "requestBody": _required_body(
                    {
                        "type": "object",
                        "additionalProperties": False,
                        "required": ["path"],
                        "properties": {
                            "kind": {"type": "string", "enum": ["edit", "create"], "default": "edit"},
                            "path": {"type": "string", "minLength": 1},
                            "content": {"type": "string", "description": "the note's whole new text"},
                            "edits": {
                                "type": "array",
                                "maxItems": 200,
                                "description": "exact replacements, each 'old' found once in the note",
                                "items": {
                                    "type": "object",
                                    "additionalProperties": False,
                                    "required": ["old", "new"],
                                    "properties": {
                                        "old": {"type": "string", "minLength": 1},
                                        "new": {"type": "string"},
                                    },
                                },
                            },
                            "source": {"type": "string", "maxLength": 64, "default": "api"},
                            "reason": {"type": "string", "maxLength": 2000},
                        },
                    }
                ),
                "responses": {**proposed, **errors(BadRequest, PayloadTooLarge, NotFound, NoteExcluded, QueueFull)},
            },
        },
        "/v1/proposals/link": {
            "post": {
                "summary": "Propose a link to a connection not linked yet: its name in the note becomes the link, "
                "else a list item under a heading",
                "requestBody": _required_body(
                    {
                        "type": "object",
                        "additionalProperties": False,
                        "required": ["path", "target"],
                        "properties": {
                            "path": {"type": "string", "minLength": 1, "description": "the note to change"},
                            "target": {"type": "string", "minLength": 1, "description": "the note to link"},
                            "heading": {"type": "string", "maxLength": 200, "default": "Related"},
                        },
                    }
                ),
                "responses": {**proposed, **errors(BadRequest, PayloadTooLarge, NotFound, NoteExcluded, QueueFull)},
            }
        },
        "/v1/proposals/apply-all": {
            "post": {
                "summary": "Apply every waiting proposal from one source; those that cannot be (stale) stay waiting",
                "requestBody": _required_body(
                    {
                        "type": "object",
                        "additionalProperties": False,
                        "required": ["source"],
                        "properties": {"source": {"type": "string", "minLength": 1}},
                    }
                ),
                "responses": {
                    "200": json(
                        {
                            "type": "object",
                            "properties": {
                                "applied": {"type": "array", "items": _REF},
                                "not_applied": {"type": "array", "items": {"type": "object"}},
                            },
                        }
                    ),
                    **errors(BadRequest, PayloadTooLarge, ApplyNotAllowed),
                },
            }
        },
        "/v1/proposals/{id}": {
            "get": {
                "summary": "One proposal with its diff, and the note's text before and after",
                "parameters": [_ID],
                "responses": {"200": json(_ONE), **errors(NotFound)},
            }
        },
        "/v1/proposals/{id}/apply": _decision(
            "Write the change into its note, only while the note has the text it was proposed for",
            _optional_body(_WRITTEN),
            json,
            errors(*decide, StaleProposal, NoteExcluded),
        ),
        "/v1/proposals/{id}/reject": _decision(
            "Reject a waiting proposal; the note is not touched",
            _optional_body({"type": "object", "additionalProperties": False}),
            json,
            errors(*decide),
        ),
        "/v1/proposals/{id}/undo": _decision(
            "Put the note back to its exact bytes before an applied change, only while it is unchanged since",
            _optional_body(_WRITTEN),
            json,
            errors(*decide, StaleProposal, NoteExcluded),
        ),
    }


def _decision(
    summary: str, request_body: dict[str, Any], json: Callable[..., dict[str, Any]], failures: dict[str, Any]
) -> dict[str, Any]:
    operation: dict[str, Any] = {
        "summary": summary + " (the default device's token, or one `vask token allow-apply` allowed)",
        "parameters": [_ID],
        "requestBody": request_body,
        "responses": {"200": json(_ONE), **failures},
    }
    return {"post": operation}


def _optional_body(schema: dict[str, Any]) -> dict[str, Any]:
    """A JSON request body the operation also takes empty."""
    return {"required": False, "content": {"application/json": {"schema": schema}}}


def _required_body(schema: dict[str, Any]) -> dict[str, Any]:
    """A JSON request body the operation needs."""
    return {"required": True, "content": {"application/json": {"schema": schema}}}
