/**
 * How requests reach the server, behind one interface, so that the client and the views do not
 * know which one runs:
 *
 * - streaming: `fetch`, whose body arrives as it is written (answers token by token, the event
 *   stream live). Needs the server to answer CORS (it does for Obsidian's origins) and a
 *   certificate the platform's web view trusts.
 * - buffered: Obsidian's `requestUrl` (passed in, so this file imports nothing from 'obsidian'),
 *   which goes around CORS and the web view on mobile, but hands over the whole body at once.
 *
 * `AutoTransport` picks one the first time it is used: streaming when a plain `fetch` of the
 * bare health check gets any HTTP answer, else buffered when `requestUrl` does. Once one has
 * answered, the choice holds; while neither has, it looks again on the next request.
 */

export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;

export type TransportKind = 'streaming' | 'buffered';

export interface HttpRequest {
	method: 'GET' | 'POST';
	url: string;
	headers: Record<string, string>;
	body?: string;
	signal?: AbortSignal;
}

export interface Transport {
	/** Which kind runs (for AutoTransport: decided on first use). */
	kind(): Promise<TransportKind>;
	/** Resolves with the response, whatever its status; rejects only when no HTTP answer came. */
	send(req: HttpRequest): Promise<Response>;
}

/** The shape of Obsidian's requestUrl that is used here (and that tests stand in for). */
export interface RequestUrlParamLike {
	url: string;
	method?: string;
	contentType?: string;
	body?: string;
	headers?: Record<string, string>;
	throw?: boolean;
}
export interface RequestUrlResponseLike {
	status: number;
	headers?: Record<string, string>;
	text: string;
}
export type RequestUrlLike = (req: RequestUrlParamLike) => Promise<RequestUrlResponseLike>;

export function fetchTransport(fetchImpl?: FetchLike): Transport {
	const f: FetchLike = fetchImpl ?? ((input, init) => fetch(input, init));
	return {
		kind: async () => 'streaming',
		send: (req) => f(req.url, { method: req.method, headers: req.headers, body: req.body, signal: req.signal }),
	};
}

function abortError(signal: AbortSignal): Error {
	const reason: unknown = signal.reason;
	return reason instanceof Error ? reason : new DOMException('aborted', 'AbortError');
}

/**
 * requestUrl cannot be cancelled: an abort makes this promise reject at once (so Stop and time
 * limits work), and the request's answer, when it comes, is dropped.
 */
export function bufferedTransport(requestUrl: RequestUrlLike): Transport {
	return {
		kind: async () => 'buffered',
		send: (req) =>
			new Promise<Response>((resolve, reject) => {
				const signal = req.signal;
				if (signal?.aborted) return reject(abortError(signal));
				const onAbort = (): void => reject(abortError(signal!));
				signal?.addEventListener('abort', onAbort, { once: true });
				const headers = { ...req.headers };
				const contentType = headers['Content-Type'];
				delete headers['Content-Type'];
				requestUrl({ url: req.url, method: req.method, headers, body: req.body, contentType, throw: false }).then(
					(res) => {
						signal?.removeEventListener('abort', onAbort);
						// A Response, so the client reads both transports the same way. (204 and 304 carry no body.)
						const body = res.status === 204 || res.status === 304 ? null : res.text;
						resolve(new Response(body, { status: res.status, headers: res.headers ?? {} }));
					},
					(err: unknown) => {
						signal?.removeEventListener('abort', onAbort);
						reject(err instanceof Error ? err : new Error(String(err)));
					},
				);
			}),
	};
}

export class AutoTransport implements Transport {
	private chosen: Transport | null = null;
	private choosing: Promise<Transport | null> | null = null;

	constructor(
		private readonly streaming: Transport,
		private readonly buffered: Transport | null,
		/** The bare health check's URL: answered without a token. */
		private readonly probeUrl: string,
		private readonly probeTimeoutMs = 8000,
	) {}

	/** The transport in use, or null while none has been seen to answer. */
	get current(): Transport | null {
		return this.chosen;
	}

	private async tryProbe(t: Transport): Promise<boolean> {
		const ctrl = new AbortController();
		const timer = window.setTimeout(() => ctrl.abort(new DOMException('timed out', 'TimeoutError')), this.probeTimeoutMs);
		try {
			await t.send({ method: 'GET', url: this.probeUrl, headers: { Accept: 'application/json' }, signal: ctrl.signal });
			return true; // any HTTP answer (a 403 for the Host included): this transport reaches the server
		} catch {
			return false;
		} finally {
			window.clearTimeout(timer);
		}
	}

	private async choose(): Promise<Transport | null> {
		if (this.chosen) return this.chosen;
		if (!this.choosing) {
			this.choosing = (async () => {
				if (await this.tryProbe(this.streaming)) return this.streaming;
				if (this.buffered && (await this.tryProbe(this.buffered))) return this.buffered;
				return null;
			})().then((t) => {
				this.chosen = t;
				this.choosing = null;
				return t;
			});
		}
		return this.choosing;
	}

	async kind(): Promise<TransportKind> {
		const t = await this.choose();
		return t ? t.kind() : 'streaming';
	}

	async send(req: HttpRequest): Promise<Response> {
		// Neither answered: send with fetch anyway, so the error says what a plain request meets.
		const t = (await this.choose()) ?? this.streaming;
		return t.send(req);
	}
}
