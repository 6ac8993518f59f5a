import { describe, expect, it } from 'vitest';
import {
	codeNames,
	fixQuestion,
	folderMention,
	folderOf,
	nameKind,
	paneScope,
	parseScopeMisses,
	scopeChips,
	scopeRequestFilters,
	toScope,
} from '../../src/lib/scope';
import { notesCount, toExclusions } from '../../src/lib/exclusions';

describe('toScope', () => {
	it('keeps the strings of a response scope; nothing applied is null', () => {
		expect(toScope({ notes: ['a.md', 3], tags: ['x'], folders: [] })).toEqual({ notes: ['a.md'], tags: ['x'], folders: [] });
		expect(toScope({ notes: [], tags: [], folders: [] })).toBeNull();
		expect(toScope(null)).toBeNull();
		expect(toScope(undefined)).toBeNull();
		expect(toScope(['a.md'])).toBeNull();
	});
});

describe('the pane toggle', () => {
	it('All notes: no filter', () => {
		expect(paneScope('all', '01 Projects/Plan.md')).toEqual({ ok: true, scope: null });
		expect(paneScope('all', null)).toEqual({ ok: true, scope: null });
	});

	it('This note / This folder: the open note, its folder, as the API filters', () => {
		const note = paneScope('note', '01 Projects/Sub/Plan.md');
		expect(note).toEqual({ ok: true, scope: { kind: 'note', path: '01 Projects/Sub/Plan.md' } });
		expect(scopeRequestFilters(note.ok ? note.scope : null)).toEqual({ paths: ['01 Projects/Sub/Plan.md'] });
		const folder = paneScope('folder', '01 Projects/Sub/Plan.md');
		expect(folder).toEqual({ ok: true, scope: { kind: 'folder', path: '01 Projects/Sub' } });
		expect(scopeRequestFilters(folder.ok ? folder.scope : null)).toEqual({ folders: ['01 Projects/Sub'] });
		expect(scopeRequestFilters(null)).toBeUndefined();
	});

	it('a note at the root: its folder is the whole vault, no filter', () => {
		expect(folderOf('Inbox.md')).toBe('');
		expect(paneScope('folder', 'Inbox.md')).toEqual({ ok: true, scope: null });
	});

	it('no note open (or a PDF): refuses, saying why, rather than searching everything', () => {
		for (const active of [null, 'attachments/scan.pdf']) {
			const r = paneScope('note', active);
			expect(r.ok).toBe(false);
			if (!r.ok) expect(r.reason).toContain('No note is open');
		}
		const f = paneScope('folder', null);
		expect(!f.ok && f.reason).toContain('no folder to ask about');
	});
});

describe('scopeChips', () => {
	it("the pane's note first, then the question's notes, tags, folders; duplicates once", () => {
		const chips = scopeChips(
			{ notes: ['01 Projects/Project X.md', '02 Areas/Plan.md'], tags: ['running'], folders: ['Daily'] },
			{ kind: 'note', path: '02 Areas/Plan.md' },
		);
		expect(chips.map((c) => [c.kind, c.label, c.fromPane])).toEqual([
			['note', 'Plan', true],
			['note', 'Project X', false],
			['tag', '#running', false],
			['folder', 'Daily', false],
		]);
	});

	it('nested tags the server added go inside their parent chip', () => {
		const chips = scopeChips({ notes: [], tags: ['health', 'health/knee', 'health/knee/left', 'cooking/bread'], folders: [] }, null);
		expect(chips.map((c) => [c.label, c.includes])).toEqual([
			['#health', ['health/knee', 'health/knee/left']],
			['#cooking/bread', []],
		]);
	});

	it('nothing applied, no toggle: no chips', () => {
		expect(scopeChips(null, null)).toEqual([]);
		expect(scopeChips(null, { kind: 'folder', path: '01 Projects' }).map((c) => c.label)).toEqual(['01 Projects']);
	});
});

describe('scope_not_found', () => {
	it('reads the mention and the closest names from the message and hint', () => {
		expect(parseScopeMisses('No note [[Projct X]] in the index.', 'Closest: [[Project X]], [[Project Y]].')).toEqual([
			{ kind: 'note', written: '[[Projct X]]', closest: ['[[Project X]]', '[[Project Y]]'] },
		]);
		expect(parseScopeMisses('No tag #runing in the index.', 'Closest: #running, #run/long.')).toEqual([
			{ kind: 'tag', written: '#runing', closest: ['#running', '#run/long'] },
		]);
		expect(
			parseScopeMisses('No folder path:"01 Projcts" in the index.', 'Closest: path:"01 Projects", path:Daily.'),
		).toEqual([{ kind: 'folder', written: 'path:"01 Projcts"', closest: ['path:"01 Projects"', 'path:Daily'] }]);
	});

	it('a name with a comma stays whole; no close name: no suggestions', () => {
		expect(parseScopeMisses('No note [[Smith, J]] in the index.', 'Closest: [[Smith, John]], [[Smyth]].')[0]!.closest).toEqual([
			'[[Smith, John]]',
			'[[Smyth]]',
		]);
		expect(parseScopeMisses('No note [[Zz]] in the index.', 'Check the spelling, or ask without it to search every note.')).toEqual([
			{ kind: 'note', written: '[[Zz]]', closest: [] },
		]);
		expect(parseScopeMisses('Something else.', 'Closest: [[A]].')).toEqual([]);
	});

	it('several misses: one part of the hint each, as the server joins them', () => {
		const both = 'No note [[Projct X]] in the index. No tag #runing in the index.';
		expect(parseScopeMisses(both, 'Closest: [[Project X]]. Closest: #running, #run.').map((m) => m.closest)).toEqual([
			['[[Project X]]'],
			['#running', '#run'],
		]);
		// One without close names: the server's advice takes its place in the hint.
		const advice = 'Check the spelling, or ask without it to search every note.';
		expect(parseScopeMisses(both, `${advice} Closest: #running.`).map((m) => m.closest)).toEqual([[], ['#running']]);
		// A hint that cannot be split per miss: all names with the first.
		expect(parseScopeMisses(both, 'Closest: [[Project X]].').map((m) => m.closest)).toEqual([['[[Project X]]'], []]);
	});

	it("the error's own closest list: agrees with the hint, or stands in for a hint of another shape", () => {
		const msg = 'No note [[Projct X]] in the index.';
		expect(parseScopeMisses(msg, 'Closest: [[Project X]], [[Project Y]].', ['[[Project X]]', '[[Project Y]]'])[0]!.closest).toEqual([
			'[[Project X]]',
			'[[Project Y]]',
		]);
		expect(parseScopeMisses(msg, 'Did you mean one of these?', ['[[Project X]]'])[0]!.closest).toEqual(['[[Project X]]']);
	});

	it('fixes the question by putting the closest name where the wrong one was', () => {
		expect(fixQuestion('in [[Projct X]], what did we decide?', '[[Projct X]]', '[[Project X]]')).toBe(
			'in [[Project X]], what did we decide?',
		);
		expect(fixQuestion('about #Runing?', '#runing', '#running')).toBe('about #running?');
		expect(fixQuestion('what now?', '#gone', '#here')).toBe('what now? #here');
	});

	it('names as Markdown code, so a wrong name is not rendered as a link to nothing', () => {
		expect(codeNames('No note [[Projct X]] in the index.')).toBe('No note `[[Projct X]]` in the index.');
		expect(codeNames('Closest: #running, path:"01 Projects".')).toBe('Closest: `#running`, `path:"01 Projects"`.');
	});

	it('what a name is, for its button', () => {
		expect(nameKind('[[01 Projects/Project X]]')).toEqual({ kind: 'note', value: '01 Projects/Project X' });
		expect(nameKind('#health/knee')).toEqual({ kind: 'tag', value: 'health/knee' });
		expect(nameKind('path:"01 Projects"')).toEqual({ kind: 'folder', value: '01 Projects' });
		expect(folderMention('01 Projects')).toBe('path:"01 Projects"');
		expect(folderMention('Daily')).toBe('path:Daily');
	});
});

describe('exclusions in the status details', () => {
	it('counts by rule, most first; no paths in, none out', () => {
		const ex = toExclusions({ 'VASK_EXCLUDE Private/**': 3, 'Obsidian excluded files Journal/': 5, 'frontmatter vask: exclude': 1 });
		expect(ex).toEqual({
			total: 9,
			rules: [
				{ rule: 'Obsidian excluded files Journal/', count: 5 },
				{ rule: 'VASK_EXCLUDE Private/**', count: 3 },
				{ rule: 'frontmatter vask: exclude', count: 1 },
			],
		});
	});

	it('an older server without the field, or junk: none', () => {
		expect(toExclusions(undefined)).toEqual({ total: 0, rules: [] });
		expect(toExclusions({ a: 'x', b: -1, c: 0 })).toEqual({ total: 0, rules: [] });
		expect(toExclusions({ 'VASK_EXCLUDE x': 1 })).toEqual({ total: 1, rules: [{ rule: 'VASK_EXCLUDE x', count: 1 }] });
		expect(notesCount(1)).toBe('1 note');
	});
});
