"""Proposed changes to notes: the queue, applying, rejecting, undoing, and the history of what was done.

Nothing changes in a note until a person approves. A proposal records the note's text and the hash
of its bytes when it was proposed; it is applied only while the note still has those bytes, else it
is shown as stale and never merged. Undo puts back the exact bytes, only while the note still has
what was applied. Every write goes through the vault adapter (whole, atomic, inside the vault), and
never to a note an exclusion rule keeps out: those are refused, and proposals about a note that
became excluded are deleted when the queue is next read, with what they held.

Blocking file work: the web layer runs these calls in a thread.
"""

from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any

from vask_server.adapters.proposal_store import ProposalStore
from vask_server.adapters.vault import APP_SETTINGS, NoteChanged, NoteUnreadable, Vault, is_note_path
from vask_server.core.exclude import Excluder, opted_out_text
from vask_server.core.filetypes import MARKDOWN, file_type
from vask_server.core.links import LinkResolver, note_name
from vask_server.core.parse import parse_note
from vask_server.core.plan import IndexOptions
from vask_server.core.proposals import (
    DEFAULT_HEADING,
    LINKS_SOURCE,
    STATUSES,
    ChangeRequest,
    EditMismatch,
    LinkEdit,
    Proposal,
    apply_replacements,
    content_hash,
    propose_link,
    unified_diff,
)
from vask_server.errors import (
    BadRequest,
    NoteExcluded,
    NotFound,
    ProposalClosed,
    QueueFull,
    StaleProposal,
    VaskError,
)
from vask_server.services.options import excluder_for

log = logging.getLogger(__name__)

MAX_PENDING = 500  # proposals waiting at once: an agent in a loop cannot fill the disk
KEEP_DECIDED = 200  # applied, rejected and undone proposals kept (with their texts, for undo)
STATES = ("pending", "stale", *STATUSES[1:])  # what a list may ask for: the stored statuses, and "stale"
CLI = "cli"  # who decided, for a decision taken with `vask proposals`
SERVER, PLUGIN = "server", "plugin"  # who wrote a change into the note
_UNREADABLE = "\x00unreadable"  # a note's text that could not be read (NUL: no note's text is this)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class ProposalView:
    """A proposal and how it stands against the note as it is now."""

    proposal: Proposal
    # pending (the note has the text it was proposed for), stale (it changed since: never applied),
    # applied, rejected, undone
    state: str
    undoable: bool  # applied, and the note still has what was applied

    def summary(self) -> dict[str, Any]:
        p = self.proposal
        return {
            "id": p.id,
            "kind": p.kind,
            "path": p.path,
            "state": self.state,
            "summary": p.summary,
            "source": p.source,
            "device": p.device,
            "reason": p.reason,
            "created": p.created,
            "decided": p.decided,
            "decided_by": p.decided_by,
            "written_by": p.written_by,
            "undone": p.undone,
            "undoable": self.undoable,
            "link": p.link,
        }

    def detail(self) -> dict[str, Any]:
        """With the change itself: the unified diff a person approves, the note's text before and after."""
        p = self.proposal
        return {
            **self.summary(),
            "diff": unified_diff(p.path, p.before, p.after, created=p.kind == "create"),
            "before": p.before,
            "after": p.after,
            "base_hash": p.base_hash,
            "after_hash": p.after_hash,
            "events": list(p.events),
        }


class ProposalService:
    def __init__(self, vault: Vault, index_dir: Path, options: IndexOptions) -> None:
        self.vault = vault
        self.options = options
        self.store = ProposalStore(index_dir)

    # -- what may be written ------------------------------------------------------------------

    def _excluder(self) -> Excluder:
        return excluder_for(self.options, self.vault)  # (read anew: Obsidian's list can change any time)

    def _note_path(self, value: str, name: str = "path") -> str:
        """A vault-relative path of a Markdown note that stays inside the vault."""
        if not isinstance(value, str) or not value.strip():
            raise BadRequest(f"'{name}' must be a vault-relative note path, like 'Folder/Note.md'.")
        self.vault.resolve(value)  # .., absolute paths and links out of the vault: BadRequest
        relative = PurePosixPath(value.replace("\\", "/")).as_posix().lstrip("/")
        if not is_note_path(relative, (MARKDOWN,)):
            raise BadRequest(
                f"'{name}' must be a Markdown note (.md) outside hidden folders: {value!r}",
                "vask proposes changes to notes only, never to Obsidian's settings, boards, PDFs or other files.",
            )
        return relative

    def _excluded(self, relative: str, excluder: Excluder, text: str | None) -> bool:
        if excluder.rule_for(relative) is not None:
            return True
        try:
            real = self.vault.resolve(relative).resolve()  # a link to another note: that note's rules too
        except BadRequest:
            return True  # (it became a link out of the vault: as out of bounds as an excluded note)
        if real.exists() and excluder.rule_for(self.vault.relative(real)) is not None:
            return True
        return text is not None and opted_out_text(text)

    def _refuse_excluded(self, relative: str, excluder: Excluder, text: str | None) -> None:
        if self._excluded(relative, excluder, text):
            raise NoteExcluded(
                f"{relative} is excluded from vask: it is neither read nor changed.",
                "VASK_EXCLUDE, Obsidian's Excluded files or the note's own `vask: exclude` keep it out; edit it "
                "yourself, or lift the exclusion first.",
            )

    def _read(self, relative: str) -> str | None:
        """The note's text exactly (None: no such file). A note that is not UTF-8 is not changed: its
        bytes could not be put back as they were."""
        try:
            data = self.vault.read_bytes(relative, self.options.max_note_bytes)
        except NoteUnreadable as exc:
            raise BadRequest(f"{relative} cannot be changed: {exc.reason}.") from None
        if data is None:
            return None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise BadRequest(
                f"{relative} is not valid UTF-8: vask does not change it.",
                "Save it as UTF-8 in an editor first.",
            ) from None

    def _check_size(self, text: str) -> None:
        if len(text.encode("utf-8")) > self.options.max_note_bytes:
            raise BadRequest(
                f"The note's new text is over the {self.options.max_note_bytes:,} byte limit (VASK_MAX_NOTE_BYTES)."
            )

    # -- proposing ----------------------------------------------------------------------------

    def propose(self, request: ChangeRequest, *, device: str) -> tuple[ProposalView, bool]:
        """Queues a change to a note (or a new note). Returns the proposal and whether it is new (the
        same change, proposed again while it waits, is the proposal already queued)."""
        relative = self._note_path(request.path)
        excluder = self._excluder()
        self._refuse_excluded(relative, excluder, None)
        before = self._read(relative)
        if request.kind == "create":
            if before is not None:
                raise BadRequest(f"{relative} exists already.", "Propose an edit of it instead (kind 'edit').")
            if request.content is None or request.edits:
                raise BadRequest("A new note needs its text in 'content' (and no 'edits').")
            after, base = request.content, None
            summary = f"New note {relative}"
        else:
            if before is None:
                raise NotFound(
                    f"No note {relative} in the vault.", "Check the path, or propose a new note (kind 'create')."
                )
            self._refuse_excluded(relative, excluder, before)
            if (request.content is None) == (not request.edits):
                raise BadRequest("An edit gives the note's new text ('content') or 'edits': one of the two.")
            try:
                after = request.content if request.content is not None else apply_replacements(before, request.edits)
            except EditMismatch as exc:
                raise BadRequest(
                    f"The edit does not fit {relative}: {exc}.",
                    "Each edit's 'old' must be copied exactly from the note and occur in it once; give more of the "
                    "text around it.",
                ) from None
            base = content_hash(before)
            summary = f"Edit {relative}"
            if after == before:
                raise BadRequest("The proposed text is the note's text already: nothing to change.")
        self._check_size(after)
        if opted_out_text(after):
            raise NoteExcluded(
                f"The proposed text of {relative} would exclude it from vask (`vask: exclude`).",
                "Make that change yourself: vask keeps no copy of a note that is kept out.",
            )
        proposal = Proposal(
            id="",
            kind=request.kind,
            path=relative,
            base_hash=base,
            before=before or "",
            after=after,
            source=request.source,
            device=device,
            created="",
            summary=summary,
            reason=request.reason,
        )
        return self._queue(proposal)

    def propose_link(
        self, path: str, target: str, *, heading: str = DEFAULT_HEADING, device: str
    ) -> tuple[ProposalView, bool]:
        """Queues a link from the note `path` to `target` (a connection not linked yet): where the note
        already names the target (its file name, title or an alias), those words become the link, as
        Obsidian's "link unlinked mention" does; otherwise a list item under `heading`, made at the
        end of the note when missing. The link names its note as Obsidian's "New link format" says
        (the shortest unambiguous name by default)."""
        relative = self._note_path(path)
        self.vault.resolve(target)
        target = PurePosixPath(target.replace("\\", "/")).as_posix().lstrip("/")
        if file_type(target) is None or not is_note_path(target):
            raise BadRequest(f"'target' must be a note, board or PDF in the vault: {target!r}")
        heading = heading.strip() or DEFAULT_HEADING
        if "\n" in heading or "\r" in heading or len(heading) > 200:
            raise BadRequest("'heading' must be one line of at most 200 characters.")
        if relative == target:
            raise BadRequest("A note cannot be linked to itself.")
        excluder = self._excluder()
        self._refuse_excluded(relative, excluder, None)
        text = self._read(relative)
        if text is None:
            raise NotFound(f"No note {relative} in the vault.", "Check the path.")
        self._refuse_excluded(relative, excluder, text)
        target_text = self._read(target) if target.lower().endswith(".md") else ""
        if target_text is None or self.vault.stat(target) is None:
            raise NotFound(f"No note {target} in the vault.", "Check the path, or refresh the related notes.")
        self._refuse_excluded(target, excluder, target_text)
        scan = self.vault.scan(excluder)
        resolver = LinkResolver([p for p in scan.all_files if p not in scan.excluded])
        if any(link.resolved == target for link in parse_note(relative, text, resolver).links):
            raise BadRequest(
                f"{relative} links to {target} already.",
                "The related notes catch up once the index has read the note again.",
            )
        app = self.vault.obsidian_settings(APP_SETTINGS) or {}
        style = str(app.get("newLinkFormat"))
        link_name = resolver.link_text(target, relative, style if style in ("relative", "absolute") else "shortest")
        names = [note_name(target)]
        if target.lower().endswith(".md"):
            parsed = parse_note(target, target_text)
            names += [parsed.title, *parsed.aliases]
        edit = propose_link(
            text,
            names,
            link_name,
            heading=heading,
            markdown=app.get("useMarkdownLinks") is True,
            target_path=target,
        )
        self._check_size(edit.after)
        proposal = Proposal(
            id="",
            kind="link",
            path=relative,
            base_hash=content_hash(text),
            before=text,
            after=edit.after,
            source=LINKS_SOURCE,
            device=device,
            created="",
            summary=_link_summary(relative, edit),
            link={
                "target": target,
                "placement": edit.placement,
                "line": edit.line,
                "shown": edit.shown,
                "markup": edit.markup,
                "heading": edit.heading,
                "heading_created": edit.heading_created,
            },
        )
        return self._queue(proposal)

    def _queue(self, proposal: Proposal) -> tuple[ProposalView, bool]:
        with self.store.locked():
            pending = [p for p in self.store.all() if p.status == "pending"]
            for waiting in pending:
                same = (waiting.path, waiting.base_hash, waiting.after)
                if same == (proposal.path, proposal.base_hash, proposal.after):
                    return self._view(waiting), False
            if len(pending) >= MAX_PENDING:
                raise QueueFull(
                    f"{len(pending)} proposed changes are waiting for a decision.",
                    "Approve or reject some first (the plugin's Proposed changes, or `vask proposals`).",
                )
            proposal = replace(
                proposal,
                id=secrets.token_hex(6),
                created=_now(),
                events=({"at": _now(), "action": "proposed", "by": proposal.device},),
            )
            self.store.save(proposal)
        log.info("proposed %s: %s (%s)", proposal.id, proposal.kind, proposal.source)
        return self._view(proposal), True

    # -- reading the queue --------------------------------------------------------------------

    def _view(self, proposal: Proposal, current: str | bool | None = False) -> ProposalView:
        """`current`: the note's text now (None: no file), when already read; False: read it here."""
        text = self._current(proposal.path) if current is False else current
        if proposal.status == "pending":
            expected = proposal.before if proposal.base_hash is not None else None
            state = "pending" if text == expected else "stale"
            return ProposalView(proposal, state, False)
        undoable = proposal.status == "applied" and text == proposal.after
        return ProposalView(proposal, proposal.status, undoable)

    def _current(self, relative: str) -> str | None:
        """The note's text now; None when there is no such file, _UNREADABLE when it cannot be read
        (too large, not UTF-8: no proposal about it applies)."""
        try:
            return self._read(relative)
        except BadRequest:
            return _UNREADABLE

    def _visible(self) -> list[ProposalView]:
        """Every proposal kept, newest first, against the notes as they are now; those about a note
        that is now excluded are deleted here, with the texts they held."""
        excluder = self._excluder()
        views: list[ProposalView] = []
        for proposal in self.store.all():
            text = self._current(proposal.path)
            if not self._now_private(proposal, excluder, text):
                views.append(self._view(proposal, text))
        return sorted(views, key=lambda v: (v.proposal.decided or v.proposal.created, v.proposal.id), reverse=True)

    def select(self, state: str | None = None, source: str | None = None) -> list[ProposalView]:
        """Newest first; `state` one of STATES (None: all), `source` one proposer's."""
        return self.listing(state, source)[0]

    def counts(self) -> dict[str, int]:
        return self.listing()[1]

    def listing(self, state: str | None = None, source: str | None = None) -> tuple[list[ProposalView], dict[str, int]]:
        """The proposals asked for, newest first, and how many are kept in each state (one read of the
        queue and of the notes it is about)."""
        if state is not None and state not in STATES:
            raise BadRequest(f"'state' must be one of {', '.join(STATES)}.")
        views = self._visible()
        counts = dict.fromkeys(STATES, 0)
        for view in views:
            counts[view.state] += 1
        chosen = [
            v for v in views if (state is None or v.state == state) and (source is None or v.proposal.source == source)
        ]
        return chosen, counts

    def get(self, proposal_id: str) -> ProposalView:
        proposal = self._find(proposal_id)
        text = self._current(proposal.path)
        if self._now_private(proposal, self._excluder(), text):
            raise NotFound(f"No proposal {proposal_id}.", "`vask proposals list` shows those kept.")
        return self._view(proposal, text)

    def _now_private(self, proposal: Proposal, excluder: Excluder, text: str | None) -> bool:
        """The proposal's note (or its link's target) is excluded now: the proposal is deleted."""
        target = (proposal.link or {}).get("target")
        readable = None if text == _UNREADABLE else text
        if self._excluded(proposal.path, excluder, readable) or (target and excluder.rule_for(target) is not None):
            self.store.delete(proposal.id)
            log.info("deleted proposal %s: its note is excluded now", proposal.id)
            return True
        return False

    def _find(self, proposal_id: str) -> Proposal:
        proposal = self.store.get(proposal_id)
        if proposal is None:
            matches = [p for p in self.store.all() if p.id.startswith(proposal_id)] if len(proposal_id) >= 4 else []
            if len(matches) != 1:
                raise NotFound(f"No proposal {proposal_id}.", "`vask proposals list` (GET /v1/proposals) shows them.")
            proposal = matches[0]
        return proposal

    # -- deciding -----------------------------------------------------------------------------

    def apply(self, proposal_id: str, *, by: str, written: bool = False) -> ProposalView:
        """Writes the proposed text into the note, only while the note still has the text it was
        proposed for. `written`: the client (the plugin, through Obsidian's Vault.process) wrote it
        already; it is recorded only if the note now has exactly the proposed text."""
        with self.store.locked():
            proposal = self._pending(proposal_id)
            self._still_allowed(proposal)
            if written:
                if self._current(proposal.path) != proposal.after:
                    raise StaleProposal(
                        f"{proposal.path} does not have the proposed text: nothing was recorded.",
                        "Apply it through the server instead (without 'written').",
                    )
            else:
                try:
                    self.vault.write_note(proposal.path, proposal.after.encode("utf-8"), expected=proposal.base_hash)
                except NoteChanged:
                    raise StaleProposal(
                        f"{proposal.path} changed since this was proposed: it was not changed.",
                        "Reject this proposal, or propose it again against the note as it is now.",
                    ) from None
                except OSError as exc:
                    raise _not_written(proposal.path, exc) from None
            proposal = self._decided(proposal, "applied", by, written_by=PLUGIN if written else SERVER)
        log.info("applied proposal %s to its note", proposal.id)
        return self._view(proposal)

    def reject(self, proposal_id: str, *, by: str) -> ProposalView:
        with self.store.locked():
            proposal = self._decided(self._pending(proposal_id), "rejected", by)
        return self._view(proposal)

    def undo(self, proposal_id: str, *, by: str, written: bool = False) -> ProposalView:
        """Puts the note back to its exact bytes before the change, only while it still has the text
        that was applied (a new note goes to Obsidian's trash folder, `.trash`)."""
        with self.store.locked():
            proposal = self._find(proposal_id)
            if proposal.status != "applied":
                raise ProposalClosed(
                    f"Proposal {proposal.id} is {proposal.status}, not applied: there is nothing to undo.",
                    "Only an applied change can be undone.",
                )
            self._still_allowed(proposal)
            if written:
                now = self._current(proposal.path)
                if now != (None if proposal.kind == "create" else proposal.before):
                    raise StaleProposal(
                        f"{proposal.path} does not have its text from before the change: nothing was recorded.",
                        "Undo it through the server instead (without 'written').",
                    )
            else:
                try:
                    if proposal.kind == "create":
                        self.vault.trash_note(proposal.path, expected=proposal.after_hash)
                    else:
                        before = proposal.before.encode("utf-8")
                        self.vault.write_note(proposal.path, before, expected=proposal.after_hash)
                except NoteChanged:
                    raise StaleProposal(
                        f"{proposal.path} changed since this change was applied: undoing it would lose that, so "
                        "nothing was changed.",
                        "Edit the note yourself: `vask proposals show` has its text from before the change.",
                    ) from None
                except OSError as exc:
                    raise _not_written(proposal.path, exc) from None
            now = _now()
            proposal = replace(
                proposal,
                status="undone",
                undone=now,
                undone_by=by,
                events=(*proposal.events, {"at": now, "action": "undone", "by": by}),
            )
            self.store.save(proposal)
        log.info("undid proposal %s", proposal.id)
        return self._view(proposal)

    def apply_all(self, source: str, *, by: str) -> dict[str, list[dict[str, Any]]]:
        """Applies every waiting proposal from one source, oldest first; those that cannot be (stale,
        excluded) are left waiting and said, each with why."""
        views, _ = self.listing(None, source)
        waiting = [v.proposal for v in views if v.state in ("pending", "stale")]
        waiting.sort(key=lambda p: (p.created, p.id))
        applied: list[dict[str, Any]] = []
        left: list[dict[str, Any]] = []
        for proposal in waiting:
            try:
                applied.append(self.apply(proposal.id, by=by).summary())
            except (StaleProposal, NoteExcluded, ProposalClosed, BadRequest, NotFound) as exc:
                left.append({"id": proposal.id, "path": proposal.path, **exc.to_dict()})
        return {"applied": applied, "not_applied": left}

    def _pending(self, proposal_id: str) -> Proposal:
        proposal = self._find(proposal_id)
        if proposal.status != "pending":
            raise ProposalClosed(
                f"Proposal {proposal.id} is {proposal.status} already.",
                "Only a proposal that waits can be applied or rejected; an applied one can be undone.",
            )
        return proposal

    def _still_allowed(self, proposal: Proposal) -> None:
        """The note (and a link's target) may still be written: not excluded since."""
        if self._now_private(proposal, self._excluder(), self._current(proposal.path)):
            raise NoteExcluded(
                f"{proposal.path} is excluded from vask now: the proposal was deleted, the note left as it is.",
                "An exclusion rule or the note's own `vask: exclude` keeps it out.",
            )

    def _decided(self, proposal: Proposal, status: str, by: str, written_by: str | None = None) -> Proposal:
        now = _now()
        decided = replace(
            proposal,
            status=status,  # type: ignore[arg-type]
            decided=now,
            decided_by=by,
            written_by=written_by,
            events=(*proposal.events, {"at": now, "action": status, "by": by}),
        )
        self.store.save(decided)
        self._forget_old()
        return decided

    def _forget_old(self) -> None:
        """Keeps the newest KEEP_DECIDED decided proposals (the history); older ones are deleted."""
        decided = [p for p in self.store.all() if p.status != "pending"]
        decided.sort(key=lambda p: (p.undone or p.decided or p.created, p.id), reverse=True)
        for proposal in decided[KEEP_DECIDED:]:
            self.store.delete(proposal.id)


def _not_written(relative: str, exc: OSError) -> VaskError:
    """A note the system would not let be written (read-only, locked by another program, a full disk)."""
    return VaskError(
        f"{relative} could not be written ({exc.strerror or exc}): it was left as it was.",
        "Check that the note is not read-only or held open by another program, and that the disk has room; "
        "then try again.",
    )


def _link_summary(relative: str, edit: LinkEdit) -> str:
    name = note_name(relative)
    if edit.placement == "mention":
        return f"Link {edit.markup} in {name}, at the words “{edit.shown}”"
    made = " (a new heading)" if edit.heading_created else ""
    return f"Link {edit.markup} in {name}, under “{edit.heading}”{made}"
