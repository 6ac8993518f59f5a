import { describe, expect, it } from 'vitest';
import { ChatSession } from '../../src/lib/chat';
import {
	chatAsMarkdown,
	chatIdOfNote,
	chatNote,
	chatNoteName,
	freeNotePath,
	normalizeFolder,
} from '../../src/lib/chatMarkdown';
import { chatRecord } from '../../src/lib/history';
import type { Citation, Source } from '../../src/lib/types';

/** A heading with characters Obsidian drops from links; the server's anchor has them as spaces. */
const special: Source = {
	n: 1,
	path: 'Projects/Q&A: plan.md',
	title: 'Q&A: plan',
	heading: 'Q&A: plan > Risks #1 [draft] | v2',
	anchor: 'Risks 1 draft v2',
	line_start: 3,
	line_end: 9,
	score: 0.7,
	link: 'Projects/Q&A: plan#Risks 1 draft v2',
};
const other: Source = { ...special, n: 2, path: 'Health/Knee.md', title: 'Knee', heading: 'Knee', anchor: '', link: 'Health/Knee' };
const citation: Citation = { title: special.title, path: special.path, heading: special.heading, anchor: special.anchor, line: 4, link: special.link };

function record() {
	const s = new ChatSession();
	const a = s.ask('What are the risks?', 'Projects/Q&A: plan.md');
	s.apply(a.assistant, { type: 'sources', sources: [other, special] });
	s.apply(a.assistant, { type: 'done', answer: 'The main risk is time [Q&A: plan].', citations: [citation], sources: [other, special], declined: false });
	const b = s.ask('And\nthe budget?');
	s.apply(b.assistant, { type: 'token', text: 'Half an ans' });
	s.stop(b.assistant);
	return chatRecord('chat-1', s.all, new Date('2026-03-01T10:00:00Z'));
}

describe('chat as Markdown', () => {
	it('writes frontmatter with the opt-out, the chat id, dates, models, the note it is about and a tag', () => {
		const md = chatNote(record(), { exclude: true, models: ['llama3.1:8b', 'llama3.1:8b', ''], now: new Date('2026-03-01T11:00:00Z') });
		const fm = /^---\n([\s\S]*?)\n---\n/.exec(md)![1]!.split('\n');
		expect(fm[0]).toBe('vask: exclude');
		expect(fm[1]).toBe('vask-chat: "chat-1"');
		expect(fm[2]).toMatch(/^created: 2026-03-01T\d\d:00:00[+-]\d\d:\d\d$/);
		expect(fm[3]).toMatch(/^updated: 2026-03-01T\d\d:00:00[+-]\d\d:\d\d$/);
		expect(fm.slice(4)).toEqual(['models:', '  - "llama3.1:8b"', 'about: "[[Projects/Q&A: plan]]"', 'tags:', '  - vask-chat']);
		expect(chatIdOfNote(md)).toBe('chat-1');
	});

	it('"Index saved chats": no opt-out key, everything else the same', () => {
		const opts = { models: [], now: new Date('2026-03-01T11:00:00Z') };
		const included = chatNote(record(), { ...opts, exclude: false });
		const excluded = chatNote(record(), { ...opts, exclude: true });
		expect(included).not.toMatch(/^vask:/m);
		expect(excluded.replace('vask: exclude\n', '')).toBe(included);
		expect(included).not.toContain('models:');
	});

	it('each question is a heading; citations and sources are [[path#heading|label]] links the pane would open', () => {
		const md = chatAsMarkdown(record());
		expect(md).toBe(
			[
				'# What are the risks?',
				'## What are the risks?',
				'*About [[Projects/Q&A: plan|Q&A: plan]]*',
				'The main risk is time [[Projects/Q&A: plan#Risks 1 draft v2|Q&A: plan]].',
				// the cited passage first
				'Sources:\n- [[Projects/Q&A: plan#Risks 1 draft v2|Q&A: plan › Risks #1 (draft) ∣ v2]]\n- [[Health/Knee|Knee]]',
				'## And the budget?',
				'> And\n> the budget?',
				'Half an ans',
				'*Stopped.*',
			].join('\n\n') + '\n',
		);
		// every link target is a full path, with no character that ends a wikilink early
		for (const m of md.matchAll(/\[\[([^\]|]+)\|/g)) expect(m[1]).not.toMatch(/[|\]]/);
	});

	it('a label may hold "]]" or "|" without breaking its link', () => {
		const s = new ChatSession();
		const a = s.ask('q');
		const odd = { ...other, title: 'a]]b|c', heading: '', link: 'x/y' };
		s.apply(a.assistant, { type: 'done', answer: 'x', citations: [], sources: [odd], declined: false });
		expect(chatAsMarkdown(chatRecord('i', s.all, new Date()))).toContain('- [[x/y|a) )b∣c]]');
	});

	it('reads the chat id back (quoted or not), or null', () => {
		expect(chatIdOfNote('---\nvask-chat: "a-1"\n---\n# x')).toBe('a-1');
		expect(chatIdOfNote('---\ntags: [x]\nvask-chat: a-2\n---\n')).toBe('a-2');
		expect(chatIdOfNote('# no frontmatter\nvask-chat: a')).toBeNull();
		expect(chatIdOfNote('---\nvask-chat: "broken\n---\n')).toBeNull();
	});

	it('note names and paths: safe characters, a free name in the folder', () => {
		expect(chatNoteName('What is #1? [draft] a/b: c|d')).toBe('What is 1 draft a b c d');
		expect(chatNoteName('...')).toBe('Vask chat');
		expect(normalizeFolder(' /Vask chats// ')).toBe('Vask chats');
		const taken = new Set(['Vask chats/Plan.md', 'Vask chats/Plan 2.md']);
		expect(freeNotePath('Vask chats/', 'Plan', (p) => taken.has(p))).toBe('Vask chats/Plan 3.md');
		expect(freeNotePath('', 'Plan', () => false)).toBe('Plan.md');
	});
});
