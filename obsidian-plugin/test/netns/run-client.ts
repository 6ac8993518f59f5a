/**
 * The plugin's client library (src/lib), run under Node by tests/test_devices_netns.py inside a
 * network namespace: asks one question across the namespaces and says what it saw, as JSON on
 * stdout. Bundled by esbuild first (the test does it), so it needs no TypeScript at run time.
 *
 * argv[2]: {"baseUrl", "token", "question", "transport": "streaming" | "buffered" | "auto-no-fetch", "releaseFile"?}
 * `releaseFile`: made when the answer's first token arrives (the fake model server holds the rest until then).
 * `deliveries` in the output: how many turns of the event loop handed on events (1: all at once).
 * The buffered transport gets a requestUrl stand-in that reads the whole body with node:https
 * before it answers, as Obsidian's requestUrl does. Trust: NODE_EXTRA_CA_CERTS (set by the test).
 */
import '../helpers/window'; // (the client's timers are window's: under Node, the global's)
import { request as httpsRequest } from 'node:https';
import { request as httpRequest } from 'node:http';
import { writeFileSync } from 'node:fs';
import { VaskClient } from '../../src/lib/client';
import { testConnection } from '../../src/lib/connection';
import { toVaskError } from '../../src/lib/errors';
import {
	AutoTransport,
	bufferedTransport,
	fetchTransport,
	type RequestUrlLike,
	type Transport,
} from '../../src/lib/transport';
import type { AskEvent } from '../../src/lib/types';

const requestUrlStandIn: RequestUrlLike = (req) =>
	new Promise((resolve, reject) => {
		const url = new URL(req.url);
		const headers: Record<string, string> = { ...(req.headers ?? {}) };
		if (req.contentType) headers['Content-Type'] = req.contentType;
		const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
		const r = send(url, { method: req.method ?? 'GET', headers }, (res) => {
			const chunks: Buffer[] = [];
			res.on('data', (c: Buffer) => chunks.push(c));
			res.on('end', () => {
				const out: Record<string, string> = {};
				for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') out[k] = v;
				resolve({ status: res.statusCode ?? 0, headers: out, text: Buffer.concat(chunks).toString('utf8') });
			});
			res.on('error', reject);
		});
		r.on('error', reject);
		if (req.body) r.write(req.body);
		r.end();
	});

async function main(): Promise<void> {
	const args = JSON.parse(process.argv[2] ?? '{}') as { baseUrl: string; token: string; question: string; transport: string; releaseFile?: string };
	const streaming = fetchTransport();
	const buffered = bufferedTransport(requestUrlStandIn);
	const noFetch = fetchTransport(async () => {
		throw new TypeError('Failed to fetch'); // what a web view's fetch says when CORS or the certificate stops it
	});
	let transport: Transport;
	if (args.transport === 'streaming') transport = streaming;
	else if (args.transport === 'buffered') transport = buffered;
	else transport = new AutoTransport(noFetch, buffered, `${args.baseUrl}/v1/health`);

	const out: Record<string, unknown> = { transport: args.transport };
	const report = await testConnection({
		baseUrl: args.baseUrl,
		token: args.token,
		streaming: args.transport === 'streaming' ? streaming : noFetch,
		buffered,
	});
	out.connection = { ok: report.ok, kind: report.kind, code: report.error?.code ?? null, lines: report.lines };
	if (!report.ok && report.kind === null) {
		console.log(JSON.stringify(out));
		return;
	}
	const client = new VaskClient({ baseUrl: args.baseUrl, token: args.token, transport });
	out.kind = await client.kind();
	const started = performance.now();
	const times: { type: string; ms: number }[] = [];
	let notice: string | undefined;
	let released = false;
	let deliveries = 0;
	let delivering = false;
	try {
		const done = await client.ask(
			{ question: args.question },
			{
				onEvent: (ev: AskEvent) => {
					times.push({ type: ev.type, ms: performance.now() - started });
					if (!delivering) {
						// events handed on in one turn of the event loop are one delivery
						delivering = true;
						deliveries++;
						setImmediate(() => (delivering = false));
					}
					if (ev.type === 'token' && !released && args.releaseFile) {
						writeFileSync(args.releaseFile, '');
						released = true;
					}
					if (ev.type === 'sources') notice = (ev as { notice?: string }).notice;
				},
			},
		);
		const tokens = times.filter((t) => t.type === 'token');
		out.answer = done.answer;
		out.sources = done.sources.map((s) => s.path);
		out.citations = done.citations.length;
		out.tokens = tokens.length;
		out.first_token_ms = tokens[0]?.ms ?? null;
		out.done_ms = times[times.length - 1]?.ms ?? null;
		out.notice = notice ?? null;
		out.released = released;
		out.deliveries = deliveries;
	} catch (err) {
		const e = toVaskError(err);
		out.error = { code: e.code, status: e.status, message: e.message };
	}
	console.log(JSON.stringify(out));
}

main().catch((err: unknown) => {
	console.log(JSON.stringify({ crashed: String(err) }));
	process.exit(1);
});
