"""Which index a search reads: the complete one, or during an index's first sync the one being built."""

from __future__ import annotations

from dataclasses import dataclass

from vask_server.adapters.meta import IndexMeta
from vask_server.core.cjk import SIMPLE
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


def active_index(meta: IndexMeta) -> ActiveIndex:
    """The index index.json names as complete, else the one a first sync is building; NotIndexed
    before there is either."""
    if not meta.active and meta.building:
        building = meta.building
        terms = str(building.get("keyword_terms", SIMPLE))
        return ActiveIndex(building["model"], int(building["dimension"]), building["suffix"], terms, complete=False)
    if not meta.active:
        raise NotIndexed(
            "The vault has not been indexed yet.",
            "Run `vask index --vault PATH`, or wait for `vask serve` to finish its first sync.",
        )
    terms = str(meta.active.get("keyword_terms", SIMPLE))
    return ActiveIndex(meta.active["model"], int(meta.active["dimension"]), meta.active["suffix"], terms)
