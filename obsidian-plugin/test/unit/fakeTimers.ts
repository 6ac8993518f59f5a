import type { Timers } from '../../src/lib/debounce';

/** Deterministic timers: time moves only through advance(). */
export class FakeTimers implements Timers {
	time = 0;
	private nextId = 1;
	private readonly tasks = new Map<number, { at: number; fn: () => void }>();

	setTimeout = (fn: () => void, ms: number): unknown => {
		const id = this.nextId++;
		this.tasks.set(id, { at: this.time + Math.max(0, ms), fn });
		return id;
	};

	clearTimeout = (h: unknown): void => {
		this.tasks.delete(h as number);
	};

	now = (): number => this.time;

	get pending(): number {
		return this.tasks.size;
	}

	/** Runs due tasks in time order (including ones they schedule) up to now + ms. */
	advance(ms: number): void {
		const end = this.time + ms;
		for (;;) {
			let next: [number, { at: number; fn: () => void }] | null = null;
			for (const e of this.tasks) if (e[1].at <= end && (!next || e[1].at < next[1].at)) next = e;
			if (!next) break;
			this.tasks.delete(next[0]);
			this.time = next[1].at;
			next[1].fn();
		}
		this.time = end;
	}

	/** The delay of the only pending task. */
	nextDelay(): number | null {
		let min: number | null = null;
		for (const t of this.tasks.values()) if (min === null || t.at < min) min = t.at;
		return min === null ? null : min - this.time;
	}
}

/** Lets pending promise callbacks run. */
export async function settle(): Promise<void> {
	for (let i = 0; i < 10; i++) await Promise.resolve();
}
