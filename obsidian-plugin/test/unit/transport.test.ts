import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NOT_STREAMING_NOTICE, VaskClient, statusEventFrom } from '../../src/lib/client';
import { plainHttpToAnotherMachine, sendsChangedNotes, testConnection } from '../../src/lib/connection';
import { ErrorCode, VaskError, describeError, networkErrorCode, toVaskError } from '../../src/lib/errors';
import { normalizeDevice, splitPatch, withDevice, DEFAULT_SETTINGS } from '../../src/lib/settings';
import {
	AutoTransport,
	bufferedTransport,
	fetchTransport,
	type RequestUrlLike,
	type RequestUrlParamLike,
	type Transport,
} from '../../src/lib/transport';
import type { AskEvent, StatusEvent } from '../../src/lib/types';

const sources = { type: 'sources', sources: [], mode: 'hybrid' };
const done = { type: 'done', answer: 'A [Plan].', citations: [], sources: [], declined: false };
const ndjson = [sources, { type: 'token', text: 'A ' }, { type: 'token', text: '[Plan].' }, done]
	.map((l) => JSON.stringify(l))
	.join('\n');

/** A requestUrl stand-in answering from a table of (method path) -> [status, body]. */
function fakeRequestUrl(routes: Record<string, [number, unknown]>): { requestUrl: RequestUrlLike; calls: RequestUrlParamLike[] } {
	const calls: RequestUrlParamLike[] = [];
	return {
		calls,
		requestUrl: async (req) => {
			calls.push(req);
			const path = new URL(req.url).pathname;
			const hit = routes[`${req.method ?? 'GET'} ${path}`];
			if (!hit) throw new Error('net::ERR_CONNECTION_REFUSED');
			const [status, body] = hit;
			return { status, text: typeof body === 'string' ? body : JSON.stringify(body) };
		},
	};
}

const failingFetch: Transport = fetchTransport(async () => {
	throw new TypeError('Failed to fetch');
});

describe('bufferedTransport', () => {
	it('sends method, headers and body; the client reads the whole answer as a stream and says it is not streaming', async () => {
		const { requestUrl, calls } = fakeRequestUrl({ 'POST /v1/ask': [200, ndjson] });
		const client = new VaskClient({ baseUrl: 'https://vask.test:8765', token: 'tok', transport: bufferedTransport(requestUrl) });
		const events: AskEvent[] = [];
		const result = await client.ask({ question: 'q' }, { onEvent: (e) => events.push(e) });
		expect(result.answer).toBe('A [Plan].');
		expect(events.map((e) => e.type)).toEqual(['sources', 'token', 'token', 'done']);
		expect((events[0] as { notice?: string }).notice).toBe(NOT_STREAMING_NOTICE);
		expect(calls[0]!.headers!.Authorization).toBe('Bearer tok');
		expect(calls[0]!.contentType).toBe('application/json');
		expect(JSON.parse(calls[0]!.body!)).toEqual({ question: 'q' });
		expect(calls[0]!.throw).toBe(false);
	});

	it('an abort rejects at once although requestUrl cannot be cancelled', async () => {
		const never: RequestUrlLike = () => new Promise(() => undefined);
		const ctrl = new AbortController();
		const client = new VaskClient({ baseUrl: 'https://vask.test', token: 't', transport: bufferedTransport(never) });
		const pending = client.ask({ question: 'q' }, { signal: ctrl.signal });
		ctrl.abort();
		await expect(pending).rejects.toMatchObject({ code: ErrorCode.aborted });
	});

	it('HTTP errors keep their code (401 from a revoked token)', async () => {
		const { requestUrl } = fakeRequestUrl({
			'GET /v1/status': [401, { error: { code: 'unauthorized', message: 'Missing or wrong bearer token', hint: '' } }],
		});
		const client = new VaskClient({ baseUrl: 'https://vask.test', token: 'old', transport: bufferedTransport(requestUrl) });
		await expect(client.status()).rejects.toMatchObject({ code: 'unauthorized', status: 401 });
	});

	it('events() polls /v1/health and /v1/status instead of the endless event stream', async () => {
		const health = { status: 'ok', version: '0.1.0', ollama: { host: 'h', reachable: false } };
		const status = { state: 'idle', notes: 3, chunks: 9, pending: 0, done: 3, total: 3, failed: [{ path: 'x', reason: 'y' }], skipped: [] };
		const { requestUrl, calls } = fakeRequestUrl({ 'GET /v1/health': [200, health], 'GET /v1/status': [200, status] });
		const client = new VaskClient({ baseUrl: 'https://vask.test', token: 't', transport: bufferedTransport(requestUrl), pollMs: 5 });
		const ctrl = new AbortController();
		const seen: StatusEvent[] = [];
		let opened = 0;
		const run = client.events({
			signal: ctrl.signal,
			onOpen: () => opened++,
			onStatus: (s) => {
				seen.push(s);
				if (seen.length === 3) ctrl.abort();
			},
		});
		await expect(run).rejects.toMatchObject({ code: ErrorCode.aborted });
		expect(opened).toBe(1);
		expect(seen[0]).toEqual({ state: 'idle', notes: 3, chunks: 9, pending: 0, done: 3, total: 3, failed: 1, skipped: 0, ollama: { reachable: false } });
		expect(calls.some((c) => c.url.endsWith('/v1/events'))).toBe(false);
	});
});

describe('AutoTransport', () => {
	it('uses fetch when fetch reaches the server, and keeps that choice', async () => {
		let probes = 0;
		const streaming = fetchTransport(async (url) => {
			if (url.endsWith('/v1/health')) probes++;
			return new Response('{"status":"ok"}', { status: 200 });
		});
		const { requestUrl, calls } = fakeRequestUrl({});
		const auto = new AutoTransport(streaming, bufferedTransport(requestUrl), 'https://vask.test/v1/health');
		expect(await auto.kind()).toBe('streaming');
		const client = new VaskClient({ baseUrl: 'https://vask.test', token: 't', transport: auto });
		await client.status();
		await client.status();
		expect(probes).toBe(1);
		expect(calls).toEqual([]);
	});

	it('falls back to requestUrl when fetch cannot reach it (CORS, a web view), and tries again while neither can', async () => {
		const routes: Record<string, [number, unknown]> = {};
		const { requestUrl } = fakeRequestUrl(routes);
		const auto = new AutoTransport(failingFetch, bufferedTransport(requestUrl), 'https://vask.test/v1/health');
		expect(auto.current).toBeNull();
		expect(await auto.kind()).toBe('streaming'); // neither answered: nothing chosen yet
		expect(auto.current).toBeNull();
		routes['GET /v1/health'] = [200, { status: 'ok' }];
		expect(await auto.kind()).toBe('buffered');
		delete routes['GET /v1/health'];
		expect(await auto.kind()).toBe('buffered'); // chosen once
	});
});

describe('network errors in plain words', () => {
	const cases: [unknown, string][] = [
		[Object.assign(new TypeError('fetch failed'), { cause: { code: 'SELF_SIGNED_CERT_IN_CHAIN', message: 'self-signed certificate in certificate chain' } }), ErrorCode.tlsUntrusted],
		[Object.assign(new TypeError('fetch failed'), { cause: { code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' } }), ErrorCode.tlsUntrusted],
		[new Error('net::ERR_CERT_AUTHORITY_INVALID'), ErrorCode.tlsUntrusted],
		[new Error('java.security.cert.CertPathValidatorException: Trust anchor for certification path not found.'), ErrorCode.tlsUntrusted],
		[new Error('The certificate for this server is invalid.'), ErrorCode.tlsUntrusted],
		[Object.assign(new TypeError('fetch failed'), { cause: { code: 'ERR_TLS_CERT_ALTNAME_INVALID' } }), ErrorCode.tlsName],
		[new Error('net::ERR_CERT_COMMON_NAME_INVALID'), ErrorCode.tlsName],
		[Object.assign(new TypeError('fetch failed'), { cause: { code: 'CERT_HAS_EXPIRED' } }), ErrorCode.tlsExpired],
		[Object.assign(new TypeError('fetch failed'), { cause: { code: 'ERR_SSL_WRONG_VERSION_NUMBER', message: 'wrong version number' } }), ErrorCode.notHttps],
		[Object.assign(new TypeError('fetch failed'), { cause: { code: 'UND_ERR_SOCKET', message: 'other side closed' } }), ErrorCode.noAnswer],
		[Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } }), ErrorCode.unreachable],
		[new TypeError('Failed to fetch'), ErrorCode.unreachable],
	];
	it.each(cases)('%s', (err, code) => {
		expect(networkErrorCode(err) ?? toVaskError(err).code).toBe(code);
		expect(toVaskError(err).code).toBe(code);
	});

	it('each says what to do', () => {
		for (const code of [ErrorCode.tlsUntrusted, ErrorCode.tlsName, ErrorCode.tlsExpired, ErrorCode.notHttps, ErrorCode.noAnswer, ErrorCode.tooManyAttempts]) {
			const plain = describeError(new VaskError(code, ''), { serverUrl: 'http://10.0.0.2:8765' });
			expect(plain.code).toBe(code);
			expect(plain.code).toBeDefined();
			expect(plain.message.length).toBeGreaterThan(20);
			expect(plain.hint.length).toBeGreaterThan(20);
		}
		expect(describeError(new Error('net::ERR_CERT_AUTHORITY_INVALID')).hint).toContain('One server, several devices');
		expect(describeError(Object.assign(new TypeError('x'), { cause: { code: 'UND_ERR_SOCKET' } }), { serverUrl: 'http://h:1' }).hint).toContain('https://');
	});
});

describe('testConnection', () => {
	it('explains an untrusted certificate from the buffered transport when fetch only says "Failed to fetch"', async () => {
		const buffered = bufferedTransport(async () => {
			throw new Error('net::ERR_CERT_AUTHORITY_INVALID');
		});
		const report = await testConnection({ baseUrl: 'https://vask.test', token: 't', streaming: failingFetch, buffered });
		expect(report.ok).toBe(false);
		expect(report.error!.code).toBe(ErrorCode.tlsUntrusted);
		expect(report.lines.join(' ')).toContain('does not trust the server');
	});

	it('reaches the server buffered, then tells a revoked token', async () => {
		const { requestUrl } = fakeRequestUrl({
			'GET /v1/health': [401, { error: { code: 'unauthorized', message: 'revoked', hint: '' } }],
		});
		// the bare check answers 200 (no Authorization header), the token check 401
		const buffered = bufferedTransport(async (req) =>
			req.headers?.Authorization ? requestUrl(req) : { status: 200, text: '{"status":"ok"}' },
		);
		const report = await testConnection({ baseUrl: 'https://vask.test', token: 'old', streaming: failingFetch, buffered });
		expect(report.kind).toBe('buffered');
		expect(report.error!.code).toBe('unauthorized');
		expect(report.lines.join(' ')).toMatch(/arrive whole/);
		expect(report.error!.hint).toContain('vask token add NAME');
	});

	it('warns about plain http to another machine', async () => {
		expect(plainHttpToAnotherMachine('http://192.168.1.5:8765')).toBe(true);
		expect(plainHttpToAnotherMachine('http://127.0.0.1:8765')).toBe(false);
		expect(plainHttpToAnotherMachine('https://vask.home.arpa')).toBe(false);
		const ok = fetchTransport(async () => new Response('{"status":"ok","version":"0.1.0"}', { status: 200 }));
		const report = await testConnection({ baseUrl: 'http://192.168.1.5:8765', token: 't', streaming: ok });
		expect(report.ok).toBe(true);
		expect(report.kind).toBe('streaming');
		expect(report.lines[0]).toMatch(/unencrypted/);
	});
});

describe('device settings and changed notes', () => {
	it('keeps the server URL and token of this device over the synced ones, and out of data.json', () => {
		const synced = { ...DEFAULT_SETTINGS, token: 'laptop-token', topK: 4 };
		expect(withDevice(synced, { token: 'phone-token', serverUrl: 'https://vask.test' })).toMatchObject({
			token: 'phone-token',
			serverUrl: 'https://vask.test',
			topK: 4,
		});
		expect(withDevice(synced, normalizeDevice({ token: '  ' })).token).toBe('laptop-token');
		expect(splitPatch({ token: 'x', topK: 3 })).toEqual({ device: { token: 'x' }, synced: { topK: 3 } });
	});

	it('sends saved notes only to a server that reads this very folder', () => {
		expect(sendsChangedNotes('http://127.0.0.1:8765', null, '/home/a/Notes')).toBe(true);
		expect(sendsChangedNotes('http://127.0.0.1:8765', '/home/a/Notes/', '/home/a/Notes')).toBe(true);
		expect(sendsChangedNotes('https://vask.test', '/srv/notes', '/home/a/Notes')).toBe(false);
		expect(sendsChangedNotes('https://vask.test', '/srv/notes', null)).toBe(false); // mobile
		expect(sendsChangedNotes('http://localhost:8765', null, null)).toBe(true);
	});

	it('statusEventFrom counts lists', () => {
		const ev = statusEventFrom(
			{ status: 'ok' },
			{ state: 'indexing', notes: 1, chunks: 2, pending: 1, in_progress: [], done: 0, total: 2, failed: [], skipped: [], model: 'm', dimension: 3, last_sync: null, last_error: { code: 'ollama_unavailable', message: 'down', hint: '' } },
		);
		expect(ev).toMatchObject({ state: 'indexing', failed: 0, skipped: 0, message: 'down', ollama: { reachable: true } });
	});
});

describe('mobile code paths', () => {
	function files(dir: string): string[] {
		return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
			d.isDirectory() ? files(join(dir, d.name)) : d.name.endsWith('.ts') ? [join(dir, d.name)] : [],
		);
	}
	it('use no Node or Electron API (Obsidian mobile has neither), and the manifest allows mobile', () => {
		const all = files(join(__dirname, '../../src'));
		expect(all.length).toBeGreaterThan(15);
		const offenders: string[] = [];
		for (const file of all) {
			const text = readFileSync(file, 'utf8');
			// The one exception: the desktop glue that starts vask, whose Node modules are required only
			// behind Platform.isDesktop (eslint-plugin-obsidianmd's no-nodejs-modules checks each require).
			if (file.endsWith(join('src', 'desktop', 'localServer.ts'))) {
				expect(text).toMatch(/if \(!Platform\.isDesktop\) return null;/);
				expect(text).not.toMatch(/^import [^;]*from ['"](node:|fs|os|child_process|electron)/m);
				continue;
			}
			const m = text.match(/\brequire\(|from ['"](node:|fs|path|os|child_process|electron|http|https|net|tls)['"]|\bprocess\.|\bBuffer\.|\b__dirname\b/);
			if (m) offenders.push(`${file}: ${m[0]}`);
		}
		expect(offenders).toEqual([]);
		const manifest = JSON.parse(readFileSync(join(__dirname, '../../manifest.json'), 'utf8'));
		expect(manifest.isDesktopOnly).toBe(false);
	});
});
