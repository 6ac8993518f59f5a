/**
 * The plugin's supervisor (src/lib/supervisor.ts over nodeSystem.ts, as the desktop glue builds it)
 * against a real `vask serve` from the repository's environment: start, pairing, health with the
 * paired token, a model pulled and the doctor's checklist through the plugin's client, a killed server
 * started again, and stop as on unload. Ollama is the Python tests' fake (tests/fake_ollama.py) on
 * 127.0.0.1.
 */
import * as childProcess from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alive, until as untilEvery } from '../helpers/processes';
import { VaskClient } from '../../src/lib/client';
import { defaultTimers } from '../../src/lib/debounce';
import { serverEnv } from '../../src/lib/localServer';
import { DEFAULT_SETTINGS, serveArgs } from '../../src/lib/settings';
import { nodeLauncher, nodePairFiles, type ChildProcessModule } from '../../src/lib/nodeSystem';

// (Node's overloaded spawn and event methods are wider than the few members nodeSystem.ts declares)
const nodeChildProcess = childProcess as unknown as ChildProcessModule;
import { Supervisor, type SupervisorState } from '../../src/lib/supervisor';

const until = <T>(what: string, fn: () => T | null | undefined | false, ms = 60_000): Promise<T> =>
	untilEvery(what, fn, ms, 50);

const REPO = resolve(__dirname, '../../..');
const BIN = join(REPO, '.venv', process.platform === 'win32' ? 'Scripts' : 'bin');
const VASK = join(BIN, process.platform === 'win32' ? 'vask.exe' : 'vask');
const PYTHON = join(BIN, process.platform === 'win32' ? 'python.exe' : 'python');

let ollama: childProcess.ChildProcess | null = null;
let ollamaUrl = '';
let dir = '';

beforeAll(async () => {
	if (!fs.existsSync(VASK)) throw new Error(`${VASK} is missing: run \`uv sync\` in ${REPO} first`);
	dir = fs.mkdtempSync(join(tmpdir(), 'vask-sidecar-'));
	const vault = join(dir, 'vault');
	fs.mkdirSync(join(vault, '.obsidian'), { recursive: true });
	fs.writeFileSync(join(vault, 'Sourdough.md'), '# Sourdough\n\nFeed the starter the night before, bake at 250 C with the lid on.\n');
	fs.writeFileSync(join(vault, 'Running.md'), '# Running\n\nEasy runs at conversational pace, one long run on Sunday.\n');
	ollama = childProcess.spawn(PYTHON, ['-m', 'tests.fake_ollama', '--port', '0'], { cwd: REPO, stdio: ['ignore', 'pipe', 'inherit'] });
	let out = '';
	ollama.stdout!.setEncoding('utf8');
	ollama.stdout!.on('data', (c: string) => (out += c));
	ollamaUrl = await until('the fake Ollama', () => /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1], 30_000);
});

afterAll(() => {
	ollama?.kill('SIGKILL');
});

describe('the supervisor with a real vask serve', () => {
	it('starts and pairs, pulls a model, restarts a killed server, and stops on unload', async () => {
		const vault = join(dir, 'vault');
		const pairFile = join(dir, 'run', 'vask', 'pair.json');
		const env = {
			...process.env,
			OLLAMA_HOST: ollamaUrl,
			VASK_EMBED_MODEL: 'fake-embed',
			VASK_CHAT_MODEL: 'fake-chat-2', // not pulled yet: the pane would offer it
			VASK_INDEX_DIR: join(dir, 'index'),
		};
		const states: SupervisorState['phase'][] = [];
		const clientFor = (p: { url: string; token: string }) => new VaskClient({ baseUrl: p.url, token: p.token });
		const sup = new Supervisor({
			command: VASK,
			vaultPath: vault,
			// the settings' embedding instruction, as typed (a leading '-', a trailing space)
			serveArgs: serveArgs({ ...DEFAULT_SETTINGS, queryPrefix: '-> Find: ' }),
			pairFile,
			launcher: nodeLauncher(nodeChildProcess, env),
			files: nodePairFiles(fs),
			timers: defaultTimers,
			verify: async (p) => void (await clientFor(p).health()),
			onState: (s) => states.push(s.phase),
			initialBackoffMs: 200,
		});
		try {
			const started = Date.now();
			sup.start();
			const first = await until('the first pairing', () => sup.pairing);
			const pairedMs = Date.now() - started;
			expect(first.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
			expect(fs.statSync(pairFile).mode & 0o777).toBe(0o600);
			const client = clientFor(first);
			const health = await client.health();
			expect(health.vault).toBe(vault);
			expect(health.models?.missing).toEqual(['fake-chat-2']);
			await expect(new VaskClient({ baseUrl: first.url, token: 'wrong' }).health()).rejects.toMatchObject({ code: 'unauthorized' });

			const doctor = await client.doctor();
			expect(doctor.ok).toBe(false);
			expect(doctor.checks.find((c) => c.name === 'chat model')).toMatchObject({ ok: false, fix: expect.stringContaining('ollama pull fake-chat-2') });
			expect(doctor.checks.find((c) => c.name === 'instructions')?.detail).toBe("questions '-> Find: ' (VASK_QUERY_PREFIX), passages none (none known)");
			const progress: string[] = [];
			await client.pullModel('fake-chat-2', { onProgress: (p) => progress.push(p.status) });
			expect(progress[0]).toBe('pulling manifest');
			expect(progress[progress.length - 1]).toBe('success');
			expect((await client.health()).models?.missing).toEqual([]);

			const pid = first.pid!;
			process.kill(pid, 'SIGKILL');
			const killed = Date.now();
			const second = await until('the restart', () => sup.pairing && sup.pairing.pid !== pid && sup.pairing);
			// (measured, for the docs: the first pairing, and a killed server's way back, 200 ms of it the wait)
			console.info(`vask serve paired ${pairedMs} ms after the start; a killed server answered again after ${Date.now() - killed} ms`);
			expect(alive(pid)).toBe(false);
			expect((await clientFor(second).health()).vault).toBe(vault);
			const log = sup.logLines().join('\n');
			expect(states, log).toEqual(['starting', 'running', 'waiting', 'starting', 'running']); // (the log says why, if not)
			expect(log).toContain(`listening on ${second.url}`);
			expect(log).not.toContain(second.token);

			await sup.stop(); // what the plugin's unload does
			expect(sup.state.phase).toBe('stopped');
			expect(alive(second.pid!)).toBe(false);
			expect(fs.existsSync(pairFile)).toBe(false);
			expect(sup.logLines().join('\n')).toMatch(/exited with code 0/);
		} finally {
			sup.killNow();
		}
	});

	it('stays on loopback whatever Obsidian\'s environment says, and stops by its stdin alone, as on Windows', async () => {
		const vault = join(dir, 'vault');
		const pairFile = join(dir, 'run', 'vask', 'pair-2.json');
		const env = {
			...process.env,
			OLLAMA_HOST: ollamaUrl,
			VASK_EMBED_MODEL: 'fake-embed',
			VASK_CHAT_MODEL: 'fake-chat',
			VASK_INDEX_DIR: join(dir, 'index-2'),
			// meant for a server run by hand for other devices (docs/DEVICES.md)
			VASK_HOST: '0.0.0.0',
			VASK_ALLOW_REMOTE: 'true',
			VASK_TLS_CERT: join(dir, 'no-such-cert.pem'),
			VASK_TLS_KEY: join(dir, 'no-such-key.pem'),
		};
		// Both layers: the environment as the desktop glue passes it (serverEnv), and as it is (the server's own guard).
		for (const passed of [serverEnv({ platform: 'win32', env, home: dir }), env]) {
			const sup = new Supervisor({
				command: VASK,
				vaultPath: vault,
				pairFile,
				launcher: nodeLauncher(nodeChildProcess, passed, 'win32'), // (stop: stdin closed, no signal)
				files: nodePairFiles(fs),
				timers: defaultTimers,
				verify: async (p) => void (await new VaskClient({ baseUrl: p.url, token: p.token }).health()),
			});
			try {
				sup.start();
				const paired = await until('the pairing', () => sup.pairing ?? (sup.state.phase === 'waiting' && sup.state));
				const log = () => sup.logLines().join('\n');
				expect(paired, log()).toMatchObject({ url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/) });
				const pid = sup.pairing!.pid!;
				expect(log().includes('note: the address 0.0.0.0 (VASK_HOST, --host) set aside')).toBe(passed === env);
				await sup.stop();
				expect(alive(pid)).toBe(false);
				expect(fs.existsSync(pairFile)).toBe(false); // (it stopped cleanly: its own pair file removed)
				expect(log()).toMatch(/exited with code 0/);
				expect(log()).not.toMatch(/killed/);
			} finally {
				sup.killNow();
			}
		}
	});
});

