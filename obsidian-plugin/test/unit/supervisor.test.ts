import { describe, expect, it } from 'vitest';
import { executableProblem, findVask, pairFilePath, pathHash, serverEnv, typedPath, vaskCandidates } from '../../src/lib/localServer';
import { nodeLauncher, taskkillPath, type ChildProcessModule } from '../../src/lib/nodeSystem';
import {
	LogBuffer,
	Supervisor,
	backoffDelay,
	pairFileProblem,
	parsePairFile,
	randomNonce,
	type ChildHandle,
	type Launcher,
	type PairFiles,
	type SpawnRequest,
	type SupervisorOptions,
	type SupervisorState,
} from '../../src/lib/supervisor';
import { FakeTimers } from './fakeTimers';

const TOKEN = 'secret-token-abcdefghijklmnop';

/** A launcher whose processes the test drives: write their pair file, print, exit. */
class FakeLauncher implements Launcher {
	readonly runs: { req: SpawnRequest; stopped: boolean; killed: boolean; pid: number }[] = [];
	failWith: string | null = null;

	spawn(req: SpawnRequest): ChildHandle {
		if (this.failWith) {
			req.onError(this.failWith);
			return { pid: undefined, stop: () => undefined, kill: () => undefined };
		}
		const run = { req, stopped: false, killed: false, pid: 1000 + this.runs.length };
		this.runs.push(run);
		return { pid: run.pid, stop: () => void (run.stopped = true), kill: () => void (run.killed = true) };
	}

	get last() {
		return this.runs[this.runs.length - 1]!;
	}

	nonce(): string {
		return this.last.req.args.find((a) => a.startsWith('--pair-nonce='))!.slice('--pair-nonce='.length);
	}
}

class FakeFiles implements PairFiles {
	readonly files = new Map<string, string>();
	removed = 0;
	read = (path: string): Promise<string | null> => Promise.resolve(this.files.get(path) ?? null);
	remove = (path: string): Promise<void> => {
		this.removed++;
		this.files.delete(path);
		return Promise.resolve();
	};
}

const flush = async (): Promise<void> => {
	for (let i = 0; i < 10; i++) await Promise.resolve();
};

function setup(
	verify: (url: string, token: string) => Promise<void> = () => Promise.resolve(),
	more: Partial<SupervisorOptions> = {},
) {
	const launcher = new FakeLauncher();
	const files = new FakeFiles();
	const timers = new FakeTimers();
	const states: SupervisorState[] = [];
	const sup = new Supervisor({
		command: '/home/u/.local/bin/vask',
		vaultPath: '/home/u/Notes',
		pairFile: '/run/user/1000/vask/pair-x.json',
		launcher,
		files,
		timers,
		verify: (p) => verify(p.url, p.token),
		onState: (s) => states.push(s),
		...more,
	});
	const writePair = (nonce = launcher.nonce(), url = 'http://127.0.0.1:50123'): void => {
		files.files.set('/run/user/1000/vask/pair-x.json', JSON.stringify({ url, token: TOKEN, nonce, pid: launcher.last.pid, version: '0.1.0' }));
	};
	/** Lets the pairing loop read the file and verify. */
	const poll = async (): Promise<void> => {
		await flush();
		timers.advance(250);
		await flush();
	};
	return { launcher, files, timers, states, sup, writePair, poll };
}

describe('Supervisor', () => {
	it('gives vask serve the flags the settings give it (the embedding instructions), after its own', async () => {
		const { launcher, sup } = setup(undefined, { serveArgs: ['--query-prefix=query: ', '--document-prefix=passage: '] });
		sup.start();
		await flush();
		const args = launcher.last.req.args;
		expect(args.slice(0, 7)).toEqual(['serve', '--vault', '/home/u/Notes', '--port', '0', '--query-prefix=query: ', '--document-prefix=passage: ']);
		expect(args).toContain('--stop-with-stdin');
	});

	it('starts vask serve on a free port with a fresh nonce, and pairs from the file it writes', async () => {
		const { launcher, files, sup, writePair, poll } = setup();
		files.files.set('/run/user/1000/vask/pair-x.json', 'left by an earlier run');
		sup.start();
		await flush();
		expect(files.files.has('/run/user/1000/vask/pair-x.json')).toBe(false); // the stale file went first
		const args = launcher.last.req.args;
		expect(launcher.last.req.command).toBe('/home/u/.local/bin/vask');
		expect(args.slice(0, 5)).toEqual(['serve', '--vault', '/home/u/Notes', '--port', '0']);
		expect(args).toContain('--stop-with-stdin');
		expect(args).toContain('--pair-file=/run/user/1000/vask/pair-x.json');
		expect(launcher.nonce()).toMatch(/^[A-Za-z0-9_-]{16,128}$/);
		expect(sup.state.phase).toBe('starting');
		writePair();
		await poll();
		expect(sup.state).toEqual({ phase: 'running', url: 'http://127.0.0.1:50123', pid: 1000, version: '0.1.0' });
		expect(sup.pairing?.token).toBe(TOKEN);
	});

	it('does not trust a file with another nonce, a non-loopback address, or a token the server refuses', async () => {
		let accept = false;
		const { sup, writePair, poll } = setup(() => (accept ? Promise.resolve() : Promise.reject(new Error('unauthorized'))));
		sup.start();
		await flush();
		writePair('another-runs-nonce-0000');
		await poll();
		expect(sup.state.phase).toBe('starting');
		writePair(undefined, 'http://192.168.1.5:50123');
		await poll();
		expect(sup.state.phase).toBe('starting');
		writePair();
		await poll();
		expect(sup.state.phase).toBe('starting'); // (verify said no)
		accept = true;
		await poll();
		expect(sup.state.phase).toBe('running');
		expect(sup.logLines().join('\n')).not.toContain(TOKEN);
	});

	it('restarts a crashed server with a doubling wait, capped, reset after a stable run', async () => {
		const { launcher, sup, timers, writePair, poll } = setup();
		sup.start();
		await flush();
		const waits: number[] = [];
		for (let crash = 0; crash < 8; crash++) {
			launcher.last.req.onExit(crash, null); // crashed before pairing (each time otherwise: it is retried)
			const state = sup.state;
			expect(state.phase).toBe('waiting');
			if (state.phase === 'waiting') waits.push(state.retryAt - timers.now());
			const before = launcher.runs.length;
			timers.advance(waits[waits.length - 1]! - 1);
			await flush();
			expect(launcher.runs.length).toBe(before); // not a moment early
			timers.advance(1);
			await flush();
			expect(launcher.runs.length).toBe(before + 1);
		}
		expect(waits).toEqual([1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000]);
		// a run that lasted a minute was stable: the next crash waits a second again
		writePair();
		await poll();
		expect(sup.state.phase).toBe('running');
		timers.advance(60_000);
		launcher.last.req.onExit(null, 'SIGSEGV');
		expect(sup.state).toMatchObject({ phase: 'waiting', reason: 'the server was ended by SIGSEGV' });
		if (sup.state.phase === 'waiting') expect(sup.state.retryAt - timers.now()).toBe(1000);
		expect(sup.pairing).toBeNull(); // (the client must not use the dead address meanwhile)
	});

	it('a server that fails the same way each time is not started again; the reason has its error line', async () => {
		const { launcher, sup, timers, states } = setup();
		sup.start();
		for (let i = 0; i < 4; i++) {
			await flush();
			launcher.last.req.onLine('error: Port 8765 on 127.0.0.1 is already in use.');
			launcher.last.req.onLine('hint: Another program (perhaps another `vask serve`) is using port 8765.');
			launcher.last.req.onExit(2, null);
			timers.advance(60_000);
		}
		await flush();
		timers.advance(600_000);
		await flush();
		expect(launcher.runs.length).toBe(4);
		const reason = 'the server exited with code 2: Port 8765 on 127.0.0.1 is already in use. (4 times in a row)';
		expect(sup.state).toEqual({ phase: 'failed', reason, cause: 'repeated' });
		expect(states.filter((s) => s.phase === 'waiting').length).toBe(3);
		expect(sup.logLines().at(-1)).toBe(`[vask plugin] ${reason}: not starting it again until "Restart server"`);
		sup.start(); // ("Restart server", after the cause was fixed)
		await flush();
		expect(launcher.runs.length).toBe(5);
	});

	it('a run that lasted counts as a success: failures the same way around it do not add up', async () => {
		const { launcher, sup, timers, writePair, poll } = setup();
		sup.start();
		for (let i = 0; i < 9; i++) {
			await flush();
			if (i % 3 === 2) {
				writePair();
				await poll();
				timers.advance(60_000); // stable
			}
			launcher.last.req.onExit(1, null);
			timers.advance(60_000);
		}
		await flush();
		expect(launcher.runs.length).toBe(10);
		expect(sup.state.phase).toBe('starting');
	});

	it('a pair file naming an address the plugin does not pair with is said, and is the reason the start failed', async () => {
		const { launcher, sup, timers, writePair } = setup();
		sup.start();
		await flush();
		writePair(undefined, 'http://0.0.0.0:50123'); // (a server that bound every interface)
		for (let i = 0; i < 250; i++) {
			timers.advance(250);
			await flush();
		}
		expect(launcher.last.killed).toBe(true);
		launcher.last.req.onExit(null, 'SIGKILL');
		const problem = 'listens at http://0.0.0.0:50123, where the plugin does not pair (it pairs over plain http on 127.0.0.1 or [::1] only)';
		expect(sup.state).toMatchObject({ phase: 'waiting', reason: `the server ${problem}` });
		expect(sup.logLines().filter((l) => l.includes(problem)).length).toBe(2); // said once when read, once as the reason
	});

	it('gives a start that never pairs a time limit, then kills it and backs off', async () => {
		const { launcher, sup, timers } = setup();
		sup.start();
		await flush();
		for (let i = 0; i < 250; i++) {
			timers.advance(250);
			await flush();
		}
		expect(launcher.last.killed).toBe(true);
		launcher.last.req.onExit(null, 'SIGKILL');
		expect(sup.state).toMatchObject({ phase: 'waiting', reason: 'the server did not pair within 60 s' });
	});

	it('stops on request: stdin closed and SIGTERM, SIGKILL after the grace time, no restart', async () => {
		const { launcher, sup, timers, writePair, poll } = setup();
		sup.start();
		await flush();
		writePair();
		await poll();
		const stopped = sup.stop();
		expect(sup.state.phase).toBe('stopping');
		expect(launcher.last.stopped).toBe(true);
		timers.advance(5000);
		expect(launcher.last.killed).toBe(true);
		launcher.last.req.onExit(null, 'SIGKILL');
		await stopped;
		expect(sup.state.phase).toBe('stopped');
		timers.advance(120_000);
		await flush();
		expect(launcher.runs.length).toBe(1);
	});

	it('a stop while a restart is planned cancels it', async () => {
		const { launcher, sup, timers } = setup();
		sup.start();
		await flush();
		launcher.last.req.onExit(1, null);
		await sup.stop();
		timers.advance(120_000);
		await flush();
		expect(launcher.runs.length).toBe(1);
		expect(sup.state.phase).toBe('stopped');
	});

	it('an executable that cannot be started fails once, with the reason, and is not retried', async () => {
		const { launcher, sup, timers } = setup();
		launcher.failWith = 'spawn /nope/vask ENOENT';
		sup.start();
		await flush();
		expect(sup.state).toEqual({ phase: 'failed', reason: 'could not start /home/u/.local/bin/vask: spawn /nope/vask ENOENT', cause: 'not-started' });
		timers.advance(600_000);
		await flush();
		expect(launcher.runs.length).toBe(0);
	});

	it('keeps the last lines of output, and a late line from an earlier process is not mixed in', async () => {
		const { launcher, sup, timers } = setup();
		sup.start();
		await flush();
		const first = launcher.last;
		for (let i = 0; i < 600; i++) first.req.onLine(`line ${i}`);
		first.req.onExit(1, null);
		timers.advance(1000);
		await flush();
		first.req.onLine('late line from the old process');
		const lines = sup.logLines();
		expect(lines.length).toBe(500);
		expect(lines).not.toContain('late line from the old process');
		expect(lines.some((l) => l === 'line 599')).toBe(true);
		expect(lines.some((l) => l === 'line 0')).toBe(false);
	});
});

describe('supervisor helpers', () => {
	it('backoffDelay doubles from the first wait up to the cap', () => {
		expect([1, 2, 3, 7, 8, 30].map((n) => backoffDelay(n, 1000, 60_000))).toEqual([1000, 2000, 4000, 60_000, 60_000, 60_000]);
	});

	it('parsePairFile takes only this start, a loopback http address and a token', () => {
		const ok = { url: 'http://127.0.0.1:5000', token: 't', nonce: 'n', pid: 3, version: '0.1.0' };
		expect(parsePairFile(JSON.stringify(ok), 'n')).toEqual({ url: ok.url, token: 't', pid: 3, version: '0.1.0' });
		expect(parsePairFile(JSON.stringify(ok), 'm')).toBeNull();
		expect(parsePairFile('{"url": "http://127.0.0.1:5000", "tok', 'n')).toBeNull(); // half a file
		for (const url of ['https://127.0.0.1:5000', 'http://evil.example:5000', 'http://127.0.0.1:5000/x', 'http://127.0.0.2:1'])
			expect(parsePairFile(JSON.stringify({ ...ok, url }), 'n')).toBeNull();
		expect(parsePairFile(JSON.stringify({ ...ok, token: '' }), 'n')).toBeNull();
		expect(parsePairFile(JSON.stringify({ ...ok, url: 'http://[::1]:5000' }), 'n')?.url).toBe('http://[::1]:5000');
	});

	it('pairFileProblem names an address of this start the plugin does not pair with, and nothing else', () => {
		const file = (url: string, nonce = 'n') => JSON.stringify({ url, token: 't', nonce, pid: 3, version: '0.1.0' });
		expect(pairFileProblem(file('https://127.0.0.1:5000'), 'n')).toMatch(/^listens at https:\/\/127\.0\.0\.1:5000, where/);
		expect(pairFileProblem(file('http://[::1]:5000'), 'n')).toBeNull();
		expect(pairFileProblem(file('http://0.0.0.0:5000', 'other'), 'n')).toBeNull(); // (another run's)
		expect(pairFileProblem('{"half', 'n')).toBeNull();
	});

	it('nonces are fresh and of the form vask serve accepts', () => {
		const a = randomNonce();
		expect(a).toMatch(/^[A-Za-z0-9_-]{32}$/);
		expect(randomNonce()).not.toBe(a);
	});

	it('LogBuffer keeps the newest lines', () => {
		const b = new LogBuffer(3);
		for (const l of ['a', 'b', 'c', 'd']) b.push(l);
		expect(b.lines()).toEqual(['b', 'c', 'd']);
	});
});

describe('where vask and the pair file are', () => {
	const linux = { platform: 'linux', env: { PATH: '/usr/bin:/bin' }, home: '/home/u' };

	it('looks on the PATH, then where uv tool and pipx put it, then Homebrew', () => {
		expect(vaskCandidates(linux)).toEqual([
			'/usr/bin/vask',
			'/bin/vask',
			'/home/u/.local/bin/vask',
			'/opt/homebrew/bin/vask',
			'/usr/local/bin/vask',
		]);
	});

	it('on Windows: vask.exe only, on the Path, in a virtual environment\'s Scripts, uv\'s and pipx\'s folder, and pip --user\'s', () => {
		const win = {
			platform: 'win32',
			env: { Path: 'C:\\Tools;"C:\\Program Files\\Py";', VIRTUAL_ENV: 'C:\\proj\\.venv', APPDATA: 'C:\\Users\\u\\AppData\\Roaming' },
			home: 'C:\\Users\\u',
		};
		const found = vaskCandidates(win);
		expect(found.slice(0, 4)).toEqual([
			'C:\\Tools\\vask.exe',
			'C:\\Program Files\\Py\\vask.exe', // (quotes around a Path entry are not part of it)
			'C:\\proj\\.venv\\Scripts\\vask.exe',
			'C:\\Users\\u\\.local\\bin\\vask.exe',
		]);
		expect(found).toContain('C:\\Users\\u\\AppData\\Roaming\\Python\\Python311\\Scripts\\vask.exe');
		expect(found).toContain('C:\\Users\\u\\AppData\\Local\\Programs\\Python\\Python313\\Scripts\\vask.exe');
		expect(found.every((p) => p.endsWith('\\vask.exe'))).toBe(true); // (a .cmd needs a shell: EINVAL from spawn)
		expect(found.some((p) => p.startsWith('/'))).toBe(false);
	});

	it('on macOS also pip --user\'s folders and Homebrew\'s; a venv\'s bin on Linux', () => {
		const mac = vaskCandidates({ platform: 'darwin', env: { PATH: '/usr/bin' }, home: '/Users/u' });
		expect(mac).toContain('/Users/u/Library/Python/3.11/bin/vask');
		expect(mac.slice(-2)).toEqual(['/opt/homebrew/bin/vask', '/usr/local/bin/vask']);
		expect(vaskCandidates({ ...linux, env: { PATH: '', VIRTUAL_ENV: '/p/.venv', UV_TOOL_BIN_DIR: '/t' } }).slice(0, 3)).toEqual([
			'/p/.venv/bin/vask',
			'/t/vask',
			'/home/u/.local/bin/vask',
		]);
	});

	it('a typed path: quotes of "Copy as path" and a leading ~ are read as meant; a .cmd on Windows is refused with why', () => {
		expect(typedPath(linux, '  ~/bin/vask ')).toBe('/home/u/bin/vask');
		const win = { platform: 'win32', env: {}, home: 'C:\\Users\\u' };
		expect(typedPath(win, '"C:\\Program Files\\vask\\vask.exe"')).toBe('C:\\Program Files\\vask\\vask.exe');
		expect(findVask(win, (p) => p === 'C:\\Program Files\\vask\\vask.exe', '"C:\\Program Files\\vask\\vask.exe"')).toBe('C:\\Program Files\\vask\\vask.exe');
		expect(executableProblem(win, 'C:\\x\\vask.CMD')).toMatch(/needs a shell/);
		expect(findVask(win, () => true, 'C:\\x\\vask.cmd')).toBeNull();
		expect(executableProblem(linux, '/x/vask.cmd')).toBeNull();
	});

	it('finds the first that exists; a path set in the settings is the only one tried', () => {
		const files = new Set(['/home/u/.local/bin/vask', '/usr/local/bin/vask']);
		expect(findVask(linux, (p) => files.has(p))).toBe('/home/u/.local/bin/vask');
		expect(findVask(linux, (p) => files.has(p), '/usr/local/bin/vask')).toBe('/usr/local/bin/vask');
		expect(findVask(linux, (p) => files.has(p), '/opt/vask')).toBeNull();
		expect(findVask(linux, () => false)).toBeNull();
	});

	it('puts the pair file in a per-user folder outside the vault, one per vault', () => {
		expect(pairFilePath({ ...linux, env: { XDG_RUNTIME_DIR: '/run/user/1000' } }, '/home/u/Notes')).toBe(`/run/user/1000/vask/pair-${pathHash('/home/u/Notes')}.json`);
		expect(pairFilePath(linux, '/home/u/Notes')).toMatch(/^\/home\/u\/\.cache\/vask\/pair-[0-9a-f]{16}\.json$/);
		expect(pairFilePath({ platform: 'darwin', env: {}, home: '/Users/u' }, '/x')).toMatch(/^\/Users\/u\/Library\/Caches\/vask\/pair-/);
		expect(pairFilePath({ platform: 'win32', env: { LOCALAPPDATA: 'C:\\Users\\u\\AppData\\Local' }, home: 'C:\\Users\\u' }, 'C:\\V')).toMatch(
			/^C:\\Users\\u\\AppData\\Local\\vask\\pair-[0-9a-f]{16}\.json$/,
		);
		expect(pathHash('/home/u/Notes')).not.toBe(pathHash('/home/u/Notes2'));
		expect(pathHash('')).toBe('cbf29ce484222325'); // FNV-1a's offset basis: the hash is the standard one
	});
});

describe('the environment vask serve is started with', () => {
	it('leaves out the variables of a server others reach over the network, any case on Windows; its output in UTF-8', () => {
		const env = { PATH: '/usr/bin', VASK_HOST: '0.0.0.0', VASK_ALLOW_REMOTE: 'true', VASK_TLS_CERT: 'c', VASK_TLS_KEY: 'k', VASK_PORT: '1', VASK_ALLOWED_HOSTS: 'a', VASK_EMBED_MODEL: 'm', vask_host: 'x' };
		expect(serverEnv({ platform: 'linux', env, home: '/h' })).toEqual({ PATH: '/usr/bin', VASK_EMBED_MODEL: 'm', vask_host: 'x', PYTHONIOENCODING: 'utf-8' });
		const win = { Vask_Host: '0.0.0.0', Path: 'C:\\x', PythonIOEncoding: 'cp1252' };
		expect(serverEnv({ platform: 'win32', env: win, home: 'C:\\h' })).toEqual({ Path: 'C:\\x', PYTHONIOENCODING: 'utf-8' }); // (as the plugin reads it)
	});
});

/** Node's child_process as far as nodeLauncher uses it, recording what is done to each process. */
function fakeChildProcess() {
	const spawned: { command: string; args: readonly string[]; killed: (string | undefined)[]; stdinEnded: boolean; exit: (code: number | null, signal: string | null) => void }[] = [];
	const cp = {
		spawn(command: string, args: readonly string[]) {
			const handlers: Record<string, ((...a: never[]) => void)[]> = {};
			const rec = {
				command,
				args,
				killed: [] as (string | undefined)[],
				stdinEnded: false,
				exit: (code: number | null, signal: string | null) => handlers.exit?.forEach((fn) => (fn as (c: number | null, s: string | null) => void)(code, signal)),
			};
			spawned.push(rec);
			return {
				pid: 4000 + spawned.length,
				stdin: { end: () => void (rec.stdinEnded = true), on: () => undefined },
				stdout: { setEncoding: () => undefined, on: () => undefined },
				stderr: { setEncoding: () => undefined, on: () => undefined },
				kill: (signal?: string) => {
					rec.killed.push(signal);
					return true;
				},
				on: (event: string, fn: (...a: never[]) => void) => void (handlers[event] ??= []).push(fn),
			};
		},
	};
	return { cp: cp as unknown as ChildProcessModule, spawned };
}

describe('stopping vask serve on each system (nodeLauncher)', () => {
	const request = { command: 'vask', args: ['serve'], onLine: () => undefined, onExit: () => undefined, onError: () => undefined };

	it('Linux and macOS: stop closes stdin and sends SIGTERM; kill sends SIGKILL', () => {
		const { cp, spawned } = fakeChildProcess();
		const child = nodeLauncher(cp, {}, 'darwin').spawn(request);
		child.stop();
		expect(spawned[0]).toMatchObject({ stdinEnded: true, killed: ['SIGTERM'] });
		child.kill();
		expect(spawned[0]!.killed).toEqual(['SIGTERM', 'SIGKILL']);
	});

	it('Windows: stop only closes stdin (vask stops on that; a kill there would end it at once); kill ends its tree with taskkill, then it', () => {
		const { cp, spawned } = fakeChildProcess();
		const child = nodeLauncher(cp, { SystemRoot: 'D:\\Windows' }, 'win32').spawn(request);
		child.stop();
		expect(spawned[0]).toMatchObject({ stdinEnded: true, killed: [] });
		child.kill();
		expect(spawned[1]).toMatchObject({ command: 'D:\\Windows\\System32\\taskkill.exe', args: ['/pid', String(child.pid), '/T', '/F'] });
		expect(spawned[0]!.killed).toEqual([]); // (the tree first: vask.exe's Python child is found by its parent)
		spawned[1]!.exit(0, null);
		expect(spawned[0]!.killed).toEqual([undefined]); // Node's kill(): TerminateProcess
		expect(taskkillPath({})).toBe('C:\\Windows\\System32\\taskkill.exe');
	});
});
