import { describe, expect, it } from 'vitest';
import type { EventsHandlers } from '../../src/lib/client';
import { ErrorCode, VaskError } from '../../src/lib/errors';
import { StatusStream, backoffDelay } from '../../src/lib/statusStream';
import type { StatusEvent } from '../../src/lib/types';
import { FakeTimers, settle } from './fakeTimers';

const idle: StatusEvent = { state: 'idle', notes: 5, chunks: 9, pending: 0, done: 5, total: 5, failed: 0, ollama: { reachable: true } };

/** A controllable fake of client.events(). */
class FakeServer {
	connections: { h: EventsHandlers; end: () => void; fail: (e: unknown) => void }[] = [];
	connect = (h: EventsHandlers): Promise<void> =>
		new Promise<void>((resolve, reject) => {
			h.signal?.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError')));
			this.connections.push({ h, end: resolve, fail: reject });
		});
	get last() {
		return this.connections[this.connections.length - 1]!;
	}
}

function setup(opts: { idleTimeoutMs?: number } = {}) {
	const timers = new FakeTimers();
	const server = new FakeServer();
	const statuses: StatusEvent[] = [];
	const errors: [string, number][] = [];
	let opens = 0;
	const stream = new StatusStream({
		connect: server.connect,
		onStatus: (s) => statuses.push(s),
		onError: (e, retry) => errors.push([e.code, retry]),
		onOpen: () => opens++,
		initialDelayMs: 1000,
		maxDelayMs: 8000,
		idleTimeoutMs: opts.idleTimeoutMs ?? 45_000,
		timers,
	});
	return { timers, server, statuses, errors, stream, opens: () => opens };
}

describe('backoffDelay', () => {
	it('doubles up to the maximum', () => {
		expect([0, 1, 2, 3, 4, 10].map((a) => backoffDelay(a, 1000, 8000))).toEqual([1000, 2000, 4000, 8000, 8000, 8000]);
	});
});

describe('StatusStream', () => {
	it('passes status events through', async () => {
		const { server, statuses, stream, opens } = setup();
		stream.start();
		server.last.h.onOpen?.();
		server.last.h.onStatus(idle);
		expect(opens()).toBe(1);
		expect(statuses).toEqual([idle]);
		stream.stop();
	});

	it('reconnects with growing delays while the server is down, and resets after data arrives', async () => {
		const { timers, server, errors, stream } = setup();
		stream.start();
		server.last.fail(new TypeError('Failed to fetch'));
		await settle();
		expect(errors).toEqual([[ErrorCode.unreachable, 1000]]);
		timers.advance(1000);
		expect(server.connections).toHaveLength(2);
		server.last.fail(new TypeError('Failed to fetch'));
		await settle();
		timers.advance(2000);
		server.last.fail(new TypeError('Failed to fetch'));
		await settle();
		expect(errors.map((e) => e[1])).toEqual([1000, 2000, 4000]);
		timers.advance(4000);
		expect(server.connections).toHaveLength(4);
		// connected: data resets the backoff; then the server closes the stream
		server.last.h.onStatus(idle);
		server.last.end();
		await settle();
		expect(errors[3]).toEqual([ErrorCode.incomplete, 1000]);
		stream.stop();
	});

	it('retries slowly on 401 (until the settings change)', async () => {
		const { server, errors, stream } = setup();
		stream.start();
		server.last.fail(new VaskError(ErrorCode.unauthorized, 'bad token', '', 401));
		await settle();
		expect(errors).toEqual([[ErrorCode.unauthorized, 8000]]);
		stream.stop();
	});

	it('drops a silent connection after the idle timeout; pings keep it alive', async () => {
		const { timers, server, errors, stream } = setup({ idleTimeoutMs: 45_000 });
		stream.start();
		const first = server.last;
		timers.advance(30_000);
		first.h.onActivity?.(); // ": ping"
		timers.advance(30_000);
		expect(first.h.signal?.aborted).toBe(false);
		timers.advance(15_000);
		expect(first.h.signal?.aborted).toBe(true);
		await settle();
		expect(errors).toEqual([[ErrorCode.timeout, 1000]]);
		timers.advance(1000);
		expect(server.connections).toHaveLength(2);
		stream.stop();
	});

	it('stop aborts the connection, cancels retries and reports nothing more', async () => {
		const { timers, server, errors, stream } = setup();
		stream.start();
		server.last.fail(new TypeError('x'));
		await settle();
		stream.stop();
		timers.advance(60_000);
		expect(server.connections).toHaveLength(1);
		stream.start();
		const conn = server.last;
		stream.stop();
		expect(conn.h.signal?.aborted).toBe(true);
		await settle();
		expect(errors).toHaveLength(1);
		expect(timers.pending).toBe(0);
	});

	it('restart connects again at once and ignores events of the old connection', async () => {
		const { server, statuses, stream } = setup();
		stream.start();
		const old = server.last;
		stream.restart();
		expect(server.connections).toHaveLength(2);
		old.h.onStatus(idle);
		expect(statuses).toEqual([]);
		server.last.h.onStatus(idle);
		expect(statuses).toEqual([idle]);
		stream.stop();
	});
});
