/**
 * Time in questions and answers: the `now` sent with a question, and the words
 * shown for the range the server searched and for each source's date. Pure.
 */
import type { Source, TimeRange } from './types';

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'] as const;

function pad(n: number, width = 2): string {
	return String(Math.trunc(n)).padStart(width, '0');
}

/**
 * `date` as the asker's wall-clock time with its UTC offset, e.g.
 * "2026-03-14T09:30:00+01:00": the server resolves "yesterday" against the
 * asker's own day, which a UTC "Z" time would move across midnight.
 * `offsetMinutes` is east of UTC (Madrid in winter +60, New York -300); by
 * default the offset of this machine's zone at that moment (DST included).
 */
export function localIsoDateTime(date: Date, offsetMinutes: number = -date.getTimezoneOffset()): string {
	const wall = new Date(date.getTime() + offsetMinutes * 60_000);
	const sign = offsetMinutes < 0 ? '-' : '+';
	const abs = Math.abs(offsetMinutes);
	return (
		`${pad(wall.getUTCFullYear(), 4)}-${pad(wall.getUTCMonth() + 1)}-${pad(wall.getUTCDate())}` +
		`T${pad(wall.getUTCHours())}:${pad(wall.getUTCMinutes())}:${pad(wall.getUTCSeconds())}` +
		`${sign}${pad(abs / 60)}:${pad(abs % 60)}`
	);
}

interface Day {
	year: number;
	/** 1–12 */
	month: number;
	day: number;
}

/** "2026-02-14" → its parts; anything else (null, a malformed string) → null. Read as written: no time zone. */
export function parseIsoDay(value: unknown): Day | null {
	if (typeof value !== 'string') return null;
	const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value.trim());
	if (!m) return null;
	const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
	const check = new Date(Date.UTC(year, month - 1, day));
	if (check.getUTCFullYear() !== year || check.getUTCMonth() !== month - 1 || check.getUTCDate() !== day) return null;
	return { year, month, day };
}

function sameDay(a: Day, b: Day): boolean {
	return a.year === b.year && a.month === b.month && a.day === b.day;
}

/** "14 Feb", plus " 2026" when asked. */
function dayText(d: Day, withYear: boolean): string {
	return `${d.day} ${MONTHS[d.month - 1]}${withYear ? ` ${d.year}` : ''}`;
}

/**
 * The chip's words for the range searched, as the server's `describe_range`
 * (vask_server/core/timeexpr.py) words it: "Notes from 1 Jan – 31 Mar 2026",
 * the first year only when the years differ; one day "Notes from 14 Feb 2026";
 * "Notes since …" / "Notes up to …" for an open end.
 */
export function describeRange(range: Pick<TimeRange, 'from' | 'to'>): string {
	const start = parseIsoDay(range.from);
	const end = parseIsoDay(range.to);
	if (start && end) {
		if (sameDay(start, end)) return `Notes from ${dayText(start, true)}`;
		return `Notes from ${dayText(start, start.year !== end.year)} – ${dayText(end, true)}`;
	}
	if (start) return `Notes since ${dayText(start, true)}`;
	if (end) return `Notes up to ${dayText(end, true)}`;
	return 'Notes from any time';
}

/** A `time_range` from the server, checked; null when absent or not the expected shape. */
export function toTimeRange(value: unknown): TimeRange | null {
	if (typeof value !== 'object' || value === null) return null;
	const v = value as Record<string, unknown>;
	const from = typeof v.from === 'string' ? v.from : null;
	const to = typeof v.to === 'string' ? v.to : null;
	if (from === null && to === null) return null;
	const notice = typeof v.notice === 'string' && v.notice ? v.notice : null;
	return { from, to, text: typeof v.text === 'string' ? v.text : '', notice };
}

/**
 * When a source was written, for the Sources list: "14 Feb 2026"; a span
 * "12–22 Feb 2026", "28 Feb – 3 Mar 2026", "29 Dec 2025 – 4 Jan 2026". Null
 * when the source has no date (an index built before dates were read).
 */
export function sourceDateText(source: Pick<Source, 'date' | 'date_end'>): string | null {
	const start = parseIsoDay(source.date);
	if (!start) return null;
	const end = parseIsoDay(source.date_end);
	if (!end || sameDay(start, end)) return dayText(start, true);
	if (start.year !== end.year) return `${dayText(start, true)} – ${dayText(end, true)}`;
	if (start.month !== end.month) return `${dayText(start, false)} – ${dayText(end, true)}`;
	return `${start.day}–${dayText(end, true)}`;
}

/** True when only the file's modification time dates the source: a weak signal (sync tools and checkouts rewrite it). */
export function isFileTimeDate(source: Pick<Source, 'date_source'>): boolean {
	return source.date_source === 'file-time';
}

/** Where a source's date comes from, in words (for its tooltip). */
export function dateSourceText(dateSource: string | null | undefined): string {
	if (!dateSource) return '';
	if (dateSource.startsWith('frontmatter:')) return `from the note's "${dateSource.slice('frontmatter:'.length)}" property`;
	switch (dateSource) {
		case 'daily-note':
			return 'from the daily note it is in';
		case 'weekly-note':
			return 'from the weekly note it is in';
		case 'monthly-note':
			return 'from the monthly note it is in';
		case 'heading':
			return 'from a dated heading';
		case 'table-row':
			return "from the table row's date";
		case 'file-name':
			return 'from the date in the file name';
		case 'file-time':
			return "only from the file's modification time, which sync tools and git checkouts rewrite";
		default:
			return `from ${dateSource}`;
	}
}
