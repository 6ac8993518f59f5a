"""`index.json`: which index is active (complete) and which is being built, each as an `IndexRecord`.
Atomic writes.

The file is read and written by vask versions before and after this one: keys this version does not
know (in a record, or at the top) are kept as read and written back unchanged.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from vask_server.adapters.atomic import write_atomic
from vask_server.core.cjk import CJK, SIMPLE
from vask_server.core.embed_prompts import EmbedPrompts, prompts_for
from vask_server.core.keyword_choice import KeywordChoice, VaultLanguage
from vask_server.errors import NotIndexed

log = logging.getLogger(__name__)

META_FILE = "index.json"

# Every table name ends so, the format of the first release (16-bit vectors; dates, pages and the
# `hit` column in every chunk row). A later change of format is a step of `migrations.py`, not a new
# name: the name changes only with the model, its dimension or its document instruction.
_FORMAT = "f16_d1_p1_h1"


def table_suffix(model: str, dimension: int, document_prompt: str | None = None) -> str:
    """The name of the tables that hold this model's index: one pair per model, dimension and
    document instruction (`document_prompt`; None: the one the model's card gives)."""
    return f"{_model_suffix(model, dimension, document_prompt)}_{_FORMAT}"


def _model_suffix(model: str, dimension: int, document_prompt: str | None) -> str:
    slug = re.sub(r"[^a-z0-9]+", "_", model.lower()).strip("_") or "model"
    if document_prompt is None:
        document_prompt = prompts_for(model).document
    if document_prompt:
        # Vectors made with another instruction in front are not interchangeable: their own tables.
        return f"{slug}_{dimension}_{hashlib.sha256(document_prompt.encode()).hexdigest()[:8]}"
    return f"{slug}_{dimension}"


_RECORD_KEYS = (
    "model",
    "dimension",
    "suffix",
    "completed_at",
    "keyword_terms",
    "not_english",
    "keyword_choice",
    "document_prompt",
    "query_prompt",
)


@dataclass(frozen=True)
class IndexRecord:
    """One index as `index.json` records it: the model whose vectors its tables hold, those tables'
    name (`suffix`), and how its keyword text is cut and why."""

    model: str
    dimension: int
    suffix: str
    keyword_terms: str = SIMPLE  # how its keyword text is cut (core/cjk.py): questions are cut alike
    # False while a first sync builds it: what is embedded so far is searched, and the notes not yet
    # embedded by keyword alone (the store's keyword table). Not written: the record's place says it.
    complete: bool = True
    completed_at: str | None = None
    not_english: float | None = None  # the share of the notes read not in English (None: not read)
    keyword_choice: KeywordChoice | None = None  # what `keyword_terms` was chosen by
    # The instructions its passages were embedded with and its questions are (core/embed_prompts.py)
    document_prompt: str = ""
    query_prompt: str = ""
    # False for a record written before they were recorded (both told from its name and model card,
    # and written back without them, as read); True once a sync records them
    instructions_recorded: bool = False
    # keys of another vask version, as read
    others: Mapping[str, Any] = field(default_factory=dict, hash=False)

    @classmethod
    def building(
        cls, model: str, dimension: int, keyword_terms: str, prompts: EmbedPrompts | None = None
    ) -> IndexRecord:
        """The record of an index a sync starts to build for this model, embedded with `prompts`
        (None: its card's)."""
        prompts = prompts if prompts is not None else prompts_for(model)
        suffix = table_suffix(model, dimension, prompts.document)
        return cls(
            model,
            dimension,
            suffix,
            keyword_terms,
            complete=False,
            document_prompt=prompts.document,
            query_prompt=prompts.query,
            instructions_recorded=True,
        )

    @classmethod
    def from_json(cls, data: Any, *, complete: bool) -> IndexRecord | None:
        """The record as `index.json` holds it; None (logged) when it is not one."""
        if not isinstance(data, Mapping):
            if data is not None:
                log.warning("index.json holds no index record but %r; treating it as none", data)
            return None
        try:
            model, dimension, suffix = str(data["model"]), int(data["dimension"]), str(data["suffix"])
        except (KeyError, TypeError, ValueError) as exc:
            log.warning("index.json holds an index record without its %s; treating it as none", exc)
            return None
        others = {key: value for key, value in data.items() if key not in _RECORD_KEYS}
        not_english = data.get("not_english")
        if not isinstance(not_english, int | float) or isinstance(not_english, bool):
            if "not_english" in data:
                others["not_english"] = not_english  # (a null too: written back as it was)
            not_english = None
        choice = KeywordChoice.recorded(data)
        if choice is None and "keyword_choice" in data:
            others["keyword_choice"] = data["keyword_choice"]  # (one not whole: kept as it was)
        completed_at = data.get("completed_at")
        document_prompt, query_prompt = _instructions(data, model, dimension, suffix)
        return cls(
            model,
            dimension,
            suffix,
            str(data.get("keyword_terms", SIMPLE)),
            complete=complete,
            completed_at=None if completed_at is None else str(completed_at),
            not_english=not_english,
            keyword_choice=choice,
            document_prompt=document_prompt,
            query_prompt=query_prompt,
            instructions_recorded="document_prompt" in data or "query_prompt" in data,
            others=others,
        )

    def to_json(self) -> dict[str, Any]:
        """The record as `index.json` keeps it (and `vask status` shows a building one)."""
        data: dict[str, Any] = {"model": self.model, "dimension": self.dimension, "suffix": self.suffix}
        if self.completed_at is not None:
            data["completed_at"] = self.completed_at
        data["keyword_terms"] = self.keyword_terms
        if self.not_english is not None:
            data["not_english"] = self.not_english
        if self.keyword_choice is not None:
            data["keyword_choice"] = self.keyword_choice.to_record()
        if self.instructions_recorded:
            data["document_prompt"] = self.document_prompt
            data["query_prompt"] = self.query_prompt
        data.update((key, value) for key, value in self.others.items() if key not in data)
        return data

    def with_query_prompt(self, query_prompt: str) -> IndexRecord:
        """The record with the question instruction a sync records (nothing is embedded for it)."""
        return replace(self, query_prompt=query_prompt, instructions_recorded=True)

    def with_language(self, language: VaultLanguage) -> IndexRecord:
        """The record with what a sync's reading of the notes told."""
        others = {key: value for key, value in self.others.items() if key not in ("not_english", "keyword_choice")}
        return replace(self, not_english=language.not_english, keyword_choice=language.keyword, others=others)

    def language(self, setting: str) -> VaultLanguage | None:
        """What the record says the notes told, when it would still be so under `setting` and today's
        rule for notes as they were; None when the notes must be read to tell."""
        choice = self.keyword_choice
        if choice is None or not choice.holds_for(setting) or self.not_english is None:
            return None
        return VaultLanguage(choice, float(self.not_english))

    def keyword_reason(self) -> str | None:
        """Why the index's keyword text is cut as it is, for `vask status` and `vask doctor`."""
        if self.keyword_terms not in (SIMPLE, CJK):
            return None
        if self.keyword_choice is None:
            return "chosen before vask recorded why; the next whole sync (`vask index`) chooses again"
        return self.keyword_choice.reason()


def _instructions(data: Mapping[str, Any], model: str, dimension: int, suffix: str) -> tuple[str, str]:
    """(document, query) instructions a record holds. One written before they were recorded: its
    passages' is told by its tables' name (none, or its model card's), its questions' is its card's."""
    card = prompts_for(model)
    document = data.get("document_prompt")
    if not isinstance(document, str):
        document = "" if suffix == table_suffix(model, dimension, "") else card.document
    query = data.get("query_prompt")
    return document, query if isinstance(query, str) else card.query


_META_KEYS = ("active", "building", "last_sync", "extra")


@dataclass
class IndexMeta:
    active: IndexRecord | None = None  # the complete index searches read
    building: IndexRecord | None = None  # the index a sync is building (a first one, or another model's)
    last_sync: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    others: dict[str, Any] = field(default_factory=dict)  # top-level keys of another vask version, as read

    def version(self, suffix: str) -> str:
        """Names what a table holds after the last sync, for what is kept per index version (the
        search calibration, the link graph). The sync counter tells apart two syncs within the one
        second `last_sync` has."""
        return f"{suffix}@{self.last_sync}#{self.extra.get('syncs', 0)}"

    def searched(self) -> IndexRecord:
        """The index searches read: the complete one, else the one a first sync is building;
        NotIndexed before there is either."""
        if self.active is not None:
            return self.active
        if self.building is not None:
            return self.building
        raise NotIndexed(
            "The vault has not been indexed yet.",
            "Run `vask index --vault PATH`, or wait for `vask serve` to finish its first sync.",
        )

    @property
    def paused(self) -> bool:
        """Background syncs wait while this is set (`vask pause`, the plugin's Pause indexing)."""
        return bool(self.extra.get("paused"))

    def set_paused(self, paused: bool) -> None:
        if paused:
            self.extra["paused"] = True
        else:
            self.extra.pop("paused", None)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> IndexMeta:
        extra = data.get("extra")
        return cls(
            active=IndexRecord.from_json(data.get("active"), complete=True),
            building=IndexRecord.from_json(data.get("building"), complete=False),
            last_sync=data.get("last_sync"),
            extra=dict(extra) if isinstance(extra, Mapping) else {},
            others={key: value for key, value in data.items() if key not in _META_KEYS},
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "active": None if self.active is None else self.active.to_json(),
            "building": None if self.building is None else self.building.to_json(),
            "last_sync": self.last_sync,
            "extra": self.extra,
            **self.others,
        }


def now_iso() -> str:
    """The time as `index.json` writes it (`completed_at`, `last_sync`)."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def read_meta_json(index_dir: Path) -> dict[str, Any]:
    """`index.json` as it is on disk (what a migration changes); empty when there is none, or when
    it cannot be read (logged: the index is then treated as empty)."""
    path = index_dir / META_FILE
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError) as exc:
        log.warning("could not read %s (%s); treating the index as empty", path, exc)
        return {}
    if not isinstance(data, dict):
        log.warning("%s holds no index description; treating the index as empty", path)
        return {}
    return data


def write_meta_json(index_dir: Path, data: Mapping[str, Any]) -> None:
    """A crash leaves the old file or the new one, never half of one."""
    write_atomic(index_dir / META_FILE, json.dumps(data, indent=2))


def read_meta(index_dir: Path) -> IndexMeta:
    return IndexMeta.from_json(read_meta_json(index_dir))


def write_meta(index_dir: Path, meta: IndexMeta) -> None:
    write_meta_json(index_dir, meta.to_json())
