/**
 * The supervisor over Node's real child_process and fs (nodeSystem.ts): a real process is spawned,
 * paired through its file, killed and restarted, and stopped; fake-vask.mjs stands in for `vask serve`
 * (test/sidecar/ runs the real one).
 */
import * as childProcess from 'node:child_process';
import * as fs from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { alive, until as untilEvery } from '../helpers/processes';
import { defaultTimers } from '../../src/lib/debounce';
import { nodeLauncher, nodePairFiles, type ChildProcessModule } from '../../src/lib/nodeSystem';

// (Node's overloaded spawn and event methods are wider than the few members nodeSystem.ts declares)
const nodeChildProcess = childProcess as unknown as ChildProcessModule;
import { Supervisor, type Pairing, type SupervisorState } from '../../src/lib/supervisor';

const until = <T>(what: string, fn: () => T | null | undefined | false, ms = 15_000): Promise<T> =>
	untilEvery(what, fn, ms, 25);

const SCRIPT = join(__dirname, 'fake-vask.mjs');

async function health(p: Pairing, token = p.token): Promise<number> {
	const res = await fetch(`${p.url}/v1/health`, { headers: { Authorization: `Bearer ${token}` } });
	return res.status;
}

let sup: Supervisor | null = null;
afterEach(async () => {
	await sup?.stop();
	sup = null;
});

describe('Supervisor with real processes', () => {
	it('spawns, pairs, restarts a killed server on a new port, and stops it', async () => {
		const dir = mkdtempSync(join(tmpdir(), 'vask-sup-'));
		const pairFile = join(dir, 'run', 'pair.json');
		const states: SupervisorState[] = [];
		sup = new Supervisor({
			command: process.execPath,
			commandArgs: [SCRIPT],
			vaultPath: dir,
			pairFile,
			launcher: nodeLauncher(nodeChildProcess, { ...process.env }),
			files: nodePairFiles(fs),
			timers: defaultTimers,
			verify: async (p) => {
				if ((await health(p)) !== 200) throw new Error('token refused');
			},
			onState: (s) => states.push(s),
			initialBackoffMs: 100,
			pollMs: 50,
			stopGraceMs: 2000,
		});
		sup.start();
		const first = await until('the first pairing', () => sup!.pairing);
		expect(await health(first)).toBe(200);
		expect(await health(first, 'wrong')).toBe(401);
		expect(first.pid).not.toBeNull();
		expect(fs.statSync(pairFile).mode & 0o777).toBe(0o600);

		process.kill(first.pid!, 'SIGKILL'); // a crash no signal handler sees
		await until('the restart', () => sup!.pairing && sup!.pairing.pid !== first.pid && sup!.pairing);
		const second = sup.pairing!;
		expect(second.url).not.toBe(first.url);
		expect(await health(second)).toBe(200);
		expect(alive(first.pid!)).toBe(false);
		expect(states.map((s) => s.phase)).toEqual(['starting', 'running', 'waiting', 'starting', 'running']);
		expect(sup.logLines()).toEqual(expect.arrayContaining([`vask fake: listening on ${second.url}`, 'a line on stderr']));
		expect(sup.logLines().some((l) => l.includes('was ended by SIGKILL; starting it again'))).toBe(true);
		expect(sup.logLines().join('\n')).not.toContain(second.token);

		await sup.stop();
		expect(sup.state.phase).toBe('stopped');
		await until('the process to end', () => !alive(second.pid!));
		expect(fs.existsSync(pairFile)).toBe(false);
	});

	it('says why when the executable does not exist, and does not retry', async () => {
		const dir = mkdtempSync(join(tmpdir(), 'vask-sup-'));
		sup = new Supervisor({
			command: join(dir, 'no-such-vask'),
			vaultPath: dir,
			pairFile: join(dir, 'pair.json'),
			launcher: nodeLauncher(nodeChildProcess),
			files: nodePairFiles(fs),
			timers: defaultTimers,
			verify: () => Promise.resolve(),
		});
		sup.start();
		const failed = await until('the failure', () => (sup!.state.phase === 'failed' ? sup!.state : null));
		expect(failed).toMatchObject({ reason: expect.stringContaining('ENOENT') });
	});

	it('a server that keeps crashing is started again, each time after a longer wait', async () => {
		const dir = mkdtempSync(join(tmpdir(), 'vask-sup-'));
		const starts: number[] = [];
		const waits: number[] = [];
		// The supervisor's own clock, its last reading kept: a planned wait is read exactly, not timed
		let lastNow = 0;
		const timers = { ...defaultTimers, now: () => (lastNow = defaultTimers.now()) };
		sup = new Supervisor({
			command: process.execPath,
			commandArgs: [SCRIPT],
			vaultPath: dir,
			pairFile: join(dir, 'pair.json'),
			launcher: nodeLauncher(nodeChildProcess, { ...process.env, FAKE_VASK_CRASH_MS: '150' }),
			files: nodePairFiles(fs),
			timers,
			verify: () => Promise.resolve(),
			onState: (s) => {
				if (s.phase === 'starting') starts.push(Date.now());
				if (s.phase === 'waiting') waits.push(s.retryAt - lastNow);
			},
			initialBackoffMs: 100,
			pollMs: 20,
		});
		sup.start();
		await until('four starts', () => starts.length >= 4, 20_000);
		// the waits planned after each crash double; and each start came no sooner than its wait
		expect(waits.slice(0, 3)).toEqual([100, 200, 400]);
		const gaps = starts.slice(1).map((t, i) => t - starts[i]!);
		gaps.slice(0, 3).forEach((gap, i) => expect(gap).toBeGreaterThanOrEqual(150 + [100, 200, 400][i]!));
	});
});
