/**
 * The server's `vask doctor` checklist (GET /v1/doctor), read for display: each check's level and mark,
 * and the line that sums the list up. A check is `ok`, `info` (worth knowing, nothing wrong), `warn`
 * (vask works; a step to take or something to improve) or `fail` (what stops vask from working).
 */
import type { DoctorCheck, DoctorLevel, DoctorReport } from './types';

const LEVELS: readonly DoctorLevel[] = ['ok', 'info', 'warn', 'fail'];

/** The check's level; a server from before levels sent `ok` and `required` only. */
export function checkLevel(check: DoctorCheck): DoctorLevel {
	if (check.level && LEVELS.includes(check.level)) return check.level;
	if (check.ok) return 'ok';
	return check.required === false ? 'info' : 'fail';
}

export const CHECK_MARKS: Record<DoctorLevel, { mark: string; cls: string }> = {
	ok: { mark: '✓', cls: 'is-ok' },
	info: { mark: 'i', cls: 'is-note' },
	warn: { mark: '!', cls: 'is-warn' },
	fail: { mark: '✗', cls: 'is-bad' },
};

/** What the list comes to, by its worst check. */
export function checklistSummary(report: DoctorReport): string {
	const levels = report.checks.map(checkLevel);
	if (levels.includes('fail')) return 'Fix the lines marked ✗, then check again.';
	if (levels.includes('warn')) return 'Vask works; the lines marked ! say what would make it work better.';
	return 'All is well.';
}
