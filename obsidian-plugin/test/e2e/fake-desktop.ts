/**
 * A desktop app's Node, stood in for in the browser page: Obsidian desktop's renderer has a global
 * `require` and `process`, which src/desktop/localServer.ts uses (behind Platform.isDesktop) to start
 * `vask serve`. Here `child_process.spawn` records each start in `window.__spawned` and gives back a
 * process that ends when asked to stop (its stdin closed, or killed), as vask does; `fs` knows the
 * files named in the page's config. The plugin's own code runs unchanged: settings tab, control,
 * supervisor, launcher.
 */
import { Platform } from './obsidian-stub';

export interface FakeDesktopConfig {
	platform: string;
	home: string;
	/** The files that exist (the `vask` executables to be found). */
	files: string[];
}

export interface SpawnRecord {
	command: string;
	args: string[];
	pid: number;
	alive: boolean;
	/** How it was asked to end: 'stdin' (closed), or the signal of kill(). */
	ended: string[];
}

declare global {
	interface Window {
		__spawned: SpawnRecord[];
		/** The most processes alive at once, ever. */
		__maxAlive: number;
	}
}

type Listener = (...args: unknown[]) => void;

function fakeChild(record: SpawnRecord): unknown {
	const listeners: Record<string, Listener[]> = {};
	const exit = (code: number | null, signal: string | null): void => {
		if (!record.alive) return;
		record.alive = false;
		window.setTimeout(() => (listeners.exit ?? []).forEach((fn) => fn(code, signal)), 0);
	};
	const stream = { setEncoding: () => undefined, on: () => undefined };
	return {
		pid: record.pid,
		stdin: {
			end: () => {
				record.ended.push('stdin');
				exit(0, null);
			},
			on: () => undefined,
		},
		stdout: stream,
		stderr: stream,
		kill: (signal?: string) => {
			record.ended.push(signal ?? 'kill');
			exit(null, signal ?? 'SIGTERM');
			return true;
		},
		on: (event: string, fn: Listener) => void (listeners[event] ??= []).push(fn),
	};
}

export function installFakeDesktop(cfg: FakeDesktopConfig): void {
	const files = new Set(cfg.files);
	window.__spawned = [];
	window.__maxAlive = 0;
	const modules: Record<string, unknown> = {
		child_process: {
			spawn(command: string, args: string[]) {
				const record: SpawnRecord = { command, args: [...args], pid: 7000 + window.__spawned.length, alive: true, ended: [] };
				window.__spawned.push(record);
				window.__maxAlive = Math.max(window.__maxAlive, window.__spawned.filter((r) => r.alive).length);
				return fakeChild(record);
			},
		},
		fs: {
			promises: {
				readFile: () => Promise.reject(new Error('ENOENT')), // (the stand-in never pairs: it stays "starting")
				rm: () => Promise.resolve(),
			},
			existsSync: (path: string) => files.has(path),
			statSync: (path: string) => {
				if (!files.has(path)) throw new Error(`ENOENT: ${path}`);
				return { isFile: () => true };
			},
		},
		os: { homedir: () => cfg.home },
	};
	const g = globalThis as unknown as { require: (id: string) => unknown; process: unknown };
	g.require = (id: string) => {
		if (!(id in modules)) throw new Error(`no module ${id} in the fake desktop`);
		return modules[id];
	};
	g.process = { platform: cfg.platform, env: {} };
	Platform.isDesktop = true;
}
