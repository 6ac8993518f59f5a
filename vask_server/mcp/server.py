"""The MCP server (the SDK's `MCPServer`): vask's read-only tools and its notes as resources, one server
for both transports. `services` gives the query services (over stdio: opened read-only on first use;
in `vask serve`: the app's own).

Errors are said as vask says them, `error:` and `hint:`, so a model can act on them: a tool's own
failure (a note that is not there, a heading it lacks, arguments out of range) as a tool result with
`isError`; an unknown tool, a flood of calls on resources, or an unknown argument name as well where a
model reads it; the server stays up whatever it is sent.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Annotated, Any, Literal
from urllib.parse import quote

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INVALID_PARAMS,
    CallToolResult,
    ListResourcesResult,
    PaginatedRequestParams,
    Resource,
    TextContent,
    ToolAnnotations,
)
from pydantic import Field, ValidationError

from vask_server import __version__
from vask_server.core.arguments import MAX_LIST_ITEMS, MAX_QUERY_CHARS, MAX_TOP_K
from vask_server.core.ratelimit import CallBudget
from vask_server.errors import VaskError
from vask_server.mcp import shapes

if TYPE_CHECKING:
    from vask_server.services.context import QueryServices
    from vask_server.services.sync.freshness import Freshness, FreshnessWatch

# The services import the database library, which takes seconds: this module does not, so that a
# client's `initialize` is answered at once; they are loaded with the index (stdio.py), in `vask serve`
# they are loaded already. (Hence the imports inside the tools below.)

log = logging.getLogger(__name__)

ServicesFn = Callable[[], Awaitable["QueryServices"]]

NOTE_URI = "vask://note/"
TOO_MANY_CALLS = -32029  # (JSON-RPC's range for a server's own errors: -32000 to -32099)
RESOURCES_PAGE = 200  # notes listed a page
RESOURCE_CHARS = 200_000  # a note attached as a resource, at most (read_note reads the rest)

INSTRUCTIONS = (
    "vask searches the user's Obsidian vault: their own notes, indexed locally. Use search_notes for any "
    "question about what they wrote (pass the question in their words: time words such as 'last month', "
    "[[Note]], #tag and path:Folder/ narrow it), read_note to read a note or one section whole, "
    "note_connections for what relates to a note, notes_in_range for what they wrote or changed on given "
    "days, index_status to see how current the index is. Answer from the passages found and cite each "
    "claim with the [[path#heading]] link of its passage; when nothing comes close, say the notes do not "
    "hold it."
)

# Example arguments, said in a hint when a call's arguments are wrong
EXAMPLES = {
    "search_notes": '{"question": "what did I decide about pricing last month?"}',
    "read_note": '{"path": "Projects/Tidepool.md", "heading": "Pricing"}',
    "note_connections": '{"path": "Projects/Tidepool.md", "limit": 10}',
    "notes_in_range": '{"when": "last week"}',
    "index_status": "{}",
}

_READ_ONLY = {"read_only_hint": True, "destructive_hint": False, "idempotent_hint": True, "open_world_hint": False}

Question = Annotated[
    str,
    Field(
        min_length=1,
        max_length=MAX_QUERY_CHARS,
        description="The question in the user's own words, as they would ask it. Time words ('last month', "
        "'in March', 'when did I last…'), [[Note name]], #tag and path:Folder/ are read and narrow the search; "
        "'what connects to [[Note]]?' finds the notes connected to that note.",
        examples=["how much did the standing desk cost?", "what did I write about sleep last month?"],
    ),
]
Day = Annotated[
    str | None,
    Field(
        max_length=40,
        description="An ISO day, e.g. 2026-03-14 (inclusive).",
        examples=["2026-03-01"],
    ),
]
Paths = Annotated[
    list[Annotated[str, Field(min_length=1, max_length=1000)]] | None,
    Field(max_length=MAX_LIST_ITEMS),
]
NotePath = Annotated[
    str,
    Field(
        min_length=1,
        max_length=1000,
        description="The note's vault-relative path, as search results cite it (with .md).",
        examples=["Projects/Tidepool.md"],
    ),
]
Today = Annotated[
    str | None,
    Field(
        max_length=40,
        description="Today's date where the user is (ISO), for words like 'last week'; default: the vask "
        "server's date.",
        examples=["2026-03-14"],
    ),
]


class VaskMCPServer(MCPServer[Any]):
    """vask's tools and resources over the query services `services` gives."""

    def __init__(self, services: ServicesFn, *, top_k: int = 6, budget: CallBudget | None = None) -> None:
        super().__init__(
            name="vask",
            title="vask: the user's Obsidian vault",
            version=__version__,
            instructions=INSTRUCTIONS,
            website_url=None,
        )
        self._services = services
        self._budget = budget or CallBudget()
        self._freshness: tuple[QueryServices, FreshnessWatch] | None = None
        self._tools: dict[str, Any] | None = None
        self.middleware.append(self._limit)
        _register(self, top_k)

    async def services(self) -> QueryServices:
        return await self._services()

    async def freshness(self, services: QueryServices) -> Freshness:
        """How current the index is: a scan of the vault, taken again once the last is older than
        FreshnessWatch's `max_age`."""
        from vask_server.services.sync.freshness import FreshnessWatch, measure

        if self._freshness is None or self._freshness[0] is not services:

            async def now() -> Freshness:
                return await measure(services.settings, services.vault, services.store)

            self._freshness = (services, FreshnessWatch(now))
        return await self._freshness[1].get()

    # -- errors as vask says them ---------------------------------------------------------------------

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None) -> Any:
        if self._tools is None:  # (registered once: what each takes is read once)
            self._tools = {tool.name: tool for tool in await self.list_tools()}
        tools = self._tools
        if name not in tools:
            raise MCPError(
                INVALID_PARAMS,
                f"Unknown tool {name[:100]!r}. hint: vask's tools are {', '.join(sorted(tools))}.",
                {"hint": f"Call one of {', '.join(sorted(tools))} (tools/list describes them)."},
            )
        known = set((tools[name].input_schema or {}).get("properties", {}))
        unknown = sorted(str(key)[:100] for key in arguments if key not in known)[:5]
        if unknown:
            raise ToolError(
                _said(
                    f"{name} takes no argument {', '.join(repr(u) for u in unknown)}.",
                    f"It takes {', '.join(sorted(known)) or 'none'}; e.g. {EXAMPLES.get(name, '{}')}.",
                )
            )
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, VaskError):
                raise ToolError(_said(cause.message, cause.hint)) from cause
            raise
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, ValidationError):
                raise ToolError(_invalid(name, cause)) from cause
            raise

    async def _limit(self, ctx: Any, call_next: Callable[[Any], Awaitable[Any]]) -> Any:
        """The call budget of each connection (core/ratelimit.CallBudget) on tool calls and reads."""
        if ctx.method not in ("tools/call", "resources/read"):
            return await call_next(ctx)
        client = _client_of(ctx)
        wait = self._budget.admit(client, time.monotonic())
        if wait is not None:
            hint = (
                f"Wait {max(1, round(wait))} s, then go on with fewer calls at a time."
                if wait
                else "Wait for the answers to the calls already made before making more."
            )
            message = f"Too many calls at once from this client ({self._budget.in_flight} running at most)."
            if wait:
                message = f"Too many calls from this client ({self._budget.rate} a minute at most)."
            if ctx.method == "tools/call":
                return CallToolResult(content=[TextContent(type="text", text=_said(message, hint))], is_error=True)
            raise MCPError(TOO_MANY_CALLS, f"{message} hint: {hint}", {"hint": hint})
        try:
            return await call_next(ctx)
        finally:
            self._budget.done(client)

    # -- notes as resources, listed a page at a time ---------------------------------------------------

    async def _handle_list_resources(self, ctx: Any, params: PaginatedRequestParams | None) -> ListResourcesResult:
        """resources/list with pagination (the SDK's own handler lists every resource at once)."""
        cursor = params.cursor if params is not None else None
        try:
            offset = int(cursor) if cursor else 0
            if offset < 0:
                raise ValueError
        except ValueError:
            raise MCPError(INVALID_PARAMS, "Invalid cursor. hint: pass the nextCursor of the previous page.") from None
        from vask_server.services.query.notes import list_notes

        try:
            page = await list_notes(await self.services(), offset, RESOURCES_PAGE)
        except VaskError as exc:
            raise MCPError(INVALID_PARAMS, _said(exc.message, exc.hint)) from None
        return ListResourcesResult(
            resources=[
                Resource(
                    uri=note_uri(note.path),
                    name=note.path,
                    title=note.title,
                    mime_type="text/markdown",
                    description=f"The note {shapes.citation(note.path)} of the user's vault",
                )
                for note in page.notes
            ],
            next_cursor=str(page.next_offset) if page.next_offset is not None else None,
        )


def _client_of(ctx: Any) -> str:
    """Whose budget a call spends: over HTTP the device whose token came (its sessions together), over
    stdio the one client of the process."""
    scope = getattr(getattr(ctx, "request", None), "scope", None)
    device = scope.get("vask.device") if isinstance(scope, Mapping) else None
    return f"device {device}" if device else "this process's client"


def note_uri(path: str) -> str:
    return NOTE_URI + quote(path, safe="/")


def _said(message: str, hint: str = "") -> str:
    return f"error: {message}" + (f"\nhint: {hint}" if hint else "")


def _invalid(tool: str, error: ValidationError) -> str:
    """Wrong arguments, said per argument without echoing long values back."""
    problems = []
    for item in error.errors()[:5]:
        where = ".".join(str(part) for part in item["loc"]) or "arguments"
        problems.append(f"'{where}': {item['msg']}")
    return _said(f"Wrong arguments for {tool}: {'; '.join(problems)}.", f"For example {EXAMPLES.get(tool, '{}')}.")


def _result(text: str, structured: Any) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=structured.model_dump(mode="json")
    )


def _register(server: VaskMCPServer, top_k: int) -> None:
    """The tools and the note resource, each a thin adapter: its arguments to calls.py's service call,
    the result to shapes.py's."""
    _register_search(server, top_k)
    _register_read(server)
    _register_connections(server)
    _register_dated(server)
    _register_status(server)
    _register_note_resource(server)


def _register_search(server: VaskMCPServer, top_k: int) -> None:
    """Search: the question as asked, narrowed by optional dates, folders, tags and notes."""

    @server.tool(
        title="Search the notes",
        description=(
            "Search the user's Obsidian notes for passages that answer a question, by meaning and by keyword. "
            "Each result is a passage with its [[path#heading]] link to cite, its lines, the day it was written "
            "and a score. Prefer the user's own wording; time words and [[Note]], #tag, path:Folder/ in the "
            "question narrow it, and so do the optional arguments. Example: "
            '{"question": "what did I decide about pricing?", "date_from": "2026-01-01", "folders": ["Projects"]}'
        ),
        annotations=ToolAnnotations(title="Search the notes", **_READ_ONLY),
    )
    async def search_notes(
        question: Question,
        date_from: Annotated[Day, Field(description="Only passages written on or after this ISO day.")] = None,
        date_to: Annotated[Day, Field(description="Only passages written on or before this ISO day.")] = None,
        folders: Annotated[Paths, Field(description="Only notes in these folders.", examples=[["Projects"]])] = None,
        tags: Annotated[Paths, Field(description="Only notes with one of these tags.", examples=[["health"]])] = None,
        notes: Annotated[Paths, Field(description="Only these notes (vault-relative paths).")] = None,
        limit: Annotated[int, Field(ge=1, le=MAX_TOP_K, description="How many passages, at most.")] = top_k,
        today: Today = None,
    ) -> Annotated[CallToolResult, shapes.SearchOutput]:
        from vask_server.mcp import calls

        services = await server.services()
        result = await calls.search(
            services,
            question=question,
            date_from=date_from,
            date_to=date_to,
            folders=folders,
            tags=tags,
            notes=notes,
            limit=limit,
            today=today,
        )
        fresh = await server.freshness(services)
        return _result(*shapes.search_output(result, fresh.state, fresh.notice()))


def _register_read(server: VaskMCPServer) -> None:
    """Read a note, or one section of it, in parts."""

    @server.tool(
        name="read_note",
        title="Read a note",
        description=(
            "Read one note of the user's vault as it is now, or one section of it by its heading: its text with "
            "line numbers, frontmatter, outline, the notes it links to and those linking to it. Long notes come "
            "in parts: call again with from_line = next_line to read on. Example: "
            '{"path": "Projects/Tidepool.md", "heading": "Pricing"}'
        ),
        annotations=ToolAnnotations(title="Read a note", **_READ_ONLY),
    )
    async def read_note_tool(
        path: NotePath,
        heading: Annotated[
            str | None,
            Field(
                max_length=500,
                description="Only the section under this heading (its text, or 'Parent > Heading').",
                examples=["Pricing"],
            ),
        ] = None,
        from_line: Annotated[
            int | None, Field(ge=1, description="Read from this line on (the next_line of a previous read).")
        ] = None,
        max_chars: Annotated[int, Field(ge=200, le=100_000, description="The text returned, at most.")] = 20_000,
    ) -> Annotated[CallToolResult, shapes.ReadOutput]:
        from vask_server.mcp import calls

        note = await calls.read(
            await server.services(), path=path, heading=heading, from_line=from_line, max_chars=max_chars
        )
        return _result(*shapes.read_output(note))


def _register_connections(server: VaskMCPServer) -> None:
    """A note's connections, linked and unlinked."""

    @server.tool(
        title="Connections of a note",
        description=(
            "The notes connected to a note: those linked with it and those about the same things that are not "
            "linked yet (what the user may not know of), each with the passage that connects, best first, "
            "optionally only those written within dates, folders or tags. Example: "
            '{"path": "Projects/Tidepool.md", "date_from": "2026-01-01"}'
        ),
        annotations=ToolAnnotations(title="Connections of a note", **_READ_ONLY),
    )
    async def note_connections(
        path: NotePath,
        limit: Annotated[int, Field(ge=1, le=MAX_TOP_K, description="How many notes, at most.")] = 10,
        date_from: Annotated[Day, Field(description="Only passages written on or after this ISO day.")] = None,
        date_to: Annotated[Day, Field(description="Only passages written on or before this ISO day.")] = None,
        folders: Annotated[Paths, Field(description="Only notes in these folders.")] = None,
        tags: Annotated[Paths, Field(description="Only notes with one of these tags.")] = None,
    ) -> Annotated[CallToolResult, shapes.ConnectionsOutput]:
        from vask_server.mcp import calls

        services = await server.services()
        found = await calls.connections(
            services, path=path, limit=limit, date_from=date_from, date_to=date_to, folders=folders, tags=tags
        )
        return _result(*shapes.connections_output(found, (await server.freshness(services)).notice()))


def _register_dated(server: VaskMCPServer) -> None:
    """The notes of some days."""

    @server.tool(
        title="Notes of some days",
        description=(
            "The notes written or changed within a range of days, latest first: a day, a week of daily notes, "
            "a month. Give the days as words ('last week', 'yesterday', 'in March', '2026-03-14') or as dates. "
            'Example: {"when": "last week", "kind": "written"}'
        ),
        annotations=ToolAnnotations(title="Notes of some days", **_READ_ONLY),
    )
    async def notes_in_range(
        when: Annotated[
            str | None,
            Field(max_length=200, description="The days in words.", examples=["last week", "2026-03-14"]),
        ] = None,
        date_from: Annotated[Day, Field(description="The first day (ISO).")] = None,
        date_to: Annotated[Day, Field(description="The last day (ISO).")] = None,
        kind: Annotated[
            Literal["written", "changed", "both"],
            Field(description="written: passages dated within the days; changed: notes last changed then."),
        ] = "both",
        folders: Annotated[Paths, Field(description="Only notes in these folders.")] = None,
        tags: Annotated[Paths, Field(description="Only notes with one of these tags.")] = None,
        limit: Annotated[int, Field(ge=1, le=100, description="How many notes, at most.")] = 20,
        offset: Annotated[int, Field(ge=0, le=1_000_000, description="Skip this many (the next_offset).")] = 0,
        today: Today = None,
    ) -> Annotated[CallToolResult, shapes.DatedOutput]:
        from vask_server.mcp import calls

        services = await server.services()
        found = await calls.dated(
            services,
            when=when,
            date_from=date_from,
            date_to=date_to,
            kind=kind,
            folders=folders,
            tags=tags,
            limit=limit,
            offset=offset,
            today=today,
        )
        return _result(*shapes.dated_output(found, (await server.freshness(services)).notice()))


def _register_status(server: VaskMCPServer) -> None:
    """How current the index is."""

    @server.tool(
        title="Index status",
        description=(
            "How current vask's index of the vault is: notes and passages indexed, the embedding model, the last "
            "sync, how many notes changed since, whether an index is being built, notes excluded (counted by rule). "
            "Example: {}"
        ),
        annotations=ToolAnnotations(title="Index status", **_READ_ONLY),
    )
    async def index_status() -> Annotated[CallToolResult, shapes.StatusOutput]:
        from vask_server.mcp import calls

        services = await server.services()
        status = await calls.status(services, await server.freshness(services))
        return _result(*shapes.status_output(status))


def _register_note_resource(server: VaskMCPServer) -> None:
    """Notes as resources a client can attach."""

    @server.resource(
        NOTE_URI + "{+path}",
        name="note",
        title="A note of the vault",
        description="A note of the user's vault as it is now (markdown), by its vault-relative path.",
        mime_type="text/markdown",
    )
    async def note_resource(path: str) -> str:
        from vask_server.services.query.notes import read_note

        services = await server.services()
        try:
            note = await read_note(services, path, max_chars=RESOURCE_CHARS)
        except VaskError as exc:
            raise MCPError(INVALID_PARAMS, _said(exc.message, exc.hint)) from None
        more = (
            f"\n\n<!-- vask: the note goes on from line {note.next_line}: read_note reads the rest -->"
            if note.next_line
            else ""
        )
        return note.text + more
