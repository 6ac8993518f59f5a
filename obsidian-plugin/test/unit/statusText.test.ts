import { describe, expect, it } from 'vitest';
import { ErrorCode, VaskError } from '../../src/lib/errors';
import { describeEta, statusBarText } from '../../src/lib/statusText';
import type { StatusEvent } from '../../src/lib/types';

const base: StatusEvent = { state: 'idle', notes: 57, chunks: 300, pending: 0, done: 57, total: 57, failed: 0, ollama: { reachable: true } };

describe('statusBarText', () => {
	it('shows indexing progress', () => {
		const v = statusBarText({ state: 'live', status: { ...base, state: 'indexing', done: 120, total: 400 } });
		expect(v.text).toBe('vask: indexing 120/400');
		expect(v.level).toBe('busy');
	});

	it('says what a sync does once its notes are read, where no count moves', () => {
		const v = statusBarText({ state: 'live', status: { ...base, state: 'indexing', done: 400, total: 400, stage: 'keyword index' } });
		expect(v.text).toBe('vask: indexing 400/400 (keyword index)');
		expect(v.title).toContain('now: keyword index');
		const after = statusBarText({ state: 'live', status: { ...base, state: 'indexing', done: 400, total: 400, stage: null } });
		expect(after.text).toBe('vask: indexing 400/400');
	});

	it('counts the seconds of a step, which is what moves while LanceDB builds an index', () => {
		const v = statusBarText({
			state: 'live',
			status: { ...base, state: 'indexing', done: 400, total: 400, stage: 'vector index', stage_seconds: 12.7 },
		});
		expect(v.text).toBe('vask: indexing 400/400 (vector index, 12 s)');
		expect(v.title).toContain('now: vector index for 12 s');
		const older = statusBarText({ state: 'live', status: { ...base, state: 'indexing', done: 400, total: 400, stage: 'vector index', stage_seconds: null } });
		expect(older.text).toBe('vask: indexing 400/400 (vector index)');
	});

	it('shows a long sync as a percentage with the time left, and says when it is paused', () => {
		const progress = { notes_done: 700, notes_total: 2000, chunks_done: 8000, chunks_total: 23000, percent: 35.4, rate: 41.2, eta_seconds: 2410, paused: false };
		const v = statusBarText({ state: 'live', status: { ...base, state: 'indexing', done: 700, total: 2000, progress } });
		expect(v.text).toBe('vask: indexing 35% · ~40 min left');
		expect(v.title).toContain('700 of 2000 notes');
		expect(v.title).toContain('found by keyword');
		const early = statusBarText({ state: 'live', status: { ...base, state: 'indexing', done: 8, total: 2000, progress: { ...progress, percent: 0.3, eta_seconds: null } } });
		expect(early.text).toBe('vask: indexing 0%');
		const paused = statusBarText({ state: 'live', status: { ...base, state: 'paused', paused: true, progress: { ...progress, paused: true } } });
		expect(paused.text).toBe('vask: indexing paused 35%');
		expect(paused.title).toContain('Resume indexing');
		// paused between syncs: the count of what is indexed, as usual
		expect(statusBarText({ state: 'live', status: { ...base, paused: true } }).text).toBe('vask: indexed ✓ 57 notes');
	});

	it('says time left in minutes, then hours', () => {
		expect(describeEta(20)).toBe('less than a minute left');
		expect(describeEta(40 * 60)).toBe('~40 min left');
		expect(describeEta(180 * 60)).toBe('~3 h left');
		expect(describeEta(190 * 60)).toBe('~3 h 10 min left');
		expect(describeEta(null)).toBe('');
	});

	it('shows the indexed note count when idle', () => {
		expect(statusBarText({ state: 'live', status: base })).toMatchObject({ text: 'vask: indexed ✓ 57 notes', level: 'ok' });
		expect(statusBarText({ state: 'live', status: { ...base, notes: 1 } }).text).toBe('vask: indexed ✓ 1 note');
	});

	it('mentions failed files as a warning', () => {
		const v = statusBarText({ state: 'live', status: { ...base, failed: 2 } });
		expect(v.text).toBe('vask: indexed ✓ 57 notes (2 failed)');
		expect(v.level).toBe('warn');
	});

	it('names skipped files as skipped, not failed, and does not warn for them alone', () => {
		const skipped = statusBarText({ state: 'live', status: { ...base, skipped: 1 } });
		expect(skipped.text).toBe('vask: indexed ✓ 57 notes (1 skipped)');
		expect(skipped.level).toBe('ok');
		const both = statusBarText({ state: 'live', status: { ...base, failed: 2, skipped: 1 } });
		expect(both.text).toBe('vask: indexed ✓ 57 notes (2 failed, 1 skipped)');
		expect(both.title).toContain('2 failed, 1 skipped');
		expect(both.level).toBe('warn');
	});

	it('warns when Ollama is unreachable, with the server message in the tooltip', () => {
		const v = statusBarText({ state: 'live', status: { ...base, ollama: { reachable: false }, message: 'Ollama down at :11434' } });
		expect(v.text).toBe('vask: Ollama unreachable ⚠');
		expect(v.title).toContain('Ollama down at :11434');
		expect(v.level).toBe('warn');
	});

	it('warns when the server is not running or the token is wrong', () => {
		expect(statusBarText({ state: 'error', error: new VaskError(ErrorCode.unreachable, '') }).text).toBe('vask: server not running ⚠');
		expect(statusBarText({ state: 'error', error: new VaskError(ErrorCode.unauthorized, '') }).text).toBe('vask: token wrong ⚠');
		expect(statusBarText({ state: 'error', error: new VaskError(ErrorCode.timeout, 'No heartbeat.') }).level).toBe('warn');
	});

	it('shows connecting states', () => {
		expect(statusBarText({ state: 'connecting' }).text).toBe('vask: connecting…');
		expect(statusBarText({ state: 'live', status: null }).text).toBe('vask: connected');
	});
});
