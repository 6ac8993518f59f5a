/**
 * LocalServerControl: the settings' "Start vask here" and "Vask executable" applied to the supervisor.
 * Typing a path must not stop the server at the first keystroke; applies never overlap (one supervisor,
 * running the executable the settings name last); a server given up on is said in a notice.
 */
import { describe, expect, it } from 'vitest';
import { APPLY_PAUSE_MS, LocalServerControl, describeLocal, type LocalServerHost } from '../../src/lib/localServerControl';
import type { LocalSystem } from '../../src/lib/localServer';
import type { ChildHandle, Launcher, Pairing, SpawnRequest } from '../../src/lib/supervisor';
import { DEFAULT_SETTINGS, type VaskSettings } from '../../src/lib/settings';
import { FakeTimers, settle } from './fakeTimers';

interface Run {
	req: SpawnRequest;
	alive: boolean;
}

/** Processes that exit when asked to stop (as vask does when its stdin closes). */
class FakeLauncher implements Launcher {
	readonly runs: Run[] = [];
	/** The most processes alive at once, ever. */
	maxAlive = 0;

	spawn(req: SpawnRequest): ChildHandle {
		const run: Run = { req, alive: true };
		this.runs.push(run);
		this.maxAlive = Math.max(this.maxAlive, this.alive.length);
		const end = (signal: string | null): void => {
			if (!run.alive) return;
			run.alive = false;
			queueMicrotask(() => req.onExit(signal ? null : 0, signal));
		};
		return { pid: 100 + this.runs.length, stop: () => end(null), kill: () => end('SIGKILL') };
	}

	get alive(): Run[] {
		return this.runs.filter((r) => r.alive);
	}
}

function setup(files: string[] = ['/usr/bin/vask', '/opt/a/vask', '/opt/b/vask']) {
	const timers = new FakeTimers();
	const launcher = new FakeLauncher();
	const existing = new Set(files);
	const system: LocalSystem = {
		host: { platform: 'linux', env: { PATH: '/usr/bin' }, home: '/home/u' },
		isFile: (p) => existing.has(p),
		launcher,
		files: { read: () => Promise.resolve(null), remove: () => Promise.resolve() },
	};
	let settings: VaskSettings = { ...DEFAULT_SETTINGS, manageServer: true, vaskPath: '' };
	/** The next runningElsewhere() calls wait on these (resolve with null: no other server). */
	const elsewhere: ((url: string | null) => void)[] = [];
	let holdElsewhere = false;
	const notices: string[] = [];
	const host: LocalServerHost = {
		get settings() {
			return settings;
		},
		vaultPath: () => '/home/u/Notes',
		verify: (_p: Pairing) => Promise.resolve(),
		pairingChanged: () => undefined,
		stateChanged: () => undefined,
		runningElsewhere: () => (holdElsewhere ? new Promise<string | null>((resolve) => elsewhere.push(resolve)) : Promise.resolve(null)),
		notify: (text) => notices.push(text),
	};
	const control = new LocalServerControl(host, system, { timers, supervisor: { initialBackoffMs: 1000 } });
	return {
		timers,
		launcher,
		control,
		notices,
		elsewhere,
		set(patch: Partial<VaskSettings>) {
			settings = { ...settings, ...patch };
		},
		hold(on: boolean) {
			holdElsewhere = on;
		},
	};
}

const commandOf = (run: { req: SpawnRequest }): string => run.req.command;

describe('LocalServerControl', () => {
	it('typing a path does not touch the server until typing pauses; then one swap to the path typed', async () => {
		const t = setup();
		await t.control.apply();
		await settle();
		expect(t.launcher.alive.map(commandOf)).toEqual(['/usr/bin/vask']);
		let typed = '';
		for (const ch of '/opt/a/vask') {
			typed += ch;
			t.set({ vaskPath: typed }); // what main.updateSettings does on each keystroke…
			t.control.applySoon(); // …with the executable's path
			t.timers.advance(200); // (a person typing)
			await settle();
			expect(t.launcher.alive.map(commandOf)).toEqual(['/usr/bin/vask']); // still serving
		}
		expect(t.launcher.runs.length).toBe(1);
		expect(t.control.applyPending).toBe(true);
		t.timers.advance(APPLY_PAUSE_MS);
		await settle();
		expect(t.launcher.alive.map(commandOf)).toEqual(['/opt/a/vask']);
		expect(t.launcher.runs.map(commandOf)).toEqual(['/usr/bin/vask', '/opt/a/vask']); // no start for a half path
	});

	it('leaving the field (or Enter) applies the path at once', async () => {
		const t = setup();
		await t.control.apply();
		t.set({ vaskPath: '/opt/b/vask' });
		t.control.applySoon();
		t.control.applyNow();
		await settle();
		expect(t.control.applyPending).toBe(false);
		expect(t.launcher.alive.map(commandOf)).toEqual(['/opt/b/vask']);
		t.timers.advance(10 * APPLY_PAUSE_MS);
		await settle();
		expect(t.launcher.runs.length).toBe(2); // (nothing left to apply later)
	});

	it('overlapping applies: one supervisor, running the executable the settings name last', async () => {
		const t = setup();
		t.hold(true);
		t.set({ vaskPath: '/opt/a/vask' });
		const first = t.control.apply();
		await settle();
		t.set({ vaskPath: '/opt/b/vask' });
		const second = t.control.apply();
		const third = t.control.apply(); // (shares the second's run)
		await settle();
		expect(t.elsewhere.length).toBe(1); // the second waits for the first
		t.elsewhere.shift()!(null);
		await first;
		await settle();
		expect(t.launcher.runs.map(commandOf)).toEqual(['/opt/a/vask']); // the first's, stopped by the second
		expect(t.elsewhere.length).toBe(1);
		t.elsewhere.shift()!(null);
		await Promise.all([second, third]);
		await settle();
		expect(t.launcher.alive.map(commandOf)).toEqual(['/opt/b/vask']);
		expect(t.launcher.maxAlive).toBe(1);
		expect(t.control.status).toMatchObject({ kind: 'supervised', executable: '/opt/b/vask' });
	});

	it('applies in a burst, each with another path, end with one server on the last path', async () => {
		const t = setup();
		const applies: Promise<void>[] = [];
		for (const path of ['/opt/a/vask', '', '/opt/b/vask', '/nope', '/opt/a/vask', '/opt/b/vask']) {
			t.set({ vaskPath: path });
			applies.push(t.control.apply());
			await Promise.resolve();
		}
		await Promise.all(applies);
		await settle();
		expect(t.launcher.alive.map(commandOf)).toEqual(['/opt/b/vask']);
		expect(t.launcher.maxAlive).toBe(1);
	});

	it('a stop (the plugin unloading) while an apply waits: no server is started after it', async () => {
		const t = setup();
		t.hold(true);
		const apply = t.control.apply();
		await settle();
		const stop = t.control.stop();
		t.elsewhere.shift()!(null);
		await Promise.all([apply, stop]);
		await settle();
		expect(t.launcher.alive).toEqual([]);
		t.control.applySoon();
		t.timers.advance(10 * APPLY_PAUSE_MS);
		await t.control.apply();
		expect(t.launcher.alive).toEqual([]);
	});

	it('an embedding instruction typed in: the server is started again with it once typing pauses, not per keystroke', async () => {
		const t = setup();
		await t.control.apply();
		await settle();
		const flagsOf = (run: { req: SpawnRequest }): string[] => run.req.args.filter((a) => a.includes('-prefix='));
		expect(flagsOf(t.launcher.alive[0]!)).toEqual([]);
		let typed = '';
		for (const ch of 'query: ') {
			typed += ch;
			t.set({ queryPrefix: typed });
			t.control.applySoon();
			t.timers.advance(200);
			await settle();
		}
		expect(t.launcher.runs.length).toBe(1); // still the first server while typing
		t.timers.advance(APPLY_PAUSE_MS);
		await settle();
		expect(t.launcher.alive.length).toBe(1);
		expect(flagsOf(t.launcher.alive[0]!)).toEqual(['--query-prefix=query: ']);
		// the same flags again: nothing restarts; cleared: started again without it
		await t.control.apply();
		await settle();
		expect(t.launcher.runs.length).toBe(2);
		t.set({ queryPrefix: '', documentPrefix: 'passage: ' });
		await t.control.apply();
		await settle();
		expect(t.launcher.runs.length).toBe(3);
		expect(flagsOf(t.launcher.alive[0]!)).toEqual(['--document-prefix=passage: ']);
	});

	it('restart stops and starts the same executable; turning the setting off stops it', async () => {
		const t = setup();
		await t.control.apply();
		await settle();
		await t.control.restart();
		await settle();
		expect(t.launcher.runs.map(commandOf)).toEqual(['/usr/bin/vask', '/usr/bin/vask']);
		expect(t.launcher.alive.length).toBe(1);
		t.set({ manageServer: false });
		await t.control.apply();
		expect(t.launcher.alive).toEqual([]);
		expect(t.control.status).toEqual({ kind: 'off' });
	});

	it('a server that fails the same way each time is given up on, with a notice that says why', async () => {
		const t = setup();
		await t.control.apply();
		for (let i = 0; i < 10; i++) {
			await settle();
			const run = t.launcher.alive[0];
			if (!run) break;
			run.req.onLine('error: Refusing to bind 0.0.0.0: anyone who can reach it could read your notes.');
			run.alive = false;
			run.req.onExit(2, null);
			t.timers.advance(60_000);
		}
		expect(t.launcher.runs.length).toBe(4);
		expect(t.notices).toHaveLength(1);
		expect(t.notices[0]).toContain('exited with code 2: Refusing to bind 0.0.0.0');
		expect(t.notices[0]).toContain('4 times in a row');
		const line = describeLocal(t.control.status);
		expect(line.ok).toBe(false);
		expect(line.help).toContain('Restart server');
		await t.control.restart(); // after a fix: the button starts it again
		await settle();
		expect(t.launcher.alive.length).toBe(1);
	});

	it('a .cmd set on Windows is said to need vask.exe', async () => {
		const t = setup();
		const control = new LocalServerControl(
			{
				settings: { ...DEFAULT_SETTINGS, vaskPath: '"C:\\tools\\vask.cmd"' },
				vaultPath: () => 'C:\\Notes',
				verify: () => Promise.resolve(),
				pairingChanged: () => undefined,
				stateChanged: () => undefined,
				runningElsewhere: () => Promise.resolve(null),
				notify: () => undefined,
			},
			{
				host: { platform: 'win32', env: {}, home: 'C:\\Users\\u' },
				isFile: () => true,
				launcher: t.launcher,
				files: { read: () => Promise.resolve(null), remove: () => Promise.resolve() },
			},
			{ timers: t.timers },
		);
		await control.apply();
		expect(t.launcher.runs).toEqual([]);
		expect(describeLocal(control.status).text).toMatch(/^C:\\tools\\vask\.cmd is a script that needs a shell: set the path of vask\.exe/);
	});
});
