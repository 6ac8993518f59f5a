import { afterEach, describe, expect, it } from 'vitest';
import {
	dateSourceText,
	describeRange,
	isFileTimeDate,
	localIsoDateTime,
	parseIsoDay,
	sourceDateText,
	toTimeRange,
} from '../../src/lib/time';

// 2026-03-14 08:30:00 UTC
const instant = new Date(Date.UTC(2026, 2, 14, 8, 30, 0));

describe('localIsoDateTime (the `now` sent with a question)', () => {
	it('is the wall-clock time at the given offset, with the offset, never "Z"', () => {
		expect(localIsoDateTime(instant, 60)).toBe('2026-03-14T09:30:00+01:00');
		expect(localIsoDateTime(instant, 0)).toBe('2026-03-14T08:30:00+00:00');
	});

	it('negative offsets: the asker may still be on the previous day', () => {
		expect(localIsoDateTime(instant, -5 * 60)).toBe('2026-03-14T03:30:00-05:00');
		expect(localIsoDateTime(instant, -10 * 60)).toBe('2026-03-13T22:30:00-10:00');
	});

	it('half- and quarter-hour zones, either side of UTC', () => {
		expect(localIsoDateTime(instant, 5 * 60 + 30)).toBe('2026-03-14T14:00:00+05:30'); // India
		expect(localIsoDateTime(instant, -(3 * 60 + 30))).toBe('2026-03-14T05:00:00-03:30'); // Newfoundland
		expect(localIsoDateTime(instant, 5 * 60 + 45)).toBe('2026-03-14T14:15:00+05:45'); // Nepal
		expect(localIsoDateTime(new Date(Date.UTC(2026, 11, 31, 23, 0, 0)), 9 * 60 + 30)).toBe('2027-01-01T08:30:00+09:30');
	});

	describe("by default, this machine's zone at that moment", () => {
		const saved = process.env.TZ;
		afterEach(() => {
			if (saved === undefined) delete process.env.TZ;
			else process.env.TZ = saved;
		});

		it.each([
			['Europe/Madrid', instant, '2026-03-14T09:30:00+01:00'],
			['Europe/Madrid', new Date(Date.UTC(2026, 6, 1, 8, 30, 0)), '2026-07-01T10:30:00+02:00'], // summer time
			['America/New_York', new Date(Date.UTC(2026, 2, 14, 3, 15, 0)), '2026-03-13T23:15:00-04:00'],
			['America/St_Johns', instant, '2026-03-14T06:00:00-02:30'], // -03:30 in winter; summer time since 8 March
			['Asia/Kolkata', instant, '2026-03-14T14:00:00+05:30'],
			['UTC', instant, '2026-03-14T08:30:00+00:00'],
		])('%s: %s → %s', (zone, date, expected) => {
			process.env.TZ = zone; // Node reads TZ again when it changes
			expect(localIsoDateTime(date)).toBe(expected);
		});
	});
});

describe('describeRange (the chip, worded as the server\'s describe_range)', () => {
	it.each([
		[{ from: '2026-01-01', to: '2026-03-31' }, 'Notes from 1 Jan – 31 Mar 2026'],
		[{ from: '2026-02-01', to: '2026-02-28' }, 'Notes from 1 Feb – 28 Feb 2026'],
		[{ from: '2025-12-01', to: '2026-02-28' }, 'Notes from 1 Dec 2025 – 28 Feb 2026'],
		[{ from: '2026-03-13', to: '2026-03-13' }, 'Notes from 13 Mar 2026'],
		[{ from: null, to: '2026-03-31' }, 'Notes up to 31 Mar 2026'],
		[{ from: '2026-02-12', to: null }, 'Notes since 12 Feb 2026'],
		[{ from: null, to: null }, 'Notes from any time'],
	])('%o → %s', (range, expected) => {
		expect(describeRange(range)).toBe(expected);
	});

	it('a malformed date counts as an open end, not as a wrong day', () => {
		expect(describeRange({ from: '2026-02-30', to: '2026-03-31' })).toBe('Notes up to 31 Mar 2026');
		expect(describeRange({ from: '2026-02-01T00:00:00', to: null })).toBe('Notes from any time');
	});
});

describe('toTimeRange', () => {
	it('keeps a range with at least one end; null otherwise', () => {
		expect(toTimeRange({ from: '2026-02-01', to: '2026-02-28', text: 'in February', notice: null })).toEqual({
			from: '2026-02-01',
			to: '2026-02-28',
			text: 'in February',
			notice: null,
		});
		expect(toTimeRange({ from: null, to: '2026-03-31', text: '' })).toEqual({ from: null, to: '2026-03-31', text: '', notice: null });
		expect(toTimeRange({ from: '2026-02-01' })).toEqual({ from: '2026-02-01', to: null, text: '', notice: null });
		expect(toTimeRange(null)).toBeNull();
		expect(toTimeRange(undefined)).toBeNull();
		expect(toTimeRange({ from: null, to: null, text: 'x' })).toBeNull();
		expect(toTimeRange('last month')).toBeNull();
	});

	it('keeps the notice of a day the calendar lacks, and nothing that is not a string', () => {
		const notice = 'There is no 31 April: read as 30 April 2026.';
		expect(toTimeRange({ from: '2026-04-30', to: '2026-04-30', text: 'on 31 April', notice })?.notice).toBe(notice);
		expect(toTimeRange({ from: '2026-04-30', to: '2026-04-30', text: 'x', notice: 7 })?.notice).toBeNull();
	});
});

describe('sourceDateText (a source\'s date in the Sources list)', () => {
	it.each([
		[{ date: '2026-02-14', date_end: '2026-02-14' }, '14 Feb 2026'],
		[{ date: '2026-02-14', date_end: null }, '14 Feb 2026'],
		[{ date: '2026-02-14' }, '14 Feb 2026'],
		[{ date: '2026-02-12', date_end: '2026-02-22' }, '12–22 Feb 2026'],
		[{ date: '2026-02-23', date_end: '2026-03-01' }, '23 Feb – 1 Mar 2026'],
		[{ date: '2025-12-29', date_end: '2026-01-04' }, '29 Dec 2025 – 4 Jan 2026'],
	])('%o → %s', (source, expected) => {
		expect(sourceDateText(source)).toBe(expected);
	});

	it('no date (an index built before dates were read): nothing to show', () => {
		expect(sourceDateText({ date: null, date_end: null })).toBeNull();
		expect(sourceDateText({})).toBeNull();
		expect(sourceDateText({ date: 'yesterday' })).toBeNull();
	});
});

describe('where a date comes from', () => {
	it('only "file-time" is the weak file-date signal', () => {
		expect(isFileTimeDate({ date_source: 'file-time' })).toBe(true);
		for (const s of ['daily-note', 'weekly-note', 'frontmatter:date', 'heading', 'file-name', null, undefined]) {
			expect(isFileTimeDate({ date_source: s })).toBe(false);
		}
	});

	it('says it in words', () => {
		expect(dateSourceText('daily-note')).toBe('from the daily note it is in');
		expect(dateSourceText('frontmatter:created')).toBe('from the note\'s "created" property');
		expect(dateSourceText('file-time')).toContain("file's modification time");
		expect(dateSourceText(null)).toBe('');
		expect(dateSourceText('something-new')).toBe('from something-new');
	});
});

describe('parseIsoDay', () => {
	it('reads the day as written, without a time zone', () => {
		expect(parseIsoDay('2026-02-28')).toEqual({ year: 2026, month: 2, day: 28 });
		expect(parseIsoDay('2024-02-29')).toEqual({ year: 2024, month: 2, day: 29 });
		expect(parseIsoDay('2026-02-29')).toBeNull();
		expect(parseIsoDay('2026-13-01')).toBeNull();
		expect(parseIsoDay(20260228)).toBeNull();
	});
});
