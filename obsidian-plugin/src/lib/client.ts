/**
 * HTTP client for the vask server. Requests go through a Transport (transport.ts): streaming
 * fetch where the platform allows it, Obsidian's buffered requestUrl where it does not; this
 * file reads both the same way, so it works in Obsidian's renderer (desktop and mobile), a
 * browser and Node alike. No Obsidian imports.
 */
import { ErrorCode, VaskError, errorFromResponse, toVaskError } from './errors';
import { NdjsonParseError, NdjsonParser, readNdjson } from './ndjson';
import { SseParser } from './sse';
import { fetchTransport, type FetchLike, type Transport, type TransportKind } from './transport';
import type {
	ApplyAllResponse,
	AskDoneEvent,
	AskEvent,
	AskRequest,
	DoctorReport,
	HealthInfo,
	IndexStatus,
	PullEvent,
	PullProgressEvent,
	Proposal,
	ProposalList,
	ProposedResponse,
	ReindexResponse,
	RelatedResponse,
	SearchRequest,
	SearchResponse,
	StatusEvent,
} from './types';

export type { FetchLike } from './transport';

export interface ClientOptions {
	baseUrl: string;
	token: string;
	/** How requests are sent. Default: streaming fetch through `fetch` below. */
	transport?: Transport;
	/** Defaults to the global fetch (window.fetch in Obsidian); used when no transport is given. */
	fetch?: FetchLike;
	/** Time limit for plain JSON requests (not for streams). */
	timeoutMs?: number;
	/** With a buffered transport, how often the status is polled instead of the event stream. */
	pollMs?: number;
}

/** Shown above an answer's sources when the transport cannot stream (the pane's notice line). */
export const NOT_STREAMING_NOTICE =
	'This device cannot stream from the server, so answers arrive whole, when they are finished.';

export interface AskOptions {
	signal?: AbortSignal;
	onEvent?: (event: AskEvent) => void;
}

export interface EventsHandlers {
	signal?: AbortSignal;
	/** The server accepted the connection (HTTP 200). */
	onOpen?: () => void;
	onStatus: (status: StatusEvent) => void;
	/** Any bytes arrived (events, `: ping` comments): the connection is alive. */
	onActivity?: () => void;
}

export const DEFAULT_TIMEOUT_MS = 20_000;
export const DEFAULT_POLL_MS = 10_000;

/**
 * Most paths one /v1/reindex request may carry: the server answers 400 to a
 * longer list (MAX_LIST_ITEMS in vask_server/core/arguments.py; keep the two equal).
 */
export const MAX_REINDEX_PATHS = 200;

/** Joins a base URL and an API path; rejects anything that is not http(s). */
export function joinUrl(baseUrl: string, path: string): string {
	const base = baseUrl.trim().replace(/\/+$/, '');
	if (!/^https?:\/\/[^/]+/i.test(base)) {
		throw new VaskError(
			ErrorCode.badSettings,
			`The server URL "${baseUrl}" is not an http:// address.`,
			'Set it to http://127.0.0.1:8765, or the https:// address of the vask server, in Settings → Vask.',
		);
	}
	return base + path;
}

/**
 * An AbortSignal that fires when `outer` fires or after `ms`. `dispose` clears
 * the timer and the listener. The reason tells a timeout from a user abort.
 */
export function linkedSignal(outer: AbortSignal | undefined, ms: number | null): {
	signal: AbortSignal;
	timedOut: () => boolean;
	dispose: () => void;
} {
	const ctrl = new AbortController();
	let timedOut = false;
	const onAbort = (): void => ctrl.abort(outer?.reason);
	if (outer) {
		if (outer.aborted) ctrl.abort(outer.reason);
		else outer.addEventListener('abort', onAbort, { once: true });
	}
	const timer =
		ms === null
			? null
			: window.setTimeout(() => {
					timedOut = true;
					ctrl.abort(new DOMException('timed out', 'TimeoutError'));
				}, ms);
	return {
		signal: ctrl.signal,
		timedOut: () => timedOut,
		dispose: () => {
			if (timer !== null) window.clearTimeout(timer);
			outer?.removeEventListener('abort', onAbort);
		},
	};
}

function isAskEvent(v: unknown): v is AskEvent {
	return typeof v === 'object' && v !== null && typeof (v as { type?: unknown }).type === 'string';
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
	return new Promise((resolve, reject) => {
		if (signal?.aborted) return reject(new DOMException('aborted', 'AbortError'));
		const timer = window.setTimeout(() => {
			signal?.removeEventListener('abort', onAbort);
			resolve();
		}, ms);
		const onAbort = (): void => {
			window.clearTimeout(timer);
			reject(new DOMException('aborted', 'AbortError'));
		};
		signal?.addEventListener('abort', onAbort, { once: true });
	});
}

/** /v1/health and /v1/status as the status event /v1/events would have sent. */
export function statusEventFrom(health: HealthInfo, status: IndexStatus): StatusEvent {
	const count = (v: unknown): number => (Array.isArray(v) ? v.length : typeof v === 'number' ? v : 0);
	const event: StatusEvent = {
		state: status.state,
		notes: status.notes,
		chunks: status.chunks,
		pending: status.pending,
		done: status.done,
		total: status.total,
		failed: count(status.failed),
		skipped: count(status.skipped),
		ollama: { reachable: health.ollama?.reachable ?? true },
	};
	if (status.last_error?.message) event.message = status.last_error.message;
	return event;
}

export class VaskClient {
	readonly baseUrl: string;
	private readonly token: string;
	readonly transport: Transport;
	private readonly timeoutMs: number;
	private readonly pollMs: number;

	constructor(opts: ClientOptions) {
		this.baseUrl = opts.baseUrl;
		this.token = opts.token.trim();
		this.transport = opts.transport ?? fetchTransport(opts.fetch);
		this.timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
		this.pollMs = opts.pollMs ?? DEFAULT_POLL_MS;
	}

	/** Whether answers stream here ('streaming') or arrive whole ('buffered'). */
	kind(): Promise<TransportKind> {
		return this.transport.kind();
	}

	private headers(extra: Record<string, string>, auth: boolean): Record<string, string> {
		const h: Record<string, string> = { ...extra };
		if (auth && this.token) h.Authorization = `Bearer ${this.token}`;
		return h;
	}

	/** Sends a request; resolves with an ok Response or throws a VaskError. */
	private async send(
		method: 'GET' | 'POST',
		path: string,
		opts: { body?: unknown; signal?: AbortSignal; accept?: string; auth?: boolean },
	): Promise<Response> {
		const url = joinUrl(this.baseUrl, path);
		const headers = this.headers({ Accept: opts.accept ?? 'application/json' }, opts.auth ?? true);
		let body: string | undefined;
		if (opts.body !== undefined) {
			headers['Content-Type'] = 'application/json';
			body = JSON.stringify(opts.body);
		}
		let res: Response;
		try {
			res = await this.transport.send({ method, url, headers, body, signal: opts.signal });
		} catch (err) {
			throw toVaskError(err);
		}
		if (!res.ok) throw await errorFromResponse(res);
		return res;
	}

	/** A JSON request/response with a time limit. */
	private async json<T>(
		method: 'GET' | 'POST',
		path: string,
		opts: { body?: unknown; signal?: AbortSignal; auth?: boolean } = {},
	): Promise<T> {
		const linked = linkedSignal(opts.signal, this.timeoutMs);
		try {
			const res = await this.send(method, path, { ...opts, signal: linked.signal });
			const text = await res.text();
			try {
				return JSON.parse(text) as T;
			} catch {
				throw new VaskError(ErrorCode.badResponse, 'the response is not JSON', '', res.status);
			}
		} catch (err) {
			if (linked.timedOut()) {
				throw new VaskError(ErrorCode.timeout, `No answer from the server within ${Math.round(this.timeoutMs / 1000)} s.`);
			}
			throw toVaskError(err);
		} finally {
			linked.dispose();
		}
	}

	/** GET /v1/health. With `auth: false` only `{status}` comes back. */
	health(opts: { auth?: boolean; signal?: AbortSignal } = {}): Promise<HealthInfo> {
		return this.json<HealthInfo>('GET', '/v1/health', { auth: opts.auth ?? true, signal: opts.signal });
	}

	status(signal?: AbortSignal): Promise<IndexStatus> {
		return this.json<IndexStatus>('GET', '/v1/status', { signal });
	}

	search(req: SearchRequest, signal?: AbortSignal): Promise<SearchResponse> {
		return this.json<SearchResponse>('POST', '/v1/search', { body: req, signal });
	}

	/** The chat models the answers' server serves (GET /v1/models), for the settings to suggest; [] when it says none. */
	async chatModels(signal?: AbortSignal): Promise<string[]> {
		const body = await this.json<unknown>('GET', '/v1/models', { signal });
		return modelNames(body);
	}

	/** GET /v1/doctor: `vask doctor --json`'s checklist, run by the server. */
	doctor(signal?: AbortSignal): Promise<DoctorReport> {
		return this.json<DoctorReport>('GET', '/v1/doctor', { signal });
	}

	/**
	 * POST /v1/models/pull: downloads a model into the model server, each progress line to
	 * `onProgress` as it arrives. Resolves when the server says done; throws a VaskError for an
	 * HTTP error (pull_unsupported from an OpenAI-compatible server), an error line, a stream cut
	 * short, or an abort.
	 */
	async pullModel(model: string, opts: { role?: 'embed' | 'chat'; signal?: AbortSignal; onProgress?: (p: PullProgressEvent) => void } = {}): Promise<void> {
		try {
			const body: { model: string; role?: string } = { model };
			if (opts.role) body.role = opts.role;
			const res = await this.send('POST', '/v1/models/pull', { body, signal: opts.signal, accept: 'application/x-ndjson' });
			if (!res.body) throw new VaskError(ErrorCode.badResponse, 'the response has no body');
			for await (const v of readNdjson(res.body)) {
				if (typeof v !== 'object' || v === null) continue;
				const event = v as PullEvent;
				if (event.type === 'progress') opts.onProgress?.(event);
				else if (event.type === 'error') throw new VaskError(event.code || ErrorCode.internal, event.message ?? '', event.hint ?? '', res.status);
				else if (event.type === 'done') return;
			}
			throw new VaskError(ErrorCode.incomplete, `The download of ${model} ended before it was finished.`);
		} catch (err) {
			if (err instanceof NdjsonParseError) throw new VaskError(ErrorCode.badResponse, err.message);
			if (opts.signal?.aborted) throw new VaskError(ErrorCode.aborted, 'Stopped.');
			throw toVaskError(err);
		}
	}

	related(path: string, topK = 10, signal?: AbortSignal): Promise<RelatedResponse> {
		const q = `?path=${encodeURIComponent(path)}&top_k=${encodeURIComponent(String(topK))}`;
		return this.json<RelatedResponse>('GET', '/v1/related' + q, { signal });
	}

	/** GET /v1/proposals: the proposed changes (all kept, or those in `state`), newest first, with counts. */
	proposals(state?: Proposal['state'], signal?: AbortSignal): Promise<ProposalList> {
		const q = state ? `?state=${encodeURIComponent(state)}` : '';
		return this.json<ProposalList>('GET', '/v1/proposals' + q, { signal });
	}

	/** GET /v1/proposals/{id}: one proposal with its diff and the note's text before and after. */
	async proposal(id: string, signal?: AbortSignal): Promise<Proposal> {
		return (await this.json<{ proposal: Proposal }>('GET', `/v1/proposals/${encodeURIComponent(id)}`, { signal })).proposal;
	}

	/** POST /v1/proposals/link: a link from `path` to `target`, proposed (nothing is written until approved). */
	proposeLink(path: string, target: string, heading?: string, signal?: AbortSignal): Promise<ProposedResponse> {
		const body: { path: string; target: string; heading?: string } = { path, target };
		if (heading) body.heading = heading;
		return this.json<ProposedResponse>('POST', '/v1/proposals/link', { body, signal });
	}

	/**
	 * POST /v1/proposals/{id}/{apply,reject,undo}. `written`: the plugin made the change itself (Vault.process),
	 * and the server only records it, after checking the note has exactly that text.
	 */
	async decide(id: string, action: 'apply' | 'reject' | 'undo', written = false, signal?: AbortSignal): Promise<Proposal> {
		const body = written ? { written: true } : {};
		const path = `/v1/proposals/${encodeURIComponent(id)}/${action}`;
		return (await this.json<{ proposal: Proposal }>('POST', path, { body, signal })).proposal;
	}

	/** POST /v1/proposals/apply-all: every waiting proposal from one source. */
	applyAll(source: string, signal?: AbortSignal): Promise<ApplyAllResponse> {
		return this.json<ApplyAllResponse>('POST', '/v1/proposals/apply-all', { body: { source }, signal });
	}

	/**
	 * Queues paths (or, with none, the whole vault) for reindexing. A long list
	 * (a folder moved) goes in requests of MAX_REINDEX_PATHS, one after the
	 * other; the first failure stops and is thrown.
	 */
	async reindex(paths?: string[], signal?: AbortSignal): Promise<ReindexResponse> {
		if (!paths) return this.json<ReindexResponse>('POST', '/v1/reindex', { body: {}, signal });
		let queued = 0;
		for (let i = 0; i < paths.length; i += MAX_REINDEX_PATHS) {
			const batch = paths.slice(i, i + MAX_REINDEX_PATHS);
			const res = await this.json<ReindexResponse>('POST', '/v1/reindex', { body: { paths: batch }, signal });
			queued += res.queued;
		}
		return { queued };
	}

	/** Pauses indexing on the server (kept over its restarts); searches go on. */
	pauseIndexing(paused: boolean, signal?: AbortSignal): Promise<{ paused: boolean }> {
		return this.json<{ paused: boolean }>('POST', paused ? '/v1/index/pause' : '/v1/index/resume', { body: {}, signal });
	}

	/** Notes to index before the others (the ones open or opened last); an older server lacks it (404). */
	indexFirst(paths: string[], signal?: AbortSignal): Promise<{ moved: number }> {
		return this.json<{ moved: number }>('POST', '/v1/index/first', { body: { paths: paths.slice(0, MAX_REINDEX_PATHS) }, signal });
	}

	/**
	 * POST /v1/ask and read the NDJSON stream. Every event goes to `onEvent` as
	 * it arrives; resolves with the final `done` event. Throws a VaskError for
	 * an HTTP error, an `error` line, a stream cut short, or an abort
	 * (code `aborted`).
	 */
	async ask(req: AskRequest, opts: AskOptions = {}): Promise<AskDoneEvent> {
		try {
			const buffered = (await this.transport.kind()) === 'buffered';
			const res = await this.send('POST', '/v1/ask', {
				body: req,
				signal: opts.signal,
				accept: 'application/x-ndjson',
			});
			if (!res.body) throw new VaskError(ErrorCode.badResponse, 'the response has no body');
			const reader = res.body.getReader();
			const parser = new NdjsonParser();
			const state: { done: AskDoneEvent | null } = { done: null };
			const handle = (values: unknown[]): void => {
				for (const v of values) {
					if (!isAskEvent(v) || state.done) continue;
					if (v.type === 'error') {
						throw new VaskError(v.code || ErrorCode.internal, v.message ?? '', v.hint ?? '', res.status);
					}
					if (buffered && v.type === 'sources') {
						// The pane shows this notice line: the answer will not appear word by word.
						v.notice = v.notice ? `${v.notice} ${NOT_STREAMING_NOTICE}` : NOT_STREAMING_NOTICE;
					}
					opts.onEvent?.(v);
					if (v.type === 'done') state.done = v;
				}
			};
			try {
				while (!state.done) {
					const { value, done: eof } = await reader.read();
					if (eof) {
						handle(parser.end());
						break;
					}
					if (value) handle(parser.push(value));
				}
			} finally {
				// Nothing more is expected (or something failed): release the connection.
				reader.cancel().catch(() => undefined);
			}
			const done = state.done;
			if (!done) {
				throw new VaskError(ErrorCode.incomplete, 'The answer stream ended before it was finished.');
			}
			return done;
		} catch (err) {
			if (err instanceof NdjsonParseError) {
				throw new VaskError(ErrorCode.badResponse, err.message);
			}
			if (opts.signal?.aborted) throw new VaskError(ErrorCode.aborted, 'Stopped.');
			throw toVaskError(err);
		}
	}

	/**
	 * GET /v1/events (Server-Sent Events over a streaming fetch, so that the
	 * Authorization header can be sent). Resolves when the server closes the
	 * stream; rejects with a VaskError on failure or abort.
	 */
	async events(h: EventsHandlers): Promise<void> {
		if ((await this.transport.kind()) === 'buffered') return this.pollStatus(h);
		try {
			const res = await this.send('GET', '/v1/events', { signal: h.signal, accept: 'text/event-stream' });
			if (!res.body) throw new VaskError(ErrorCode.badResponse, 'the event stream has no body');
			h.onOpen?.();
			const parser = new SseParser({
				onEvent: (ev) => {
					if (ev.event !== 'status') return;
					let data: unknown;
					try {
						data = JSON.parse(ev.data);
					} catch {
						return; // a malformed event is skipped, the stream goes on
					}
					if (typeof data === 'object' && data !== null) h.onStatus(data as StatusEvent);
				},
				onComment: () => undefined,
			});
			const reader = res.body.getReader();
			for (;;) {
				const { value, done } = await reader.read();
				if (done) break;
				if (value && value.length > 0) {
					h.onActivity?.();
					parser.push(value);
				}
			}
			parser.end();
		} catch (err) {
			if (h.signal?.aborted) throw new VaskError(ErrorCode.aborted, 'Stopped.');
			throw toVaskError(err);
		}
	}

	/**
	 * Where the event stream cannot run (a buffered transport never sees the end of an endless
	 * body): /v1/health and /v1/status every `pollMs`, handed on as status events. Runs until
	 * aborted; rejects with a VaskError on failure or abort, as events() does.
	 */
	private async pollStatus(h: EventsHandlers): Promise<void> {
		let opened = false;
		try {
			for (;;) {
				const [health, status] = await Promise.all([this.health({ signal: h.signal }), this.status(h.signal)]);
				if (!opened) {
					opened = true;
					h.onOpen?.();
				}
				h.onActivity?.();
				h.onStatus(statusEventFrom(health, status));
				await sleep(this.pollMs, h.signal);
			}
		} catch (err) {
			if (h.signal?.aborted) throw new VaskError(ErrorCode.aborted, 'Stopped.');
			throw toVaskError(err);
		}
	}
}

/** The chat server's model names from a /v1/models answer, checked: strings only, each once, sorted. */
export function modelNames(body: unknown): string[] {
	if (typeof body !== 'object' || body === null) return [];
	const chat = (body as { chat?: unknown }).chat;
	if (typeof chat !== 'object' || chat === null) return [];
	const models = (chat as { models?: unknown }).models;
	if (!Array.isArray(models)) return [];
	return [...new Set(models.filter((m): m is string => typeof m === 'string' && m.length > 0))].sort();
}
