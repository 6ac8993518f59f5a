/**
 * The plugin's side of "the plugin starts its own server": decides whether to run one (desktop, the
 * setting on, a `vask` found), runs the supervisor, and tells the plugin when the paired address changes.
 */
import { localSystem, type LocalSystem } from '../desktop/localServer';
import { INSTALL_HELP, findVask, pairFilePath } from '../lib/localServer';
import { Supervisor, type Pairing, type SupervisorState } from '../lib/supervisor';
import { defaultTimers } from '../lib/debounce';
import type { VaskSettings } from '../lib/settings';

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
}

export type LocalStatus =
	| { kind: 'mobile' }
	| { kind: 'off' }
	| { kind: 'no-vault' }
	| { kind: 'not-found'; configured: string }
	| { kind: 'external'; url: string }
	| { kind: 'supervised'; executable: string; state: SupervisorState };

export class LocalServerControl {
	private readonly system: LocalSystem | null;
	private supervisor: Supervisor | null = null;
	private executable: string | null = null;
	private statusNow: LocalStatus;

	constructor(private readonly host: LocalServerHost) {
		this.system = localSystem();
		this.statusNow = this.system ? { kind: 'off' } : { kind: 'mobile' };
	}

	get status(): LocalStatus {
		return this.statusNow;
	}

	get pairing(): Pairing | null {
		return this.supervisor?.pairing ?? null;
	}

	logLines(): string[] {
		return this.supervisor?.logLines() ?? [];
	}

	/** Starts, stops or swaps the server to match the settings; safe to call again at any time. */
	async apply(): Promise<void> {
		const sys = this.system;
		if (!sys) return;
		const s = this.host.settings;
		const vault = this.host.vaultPath();
		const exe = s.manageServer && vault ? findVask(sys.host, sys.isFile, s.vaskPath) : null;
		if (this.supervisor && exe === this.executable && s.manageServer) return; // (already running that one)
		await this.stop();
		if (!s.manageServer) return this.set({ kind: 'off' });
		if (!vault) return this.set({ kind: 'no-vault' });
		if (!exe) return this.set({ kind: 'not-found', configured: s.vaskPath });
		const elsewhere = await this.host.runningElsewhere();
		if (elsewhere) return this.set({ kind: 'external', url: elsewhere });
		if (this.supervisor) return; // (another apply() started one meanwhile)
		this.executable = exe;
		this.supervisor = new Supervisor({
			command: exe,
			vaultPath: vault,
			pairFile: pairFilePath(sys.host, vault),
			launcher: sys.launcher,
			files: sys.files,
			timers: defaultTimers,
			verify: (p) => this.host.verify(p),
			onState: (state, pairing) => {
				this.set({ kind: 'supervised', executable: exe, state });
				if (state.phase === 'running' || pairing === null) this.host.pairingChanged(pairing);
			},
		});
		this.supervisor.start();
	}

	async restart(): Promise<void> {
		if (this.supervisor) await this.supervisor.restart();
		else await this.apply();
	}

	/** Stops the server this plugin started (on unload, and when the setting is turned off). */
	async stop(): Promise<void> {
		const sup = this.supervisor;
		this.supervisor = null;
		this.executable = null;
		if (sup) {
			await sup.stop();
			this.host.pairingChanged(null);
		}
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
			if (st.phase === 'failed') return { text: capitalize(st.reason) + '.', ok: false, help: INSTALL_HELP };
			return { text: st.phase === 'stopping' ? 'Stopping vask…' : 'Stopped.', ok: true };
		}
	}
}

function capitalize(text: string): string {
	return text.charAt(0).toUpperCase() + text.slice(1);
}
