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
	state: 'idle' | 'indexing' | string;
	notes: number;
	chunks: number;
	pending: number;
	in_progress: string[];
	done: number;
	total: number;
	skipped: FileProblem[];
	failed: FileProblem[];
	model: string;
	dimension: number;
	last_sync: string | null;
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
	mode: 'hybrid' | 'keyword' | string;
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
	chat_model?: string;
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
}

/** A note the answer cites as `[Title]`. */
export interface Citation {
	title: string;
	path: string;
	heading: string;
	anchor: string;
	line: number;
	link: string;
}

export interface AskSourcesEvent {
	type: 'sources';
	sources: Source[];
	/** "vector", "hybrid" or "keyword" (Ollama was down: keyword matches only). */
	mode?: string;
	/** What the user should know about this answer, e.g. keyword-only results or passages left out. */
	notice?: string;
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
	reason: 'links to' | 'linked from' | 'similar' | string;
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
	state: 'idle' | 'indexing' | string;
	notes: number;
	chunks: number;
	pending: number;
	done: number;
	total: number;
	/** Files that could not be read or parsed. */
	failed: number;
	/** Files left out on purpose (too large, binary, a symlink out of the vault); older servers omit it. */
	skipped?: number;
	ollama: { reachable: boolean };
	message?: string;
}
