/**
 * "Test connection": what works between this device and the server, in plain words. Tries the
 * bare health check with each transport (to tell TLS and network trouble from a wrong token), then
 * the token, and says whether answers will stream.
 */
import { VaskClient } from './client';
import { describeError, toVaskError, type ErrorContext, type PlainError } from './errors';
import { describeHealth } from './health';
import type { Transport, TransportKind } from './transport';

export interface ConnectionReport {
	ok: boolean;
	/** The transport that reached the server, if one did. */
	kind: TransportKind | null;
	lines: string[];
	/** What went wrong, when something did. */
	error: PlainError | null;
}

export interface ConnectionTestOptions {
	baseUrl: string;
	token: string;
	streaming: Transport;
	buffered?: Transport | null;
	context?: ErrorContext;
	timeoutMs?: number;
}

const LOOPBACK = /^https?:\/\/(127\.\d+\.\d+\.\d+|localhost|\[::1\])(:\d+)?(\/|$)/i;

/** A plain-http URL to another machine: the token and the notes would cross the network readable. */
export function plainHttpToAnotherMachine(url: string): boolean {
	return /^http:\/\//i.test(url.trim()) && !LOOPBACK.test(url.trim());
}

export async function testConnection(opts: ConnectionTestOptions): Promise<ConnectionReport> {
	const ctx = { ...opts.context, serverUrl: opts.baseUrl };
	const timeoutMs = opts.timeoutMs ?? 8000;
	const lines: string[] = [];
	if (plainHttpToAnotherMachine(opts.baseUrl)) {
		lines.push(
			'Warning: this is a plain http:// address on another machine: your token, questions and notes cross the network unencrypted. Use https:// (README: "One server, several devices").',
		);
	}
	const candidates: [TransportKind, Transport][] = [['streaming', opts.streaming]];
	if (opts.buffered) candidates.push(['buffered', opts.buffered]);
	let reached: [TransportKind, Transport] | null = null;
	let firstError: unknown = null;
	let lastError: unknown = null;
	for (const [kind, transport] of candidates) {
		try {
			await new VaskClient({ baseUrl: opts.baseUrl, token: '', transport, timeoutMs }).health({ auth: false });
			reached = [kind, transport];
			break;
		} catch (err) {
			// An HTTP answer (403 Host, say) reached the server: no other transport will do better.
			if (toVaskError(err).status > 0) {
				const plain = describeError(err, ctx);
				return { ok: false, kind, lines: [...lines, plain.message], error: plain };
			}
			firstError ??= err;
			lastError = err;
		}
	}
	if (!reached) {
		// The later transport's reason is the more telling one (fetch in a web view only says "Failed to fetch").
		const plain = describeError(pickTelling(firstError, lastError), ctx);
		return { ok: false, kind: null, lines: [...lines, plain.message], error: plain };
	}
	const [kind, transport] = reached;
	lines.push(
		kind === 'streaming'
			? 'Answers stream: they appear word by word.'
			: 'This device reaches the server only through Obsidian’s requestUrl: answers arrive whole, when they are finished, and the status is checked every few seconds.',
	);
	try {
		const health = await new VaskClient({ baseUrl: opts.baseUrl, token: opts.token, transport, timeoutMs }).health();
		const described = describeHealth(health);
		return { ok: described.ok, kind, lines: [...lines, ...described.lines], error: null };
	} catch (err) {
		const plain = describeError(err, ctx);
		return { ok: false, kind, lines: [...lines, plain.message], error: plain };
	}
}

function pickTelling(first: unknown, last: unknown): unknown {
	const a = toVaskError(first);
	const b = toVaskError(last);
	return a.code === 'server_unreachable' && b.code !== 'server_unreachable' ? last : first;
}

function normVault(p: string): string {
	return p.replace(/\\/g, '/').replace(/\/+$/, '').toLowerCase();
}

/**
 * Whether saving a note here should ask the server to reindex it. Only when the server reads this
 * very folder: a server elsewhere (a phone's vault reaches it through a sync tool) watches its own
 * copy, where the change lands when the sync delivers it; asking earlier would index the old text.
 * `serverVault` is /v1/health's `vault` (null until known), `localVault` this vault's folder on
 * disk (null on mobile).
 */
export function sendsChangedNotes(serverUrl: string, serverVault: string | null, localVault: string | null): boolean {
	if (localVault === null) return LOOPBACK.test(serverUrl.trim());
	if (serverVault === null) return true;
	return normVault(serverVault) === normVault(localVault);
}
