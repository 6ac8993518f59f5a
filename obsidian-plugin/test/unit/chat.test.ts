import { describe, expect, it } from 'vitest';
import { ChatSession } from '../../src/lib/chat';
import type { Source } from '../../src/lib/types';

const src: Source = {
	n: 1,
	path: 'a.md',
	title: 'A',
	heading: 'A > H',
	anchor: 'H',
	line_start: 1,
	line_end: 2,
	score: 0.5,
	link: 'a#H',
};

function finish(s: ChatSession, question: string, answer: string): void {
	const { assistant } = s.ask(question);
	s.apply(assistant, { type: 'sources', sources: [src] });
	s.apply(assistant, { type: 'token', text: answer.slice(0, 3) });
	s.apply(assistant, { type: 'done', answer, citations: [], sources: [src], declined: false });
}

describe('ChatSession', () => {
	it('the first question has no history; follow-ups carry the completed turns in order', () => {
		const s = new ChatSession();
		const first = s.ask('What is A?');
		expect(first.history).toEqual([]);
		s.apply(first.assistant, { type: 'done', answer: 'A is a letter [A].', citations: [], sources: [], declined: false });
		const second = s.ask('And B?');
		expect(second.history).toEqual([
			{ role: 'user', content: 'What is A?' },
			{ role: 'assistant', content: 'A is a letter [A].' },
		]);
	});

	it('keeps the server\'s notice about an answer (keyword-only results, passages left out)', () => {
		const s = new ChatSession();
		const quiet = s.ask('q').assistant;
		s.apply(quiet, { type: 'sources', sources: [src], mode: 'hybrid' });
		expect(quiet.notice).toBeUndefined();
		const { assistant } = s.ask('q2');
		const notice = 'Ollama is not reachable. Showing keyword matches only.';
		s.apply(assistant, { type: 'sources', sources: [src], mode: 'keyword', notice });
		s.apply(assistant, { type: 'done', answer: 'x', citations: [], sources: [src], declined: false });
		expect(assistant.notice).toBe(notice);
	});

	it('accumulates tokens, then takes the final answer, citations, sources and declined from "done"', () => {
		const s = new ChatSession();
		const { assistant } = s.ask('q');
		expect(assistant.status).toBe('waiting');
		expect(s.active).toBe(assistant);
		s.apply(assistant, { type: 'sources', sources: [src] });
		expect(assistant.sources).toEqual([src]);
		s.apply(assistant, { type: 'token', text: 'Hel' });
		s.apply(assistant, { type: 'token', text: 'lo' });
		expect(assistant.content).toBe('Hello');
		expect(assistant.status).toBe('streaming');
		s.apply(assistant, {
			type: 'done',
			answer: 'Hello [A].',
			citations: [{ title: 'A', path: 'a.md', heading: 'A > H', anchor: 'H', line: 1, link: 'a#H' }],
			sources: [src],
			declined: true,
		});
		expect(assistant.content).toBe('Hello [A].');
		expect(assistant.citations).toHaveLength(1);
		expect(assistant.declined).toBe(true);
		expect(assistant.status).toBe('done');
		expect(s.active).toBeNull();
		// events after the end are ignored
		s.apply(assistant, { type: 'token', text: 'late' });
		expect(assistant.content).toBe('Hello [A].');
	});

	it('leaves stopped and failed answers out of the history', () => {
		const s = new ChatSession();
		finish(s, 'q1', 'a1');
		const stopped = s.ask('q2');
		s.apply(stopped.assistant, { type: 'token', text: 'partial' });
		s.stop(stopped.assistant);
		expect(stopped.assistant.status).toBe('stopped');
		const failed = s.ask('q3');
		s.fail(failed.assistant, new Error('x'));
		expect(failed.assistant.status).toBe('error');
		const next = s.ask('q4');
		expect(next.history).toEqual([
			{ role: 'user', content: 'q1' },
			{ role: 'assistant', content: 'a1' },
		]);
	});

	it('keeps only the newest pairs within the limits', () => {
		const s = new ChatSession({ maxPairs: 2, maxChars: 1000 });
		for (let i = 1; i <= 4; i++) finish(s, `q${i}`, `a${i}`);
		expect(s.history().map((m) => m.content)).toEqual(['q3', 'a3', 'q4', 'a4']);

		const t = new ChatSession({ maxPairs: 10, maxChars: 25 });
		finish(t, 'old question', 'x'.repeat(20));
		finish(t, 'new q', 'new answer');
		expect(t.history().map((m) => m.content)).toEqual(['new q', 'new answer']);
	});

	it('"New chat" (clear) empties the conversation', () => {
		const s = new ChatSession();
		finish(s, 'q1', 'a1');
		s.clear();
		expect(s.isEmpty).toBe(true);
		expect(s.ask('fresh').history).toEqual([]);
	});

	it('records the current note on the question', () => {
		const s = new ChatSession();
		const { user } = s.ask('  about this  ', 'notes/x.md');
		expect(user.currentNote).toBe('notes/x.md');
	});

	it('keeps the time range the server searched, from "sources" and again from "done"', () => {
		const s = new ChatSession();
		const { assistant } = s.ask('What did I write about running in February?');
		expect(assistant.timeRange).toBeNull();
		expect(assistant.readTime).toBe(true);
		const feb = { from: '2026-02-01', to: '2026-02-28', text: 'in February', notice: null };
		s.apply(assistant, { type: 'sources', sources: [src], time_range: feb });
		expect(assistant.timeRange).toEqual(feb);
		s.apply(assistant, { type: 'done', answer: 'x', citations: [], sources: [src], declined: false, time_range: feb });
		expect(assistant.timeRange).toEqual(feb);

		// No time in the question: null; an older server that sends no time_range: null too.
		const none = s.ask('q').assistant;
		s.apply(none, { type: 'sources', sources: [src], time_range: null });
		expect(none.timeRange).toBeNull();
		const old = s.ask('q').assistant;
		s.apply(old, { type: 'sources', sources: [src] });
		s.apply(old, { type: 'done', answer: 'x', citations: [], sources: [src], declined: false });
		expect(old.timeRange).toBeNull();
	});

	it('keeps the seed of a question about connections and the note open when it was asked; the chip removed asks as written', () => {
		const s = new ChatSession();
		const { user, assistant } = s.ask('what relates to this project?', undefined, null, 'P/Launch.md');
		expect(user.openNote).toBe('P/Launch.md');
		expect(assistant.seed).toBeNull();
		expect(assistant.connect).toBe(true);
		const seed = { seed: 'P/Launch.md', title: 'Launch', words: 'relates to' };
		s.apply(assistant, { type: 'sources', sources: [src], connection: seed });
		expect(assistant.seed).toEqual(seed);
		const again = s.retry(assistant, { connect: false });
		expect(again?.user).toBe(user);
		expect(assistant.seed).toBeNull();
		expect(assistant.connect).toBe(false);
		expect(assistant.readTime).toBe(true); // (only what was asked for changes)
		s.apply(assistant, { type: 'sources', sources: [src], connection: null });
		expect(assistant.seed).toBeNull();
	});

	it('retry empties an answer in place and gives back its question and the history before it', () => {
		const s = new ChatSession();
		finish(s, 'q1', 'a1');
		const { user, assistant } = s.ask('q2 in February', 'notes/x.md');
		s.apply(assistant, {
			type: 'sources',
			sources: [src],
			notice: 'a notice',
			time_range: { from: '2026-02-01', to: '2026-02-28', text: 'in February' },
		});
		s.apply(assistant, { type: 'done', answer: 'a2', citations: [], sources: [src], declined: true });
		finish(s, 'q3', 'a3');

		const again = s.retry(assistant, { readTime: false });
		expect(again).not.toBeNull();
		expect(again!.user).toBe(user);
		expect(again!.user.currentNote).toBe('notes/x.md');
		// the conversation before q2 only: not q2's own answer, not what came after
		expect(again!.history).toEqual([
			{ role: 'user', content: 'q1' },
			{ role: 'assistant', content: 'a1' },
		]);
		expect(assistant).toMatchObject({
			content: '',
			sources: [],
			citations: [],
			declined: false,
			timeRange: null,
			readTime: false,
			status: 'waiting',
		});
		expect(assistant.notice).toBeUndefined();
		expect(s.all).toHaveLength(6); // in place: no new turns

		// the new answer streams into the same turn
		s.apply(assistant, { type: 'sources', sources: [src], time_range: null });
		s.apply(assistant, { type: 'done', answer: 'a2 from any time', citations: [], sources: [src], declined: false });
		expect(s.history().map((m) => m.content)).toEqual(['q1', 'a1', 'q2 in February', 'a2 from any time', 'q3', 'a3']);
	});

	it('retry of a turn not in the session does nothing', () => {
		const s = new ChatSession();
		const { assistant } = s.ask('q');
		s.clear();
		expect(s.retry(assistant, { readTime: false })).toBeNull();
	});
});
