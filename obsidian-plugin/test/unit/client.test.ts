import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_REINDEX_PATHS, VaskClient, joinUrl, modelNames, type FetchLike } from '../../src/lib/client';
import { ErrorCode, VaskError } from '../../src/lib/errors';
import type { AskEvent, StatusEvent } from '../../src/lib/types';

const enc = new TextEncoder();

interface Call {
	url: string;
	init: RequestInit;
}

/** A stream that hands out the given chunks, then either closes or stays open until aborted. */
function chunkStream(chunks: (string | Uint8Array)[], opts: { keepOpen?: boolean; signal?: AbortSignal } = {}) {
	return new ReadableStream<Uint8Array>({
		start(c) {
			for (const ch of chunks) c.enqueue(typeof ch === 'string' ? enc.encode(ch) : ch);
			if (!opts.keepOpen) c.close();
			opts.signal?.addEventListener('abort', () => c.error(new DOMException('aborted', 'AbortError')));
		},
	});
}

function fakeFetch(handler: (call: Call) => Response | Promise<Response>): { fetch: FetchLike; calls: Call[] } {
	const calls: Call[] = [];
	return {
		calls,
		fetch: async (url, init = {}) => {
			const call = { url, init };
			calls.push(call);
			if (init.signal?.aborted) throw new DOMException('aborted', 'AbortError');
			return handler(call);
		},
	};
}

function ndjson(...lines: unknown[]): string {
	return lines.map((l) => JSON.stringify(l)).join('\n') + '\n';
}

const source = {
	n: 1,
	path: '01 Projects/Plan.md',
	title: 'Plan',
	heading: 'Plan > Risks',
	anchor: 'Risks',
	line_start: 12,
	line_end: 30,
	score: 0.71,
	link: '01 Projects/Plan#Risks',
};
const done = {
	type: 'done',
	answer: 'Budget is the risk [Plan].',
	citations: [{ title: 'Plan', path: source.path, heading: source.heading, anchor: 'Risks', line: 12, link: source.link }],
	sources: [source],
	declined: false,
};

function headersOf(call: Call): Record<string, string> {
	return call.init.headers as Record<string, string>;
}

describe('joinUrl', () => {
	it('joins without doubling slashes and rejects non-http URLs', () => {
		expect(joinUrl('http://127.0.0.1:8765/', '/v1/ask')).toBe('http://127.0.0.1:8765/v1/ask');
		expect(joinUrl(' http://localhost:1// ', '/v1/health')).toBe('http://localhost:1/v1/health');
		const badSettings = expect.objectContaining({ name: 'VaskError', code: ErrorCode.badSettings });
		expect(() => joinUrl('127.0.0.1:8765', '/v1/ask')).toThrow(badSettings);
		expect(() => joinUrl('ftp://x', '/v1')).toThrow(badSettings);
		expect(() => joinUrl('ftp://x', '/v1')).toThrow('is not an http:// address');
	});
});

describe('VaskClient.ask', () => {
	it('posts the request with the token and streams every event in order across chunk splits', async () => {
		const body = ndjson({ type: 'sources', sources: [source] }, { type: 'token', text: 'Budget ' }, { type: 'token', text: 'is the risk [Plan].' }, done);
		const bytes = enc.encode(body);
		const chunks = [bytes.slice(0, 7), bytes.slice(7, 90), bytes.slice(90, 91), bytes.slice(91)];
		const f = fakeFetch(() => new Response(chunkStream(chunks), { headers: { 'content-type': 'application/x-ndjson' } }));
		const client = new VaskClient({ baseUrl: 'http://127.0.0.1:8765/', token: ' secret ', fetch: f.fetch });
		const events: AskEvent[] = [];
		const result = await client.ask(
			{ question: 'What is the risk?', history: [{ role: 'user', content: 'hi' }], top_k: 6 },
			{ onEvent: (e) => events.push(e) },
		);

		expect(f.calls).toHaveLength(1);
		const call = f.calls[0]!;
		expect(call.url).toBe('http://127.0.0.1:8765/v1/ask');
		expect(call.init.method).toBe('POST');
		expect(headersOf(call).Authorization).toBe('Bearer secret');
		expect(headersOf(call)['Content-Type']).toBe('application/json');
		expect(JSON.parse(call.init.body as string)).toEqual({
			question: 'What is the risk?',
			history: [{ role: 'user', content: 'hi' }],
			top_k: 6,
		});
		expect(events.map((e) => e.type)).toEqual(['sources', 'token', 'token', 'done']);
		expect(events.filter((e) => e.type === 'token').map((e) => (e as { text: string }).text).join('')).toBe(
			'Budget is the risk [Plan].',
		);
		expect(result.answer).toBe('Budget is the risk [Plan].');
		expect(result.citations[0]!.link).toBe('01 Projects/Plan#Risks');
	});

	it('throws the error line of a 200 stream as a VaskError, after delivering earlier events', async () => {
		const body = ndjson(
			{ type: 'sources', sources: [] },
			{ type: 'error', code: 'ollama_unavailable', message: 'Ollama is not reachable at http://127.0.0.1:11434', hint: 'Start it with `ollama serve`' },
		);
		const f = fakeFetch(() => new Response(chunkStream([body])));
		const client = new VaskClient({ baseUrl: 'http://h:1', token: 't', fetch: f.fetch });
		const events: AskEvent[] = [];
		const err = await client.ask({ question: 'q' }, { onEvent: (e) => events.push(e) }).catch((e: unknown) => e);
		expect(events.map((e) => e.type)).toEqual(['sources']);
		expect(err).toBeInstanceOf(VaskError);
		expect((err as VaskError).code).toBe('ollama_unavailable');
		expect((err as VaskError).message).toBe('Ollama is not reachable at http://127.0.0.1:11434');
		expect((err as VaskError).hint).toBe('Start it with `ollama serve`');
	});

	it('maps JSON error responses to their code, message, hint and status', async () => {
		const cases: [number, string][] = [
			[401, 'unauthorized'],
			[503, 'model_missing'],
			[409, 'not_indexed'],
			[413, 'payload_too_large'],
		];
		for (const [status, code] of cases) {
			const f = fakeFetch(
				() => new Response(JSON.stringify({ error: { code, message: `m-${code}`, hint: `h-${code}` } }), { status }),
			);
			const err = (await new VaskClient({ baseUrl: 'http://h:1', token: 't', fetch: f.fetch })
				.ask({ question: 'q' })
				.catch((e: unknown) => e)) as VaskError;
			expect(err.code).toBe(code);
			expect(err.status).toBe(status);
			expect(err.message).toBe(`m-${code}`);
			expect(err.hint).toBe(`h-${code}`);
		}
	});

	it('falls back to a code from the HTTP status when the error body is not JSON', async () => {
		const f401 = fakeFetch(() => new Response('nope', { status: 401 }));
		const e401 = (await new VaskClient({ baseUrl: 'http://h:1', token: '', fetch: f401.fetch }).status().catch((e: unknown) => e)) as VaskError;
		expect(e401.code).toBe(ErrorCode.unauthorized);
		const f502 = fakeFetch(() => new Response('<html>bad gateway</html>', { status: 502, statusText: 'Bad Gateway' }));
		const e502 = (await new VaskClient({ baseUrl: 'http://h:1', token: '', fetch: f502.fetch }).status().catch((e: unknown) => e)) as VaskError;
		expect(e502.code).toBe(ErrorCode.internal);
		expect(e502.message).toBe('HTTP 502 Bad Gateway');
	});

	it('reports a refused connection (fetch TypeError) as server_unreachable', async () => {
		const client = new VaskClient({
			baseUrl: 'http://127.0.0.1:9',
			token: 't',
			fetch: async () => {
				throw new TypeError('Failed to fetch');
			},
		});
		const err = (await client.ask({ question: 'q' }).catch((e: unknown) => e)) as VaskError;
		expect(err.code).toBe(ErrorCode.unreachable);
	});

	it('reports a stream that ends without "done" as incomplete', async () => {
		const f = fakeFetch(() => new Response(chunkStream([ndjson({ type: 'sources', sources: [] }, { type: 'token', text: 'par' })])));
		const err = (await new VaskClient({ baseUrl: 'http://h:1', token: 't', fetch: f.fetch }).ask({ question: 'q' }).catch((e: unknown) => e)) as VaskError;
		expect(err.code).toBe(ErrorCode.incomplete);
	});

	it('reports a malformed line as bad_response', async () => {
		const f = fakeFetch(() => new Response(chunkStream(['{"type":"sources","sources":[]}\n<html>\n'])));
		const err = (await new VaskClient({ baseUrl: 'http://h:1', token: 't', fetch: f.fetch }).ask({ question: 'q' }).catch((e: unknown) => e)) as VaskError;
		expect(err.code).toBe(ErrorCode.badResponse);
	});

	it('stops on abort: the fetch signal is aborted and the error code is "aborted"', async () => {
		const ctrl = new AbortController();
		let fetchSignal: AbortSignal | undefined;
		const f = fakeFetch(({ init }) => {
			fetchSignal = init.signal ?? undefined;
			return new Response(chunkStream([ndjson({ type: 'sources', sources: [] }, { type: 'token', text: 'a' })], { keepOpen: true, signal: init.signal ?? undefined }));
		});
		const tokens: string[] = [];
		const pending = new VaskClient({ baseUrl: 'http://h:1', token: 't', fetch: f.fetch }).ask(
			{ question: 'q' },
			{
				signal: ctrl.signal,
				onEvent: (e) => {
					if (e.type === 'token') {
						tokens.push(e.text);
						ctrl.abort();
					}
				},
			},
		);
		const err = (await pending.catch((e: unknown) => e)) as VaskError;
		expect(tokens).toEqual(['a']);
		expect(fetchSignal?.aborted).toBe(true);
		expect(err.code).toBe(ErrorCode.aborted);
	});
});

describe('VaskClient JSON endpoints', () => {
	it('health without auth sends no Authorization header; with auth it does', async () => {
		const f = fakeFetch(() => Response.json({ status: 'ok' }));
		const client = new VaskClient({ baseUrl: 'http://h:1', token: 'tok', fetch: f.fetch });
		await client.health({ auth: false });
		await client.health();
		expect(headersOf(f.calls[0]!).Authorization).toBeUndefined();
		expect(headersOf(f.calls[1]!).Authorization).toBe('Bearer tok');
		expect(f.calls[0]!.url).toBe('http://h:1/v1/health');
	});

	it('related encodes the path; reindex sends {} or {paths}', async () => {
		const f = fakeFetch(({ url }) =>
			url.includes('/v1/related') ? Response.json({ path: 'a', related: [] }) : Response.json({ queued: 2 }, { status: 202 }),
		);
		const client = new VaskClient({ baseUrl: 'http://h:1', token: 't', fetch: f.fetch });
		await client.related('01 Projects/Plan & Co.md', 10);
		expect(f.calls[0]!.url).toBe('http://h:1/v1/related?path=01%20Projects%2FPlan%20%26%20Co.md&top_k=10');
		expect(await client.reindex()).toEqual({ queued: 2 });
		expect(JSON.parse(f.calls[1]!.init.body as string)).toEqual({});
		await client.reindex(['a.md', 'b.md']);
		expect(JSON.parse(f.calls[2]!.init.body as string)).toEqual({ paths: ['a.md', 'b.md'] });
		expect(f.calls[2]!.init.method).toBe('POST');
	});

	it('pause and resume post to their endpoints; indexFirst sends the open notes', async () => {
		const f = fakeFetch(({ url }) =>
			url.endsWith('/first') ? Response.json({ moved: 1 }) : Response.json({ paused: url.endsWith('/pause') }),
		);
		const client = new VaskClient({ baseUrl: 'http://h:1', token: 't', fetch: f.fetch });
		expect(await client.pauseIndexing(true)).toEqual({ paused: true });
		expect(await client.pauseIndexing(false)).toEqual({ paused: false });
		expect(f.calls.map((c) => [c.init.method, c.url])).toEqual([
			['POST', 'http://h:1/v1/index/pause'],
			['POST', 'http://h:1/v1/index/resume'],
		]);
		expect(await client.indexFirst(['Daily/2026-12-05.md'])).toEqual({ moved: 1 });
		expect(JSON.parse(f.calls[2]!.init.body as string)).toEqual({ paths: ['Daily/2026-12-05.md'] });
	});

	it('reindex splits a long list (a folder moved) into requests the server accepts, sent one after the other', async () => {
		const paths = Array.from({ length: 450 }, (_, i) => `Moved/n${i}.md`);
		let inFlight = 0;
		let most = 0;
		const f = fakeFetch(async (call) => {
			inFlight++;
			most = Math.max(most, inFlight);
			await new Promise((r) => setTimeout(r, 5));
			inFlight--;
			const n = (JSON.parse(call.init.body as string) as { paths: string[] }).paths.length;
			// the server's rule: more than MAX_LIST_ITEMS paths is a 400
			if (n > 200) return Response.json({ error: { code: 'bad_request', message: "'paths' has more than 200 items." } }, { status: 400 });
			return Response.json({ queued: n }, { status: 202 });
		});
		const client = new VaskClient({ baseUrl: 'http://h:1', token: 't', fetch: f.fetch });
		expect(await client.reindex(paths)).toEqual({ queued: 450 });
		const sent = f.calls.map((c) => (JSON.parse(c.init.body as string) as { paths: string[] }).paths);
		expect(sent.map((p) => p.length)).toEqual([200, 200, 50]);
		expect(sent.flat()).toEqual(paths);
		expect(most).toBe(1);
		// nothing to send: no request
		expect(await client.reindex([])).toEqual({ queued: 0 });
		expect(f.calls).toHaveLength(3);
	});

	it('reindex stops at the first failed request and throws its error', async () => {
		const paths = Array.from({ length: 450 }, (_, i) => `n${i}.md`);
		const f = fakeFetch(() =>
			f.calls.length === 2
				? Response.json({ error: { code: 'internal', message: 'disk full' } }, { status: 500 })
				: Response.json({ queued: 200 }, { status: 202 }),
		);
		const client = new VaskClient({ baseUrl: 'http://h:1', token: 't', fetch: f.fetch });
		await expect(client.reindex(paths)).rejects.toMatchObject({ code: 'internal', message: 'disk full' });
		expect(f.calls).toHaveLength(2);
	});

	it("MAX_REINDEX_PATHS is the server's limit (MAX_LIST_ITEMS in vask_server/core/arguments.py)", () => {
		const py = readFileSync(join(__dirname, '../../../vask_server/core/arguments.py'), 'utf8');
		const m = /^MAX_LIST_ITEMS = (\d+)$/m.exec(py);
		expect(m, 'MAX_LIST_ITEMS is defined in core/arguments.py').not.toBeNull();
		expect(MAX_REINDEX_PATHS).toBe(Number(m![1]));
	});

	it('gives up after the time limit with code "timeout"', async () => {
		const client = new VaskClient({
			baseUrl: 'http://h:1',
			token: 't',
			timeoutMs: 30,
			fetch: (_url, init) =>
				new Promise((_resolve, reject) => {
					init?.signal?.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError')));
				}),
		});
		const err = (await client.status().catch((e: unknown) => e)) as VaskError;
		expect(err.code).toBe(ErrorCode.timeout);
	});

	it('reports a non-JSON 200 body as bad_response', async () => {
		const f = fakeFetch(() => new Response('<html>hello</html>'));
		const err = (await new VaskClient({ baseUrl: 'http://h:1', token: 't', fetch: f.fetch }).status().catch((e: unknown) => e)) as VaskError;
		expect(err.code).toBe(ErrorCode.badResponse);
	});
});

describe('VaskClient.events', () => {
	it('delivers status events, reports activity for pings, and resolves when the stream ends', async () => {
		const s1: StatusEvent = { state: 'indexing', notes: 1, chunks: 4, pending: 3, done: 1, total: 4, failed: 0, ollama: { reachable: true } };
		const s2: StatusEvent = { ...s1, state: 'idle', done: 4, pending: 0 };
		const text = `: ping\n\nevent: status\ndata: ${JSON.stringify(s1)}\n\nevent: other\ndata: {}\n\nevent: status\ndata: not json\n\nevent: status\ndata: ${JSON.stringify(s2)}\n\n`;
		const bytes = enc.encode(text);
		const f = fakeFetch(() => new Response(chunkStream([bytes.slice(0, 20), bytes.slice(20, 100), bytes.slice(100)])));
		const statuses: StatusEvent[] = [];
		let opened = 0;
		let activity = 0;
		await new VaskClient({ baseUrl: 'http://h:1', token: 't', fetch: f.fetch }).events({
			onOpen: () => opened++,
			onActivity: () => activity++,
			onStatus: (s) => statuses.push(s),
		});
		expect(opened).toBe(1);
		expect(activity).toBe(3);
		expect(statuses).toEqual([s1, s2]);
		expect(headersOf(f.calls[0]!).Accept).toBe('text/event-stream');
		expect(headersOf(f.calls[0]!).Authorization).toBe('Bearer t');
	});

	it('rejects with unauthorized on 401', async () => {
		const f = fakeFetch(() => new Response(JSON.stringify({ error: { code: 'unauthorized', message: 'bad token', hint: '' } }), { status: 401 }));
		const err = (await new VaskClient({ baseUrl: 'http://h:1', token: 'x', fetch: f.fetch })
			.events({ onStatus: () => undefined })
			.catch((e: unknown) => e)) as VaskError;
		expect(err.code).toBe(ErrorCode.unauthorized);
	});
});

describe('modelNames (GET /v1/models, for the chat model suggestions)', () => {
	it('keeps the chat server’s names, strings only, once each, sorted; nothing from a shape it does not know', () => {
		expect(modelNames({ chat: { models: ['qwen2.5:14b', 'gemma3', 7, '', 'gemma3'] }, embed: { models: ['x'] } })).toEqual([
			'gemma3',
			'qwen2.5:14b',
		]);
		expect(modelNames({ chat: {} })).toEqual([]);
		expect(modelNames(null)).toEqual([]);
		expect(modelNames({ models: ['a'] })).toEqual([]);
	});
});
