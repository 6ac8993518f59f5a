/**
 * Chat state: the turns shown in the pane, and the conversation history that
 * follow-up questions carry to the server.
 */
import { toScope, type AppliedScope, type PaneScope } from './scope';
import { toSeed } from './seed';
import { toTimeRange } from './time';
import type { AskEvent, Citation, HistoryMessage, SeedInfo, Source, TimeRange } from './types';

export interface UserTurn {
	id: number;
	role: 'user';
	content: string;
	/** Vault path of the note the question is about, if any. */
	currentNote?: string;
	/** The note or folder the pane's toggle limited this question to (sent as filters). */
	paneScope?: PaneScope;
	/** The note open when it was asked: what "this note" means in "what connects to this note?". */
	openNote?: string;
}

export type AssistantStatus = 'waiting' | 'streaming' | 'done' | 'stopped' | 'error';

export interface AssistantTurn {
	id: number;
	role: 'assistant';
	/** Answer text so far (the final `done.answer` once finished). */
	content: string;
	sources: Source[];
	citations: Citation[];
	declined: boolean;
	/** The server's note about this answer (keyword-only results, passages left out), if any. */
	notice?: string;
	/** The dates searched because the question named a time; null when the whole vault was searched. */
	timeRange: TimeRange | null;
	/** What the question's `[[Note]]` / `#tag` / `path:` mentions limited the search to; null: none. */
	scope: AppliedScope | null;
	/** false: asked with `read_time: false` ("Search all dates"), the time words not read. */
	readTime: boolean;
	/** The note whose connections the question asked for; null: an ordinary question. */
	seed: SeedInfo | null;
	/** false: asked with `connect: false` (the seed chip removed), the question read as asked. */
	connect: boolean;
	status: AssistantStatus;
	/** Set when status is "error". */
	error?: unknown;
	/** The chat model asked for (the plugin's setting); unset: the server's default. */
	model?: string;
	/** Kept while it streamed and never finished (Obsidian closed mid-answer). */
	interrupted?: boolean;
}

export type Turn = UserTurn | AssistantTurn;

export interface HistoryLimits {
	/** Most question/answer pairs to send. */
	maxPairs: number;
	/** Most characters of history to send (older pairs are dropped first). */
	maxChars: number;
}

export const DEFAULT_HISTORY_LIMITS: HistoryLimits = { maxPairs: 6, maxChars: 12_000 };

/** An answer not yet received. */
function freshAnswer(): Pick<
	AssistantTurn,
	'content' | 'sources' | 'citations' | 'declined' | 'timeRange' | 'scope' | 'seed' | 'status'
> {
	return { content: '', sources: [], citations: [], declined: false, timeRange: null, scope: null, seed: null, status: 'waiting' };
}

export class ChatSession {
	private turns: Turn[] = [];
	private nextId = 1;

	constructor(private readonly limits: HistoryLimits = DEFAULT_HISTORY_LIMITS) {}

	get all(): readonly Turn[] {
		return this.turns;
	}

	get isEmpty(): boolean {
		return this.turns.length === 0;
	}

	/** The turn still receiving an answer, if any. */
	get active(): AssistantTurn | null {
		const last = this.turns[this.turns.length - 1];
		return last && last.role === 'assistant' && (last.status === 'waiting' || last.status === 'streaming') ? last : null;
	}

	/**
	 * History for the next question: completed question/answer pairs only
	 * (stopped or failed answers are left out), newest kept within the limits,
	 * in chronological order. `before`: only the turns before that index.
	 */
	history(before = this.turns.length): HistoryMessage[] {
		const pairs: [HistoryMessage, HistoryMessage][] = [];
		for (let i = 0; i + 1 < Math.min(before, this.turns.length); i++) {
			const q = this.turns[i];
			const a = this.turns[i + 1];
			if (q?.role === 'user' && a?.role === 'assistant' && a.status === 'done' && a.content.trim() !== '') {
				pairs.push([
					{ role: 'user', content: q.content },
					{ role: 'assistant', content: a.content },
				]);
				i++;
			}
		}
		const kept: [HistoryMessage, HistoryMessage][] = [];
		let chars = 0;
		for (let i = pairs.length - 1; i >= 0 && kept.length < this.limits.maxPairs; i--) {
			const pair = pairs[i]!;
			const size = pair[0].content.length + pair[1].content.length;
			if (chars + size > this.limits.maxChars) break;
			chars += size;
			kept.unshift(pair);
		}
		return kept.flat();
	}

	/**
	 * Adds a question and an (empty) answer turn. `history` is what to send
	 * with it: the conversation before this question.
	 */
	ask(
		question: string,
		currentNote?: string,
		paneScope?: PaneScope | null,
		openNote?: string | null,
	): { user: UserTurn; assistant: AssistantTurn; history: HistoryMessage[] } {
		const history = this.history();
		const user: UserTurn = { id: this.nextId++, role: 'user', content: question };
		if (currentNote) user.currentNote = currentNote;
		if (paneScope) user.paneScope = paneScope;
		if (openNote) user.openNote = openNote;
		const assistant: AssistantTurn = { id: this.nextId++, role: 'assistant', ...freshAnswer(), readTime: true, connect: true };
		this.turns.push(user, assistant);
		return { user, assistant, history };
	}

	/**
	 * Empties an answer to ask its question again in its place (e.g. over all
	 * dates: `readTime` false). Returns the question and the history it had,
	 * the conversation before it; null when the turn is not in the session.
	 */
	retry(turn: AssistantTurn, opts: { readTime?: boolean; connect?: boolean }): { user: UserTurn; history: HistoryMessage[] } | null {
		const i = this.turns.indexOf(turn);
		const user = this.turns[i - 1];
		if (i < 1 || user?.role !== 'user') return null;
		delete turn.notice;
		delete turn.error;
		delete turn.interrupted;
		Object.assign(turn, freshAnswer(), { readTime: opts.readTime ?? turn.readTime, connect: opts.connect ?? turn.connect });
		return { user, history: this.history(i - 1) };
	}

	/** Applies one streamed event to an answer turn. */
	apply(turn: AssistantTurn, ev: AskEvent): void {
		if (turn.status !== 'waiting' && turn.status !== 'streaming') return;
		switch (ev.type) {
			case 'sources':
				turn.sources = Array.isArray(ev.sources) ? ev.sources : [];
				if (typeof ev.notice === 'string' && ev.notice) turn.notice = ev.notice;
				if ('time_range' in ev) turn.timeRange = toTimeRange(ev.time_range);
				if ('scope' in ev) turn.scope = toScope(ev.scope);
				if ('connection' in ev) turn.seed = toSeed(ev.connection);
				break;
			case 'token':
				turn.content += typeof ev.text === 'string' ? ev.text : '';
				turn.status = 'streaming';
				break;
			case 'done':
				turn.content = typeof ev.answer === 'string' ? ev.answer : turn.content;
				turn.citations = Array.isArray(ev.citations) ? ev.citations : [];
				if (Array.isArray(ev.sources) && ev.sources.length > 0) turn.sources = ev.sources;
				turn.declined = ev.declined === true;
				if ('time_range' in ev) turn.timeRange = toTimeRange(ev.time_range);
				if ('scope' in ev) turn.scope = toScope(ev.scope);
				turn.status = 'done';
				break;
			case 'error':
				turn.status = 'error';
				turn.error = ev;
				break;
		}
	}

	fail(turn: AssistantTurn, error: unknown): void {
		if (turn.status === 'done') return;
		turn.status = 'error';
		turn.error = error;
	}

	stop(turn: AssistantTurn): void {
		if (turn.status === 'waiting' || turn.status === 'streaming') turn.status = 'stopped';
	}

	clear(): void {
		this.turns = [];
	}

	/** Replaces the conversation with kept turns (a chat reopened from the history). */
	load(turns: Turn[]): void {
		this.turns = turns;
		this.nextId = turns.reduce((max, t) => Math.max(max, t.id), 0) + 1;
	}
}
