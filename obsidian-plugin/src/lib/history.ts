/**
 * Chat history, the pure part: what a kept chat is, how the history file is
 * written and read back (JSON Lines: one chat per line, so a damaged line
 * costs that chat only), how old records are brought up to date, pruning,
 * and searching by title. No I/O here: `historyStore.ts` reads and writes.
 */
import type { AssistantTurn, Turn, UserTurn } from './chat';
import { ErrorCode, VaskError, isRecord } from './errors';
import { toScope, toScopeMisses, type ScopeMiss } from './scope';
import { toSeed } from './seed';

/** Version of the history file. Bump it, and teach `migrateRecord` the old shape, when a record changes. */
export const HISTORY_VERSION = 1;

/** The header line's key: tells a history file from any other JSON Lines file. */
const HEADER_KEY = 'vask_chat_history';

/**
 * How much is kept: the newest chats (by last change) within both limits; the
 * chat open in the pane is never pruned. 200 long chats with their sources
 * come to about 4 MB: about 20 ms a write while an answer streams (docs/BENCHMARKS.md).
 */
export interface HistoryLimits {
	maxChats: number;
	/** Characters of the serialised chats together. */
	maxChars: number;
}

export const DEFAULT_HISTORY_LIMITS: Readonly<HistoryLimits> = Object.freeze({ maxChats: 200, maxChars: 4_000_000 });

/** An answer's error as kept on disk: enough for describeError to say it again. */
export interface StoredError {
	code: string;
	message: string;
	hint?: string;
	/** `scope_not_found`: kept so that a reopened chat still offers to ask again with the closest names. */
	misses?: ScopeMiss[];
}

export interface ChatRecord {
	id: string;
	title: string;
	/** ISO date-times. */
	createdAt: string;
	updatedAt: string;
	/** The note an "Ask about the current note" chat is about (vault path). */
	about?: string;
	/** Where "Save as note" last wrote this chat (vault path), to update that note next time. */
	notePath?: string;
	turns: Turn[];
}

/** What the history list shows of a chat. */
export interface ChatSummary {
	id: string;
	title: string;
	createdAt: string;
	updatedAt: string;
	/** Questions asked. */
	questions: number;
	about?: string;
}

export interface ParsedHistory {
	records: ChatRecord[];
	/** The chat open in the pane when the file was written; null after "New chat". */
	current: string | null;
	/** Lines that could not be read, and why (empty: the file was fine). */
	problems: string[];
	/** The file's version (0: no header line). */
	version: number;
}

const TITLE_MAX = 80;

function str(v: unknown): string | undefined {
	return typeof v === 'string' ? v : undefined;
}

/** "What is the pain rule during a run?" — the first question, on one line, at most 80 characters. */
export function titleFrom(question: string): string {
	const line = question.replace(/\s+/g, ' ').trim();
	if (line.length <= TITLE_MAX) return line || 'Untitled chat';
	return `${line.slice(0, TITLE_MAX - 1).trimEnd()}…`;
}

/** A new chat id: time-ordered, unique enough for one person's history. */
export function newChatId(now: Date = new Date(), random: () => number = Math.random): string {
	const r = Math.floor(random() * 36 ** 6)
		.toString(36)
		.padStart(6, '0');
	return `${now.getTime().toString(36).padStart(9, '0')}-${r}`;
}

/** An error (a VaskError, an Error, anything) as plain data to keep. */
export function storedError(err: unknown): StoredError {
	if (!(err instanceof VaskError) && !(isRecord(err) && typeof err.code === 'string')) {
		return { code: ErrorCode.internal, message: err instanceof Error ? err.message : String(err) };
	}
	// A VaskError, or one read back from disk (checked: the file may have been edited by hand).
	const out: StoredError = { code: err.code as string, message: str(err.message) ?? '' };
	if (typeof err.hint === 'string' && err.hint) out.hint = err.hint;
	const misses = toScopeMisses(err.misses);
	if (misses.length > 0) out.misses = misses;
	return out;
}

/** A turn as kept on disk: plain data (the error made plain). */
function storedTurn(turn: Turn): Turn {
	const copy = JSON.parse(JSON.stringify({ ...turn, error: undefined })) as Turn;
	if (turn.role === 'assistant' && turn.error !== undefined) (copy as AssistantTurn).error = storedError(turn.error);
	return copy;
}

/** The record to keep for the turns of a chat. `previous`: the record kept so far, if any. */
export function chatRecord(id: string, turns: readonly Turn[], now: Date, previous?: ChatRecord | null): ChatRecord {
	const first = turns.find((t): t is UserTurn => t.role === 'user');
	const record: ChatRecord = {
		id,
		title: previous?.title || titleFrom(first?.content ?? ''),
		createdAt: previous?.createdAt ?? now.toISOString(),
		updatedAt: now.toISOString(),
		turns: turns.map(storedTurn),
	};
	const about = previous?.about ?? first?.currentNote;
	if (about) record.about = about;
	if (previous?.notePath) record.notePath = previous.notePath;
	return record;
}

export function summaryOf(record: ChatRecord): ChatSummary {
	const s: ChatSummary = {
		id: record.id,
		title: record.title,
		createdAt: record.createdAt,
		updatedAt: record.updatedAt,
		questions: record.turns.filter((t) => t.role === 'user').length,
	};
	if (record.about) s.about = record.about;
	return s;
}

/** Turns from disk back into live turns: errors become VaskErrors again, so the pane can explain them. */
export function liveTurns(record: ChatRecord): Turn[] {
	return record.turns.map((t) => {
		const copy = JSON.parse(JSON.stringify(t)) as Turn;
		if (copy.role === 'assistant' && isRecord(copy.error)) {
			const e = storedError(copy.error);
			copy.error = new VaskError(e.code, e.message, e.hint ?? '', 0, e.misses ?? []);
		}
		return copy;
	});
}

const STATUSES = new Set(['waiting', 'streaming', 'done', 'stopped', 'error']);

function migrateTurn(raw: unknown, id: number): Turn | null {
	if (!isRecord(raw)) return null;
	if (raw.role === 'user') {
		const content = str(raw.content);
		if (content === undefined) return null;
		const t: UserTurn = { id, role: 'user', content };
		const note = str(raw.currentNote);
		if (note) t.currentNote = note;
		const open = str(raw.openNote);
		if (open) t.openNote = open;
		const pane = raw.paneScope;
		if (isRecord(pane) && (pane.kind === 'note' || pane.kind === 'folder') && typeof pane.path === 'string') {
			t.paneScope = { kind: pane.kind, path: pane.path };
		}
		return t;
	}
	if (raw.role !== 'assistant') return null;
	let status = str(raw.status) ?? 'stopped';
	if (!STATUSES.has(status)) status = 'stopped';
	const t: AssistantTurn = {
		id,
		role: 'assistant',
		content: str(raw.content) ?? '',
		sources: Array.isArray(raw.sources) ? (raw.sources.filter((s) => isRecord(s) && typeof s.path === 'string') as AssistantTurn['sources']) : [],
		citations: Array.isArray(raw.citations)
			? (raw.citations.filter((c) => isRecord(c) && typeof c.path === 'string') as AssistantTurn['citations'])
			: [],
		declined: raw.declined === true,
		timeRange: isRecord(raw.timeRange) ? (raw.timeRange as unknown as AssistantTurn['timeRange']) : null,
		scope: toScope(raw.scope),
		readTime: raw.readTime !== false,
		seed: toSeed(raw.seed),
		connect: raw.connect !== false,
		status: status as AssistantTurn['status'],
	};
	if (typeof raw.notice === 'string' && raw.notice) t.notice = raw.notice;
	if (typeof raw.model === 'string' && raw.model) t.model = raw.model;
	if (raw.interrupted === true) t.interrupted = true;
	if (t.status === 'waiting' || t.status === 'streaming') {
		// Kept while it streamed and never finished (Obsidian closed, a crash): what arrived stays.
		t.status = 'stopped';
		t.interrupted = true;
	}
	if (t.status === 'error') t.error = storedError(raw.error ?? { code: ErrorCode.incomplete, message: '' });
	return t;
}

/**
 * A record from disk, from this version or an older one, made whole: turns
 * renumbered and checked, an unfinished answer marked interrupted, a missing
 * title taken from the first question. null when it is not a chat at all.
 */
export function migrateRecord(raw: unknown, now: Date = new Date()): ChatRecord | null {
	if (!isRecord(raw) || typeof raw.id !== 'string' || raw.id === '' || !Array.isArray(raw.turns)) return null;
	const turns: Turn[] = [];
	for (const t of raw.turns) {
		const turn = migrateTurn(t, turns.length + 1);
		if (turn) turns.push(turn);
	}
	if (!turns.some((t) => t.role === 'user')) return null;
	const first = turns.find((t): t is UserTurn => t.role === 'user')!;
	const created = str(raw.createdAt) ?? str(raw.updatedAt) ?? now.toISOString();
	const record: ChatRecord = {
		id: raw.id,
		title: (str(raw.title) ?? '').trim() || titleFrom(first.content),
		createdAt: created,
		updatedAt: str(raw.updatedAt) ?? created,
		turns,
	};
	const about = str(raw.about) ?? first.currentNote;
	if (about) record.about = about;
	const notePath = str(raw.notePath);
	if (notePath) record.notePath = notePath;
	return record;
}

/**
 * A record's line in the file, made once per record object: records are
 * replaced, never changed in place, so while an answer streams only the open
 * chat is serialised again for each write (not the whole history).
 */
const lines = new WeakMap<ChatRecord, string>();

function lineOf(record: ChatRecord): string {
	let line = lines.get(record);
	if (line === undefined) {
		line = JSON.stringify(record);
		lines.set(record, line);
	}
	return line;
}

/** Newest change first. */
function byUpdated(a: ChatRecord, b: ChatRecord): number {
	return a.updatedAt < b.updatedAt ? 1 : a.updatedAt > b.updatedAt ? -1 : 0;
}

/** The history file's text: a header line, then one chat per line, newest first. */
export function serializeHistory(records: readonly ChatRecord[], current: string | null = null): string {
	const out = [JSON.stringify({ [HEADER_KEY]: HISTORY_VERSION, current })];
	for (const r of [...records].sort(byUpdated)) out.push(lineOf(r));
	return out.join('\n') + '\n';
}

/**
 * Reads a history file. Never throws: a line that is not JSON, or not a chat,
 * is left out and named in `problems`; the other chats are kept. A file from
 * a newer version is read as far as it can be, and says so.
 */
export function parseHistory(text: string, now: Date = new Date()): ParsedHistory {
	const out: ParsedHistory = { records: [], current: null, problems: [], version: 0 };
	const seen = new Set<string>();
	const lines = text.split('\n');
	let bad = 0;
	lines.forEach((line, i) => {
		if (line.trim() === '') return;
		let value: unknown;
		try {
			value = JSON.parse(line);
		} catch {
			bad++;
			return;
		}
		if (i === 0 && isRecord(value) && HEADER_KEY in value) {
			out.version = typeof value[HEADER_KEY] === 'number' ? value[HEADER_KEY] : 0;
			out.current = str(value.current) ?? null;
			return;
		}
		const record = migrateRecord(value, now);
		if (!record || seen.has(record.id)) {
			if (!record) bad++;
			return;
		}
		seen.add(record.id);
		out.records.push(record);
	});
	if (out.version > HISTORY_VERSION) {
		out.problems.push(`it was written by a newer version of the plugin (history version ${out.version}, this one reads ${HISTORY_VERSION})`);
	}
	if (out.version === 0 && out.records.length === 0 && text.trim() !== '') {
		out.problems.push('it is not a vask chat history');
	} else if (bad > 0) {
		out.problems.push(`${bad} line${bad === 1 ? '' : 's'} could not be read`);
	}
	if (out.current !== null && !seen.has(out.current)) out.current = null;
	return out;
}

/**
 * The records to keep: newest first, at most `maxChats`, and no more than
 * `maxChars` of serialised text; `keep` (the open chat) stays whatever its age.
 */
export function pruneHistory(
	records: readonly ChatRecord[],
	limits: HistoryLimits = DEFAULT_HISTORY_LIMITS,
	keep: string | null = null,
): { kept: ChatRecord[]; dropped: ChatRecord[] } {
	const sorted = [...records].sort(byUpdated);
	const kept: ChatRecord[] = [];
	const dropped: ChatRecord[] = [];
	const pinned = keep === null ? undefined : sorted.find((r) => r.id === keep);
	let chars = pinned ? lineOf(pinned).length : 0;
	let count = pinned ? 1 : 0;
	for (const r of sorted) {
		if (r === pinned) {
			kept.push(r);
			continue;
		}
		const size = lineOf(r).length;
		if (count + 1 <= limits.maxChats && chars + size <= limits.maxChars) {
			kept.push(r);
			count++;
			chars += size;
		} else {
			dropped.push(r);
		}
	}
	return { kept, dropped };
}

function fold(s: string): string {
	return s.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase();
}

/** Chats whose title (or the note they are about) holds every word of `query`, newest first. */
export function searchHistory(summaries: readonly ChatSummary[], query: string): ChatSummary[] {
	const words = fold(query).split(/\s+/).filter((w) => w !== '');
	const sorted = [...summaries].sort((a, b) => (a.updatedAt < b.updatedAt ? 1 : a.updatedAt > b.updatedAt ? -1 : 0));
	if (words.length === 0) return sorted;
	return sorted.filter((s) => {
		const hay = fold(`${s.title} ${s.about ?? ''}`);
		return words.every((w) => hay.includes(w));
	});
}
