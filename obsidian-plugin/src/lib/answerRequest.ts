/**
 * The life of an answer's request, from sending the question to its last
 * event: the request built from the turns, one request at a time, the stream
 * applied to the answer and kept as it arrives. The pane draws; this decides
 * what a late event or an abort means.
 */
import type { AssistantTurn, ChatSession, UserTurn } from './chat';
import type { ChatKeeper } from './chatKeeper';
import type { VaskClient } from './client';
import { isAbortError } from './errors';
import { scopeRequestFilters } from './scope';
import { askParams, type VaskSettings } from './settings';
import { localIsoDateTime } from './time';
import type { AskEvent, AskRequest, HistoryMessage } from './types';

/** What the server is sent for the question of `user`, answered into `assistant`. */
export function askRequest(user: UserTurn, assistant: AssistantTurn, history: HistoryMessage[], settings: VaskSettings, now: Date): AskRequest {
	// The asker's own wall-clock time and offset: "yesterday" is their day, not UTC's.
	const req: AskRequest = { question: user.content, ...askParams(settings), now: localIsoDateTime(now) };
	if (history.length > 0) req.history = history;
	if (user.currentNote) req.current_note = user.currentNote;
	if (user.openNote) req.open_note = user.openNote;
	if (!assistant.readTime) req.read_time = false;
	if (!assistant.connect) req.connect = false;
	const scopeFilters = scopeRequestFilters(user.paneScope ?? null);
	if (scopeFilters) req.filters = { ...req.filters, ...scopeFilters };
	return req;
}

export interface AnswerRequestDeps {
	session: ChatSession;
	keeper: Pick<ChatKeeper, 'keep' | 'keepSoon' | 'flush'>;
	/** Read as each request starts: the plugin rebuilds its client when the settings change. */
	client(): Pick<VaskClient, 'ask'>;
	settings(): VaskSettings;
	/** Registers a request so that unloading the plugin aborts it; returns the unregister function. */
	track(ctrl: AbortController): () => void;
	/** A request started (true) or the last one ended (false): the composer's Send becomes Stop. */
	onBusy(busy: boolean): void;
	now?(): Date;
}

export interface AnswerHooks {
	/** After each event was applied to the answer, while the request is its latest. */
	onEvent(ev: AskEvent): void;
	/** The request failed (not stopped), while it is the answer's latest. */
	onFailed?(err: unknown): void;
}

export class AnswerRequests {
	private controller: AbortController | null = null;
	/** Each answer's latest request: a stream replaced by "Search all dates" is ignored. */
	private readonly latest = new WeakMap<AssistantTurn, number>();
	private runs = 0;
	/** Moves on when the pane lets go of its answers ("New chat", another chat shown). */
	private epoch = 0;

	constructor(private readonly deps: AnswerRequestDeps) {}

	/** True while an answer is being received. */
	get busy(): boolean {
		return this.controller !== null;
	}

	/** Stops the answer being received, if any (the server stops when the request is aborted). */
	stop(): void {
		this.controller?.abort();
	}

	/** Every request under way is let go: what still arrives for it, and how it ends, are ignored. */
	dropAll(): void {
		this.epoch++;
	}

	/**
	 * Sends the question of `user` and applies the streamed answer to
	 * `assistant`. Resolves true when the request ended as the answer's latest
	 * (its ending is then to be drawn), false when it was replaced or dropped.
	 */
	async receive(user: UserTurn, assistant: AssistantTurn, history: HistoryMessage[], hooks: AnswerHooks): Promise<boolean> {
		const { session, keeper } = this.deps;
		const run = ++this.runs;
		const epoch = this.epoch;
		this.latest.set(assistant, run);
		const current = (): boolean => this.latest.get(assistant) === run && this.epoch === epoch;
		const ctrl = new AbortController();
		this.controller = ctrl;
		const untrack = this.deps.track(ctrl);
		this.deps.onBusy(true);

		const req = askRequest(user, assistant, history, this.deps.settings(), this.deps.now?.() ?? new Date());
		try {
			await this.deps.client().ask(req, {
				signal: ctrl.signal,
				onEvent: (ev) => {
					if (!current()) return;
					session.apply(assistant, ev);
					// written within a moment: a crash keeps what arrived
					if (ev.type === 'token') keeper.keepSoon();
					else keeper.keep();
					hooks.onEvent(ev);
				},
			});
		} catch (err) {
			// Not when this request was replaced ("Search all dates") or dropped ("New chat").
			if (current()) {
				if (isAbortError(err)) session.stop(assistant);
				else {
					session.fail(assistant, err);
					hooks.onFailed?.(err);
				}
			}
		} finally {
			untrack();
			if (this.controller === ctrl) {
				this.controller = null;
				this.deps.onBusy(false);
			}
		}
		if (!current()) return false;
		keeper.keep();
		void keeper.flush();
		return true;
	}
}
