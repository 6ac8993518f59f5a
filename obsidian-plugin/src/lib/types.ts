/**
 * Types of the vask sidecar's HTTP API (see the server's contract).
 * Pure data: no run-time code, no Obsidian.
 */

export interface ApiErrorBody {
	error: { code: string; message: string; hint?: string };
}

export interface Filters {
	folders?: string[];
	exclude_folders?: string[];
	tags?: string[];
	paths?: string[];
}

export interface HealthInfo {
	status: string;
	version?: string;
	vault?: string;
	ollama?: { host: string; reachable: boolean };
	models?: { embed: string; chat: string; missing: string[] };
	/** The device whose token was sent; only the default one may download a model. Older servers omit it. */
	device?: { name: string; can_pull: boolean; can_apply?: boolean };
	index?: {
		notes: number;
		chunks: number;
		pending: number;
		model: string;
		dimension: number;
		last_sync: string | null;
	};
}

export interface FileProblem {
	path: string;
	reason: string;
}

export interface IndexStatus {
	/** "idle", "indexing", or another state a newer server names. */
	state: string;
	notes: number;
	chunks: number;
	pending: number;
	in_progress: string[];
	done: number;
	total: number;
	/** As in `StatusEvent`. */
	stage?: string | null;
	/** As in `StatusEvent`. */
	stage_seconds?: number | null;
	/** As in `StatusEvent`. */
	paused?: boolean;
	/** As in `StatusEvent`. */
	progress?: SyncProgress | null;
	skipped: FileProblem[];
	failed: FileProblem[];
	model: string;
	dimension: number;
	last_sync: string | null;
	/** Why the last sync failed (e.g. Ollama unreachable), or null. */
	last_error?: { code: string; message: string; hint: string } | null;
	/** Notes left out by an exclusion rule: counts by rule (as the user wrote it), never their paths. */
	excluded?: Record<string, number>;
}

/** What a question was limited to, from its `[[Note]]`, `#tag` and `path:Folder` mentions; null: not limited. */
export interface ScopeInfo {
	notes: string[];
	tags: string[];
	folders: string[];
}

export interface SearchRequest {
	query: string;
	top_k?: number;
	min_similarity?: number;
	filters?: Filters;
}

export interface SearchHit {
	path: string;
	title: string;
	heading: string;
	anchor: string;
	line_start: number;
	line_end: number;
	score: number;
	text: string;
}

export interface SearchResponse {
	hits: SearchHit[];
	/** "hybrid", "vector", "keyword" (Ollama down) or "connections". */
	mode: string;
	scope?: ScopeInfo | null;
}

export interface HistoryMessage {
	role: 'user' | 'assistant';
	content: string;
}

export interface AskRequest {
	question: string;
	history?: HistoryMessage[];
	top_k?: number;
	min_similarity?: number;
	filters?: Filters;
	current_note?: string;
	/** The note open in Obsidian: what "this note" means in "what connects to this note?"; it limits nothing else. */
	open_note?: string;
	/** false: read no seed ("what connects to [[X]]" searched as asked). Default true. */
	connect?: boolean;
	chat_model?: string;
	/** The asker's local date-time with its UTC offset: what "last month" is resolved against. */
	now?: string;
	/** false: do not read the time the question names, search the whole vault. Default true. */
	read_time?: boolean;
}

/** The dates searched because the question named a time ("last month"). */
export interface TimeRange {
	/** ISO date, or null: no start. */
	from: string | null;
	/** ISO date, or null: up to now. */
	to: string | null;
	/** The words understood, as written ("last month"); "" when the range came from explicit filters. */
	text: string;
	/** Set when the words name a day the calendar lacks ("31 April"): the nearest real day was read instead. */
	notice?: string | null;
}

/** A retrieved passage, numbered in rank order. */
export interface Source {
	n: number;
	path: string;
	title: string;
	heading: string;
	anchor: string;
	line_start: number;
	line_end: number;
	score: number;
	/** Obsidian link text: path without .md, plus `#anchor` when there is a heading. */
	link: string;
	/** When it was written (ISO date); null from an index built before dates were read. */
	date?: string | null;
	/** Last day of the span (a weekly note, a chunk over two dated sections); else equal to `date`. */
	date_end?: string | null;
	/** What dates it: "daily-note", "frontmatter:<key>", "heading", … "file-time" (the file's mtime only). */
	date_source?: string | null;
	/** A PDF passage's page (1-based; `link` then ends in `#page=N`); null for notes and canvases. */
	page?: number | null;
	/**
	 * In an answer about what connects to a note: "links to" (the seed links to it), "linked from", "both",
	 * "unlinked", or "seed" (the seed's own passage, kept when the question may be about it).
	 */
	linked?: string;
	/** Likewise: the seed's heading this passage is closest to. */
	near?: string;
	/** During a first index: found by keyword in a note not embedded yet (no similarity). */
	keyword_only?: boolean;
}

/** A note the answer cites as `[Title]`. */
export interface Citation {
	title: string;
	path: string;
	heading: string;
	anchor: string;
	line: number;
	link: string;
	/** A PDF's page, as on its source. */
	page?: number | null;
}

export interface AskSourcesEvent {
	type: 'sources';
	sources: Source[];
	/** "vector", "hybrid" or "keyword" (Ollama was down: keyword matches only). */
	mode?: string;
	/** What the user should know about this answer, e.g. keyword-only results or passages left out. */
	notice?: string;
	/** The range searched, or null when the question names no time (or read_time was false). */
	time_range?: TimeRange | null;
	/** As on `done`, when the server says it early. */
	scope?: ScopeInfo | null;
	/** Set when the question asks what connects to a note (the seed): the sources are other notes. */
	connection?: SeedInfo | null;
}

/** The note a question asks the connections of ("what connects to [[X]]?"). */
export interface SeedInfo {
	/** Its vault path. */
	seed: string;
	title: string;
	/** The words that asked ("connect to"). */
	words: string;
}
export interface AskTokenEvent {
	type: 'token';
	text: string;
}
export interface AskDoneEvent {
	type: 'done';
	answer: string;
	citations: Citation[];
	sources: Source[];
	declined: boolean;
	time_range?: TimeRange | null;
	/** What the mentions in the question limited the search to (older servers omit it). */
	scope?: ScopeInfo | null;
}
export interface AskErrorEvent {
	type: 'error';
	code: string;
	message: string;
	hint?: string;
}
export type AskEvent = AskSourcesEvent | AskTokenEvent | AskDoneEvent | AskErrorEvent;

export interface RelatedNote {
	path: string;
	title: string;
	score: number;
	/** "links to", "linked from" or "similar". */
	reason: string;
	/** false: a connection not linked either way yet, which the pane offers to link. Older servers omit it. */
	linked?: boolean;
}

/** Where a proposed link goes: the note's own words that name the target, or a list item under a heading. */
export interface ProposalLink {
	target: string;
	placement: 'mention' | 'heading';
	/** 1-based line of the link in the note's new text. */
	line: number;
	shown: string;
	markup: string;
	heading: string | null;
	heading_created: boolean;
}

/** A proposed change to a note (GET /v1/proposals, /v1/proposals/{id}). */
export interface Proposal {
	id: string;
	kind: 'link' | 'edit' | 'create';
	path: string;
	/** pending; stale: the note changed since, so it is never applied; applied; rejected; undone. */
	state: 'pending' | 'stale' | 'applied' | 'rejected' | 'undone';
	summary: string;
	/** Who proposed it: "links" for link suggestions, else the proposer's label. */
	source: string;
	device: string;
	reason?: string;
	created: string;
	decided?: string | null;
	written_by?: 'server' | 'plugin' | null;
	/** Applied, and the note still has what was applied. */
	undoable: boolean;
	link?: ProposalLink | null;
	/** In a single proposal's answer (not in lists): the unified diff and the note's whole text before and after. */
	diff?: string;
	before?: string;
	after?: string;
}

export interface ProposalList {
	proposals: Proposal[];
	counts: Partial<Record<Proposal['state'], number>>;
}

export interface ProposedResponse {
	proposal: Proposal;
	/** false: the same change was waiting already, and this is it. */
	new: boolean;
	message: string;
}

export interface ApplyAllResponse {
	applied: Proposal[];
	not_applied: { id: string; path: string; code: string; message: string; hint?: string }[];
}

export interface RelatedResponse {
	path: string;
	related: RelatedNote[];
}

export interface ReindexResponse {
	queued: number;
}

/** Payload of `event: status` on GET /v1/events. */
export interface StatusEvent {
	/** "idle", "indexing", or another state a newer server names. */
	state: string;
	notes: number;
	chunks: number;
	pending: number;
	done: number;
	total: number;
	/** What a sync does once its notes are read ("compacting", "keyword index", …); older servers omit it. */
	stage?: string | null;
	/** Seconds the sync has been in `stage` (sent once a second while in one); older servers omit it. */
	stage_seconds?: number | null;
	/** Files that could not be read or parsed. */
	failed: number;
	/** Files left out on purpose (too large, binary, a symlink out of the vault); older servers omit it. */
	skipped?: number;
	ollama: { reachable: boolean };
	message?: string;
	/** Indexing paused (the plugin's command or `vask pause`); older servers omit it. */
	paused?: boolean;
	/** The running sync's progress, pace and time left; null between syncs; older servers omit it. */
	progress?: SyncProgress | null;
}

export interface SyncProgress {
	notes_done: number;
	notes_total: number;
	chunks_done: number;
	/** Estimated from the bytes of the notes still to read. */
	chunks_total: number;
	/** By bytes of notes: what time left is measured in. */
	percent: number;
	/** Chunks embedded a second; null until measured. */
	rate: number | null;
	/** Seconds left; null until measured (the first seconds). */
	eta_seconds: number | null;
	paused: boolean;
}

/** `ok`; `info`: worth knowing, nothing wrong; `warn`: vask works, something to do; `fail`: what stops vask. */
export type DoctorLevel = 'ok' | 'info' | 'warn' | 'fail';

/** One check of `vask doctor` (GET /v1/doctor). */
export interface DoctorCheck {
	name: string;
	/** Older servers omit it (then `ok` and `required` say it). */
	level?: DoctorLevel;
	/** false only for a `fail`. */
	ok: boolean;
	detail: string;
	/** info: where to read more; warn and fail: the command or step that fixes it. */
	fix: string;
	/** Older servers: false for a check that is said but does not fail. */
	required?: boolean;
}

export interface DoctorReport {
	/** No check fails. */
	ok: boolean;
	/** The worst check's level; older servers omit it. */
	level?: DoctorLevel;
	checks: DoctorCheck[];
}

/** A line of POST /v1/models/pull's stream. */
export interface PullProgressEvent {
	type: 'progress';
	status: string;
	completed?: number | null;
	total?: number | null;
}

export type PullEvent =
	| PullProgressEvent
	| { type: 'done'; model: string }
	| { type: 'error'; code: string; message?: string; hint?: string };
