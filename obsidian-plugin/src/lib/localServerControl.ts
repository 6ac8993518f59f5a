/**
 * The plugin's side of "the plugin starts its own server": decides whether to run one (desktop, the
 * setting on, a `vask` found), runs the supervisor, and tells the plugin when the paired address changes.
 *
 * Changes are applied one at a time (Serial): a change made while one is being applied is applied after
 * it, with the settings as they are then, so there is never more than one supervisor, and it runs the
 * executable the settings name last, with the flags they give it (settings.serveArgs). The executable's
 * path and the flags are applied once typing pauses (applySoon), or when the field is left (applyNow):
 * a half-typed path must not stop the server, nor each keystroke of an instruction restart it.
 */
import { INSTALL_HELP, executableExample, executableProblem, findVask, pairFilePath, typedPath, type LocalSystem } from './localServer';
import { Supervisor, type Pairing, type SupervisorState } from './supervisor';
import { Serial, debounce, defaultTimers, type Debounced, type Timers } from './debounce';
import { serveArgs, type VaskSettings } from './settings';

/** How long typing in the executable's field must pause before the path is applied. */
export const APPLY_PAUSE_MS = 1_500;

export interface LocalServerHost {
	readonly settings: VaskSettings;
	vaultPath(): string | null;
	/** Checks an address with a token (an authenticated /v1/health); throws when they do not work. */
	verify(pairing: Pairing): Promise<void>;
	/** The paired address changed (null: none now): the plugin reconnects. */
	pairingChanged(pairing: Pairing | null): void;
	/** Anything shown about the server changed (the settings tab redraws its lines). */
	stateChanged(): void;
	/** The settings' server, when it answers with their token and reads this very vault folder (one
	 *  started by hand): a second server would write the same index. Null otherwise. */
	runningElsewhere(): Promise<string | null>;
	/** Something the person should see now, once (a notice): the server was given up on. */
	notify(text: string): void;
}

export type LocalStatus =
	| { kind: 'mobile' }
	| { kind: 'off' }
	| { kind: 'no-vault' }
	| { kind: 'not-found'; configured: string; problem?: string }
	| { kind: 'external'; url: string }
	| { kind: 'supervised'; executable: string; state: SupervisorState };

export interface LocalServerOptions {
	timers?: Timers;
	/** Options passed on to each supervisor (tests: shorter waits). */
	supervisor?: { initialBackoffMs?: number; pollMs?: number; stopGraceMs?: number; startTimeoutMs?: number };
}

export class LocalServerControl {
	private supervisor: Supervisor | null = null;
	private executable: string | null = null;
	/** The flags the running server was started with (a change of them starts it again). */
	private args = '';
	private statusNow: LocalStatus;
	private readonly serial = new Serial(() => this.reconcile());
	private readonly soon: Debounced<[]>;
	private restartWanted = false;
	private closed = false;
	private readonly timers: Timers;

	/** `system`: this computer's processes and files (src/desktop/localServer.ts), null on mobile. */
	constructor(
		private readonly host: LocalServerHost,
		private readonly system: LocalSystem | null,
		private readonly opts: LocalServerOptions = {},
	) {
		this.timers = opts.timers ?? defaultTimers;
		this.soon = debounce(() => void this.apply(), APPLY_PAUSE_MS, this.timers);
		this.statusNow = system ? { kind: 'off' } : { kind: 'mobile' };
	}

	get status(): LocalStatus {
		return this.statusNow;
	}

	get pairing(): Pairing | null {
		return this.supervisor?.pairing ?? null;
	}

	/** Whether a change of the executable's path waits for typing to pause. */
	get applyPending(): boolean {
		return this.soon.pending;
	}

	logLines(): string[] {
		return this.supervisor?.logLines() ?? [];
	}

	/** What a path to `vask` looks like here (the setting's placeholder). */
	get executableExample(): string {
		return this.system ? executableExample(this.system.host) : '/path/to/vask';
	}

	/** Starts, stops or swaps the server to match the settings (after any apply in progress); safe to call at any time. */
	apply(): Promise<void> {
		this.soon.cancel();
		return this.serial.run();
	}

	/** Applies the settings once they have not changed for APPLY_PAUSE_MS (typing in the executable's field). */
	applySoon(): void {
		if (!this.closed) this.soon();
	}

	/** Applies a change that waits for a pause now (the field was left, or Enter pressed). */
	applyNow(): void {
		this.soon.flush();
	}

	/** Stops the server and starts it again (the "Restart server" button); starts it when none runs. */
	restart(): Promise<void> {
		this.restartWanted = true;
		return this.apply();
	}

	/** Stops the server this plugin started, for good (the plugin unloads, the window closes). */
	stop(): Promise<void> {
		this.closed = true;
		this.soon.cancel();
		return this.serial.run();
	}

	/** One apply: never two at once (Serial), so each await below sees no other apply's changes. */
	private async reconcile(): Promise<void> {
		const restart = this.restartWanted;
		this.restartWanted = false;
		const sys = this.system;
		if (!sys) return;
		const s = this.host.settings;
		const vault = this.host.vaultPath();
		const on = s.manageServer && !this.closed;
		const exe = on && vault ? findVask(sys.host, sys.isFile, s.vaskPath) : null;
		const args = serveArgs(s);
		if (this.supervisor && exe === this.executable && JSON.stringify(args) === this.args && on) {
			if (restart) await this.supervisor.restart();
			return; // (already running that one)
		}
		await this.stopSupervisor();
		if (this.closed) return;
		if (!s.manageServer) return this.set({ kind: 'off' });
		if (!vault) return this.set({ kind: 'no-vault' });
		if (!exe) {
			const typed = typedPath(sys.host, s.vaskPath);
			const problem = typed ? executableProblem(sys.host, typed) : null;
			return this.set(problem ? { kind: 'not-found', configured: typed, problem } : { kind: 'not-found', configured: typed });
		}
		const elsewhere = await this.host.runningElsewhere();
		if (elsewhere) return this.set({ kind: 'external', url: elsewhere });
		if (this.closed) return;
		this.executable = exe;
		this.args = JSON.stringify(args);
		const supervisor = new Supervisor({
			...this.opts.supervisor,
			command: exe,
			vaultPath: vault,
			serveArgs: args,
			pairFile: pairFilePath(sys.host, vault),
			launcher: sys.launcher,
			files: sys.files,
			timers: this.timers,
			verify: (p) => this.host.verify(p),
			onState: (state, pairing) => {
				if (this.supervisor !== supervisor) return; // (a late word from one already replaced)
				this.set({ kind: 'supervised', executable: exe, state });
				if (state.phase === 'running' || pairing === null) this.host.pairingChanged(pairing);
				if (state.phase === 'failed' && state.cause === 'repeated')
					this.host.notify(`vask: the server on this computer stopped, and was not started again: ${state.reason}. Settings → Vask → Show server log says more.`);
			},
		});
		this.supervisor = supervisor;
		supervisor.start();
	}

	private async stopSupervisor(): Promise<void> {
		const sup = this.supervisor;
		if (!sup) return;
		await sup.stop(); // (its last states still show while it stops)
		this.supervisor = null;
		this.executable = null;
		this.args = '';
		this.host.pairingChanged(null);
	}

	private set(status: LocalStatus): void {
		this.statusNow = status;
		this.host.stateChanged();
	}
}

/** One line about the local server, for the settings and the status window. */
export function describeLocal(status: LocalStatus, now = Date.now()): { text: string; ok: boolean; help?: string } {
	switch (status.kind) {
		case 'mobile':
			return { text: 'This device cannot run vask: set the address of a vask server below.', ok: true };
		case 'off':
			return { text: 'Off: the plugin uses the server URL and token below.', ok: true };
		case 'external':
			return { text: `A vask server for this vault already answers at ${status.url}: the plugin uses it, and starts none.`, ok: true };
		case 'no-vault':
			return { text: 'This vault has no folder on disk that vask could read.', ok: false };
		case 'not-found':
			if (status.problem) return { text: status.problem, ok: false };
			return {
				text: status.configured ? `No vask executable at ${status.configured}.` : 'vask is not installed on this computer (not on the PATH, nor in ~/.local/bin).',
				ok: false,
				help: INSTALL_HELP,
			};
		case 'supervised': {
			const st = status.state;
			if (st.phase === 'running') return { text: `Running ${status.executable} (vask ${st.version}, process ${st.pid ?? '?'}) at ${st.url}.`, ok: true };
			if (st.phase === 'starting') return { text: st.attempt > 1 ? `Starting vask again (attempt ${st.attempt})…` : 'Starting vask…', ok: true };
			if (st.phase === 'waiting') return { text: `${capitalize(st.reason)}; starting it again in ${Math.max(0, Math.ceil((st.retryAt - now) / 1000))} s. The log says why.`, ok: false };
			if (st.phase === 'failed' && st.cause === 'repeated')
				return { text: `${capitalize(st.reason)}: not started again.`, ok: false, help: 'The server log says more. Fix the cause, then press "Restart server".' };
			if (st.phase === 'failed') return { text: capitalize(st.reason) + '.', ok: false, help: INSTALL_HELP };
			return { text: st.phase === 'stopping' ? 'Stopping vask…' : 'Stopped.', ok: true };
		}
	}
}

function capitalize(text: string): string {
	return text.charAt(0).toUpperCase() + text.slice(1);
}
