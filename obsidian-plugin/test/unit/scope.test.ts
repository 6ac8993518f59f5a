import { describe, expect, it } from 'vitest';
import {
	codeNames,
	fixQuestion,
	folderMention,
	nameKind,
	paneScope,
	scopeChips,
	scopeRequestFilters,
	toScope,
	toScopeMisses,
} from '../../src/lib/scope';
import { notesCount, toExclusions } from '../../src/lib/exclusions';
import { folderOf } from '../../src/lib/paths';

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
	it("takes the error's misses as sent: each mention with its own closest names", () => {
		const sent = [
			{ kind: 'note', written: '[[Projct X]]', closest: ['[[Project X]]', '[[Smith, John]]'] },
			{ kind: 'tag', written: '#runing', closest: ['#running', '#run/long'] },
			{ kind: 'folder', written: 'path:"01 Projcts"', closest: [] },
		];
		expect(toScopeMisses(sent)).toEqual(sent);
		expect(toScopeMisses(sent)).not.toBe(sent); // a copy: the error does not share the parsed body
	});

	it('drops misses of another shape; absent misses (an older server) are none', () => {
		expect(
			toScopeMisses([
				{ kind: 'heading', written: '[[A#B]]', closest: ['[[A]]'] },
				{ kind: 'note', written: '', closest: ['[[A]]'] },
				{ kind: 'note', closest: ['[[A]]'] },
				'No note [[A]] in the index.',
				null,
				{ kind: 'tag', written: '#x', closest: ['#y', 3, '', null] },
				{ kind: 'note', written: '[[Zz]]' },
			]),
		).toEqual([
			{ kind: 'tag', written: '#x', closest: ['#y'] },
			{ kind: 'note', written: '[[Zz]]', closest: [] },
		]);
		expect(toScopeMisses(undefined)).toEqual([]);
		expect(toScopeMisses({ kind: 'note', written: '[[A]]', closest: [] })).toEqual([]);
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
