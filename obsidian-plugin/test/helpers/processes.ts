/** Helpers of the tests that run real processes (the supervisor's, the sidecar's). */

/** Whether a process with this pid is running (signal 0 tests without sending anything). */
export function alive(pid: number): boolean {
	try {
		process.kill(pid, 0);
		return true;
	} catch {
		return false;
	}
}

/** Polls `fn` until it returns something truthy, which it resolves with; throws after `ms`. */
export async function until<T>(what: string, fn: () => T | null | undefined | false, ms = 15_000, every = 25): Promise<T> {
	const end = Date.now() + ms;
	for (;;) {
		const v = fn();
		if (v) return v;
		if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
		await new Promise((r) => setTimeout(r, every));
	}
}
