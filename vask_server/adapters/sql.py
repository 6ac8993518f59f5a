"""The LanceDB SQL of a search's filters and of row lookups: every value a user or a file supplies
is escaped here, and only here."""

from __future__ import annotations

from collections.abc import Sequence

from vask_server.core.retrieve import Filters
from vask_server.core.scope import Scope


def sql_string(value: str) -> str:
    """A SQL string literal with quotes escaped: paths and tags come from the user's files."""
    return "'" + value.replace("'", "''") + "'"


def _folder_prefix(folder: str) -> str:
    return folder.strip().strip("/") + "/"


def filters_to_where(filters: Filters | None) -> str | None:
    """A LanceDB SQL filter; every value is escaped, since paths and tags come from users."""
    if filters is None or filters.is_empty():
        return None
    clauses: list[str] = []
    if filters.folders:
        clauses.append(
            "(" + " OR ".join(f"starts_with(path, {sql_string(_folder_prefix(f))})" for f in filters.folders) + ")"
        )
    for folder in filters.exclude_folders:
        clauses.append(f"NOT starts_with(path, {sql_string(_folder_prefix(folder))})")
    if filters.tags:
        tags = ", ".join(sql_string(t.lstrip("#").lower()) for t in filters.tags)
        clauses.append(f"array_has_any(tags, [{tags}])")
    if filters.paths:
        clauses.append(f"path IN ({', '.join(sql_string(p) for p in filters.paths)})")
    if filters.scope is not None and not filters.scope.is_empty():
        clauses.append(_scope_where(filters.scope))
    # (date.isoformat() is digits and dashes only: nothing to escape)
    if filters.date_from is not None:
        clauses.append(f"date_end >= date '{filters.date_from.isoformat()}'")
    if filters.date_to is not None:
        clauses.append(f"date <= date '{filters.date_to.isoformat()}'")
    return " AND ".join(clauses)


def _scope_where(scope: Scope) -> str:
    anywhere: list[str] = []
    if scope.notes:
        anywhere.append(f"path IN ({', '.join(sql_string(p) for p in scope.notes)})")
    if scope.tags:
        anywhere.append(f"array_has_any(tags, [{', '.join(sql_string(t) for t in scope.tags)}])")
    anywhere.extend(f"starts_with(path, {sql_string(_folder_prefix(f))})" for f in scope.folders)
    return "(" + " OR ".join(anywhere) + ")"


def sql_in(column: str, values: Sequence[str]) -> str:
    return f"{column} IN ({', '.join(sql_string(v) for v in values)})"
