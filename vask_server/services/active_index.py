"""Which index a search reads: the complete one, or during an index's first sync the one being built."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vask_server.adapters.meta import IndexMeta, table_suffix
from vask_server.core.cjk import SIMPLE
from vask_server.core.embed_prompts import prompts_for
from vask_server.errors import NotIndexed


@dataclass(frozen=True)
class ActiveIndex:
    model: str
    dimension: int
    suffix: str
    keyword_terms: str = SIMPLE  # how its keyword text is cut (core/cjk.py): questions are cut alike
    # False during an index's first sync: what is embedded so far is searched, and the notes not
    # yet embedded by keyword alone (the store's keyword table), once that is written.
    complete: bool = True
    # The instructions its passages were embedded with and its questions are (core/embed_prompts.py)
    document_prompt: str = ""
    query_prompt: str = ""


def active_index(meta: IndexMeta) -> ActiveIndex:
    """The index index.json names as complete, else the one a first sync is building; NotIndexed
    before there is either."""
    if not meta.active and meta.building:
        building = meta.building
        terms = str(building.get("keyword_terms", SIMPLE))
        return ActiveIndex(
            building["model"],
            int(building["dimension"]),
            building["suffix"],
            terms,
            False,
            *_instructions(building),
        )
    if not meta.active:
        raise NotIndexed(
            "The vault has not been indexed yet.",
            "Run `vask index --vault PATH`, or wait for `vask serve` to finish its first sync.",
        )
    terms = str(meta.active.get("keyword_terms", SIMPLE))
    return ActiveIndex(
        meta.active["model"],
        int(meta.active["dimension"]),
        meta.active["suffix"],
        terms,
        True,
        *_instructions(meta.active),
    )


def _instructions(record: dict[str, Any]) -> tuple[str, str]:
    """(document, query) instructions the index records. One made before they were recorded: its
    passages' is told by its tables' name (none, or its model card's), its questions' is its card's."""
    model = str(record["model"])
    card = prompts_for(model)
    document = record.get("document_prompt")
    if document is None:
        bare = record.get("suffix") == table_suffix(model, int(record["dimension"]), "")
        document = "" if bare else card.document
    return str(document), str(record.get("query_prompt", card.query))
