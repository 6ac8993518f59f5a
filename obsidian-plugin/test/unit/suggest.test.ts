import { describe, expect, it } from 'vitest';
import {
	applySuggestion,
	findTrigger,
	fuzzyMatch,
	insertionText,
	linktextFor,
	rankNotes,
	rankTags,
	tagCandidates,
	type NoteCandidate,
	type TagCandidate,
} from '../../src/lib/suggest';

function note(path: string, mtime = 0, aliases: string[] = []): NoteCandidate {
	const basename = path.slice(path.lastIndexOf('/') + 1).replace(/\.md$/, '');
	return { path, basename, aliases, mtime };
}

const NOTES = [
	note('02 Areas/Health/Knee pain - physio notes.md', 30, ['Physio']),
	note('02 Areas/Cooking/Sourdough starter log.md', 20, ['Bruno']),
	note('01 Projects/Project X.md', 10),
	note('04 Archive/Project X.md', 5),
	note('01 Projects/Pricing.md', 40),
	note('Daily/2026-02-14.md', 50),
];

/** The question, with `¦` where the caret is. */
function at(withCaret: string): [string, number] {
	const caret = withCaret.indexOf('¦');
	return [withCaret.slice(0, caret) + withCaret.slice(caret + 1), caret];
}

describe('findTrigger', () => {
	it('`[[` starts a note mention, up to the caret', () => {
		const [text, caret] = at('in [[Proj¦ what did we decide?');
		expect(findTrigger(text, caret)).toEqual({ kind: 'note', query: 'Proj', start: 3, end: 9 });
		expect(findTrigger(...at('[[¦'))).toEqual({ kind: 'note', query: '', start: 0, end: 2 });
	});

	it('a closed `[[Note]]`, a new line, an alias or heading part: no note mention', () => {
		expect(findTrigger(...at('in [[Project X]] what¦ did we decide?'))).toBeNull();
		expect(findTrigger(...at('in [[Project\nX¦'))).toBeNull();
		expect(findTrigger(...at('[[Project X|ali¦'))).toBeNull();
		expect(findTrigger(...at('[[Project X#Dec¦'))).toBeNull();
		expect(findTrigger(...at('plain question¦'))).toBeNull();
	});

	it('`#` at a word start begins a tag; nested tags keep their slash', () => {
		expect(findTrigger(...at('about #heal¦'))).toEqual({ kind: 'tag', query: 'heal', start: 6, end: 11 });
		expect(findTrigger(...at('#health/kn¦'))).toEqual({ kind: 'tag', query: 'health/kn', start: 0, end: 10 });
		expect(findTrigger(...at('(#¦'))).toEqual({ kind: 'tag', query: '', start: 1, end: 2 });
	});

	it('no tag in the middle of a word, after a digit-only run ("issue #12"), or past a space', () => {
		expect(findTrigger(...at('C#¦'))).toBeNull();
		expect(findTrigger(...at('issue #12¦'))).toBeNull();
		expect(findTrigger(...at('#health and¦'))).toBeNull();
	});
});

describe('fuzzyMatch', () => {
	it('matches the query characters in order, case-insensitively, and says where', () => {
		const m = fuzzyMatch('kpn', 'Knee pain - physio notes')!;
		expect(m.ranges).toEqual([
			[0, 1],
			[5, 6],
			[19, 20], // the word "notes", not the n inside "pain"
		]);
		expect(fuzzyMatch('xyz', 'Knee pain')).toBeNull();
		expect(fuzzyMatch('pk', 'Knee pain')).toBeNull(); // out of order
	});

	it('consecutive characters and word starts score higher than scattered ones', () => {
		expect(fuzzyMatch('pain', 'Knee pain')!.score).toBeGreaterThan(fuzzyMatch('pain', 'Paper weight Index')!.score);
		expect(fuzzyMatch('sl', 'Sourdough starter log')!.score).toBeGreaterThan(fuzzyMatch('sl', 'Muscles')!.score);
	});

	it('a space in the query matches the space in the text, and is skipped where there is none', () => {
		expect(fuzzyMatch('knee p', 'Knee pain - physio notes')!.ranges).toEqual([[0, 6]]);
		expect(fuzzyMatch('knee p', 'Knee-pain')!.ranges).toEqual([
			[0, 4],
			[5, 6],
		]);
	});

	it('prefers a word start over an earlier letter in the middle of a word', () => {
		// "log": the word "log", not the o of "sourdough"
		expect(fuzzyMatch('log', 'Sourdough starter log')!.ranges).toEqual([[18, 21]]);
	});
});

describe('rankNotes', () => {
	it('with nothing typed: the most recently modified notes first', () => {
		expect(rankNotes('', NOTES, 3).map((s) => s.note.basename)).toEqual(['2026-02-14', 'Pricing', 'Knee pain - physio notes']);
	});

	it('ranks on the name; both notes of the same name are offered', () => {
		const r = rankNotes('project x', NOTES);
		expect(r.slice(0, 2).map((s) => s.note.path)).toEqual(['01 Projects/Project X.md', '04 Archive/Project X.md']);
		expect(r[0]!.matchedText).toBe('Project X');
	});

	it('an alias matches, and is remembered for the insertion', () => {
		const [top] = rankNotes('bruno', NOTES);
		expect(top!.note.path).toBe('02 Areas/Cooking/Sourdough starter log.md');
		expect(top!.alias).toBe('Bruno');
		expect(top!.matchedText).toBe('Bruno');
	});

	it('a folder in the query matches on the path', () => {
		const [top] = rankNotes('health/knee', NOTES);
		expect(top!.note.path).toBe('02 Areas/Health/Knee pain - physio notes.md');
		expect(top!.matchedText).toBe('02 Areas/Health/Knee pain - physio notes');
	});

	it('the best few are the first few of the whole ranking', () => {
		const many = Array.from({ length: 300 }, (_, i) => note(`f${i % 7}/note ${(i * 37) % 300} plan${i % 3 ? '' : ' pricing'}.md`, i % 11));
		for (const q of ['p', 'pl', 'note 1', 'pricing', 'f3/n']) {
			expect(rankNotes(q, many, 5), q).toEqual(rankNotes(q, many, 300).slice(0, 5));
		}
	});

	it('nothing matching: no suggestions; the limit holds', () => {
		expect(rankNotes('zzzz', NOTES)).toEqual([]);
		const many = Array.from({ length: 50 }, (_, i) => note(`n/note ${i}.md`, i));
		expect(rankNotes('note', many, 7)).toHaveLength(7);
	});
});

describe('rankTags', () => {
	const TAGS: TagCandidate[] = [
		{ tag: 'health', count: 4 },
		{ tag: 'health/knee', count: 2 },
		{ tag: 'running', count: 6 },
		{ tag: 'cooking/bread', count: 1 },
		{ tag: 'thought', count: 9 },
	];

	it('with nothing typed: the most used', () => {
		expect(rankTags('', TAGS).map((s) => s.tag.tag)).toEqual(['thought', 'running', 'health', 'health/knee', 'cooking/bread']);
	});

	it('a prefix (also of a nested part) comes before a scattered match', () => {
		expect(rankTags('he', TAGS).map((s) => s.tag.tag).slice(0, 2)).toEqual(['health', 'health/knee']);
		expect(rankTags('bread', TAGS)[0]!.tag.tag).toBe('cooking/bread');
		expect(rankTags('#run', TAGS)[0]!.tag.tag).toBe('running');
		expect(rankTags('qq', TAGS)).toEqual([]);
	});
});

describe('tagCandidates', () => {
	it("adds the parents of nested tags, counting their children's uses", () => {
		const tags = tagCandidates({ '#health/knee': 2, '#health/sleep': 1, '#running': 4, '#health': 1 });
		expect(Object.fromEntries(tags.map((t) => [t.tag, t.count]))).toEqual({ health: 4, 'health/knee': 2, 'health/sleep': 1, running: 4 });
		expect(tagCandidates({ '#a/b/c': 1 }).map((t) => t.tag)).toEqual(['a', 'a/b', 'a/b/c']);
	});
});

describe('insertion', () => {
	const paths = NOTES.map((n) => n.path);

	it('the shortest link Obsidian would write: the name, or the path when two notes share it', () => {
		expect(linktextFor('01 Projects/Pricing.md', paths)).toBe('Pricing');
		expect(linktextFor('01 Projects/Project X.md', paths)).toBe('01 Projects/Project X');
	});

	it('inserts [[Name]], [[Name|alias]] when matched on an alias, #tag for tags', () => {
		const [pricing] = rankNotes('pricing', NOTES);
		expect(insertionText(pricing!, paths)).toBe('[[Pricing]]');
		const [bruno] = rankNotes('bruno', NOTES);
		expect(insertionText(bruno!, paths)).toBe('[[Sourdough starter log|Bruno]]');
		const [tag] = rankTags('knee', [{ tag: 'health/knee', count: 1 }]);
		expect(insertionText(tag!, paths)).toBe('#health/knee');
	});

	it('replaces what was typed, adds a space, puts the caret after it', () => {
		const [text, caret] = at('in [[Pri¦ what did we decide?');
		const r = applySuggestion(text, findTrigger(text, caret)!, '[[Pricing]]');
		expect(r.text).toBe('in [[Pricing]] what did we decide?');
		expect(r.caret).toBe('in [[Pricing]] '.length);
		const end = applySuggestion('about #he', findTrigger('about #he', 9)!, '#health');
		expect(end).toEqual({ text: 'about #health ', caret: 14 });
	});

	it('takes in a `]]` already after the caret; no space before punctuation', () => {
		const [text, caret] = at('in [[Pri¦]]?');
		const r = applySuggestion(text, findTrigger(text, caret)!, '[[Pricing]]');
		expect(r).toEqual({ text: 'in [[Pricing]]?', caret: 14 });
	});
});
