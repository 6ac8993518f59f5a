/**
 * The supervisor's interfaces (supervisor.ts) over Node's child_process and fs, for Obsidian desktop.
 *
 * This file imports nothing: the desktop-only glue hands it Node's modules (required behind
 * Platform.isDesktop), so mobile never loads them, and tests hand it the real ones to spawn real
 * processes. The types below are the few members used, so src/ compiles without Node's types.
 */
import type { ChildHandle, Launcher, PairFiles, SpawnRequest } from './supervisor';

interface Readable {
	setEncoding(encoding: 'utf8'): void;
	on(event: 'data', fn: (chunk: string) => void): void;
}

interface Writable {
	end(): void;
	on(event: 'error', fn: (err: Error) => void): void;
}

interface ChildProcess {
	readonly pid?: number;
	readonly stdin: Writable | null;
	readonly stdout: Readable | null;
	readonly stderr: Readable | null;
	kill(signal?: string): boolean;
	on(event: 'exit', fn: (code: number | null, signal: string | null) => void): void;
	on(event: 'error', fn: (err: Error) => void): void;
}

export interface ChildProcessModule {
	spawn(
		command: string,
		args: readonly string[],
		options: { stdio: ['pipe', 'pipe', 'pipe']; windowsHide: boolean; env?: Record<string, string | undefined> },
	): ChildProcess;
}

export interface FsModule {
	promises: {
		readFile(path: string, encoding: 'utf8'): Promise<string>;
		rm(path: string, options: { force: boolean }): Promise<void>;
	};
	existsSync(path: string): boolean;
	statSync(path: string): { isFile(): boolean };
}

/** Splits chunks of text into lines; a last line without a break is kept until `end`. */
export class LineSplitter {
	private rest = '';
	constructor(private readonly onLine: (line: string) => void) {}

	push(chunk: string): void {
		const parts = (this.rest + chunk).split(/\r?\n/);
		this.rest = parts.pop() ?? '';
		for (const part of parts) this.onLine(part);
	}

	end(): void {
		if (this.rest) this.onLine(this.rest);
		this.rest = '';
	}
}

/**
 * Starts processes with Node's child_process. `platform` (Node's name for it) decides how one is
 * stopped: everywhere its stdin is closed first, which `vask serve --stop-with-stdin` takes as the
 * request to stop cleanly (its pair file removed, its index closed); where there are signals, SIGTERM
 * asks as well and SIGKILL ends it. Windows has neither: Node's kill() there ends a process at once,
 * so stop() only closes stdin, and kill() ends the whole tree with `taskkill /T /F` (vask.exe is a
 * launcher that runs Python as its child), then the process itself.
 */
export function nodeLauncher(cp: ChildProcessModule, env?: Record<string, string | undefined>, platform = 'linux'): Launcher {
	const windows = platform === 'win32';
	return {
		spawn(req: SpawnRequest): ChildHandle {
			const out = new LineSplitter((line) => req.onLine(line));
			const err = new LineSplitter((line) => req.onLine(line));
			let finished = false;
			let child: ChildProcess;
			try {
				// stdin stays an open pipe that is never written: when Obsidian goes, even killed, it
				// closes, and `vask serve --stop-with-stdin` stops.
				child = cp.spawn(req.command, req.args, { stdio: ['pipe', 'pipe', 'pipe'], windowsHide: true, env });
			} catch (e) {
				req.onError(e instanceof Error ? e.message : String(e));
				return { pid: undefined, stop: () => undefined, kill: () => undefined };
			}
			child.stdout?.setEncoding('utf8');
			child.stderr?.setEncoding('utf8');
			child.stdout?.on('data', (chunk) => out.push(chunk));
			child.stderr?.on('data', (chunk) => err.push(chunk));
			child.stdin?.on('error', () => undefined); // (a pipe to a process that has exited)
			child.on('error', (e) => {
				if (finished) return;
				finished = true;
				req.onError(e.message);
			});
			child.on('exit', (code, signal) => {
				if (finished) return;
				finished = true;
				out.end();
				err.end();
				req.onExit(code, signal);
			});
			return {
				pid: child.pid,
				stop: () => {
					child.stdin?.end();
					if (!windows) child.kill('SIGTERM');
				},
				kill: () => {
					if (!windows) {
						child.kill('SIGKILL');
						return;
					}
					if (finished || child.pid === undefined) return;
					killTree(cp, taskkillPath(env), child.pid, () => child.kill());
				},
			};
		},
	};
}

/** Windows' taskkill, by its full path: a bare name would be looked for in the current folder first. */
export function taskkillPath(env: Record<string, string | undefined> | undefined): string {
	const root = env?.SystemRoot || env?.SYSTEMROOT || 'C:\\Windows';
	return `${root.replace(/\\+$/, '')}\\System32\\taskkill.exe`;
}

/** Windows: ends process `pid` and its children (`taskkill /T /F`), then calls `then` (which ends `pid` itself, should taskkill not have). */
function killTree(cp: ChildProcessModule, taskkill: string, pid: number, then: () => void): void {
	let done = false;
	const after = (): void => {
		if (done) return;
		done = true;
		then();
	};
	try {
		const killer = cp.spawn(taskkill, ['/pid', String(pid), '/T', '/F'], { stdio: ['pipe', 'pipe', 'pipe'], windowsHide: true });
		killer.on('exit', after);
		killer.on('error', after);
	} catch {
		after();
	}
}

export function nodePairFiles(fs: FsModule): PairFiles {
	return {
		read: async (path) => {
			try {
				return await fs.promises.readFile(path, 'utf8');
			} catch {
				return null;
			}
		},
		remove: (path) => fs.promises.rm(path, { force: true }),
	};
}

/** Whether `path` is a file (the `vask` executable being looked for). */
export function nodeIsFile(fs: FsModule): (path: string) => boolean {
	return (path) => {
		try {
			return fs.statSync(path).isFile();
		} catch {
			return false;
		}
	};
}
