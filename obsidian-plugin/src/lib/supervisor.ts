/**
 * Starts and supervises `vask serve` for this vault on desktop: spawn, pair, back off, stop.
 *
 * Pure logic behind three small interfaces (a process launcher, the pair file, timers), so it runs
 * under Node in tests with fakes or real processes; the Node implementation is nodeSystem.ts, handed
 * Node's modules by the desktop-only glue, so mobile never loads them.
 *
 * Pairing: the plugin chooses a fresh nonce for every start, removes any pair file left by an earlier
 * run, and starts `vask serve --port 0 --pair-file PATH --pair-nonce NONCE --stop-with-stdin`. The server
 * writes `{url, token, nonce, pid, version}` there (mode 0600) once it answers. A file is trusted only
 * when it carries this start's nonce, names a loopback http address, and the server answers there with
 * that token (`verify`). The token stays in memory: it is never logged, shown or saved in settings.
 *
 * A server that stops is started again after a wait that doubles, up to a minute; one that fails the
 * same way several times in a row (a setting it refuses, an address the plugin does not pair with) is
 * not started again: the state says why, with the server's own `error:` line, until "Restart".
 */
import type { Timers } from './debounce';

export interface ChildHandle {
	readonly pid: number | undefined;
	/** Asks the process to stop: its stdin is closed (vask stops on that everywhere), then SIGTERM. */
	stop(): void;
	/** Ends it for good (SIGKILL where there are signals). */
	kill(): void;
}

export interface SpawnRequest {
	command: string;
	args: string[];
	/** One line of the process's output (stdout or stderr), without its line break. */
	onLine(line: string): void;
	/** The process ended: its exit code, or the signal that ended it. */
	onExit(code: number | null, signal: string | null): void;
	/** It could not be started at all (no such file, not executable). onExit does not follow. */
	onError(message: string): void;
}

export interface Launcher {
	spawn(req: SpawnRequest): ChildHandle;
}

export interface PairFiles {
	/** The file's text, or null when there is none (or it cannot be read). */
	read(path: string): Promise<string | null>;
	/** Removes it; no error when it is not there. */
	remove(path: string): Promise<void>;
}

export interface Pairing {
	url: string;
	token: string;
	pid: number | null;
	version: string;
}

export type SupervisorState =
	| { phase: 'stopped' }
	| { phase: 'starting'; attempt: number }
	| { phase: 'running'; url: string; pid: number | null; version: string }
	| { phase: 'waiting'; retryAt: number; reason: string }
	| { phase: 'stopping' }
	/** `cause`: it could not be started at all, or it failed the same way too many times in a row. */
	| { phase: 'failed'; reason: string; cause: 'not-started' | 'repeated' };

export interface SupervisorOptions {
	command: string;
	/** Arguments before `serve` (a script for an interpreter, in tests); usually none. */
	commandArgs?: string[];
	vaultPath: string;
	/** Settings given to `vask serve` as flags (settings.serveArgs). */
	serveArgs?: string[];
	pairFile: string;
	launcher: Launcher;
	files: PairFiles;
	timers: Timers;
	/** Checks the address with the token (an authenticated /v1/health); throws when they do not work. */
	verify: (pairing: Pairing) => Promise<void>;
	onState?: (state: SupervisorState, pairing: Pairing | null) => void;
	makeNonce?: () => string;
	/** First wait after a crash; doubled after each crash in a row, up to maxBackoffMs. */
	initialBackoffMs?: number;
	maxBackoffMs?: number;
	/** A run at least this long was stable: the next crash waits initialBackoffMs again. */
	stableMs?: number;
	/** How long a start may take to pair before it counts as failed (the first start of a big vault syncs after). */
	startTimeoutMs?: number;
	pollMs?: number;
	/** How long stop() waits for the process to exit before it kills it. */
	stopGraceMs?: number;
	/** After this many failures in a row with the same reason, it is not started again. */
	maxSameFailures?: number;
	logLines?: number;
}

export const DEFAULTS = {
	commandArgs: [] as string[],
	serveArgs: [] as string[],
	initialBackoffMs: 1_000,
	maxBackoffMs: 60_000,
	stableMs: 60_000,
	startTimeoutMs: 60_000,
	pollMs: 250,
	stopGraceMs: 5_000,
	maxSameFailures: 4,
	logLines: 500,
} as const;

/** The last `capacity` lines, oldest first. */
export class LogBuffer {
	private readonly items: string[] = [];
	constructor(private readonly capacity: number) {}

	push(line: string): void {
		this.items.push(line);
		if (this.items.length > this.capacity) this.items.splice(0, this.items.length - this.capacity);
	}

	lines(): string[] {
		return [...this.items];
	}
}

/** 24 random bytes as URL-safe base64: what `vask serve --pair-nonce` accepts (16–128 of [A-Za-z0-9_-]). */
export function randomNonce(): string {
	const bytes = crypto.getRandomValues(new Uint8Array(24));
	let text = '';
	for (const b of bytes) text += String.fromCharCode(b);
	return btoa(text).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** The wait before restart number `crashes` (1 for the first crash in a row): doubling, capped. */
export function backoffDelay(crashes: number, initialMs: number, maxMs: number): number {
	return Math.min(maxMs, initialMs * 2 ** Math.max(0, crashes - 1));
}

/** The plugin only ever pairs with a server on this machine, over plain http on a loopback address. */
const PAIRABLE_URL = /^http:\/\/(127\.0\.0\.1|\[::1\]|localhost):\d{1,5}$/;

/** This start's pair file naming an address the plugin does not pair with: what to say about it; else null. */
export function pairFileProblem(text: string, nonce: string): string | null {
	try {
		const d = JSON.parse(text) as Record<string, unknown>;
		if (d.nonce !== nonce || typeof d.url !== 'string' || PAIRABLE_URL.test(d.url)) return null;
		return `listens at ${d.url.slice(0, 100)}, where the plugin does not pair (it pairs over plain http on 127.0.0.1 or [::1] only)`;
	} catch {
		return null;
	}
}

/** A pair file's text as this start's pairing, or null when it is not (another run's, half a file, not loopback). */
export function parsePairFile(text: string, nonce: string): Pairing | null {
	let data: unknown;
	try {
		data = JSON.parse(text);
	} catch {
		return null;
	}
	if (typeof data !== 'object' || data === null) return null;
	const d = data as Record<string, unknown>;
	if (d.nonce !== nonce || typeof d.url !== 'string' || typeof d.token !== 'string' || d.token === '') return null;
	if (!PAIRABLE_URL.test(d.url)) return null;
	return {
		url: d.url,
		token: d.token,
		pid: typeof d.pid === 'number' ? d.pid : null,
		version: typeof d.version === 'string' ? d.version : '',
	};
}

export class Supervisor {
	private readonly o: Required<Omit<SupervisorOptions, 'onState' | 'makeNonce'>> &
		Pick<SupervisorOptions, 'onState'> & { makeNonce: () => string };
	private readonly log: LogBuffer;
	private stateNow: SupervisorState = { phase: 'stopped' };
	private pairingNow: Pairing | null = null;
	private child: ChildHandle | null = null;
	/** Which start the callbacks belong to: a late callback of an earlier child is ignored. */
	private generation = 0;
	private crashes = 0;
	private runningSince: number | null = null;
	private timer: unknown = null;
	private killTimer: unknown = null;
	private exited: (() => void) | null = null;
	private wanted = false;
	/** This start's last `error:` line from the server (vask prints its clear errors so), and why it was ended. */
	private lastError: string | null = null;
	private endedBecause: string | null = null;
	/** The last failure's reason, and how many failures in a row have had it. */
	private lastReason: string | null = null;
	private sameFailures = 0;

	constructor(opts: SupervisorOptions) {
		this.o = { ...DEFAULTS, makeNonce: randomNonce, ...opts };
		this.log = new LogBuffer(this.o.logLines);
	}

	get state(): SupervisorState {
		return this.stateNow;
	}

	/** The address and token of the running server, once paired. */
	get pairing(): Pairing | null {
		return this.pairingNow;
	}

	/** The server's output and the supervisor's own notes, oldest first (never the token). */
	logLines(): string[] {
		return this.log.lines();
	}

	/** Starts the server, and keeps it running until stop(). */
	start(): void {
		if (this.wanted) return;
		this.wanted = true;
		this.crashes = 0;
		this.lastReason = null;
		this.sameFailures = 0;
		void this.launch();
	}

	/** Stops the server (and any restart planned); resolves once it has exited, or was killed. */
	async stop(): Promise<void> {
		this.wanted = false;
		this.clearTimer();
		const child = this.child;
		if (!child) {
			this.setState({ phase: 'stopped' }, null);
			return;
		}
		this.setState({ phase: 'stopping' }, null);
		const done = new Promise<void>((resolve) => (this.exited = resolve));
		this.note('stopping the server');
		child.stop();
		this.killTimer = this.o.timers.setTimeout(() => {
			this.note(`the server did not stop within ${Math.round(this.o.stopGraceMs / 1000)} s: killed`);
			child.kill();
		}, this.o.stopGraceMs);
		await done;
	}

	/** Stops the server and starts it again at once (the "Restart" button). */
	async restart(): Promise<void> {
		await this.stop();
		this.start();
	}

	/** Kills at once, without waiting: for Obsidian quitting, when nothing asynchronous will finish. */
	killNow(): void {
		this.wanted = false;
		this.clearTimer();
		this.child?.stop();
		this.child?.kill();
	}

	private async launch(): Promise<void> {
		const gen = ++this.generation;
		this.pairingNow = null;
		this.lastError = null;
		this.endedBecause = null;
		this.setState({ phase: 'starting', attempt: this.crashes + 1 }, null);
		// A file from an earlier run (a crash leaves one) must not be read as this one's.
		await this.o.files.remove(this.o.pairFile).catch(() => undefined);
		if (gen !== this.generation || !this.wanted) return;
		const nonce = this.o.makeNonce();
		const args = [...this.o.commandArgs, 'serve', '--vault', this.o.vaultPath, '--port', '0', ...this.o.serveArgs];
		// `--name=value`: a nonce may begin with '-', which a separate argument would make an option
		// (argparse's "expected one argument", one start in 64).
		args.push(`--pair-file=${this.o.pairFile}`, `--pair-nonce=${nonce}`, '--stop-with-stdin');
		this.note(`starting ${this.o.command} serve --vault "${this.o.vaultPath}" --port 0`);
		let spawnFailed = false;
		const child = this.o.launcher.spawn({
			command: this.o.command,
			args,
			onLine: (line) => {
				if (gen !== this.generation) return;
				this.log.push(this.redact(line));
				if (line.startsWith('error: ')) this.lastError = this.redact(line.slice('error: '.length)).slice(0, 300);
			},
			onExit: (code, signal) => {
				if (gen === this.generation) this.childExited(code, signal);
			},
			onError: (message) => {
				spawnFailed = true;
				if (gen !== this.generation) return;
				this.child = null;
				this.wanted = false;
				this.note(`could not start ${this.o.command}: ${message}`);
				this.setState({ phase: 'failed', reason: `could not start ${this.o.command}: ${message}`, cause: 'not-started' }, null);
				this.exited?.();
			},
		});
		if (spawnFailed) return;
		this.child = child;
		this.note(`started, process ${child.pid ?? '?'}`);
		void this.pair(gen, nonce, this.o.timers.now() + this.o.startTimeoutMs);
	}

	/** Reads the pair file until it holds this start's nonce and the server answers with its token. */
	private async pair(gen: number, nonce: string, deadline: number): Promise<void> {
		let problem: string | null = null;
		for (;;) {
			if (gen !== this.generation || this.child === null || this.stateNow.phase !== 'starting') return;
			const text = await this.o.files.read(this.o.pairFile).catch(() => null);
			const pairing = text === null ? null : parsePairFile(text, nonce);
			if (text !== null && pairing === null && problem === null) {
				problem = pairFileProblem(text, nonce);
				if (problem) this.note(`the server ${problem}`);
			}
			if (pairing) {
				try {
					await this.o.verify(pairing);
					if (gen !== this.generation || this.stateNow.phase !== 'starting') return;
					this.runningSince = this.o.timers.now();
					this.note(`paired: listening on ${pairing.url}`);
					this.setState({ phase: 'running', url: pairing.url, pid: pairing.pid, version: pairing.version }, pairing);
					return;
				} catch (err) {
					this.note(`the server at ${pairing.url} did not accept its token yet: ${errorText(err)}`);
				}
			}
			if (this.o.timers.now() >= deadline) {
				this.note(`no pairing within ${Math.round(this.o.startTimeoutMs / 1000)} s: stopping this start`);
				this.endedBecause = problem ?? `did not pair within ${Math.round(this.o.startTimeoutMs / 1000)} s`;
				this.child.kill();
				return;
			}
			await new Promise<void>((resolve) => this.o.timers.setTimeout(resolve, this.o.pollMs));
		}
	}

	private childExited(code: number | null, signal: string | null): void {
		this.child = null;
		this.pairingNow = null;
		if (this.killTimer !== null) this.o.timers.clearTimeout(this.killTimer);
		this.killTimer = null;
		const how = signal ? `was ended by ${signal}` : `exited with code ${code ?? '?'}`;
		void this.o.files.remove(this.o.pairFile).catch(() => undefined);
		if (!this.wanted) {
			this.note(`the server ${how}`);
			this.setState({ phase: 'stopped' }, null);
			this.exited?.();
			this.exited = null;
			return;
		}
		const ran = this.runningSince === null ? 0 : this.o.timers.now() - this.runningSince;
		this.runningSince = null;
		if (ran >= this.o.stableMs) {
			// (a long good run: the next wait starts short again, and earlier failures are forgotten)
			this.crashes = 0;
			this.lastReason = null;
		}
		this.crashes += 1;
		const reason = `the server ${this.endedBecause ?? how}${this.lastError ? `: ${this.lastError}` : ''}`;
		this.sameFailures = reason === this.lastReason ? this.sameFailures + 1 : 1;
		this.lastReason = reason;
		if (this.sameFailures >= this.o.maxSameFailures) {
			this.wanted = false;
			const times = `${this.sameFailures} times in a row`;
			this.note(`${reason} (${times}): not starting it again until "Restart server"`);
			this.setState({ phase: 'failed', reason: `${reason} (${times})`, cause: 'repeated' }, null);
			return;
		}
		const wait = backoffDelay(this.crashes, this.o.initialBackoffMs, this.o.maxBackoffMs);
		this.note(`${reason}; starting it again in ${formatSeconds(wait)}`);
		this.setState({ phase: 'waiting', retryAt: this.o.timers.now() + wait, reason }, null);
		this.timer = this.o.timers.setTimeout(() => {
			this.timer = null;
			if (this.wanted) void this.launch();
		}, wait);
	}

	private clearTimer(): void {
		if (this.timer !== null) this.o.timers.clearTimeout(this.timer);
		this.timer = null;
	}

	private note(text: string): void {
		this.log.push(`[vask plugin] ${text}`);
	}

	/** The server never prints its token; should a line hold it all the same, it is not kept. */
	private redact(line: string): string {
		const token = this.pairingNow?.token;
		return token ? line.split(token).join('[token]') : line;
	}

	private setState(state: SupervisorState, pairing: Pairing | null): void {
		this.stateNow = state;
		this.pairingNow = pairing;
		this.o.onState?.(state, pairing);
	}
}

function errorText(err: unknown): string {
	return err instanceof Error ? err.message : String(err);
}

function formatSeconds(ms: number): string {
	return ms < 1000 ? `${ms} ms` : `${Math.round(ms / 100) / 10} s`;
}
