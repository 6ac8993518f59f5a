import { describe, expect, it } from 'vitest';
import { CHECK_MARKS, checkLevel, checklistSummary } from '../../src/lib/doctor';
import { pullElsewhere } from '../../src/lib/pull';
import type { DoctorCheck, DoctorReport } from '../../src/lib/types';

function check(level: DoctorCheck['level'], name = level ?? 'x'): DoctorCheck {
	return { name, level, ok: level !== 'fail', detail: '', fix: '' };
}

function report(...checks: DoctorCheck[]): DoctorReport {
	return { ok: checks.every((c) => c.ok), checks };
}

describe("the doctor's checklist", () => {
	it('gives each level its own mark, and an older server\'s checks the level they meant', () => {
		expect(['ok', 'info', 'warn', 'fail'].map((l) => CHECK_MARKS[checkLevel(check(l as DoctorCheck['level']))].cls)).toEqual([
			'is-ok',
			'is-note',
			'is-warn',
			'is-bad',
		]);
		expect(new Set(Object.values(CHECK_MARKS).map((m) => m.mark)).size).toBe(4);
		const old = (ok: boolean, required: boolean): DoctorCheck => ({ name: 'x', ok, required, detail: '', fix: '' });
		expect([old(true, true), old(false, false), old(false, true)].map(checkLevel)).toEqual(['ok', 'info', 'fail']);
	});

	it('sums the list up by its worst check: a missing plugin or a step to take is not a failure', () => {
		expect(checklistSummary(report(check('ok'), check('info')))).toBe('All is well.');
		expect(checklistSummary(report(check('ok'), check('info'), check('warn')))).toContain('Vask works');
		expect(checklistSummary(report(check('warn'), check('fail')))).toBe('Fix the lines marked ✗, then check again.');
	});

	it('tells a device that may not download a model where to do it', () => {
		expect(pullElsewhere('qwen2.5:14b')).toContain('`ollama pull qwen2.5:14b`');
	});
});
