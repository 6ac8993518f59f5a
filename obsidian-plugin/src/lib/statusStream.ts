/**
 * Keeps a live connection to GET /v1/events: reconnects with exponential
 * backoff, and treats a silent connection (no event or ping for a while) as
 * dead.
 */
import { ErrorCode, VaskError, toVaskError } from './errors';
import type { EventsHandlers } from './client';
import { defaultTimers, type Timers } from './debounce';
import type { StatusEvent } from './types';

export type Connect = (h: EventsHandlers) => Promise<void>;

export interface StatusStreamOptions {
	connect: Connect;
	onStatus: (status: StatusEvent) => void;
	/** The connection failed or dropped; another try comes in `retryInMs`. */
	onError: (err: VaskError, retryInMs: number) => void;
	onOpen?: () => void;
	initialDelayMs?: number;
	maxDelayMs?: number;
	/** No bytes for this long means the connection is dead (server heartbeats every ~15 s). */
	idleTimeoutMs?: number;
	timers?: Timers;
}

export function backoffDelay(attempt: number, initial: number, max: number): number {
	return Math.min(max, initial * 2 ** Math.max(0, attempt));
}

export class StatusStream {
	private ctrl: AbortController | null = null;
	private retryHandle: unknown = null;
	private idleHandle: unknown = null;
	private attempt = 0;
	private started = false;
	private generation = 0;
	private readonly timers: Timers;
	private readonly initial: number;
	private readonly max: number;
	private readonly idle: number;

	constructor(private readonly opts: StatusStreamOptions) {
		this.timers = opts.timers ?? defaultTimers;
		this.initial = opts.initialDelayMs ?? 1000;
		this.max = opts.maxDelayMs ?? 30_000;
		this.idle = opts.idleTimeoutMs ?? 45_000;
	}

	get running(): boolean {
		return this.started;
	}

	start(): void {
		if (this.started) return;
		this.started = true;
		this.attempt = 0;
		void this.loop(++this.generation);
	}

	stop(): void {
		this.started = false;
		this.generation++;
		this.clearTimers();
		this.ctrl?.abort();
		this.ctrl = null;
	}

	/** Drops the connection and connects again now (e.g. after the settings changed). */
	restart(): void {
		this.stop();
		this.start();
	}

	private clearTimers(): void {
		if (this.retryHandle !== null) this.timers.clearTimeout(this.retryHandle);
		if (this.idleHandle !== null) this.timers.clearTimeout(this.idleHandle);
		this.retryHandle = null;
		this.idleHandle = null;
	}

	private armIdle(ctrl: AbortController, gen: number): void {
		if (this.idleHandle !== null) this.timers.clearTimeout(this.idleHandle);
		this.idleHandle = this.timers.setTimeout(() => {
			this.idleHandle = null;
			if (gen === this.generation) ctrl.abort(new DOMException('no heartbeat', 'TimeoutError'));
		}, this.idle);
	}

	private async loop(gen: number): Promise<void> {
		const ctrl = new AbortController();
		this.ctrl = ctrl;
		let idleAbort = false;
		let gotData = false;
		this.armIdle(ctrl, gen);
		ctrl.signal.addEventListener('abort', () => {
			idleAbort = gen === this.generation;
		});
		const alive = (): void => {
			if (gen !== this.generation) return;
			if (!gotData) {
				gotData = true;
				this.attempt = 0;
			}
			this.armIdle(ctrl, gen);
		};
		let error: VaskError | null = null;
		try {
			await this.opts.connect({
				signal: ctrl.signal,
				onOpen: () => {
					if (gen === this.generation) this.opts.onOpen?.();
				},
				onActivity: alive,
				onStatus: (s) => {
					if (gen !== this.generation) return;
					alive();
					this.opts.onStatus(s);
				},
			});
			error = new VaskError(ErrorCode.incomplete, 'The server closed the event stream.');
		} catch (err) {
			error = idleAbort
				? new VaskError(ErrorCode.timeout, 'No heartbeat from the server.')
				: toVaskError(err);
		}
		if (gen !== this.generation || !this.started) return;
		if (this.idleHandle !== null) this.timers.clearTimeout(this.idleHandle);
		this.idleHandle = null;
		// A wrong token will not fix itself: retry slowly until the settings change.
		const delay =
			error.code === ErrorCode.unauthorized ? this.max : backoffDelay(this.attempt, this.initial, this.max);
		this.attempt++;
		this.opts.onError(error, delay);
		this.retryHandle = this.timers.setTimeout(() => {
			this.retryHandle = null;
			if (gen === this.generation && this.started) void this.loop(gen);
		}, delay);
	}
}
