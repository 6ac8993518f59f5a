/** Timing helpers: debounce, a path batcher for reindex requests, and a render scheduler. */

export interface Timers {
	setTimeout(fn: () => void, ms: number): unknown;
	clearTimeout(handle: unknown): void;
	now(): number;
}

// (window's timers, as Obsidian asks of plugins: a popout window's own would stop with it)
export const defaultTimers: Timers = {
	setTimeout: (fn, ms) => window.setTimeout(fn, ms),
	clearTimeout: (h) => window.clearTimeout(h as number),
	now: () => Date.now(),
};

export interface Debounced<A extends unknown[]> {
	(...args: A): void;
	/** Drops a pending call. */
	cancel(): void;
	/** Runs a pending call now. */
	flush(): void;
	readonly pending: boolean;
}

/** Calls `fn` with the last arguments once `wait` ms have passed without another call. */
export function debounce<A extends unknown[]>(fn: (...args: A) => void, wait: number, timers: Timers = defaultTimers): Debounced<A> {
	let handle: unknown = null;
	let lastArgs: A | null = null;
	const run = (): void => {
		handle = null;
		const args = lastArgs;
		lastArgs = null;
		if (args) fn(...args);
	};
	const d = ((...args: A) => {
		lastArgs = args;
		if (handle !== null) timers.clearTimeout(handle);
		handle = timers.setTimeout(run, wait);
	}) as Debounced<A>;
	d.cancel = () => {
		if (handle !== null) timers.clearTimeout(handle);
		handle = null;
		lastArgs = null;
	};
	d.flush = () => {
		if (handle === null) return;
		timers.clearTimeout(handle);
		run();
	};
	Object.defineProperty(d, 'pending', { get: () => handle !== null });
	return d;
}

export interface PathBatcherOptions {
	/** Quiet time before sending (ms). */
	wait?: number;
	/** Longest a path waits while changes keep coming (ms). */
	maxWait?: number;
	timers?: Timers;
	onError?: (err: unknown, paths: string[]) => void;
}

/**
 * Collects vault paths and sends them in one batch once changes stop for
 * `wait` ms (or after `maxWait` at most). Duplicates are sent once.
 */
export class PathBatcher {
	private paths = new Set<string>();
	private handle: unknown = null;
	private firstAt: number | null = null;
	private readonly wait: number;
	private readonly maxWait: number;
	private readonly timers: Timers;

	constructor(
		private readonly send: (paths: string[]) => unknown,
		private readonly opts: PathBatcherOptions = {},
	) {
		this.wait = opts.wait ?? 1000;
		this.maxWait = opts.maxWait ?? 10_000;
		this.timers = opts.timers ?? defaultTimers;
	}

	get size(): number {
		return this.paths.size;
	}

	add(...paths: string[]): void {
		let added = false;
		for (const p of paths) {
			if (p) {
				this.paths.add(p);
				added = true;
			}
		}
		if (!added) return;
		const now = this.timers.now();
		if (this.firstAt === null) this.firstAt = now;
		if (this.handle !== null) this.timers.clearTimeout(this.handle);
		const delay = Math.max(0, Math.min(this.wait, this.firstAt + this.maxWait - now));
		this.handle = this.timers.setTimeout(() => void this.flush(), delay);
	}

	/** Sends what is queued now. Resolves when the send settles; never rejects. */
	async flush(): Promise<void> {
		if (this.handle !== null) this.timers.clearTimeout(this.handle);
		this.handle = null;
		this.firstAt = null;
		if (this.paths.size === 0) return;
		const batch = [...this.paths];
		this.paths = new Set();
		try {
			await this.send(batch);
		} catch (err) {
			this.opts.onError?.(err, batch);
		}
	}

	/** Drops what is queued. */
	cancel(): void {
		if (this.handle !== null) this.timers.clearTimeout(this.handle);
		this.handle = null;
		this.firstAt = null;
		this.paths.clear();
	}
}

/**
 * Runs an async task (a render) at most once per `minInterval` ms, never two
 * at a time; requests made while one runs are merged into one more run.
 */
export class RenderScheduler {
	private running: Promise<void> | null = null;
	private dirty = false;
	private handle: unknown = null;
	private last = -Infinity;

	constructor(
		private readonly task: () => Promise<void> | void,
		private readonly minInterval: number,
		private readonly timers: Timers = defaultTimers,
	) {}

	request(): void {
		this.dirty = true;
		if (this.running || this.handle !== null) return;
		const wait = this.last + this.minInterval - this.timers.now();
		if (wait <= 0) {
			void this.run();
		} else {
			this.handle = this.timers.setTimeout(() => {
				this.handle = null;
				if (this.dirty && !this.running) void this.run();
			}, wait);
		}
	}

	/** Runs the task now (after the one in progress), ignoring the interval. */
	async flush(): Promise<void> {
		for (;;) {
			if (this.handle !== null) this.timers.clearTimeout(this.handle);
			this.handle = null;
			if (!this.running) break;
			await this.running;
		}
		await this.run();
	}

	/** Drops a waiting run. A run in progress finishes. */
	cancel(): void {
		if (this.handle !== null) this.timers.clearTimeout(this.handle);
		this.handle = null;
		this.dirty = false;
	}

	private run(): Promise<void> {
		this.dirty = false;
		this.last = this.timers.now();
		const p = (async () => {
			try {
				await this.task();
			} catch (err) {
				console.error('vask: render failed', err);
			}
		})().finally(() => {
			this.running = null;
			if (this.dirty) this.request();
		});
		this.running = p;
		return p;
	}
}

/**
 * Runs an async task one run at a time. A call while a run is in progress is served by one more run
 * after it (calls meanwhile share that run), so the last run always starts after the last call and
 * sees the latest state: the latest wins, and two runs never overlap. Each call's promise settles when
 * a run that started after the call has finished.
 */
export class Serial {
	private running: Promise<void> | null = null;
	private queued: Promise<void> | null = null;

	constructor(private readonly task: () => Promise<void>) {}

	/** Whether a run is in progress or waiting. */
	get busy(): boolean {
		return this.running !== null || this.queued !== null;
	}

	run(): Promise<void> {
		if (this.queued) return this.queued;
		const current = this.running;
		if (!current) return this.start();
		const next = (): Promise<void> => {
			this.queued = null;
			return this.start();
		};
		this.queued = current.then(next, next);
		return this.queued;
	}

	private start(): Promise<void> {
		const run: Promise<void> = this.task().finally(() => {
			if (this.running === run) this.running = null;
		});
		this.running = run;
		return run;
	}
}
