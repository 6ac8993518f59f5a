import { describe, expect, it } from 'vitest';
import { ChatSession, type AssistantTurn } from '../../src/lib/chat';
import { VaskError, describeError } from '../../src/lib/errors';
import {
	HISTORY_VERSION,
	chatRecord,
	liveTurns,
	migrateRecord,
	newChatId,
	parseHistory,
	pruneHistory,
	searchHistory,
	serializeHistory,
	summaryOf,
	titleFrom,
	type ChatRecord,
} from '../../src/lib/history';
import { HistoryStore, type HistoryFiles } from '../../src/lib/historyStore';
import type { Source } from '../../src/lib/types';
import { FakeTimers, settle } from './fakeTimers';

const src: Source = {
	n: 1,
	path: 'Notes/Plan.md',
	title: 'Plan',
	heading: 'Plan > Risks',
	anchor: 'Risks',
	line_start: 3,
	line_end: 9,
	score: 0.7,
	link: 'Notes/Plan#Risks',
};

function chat(id: string, updatedAt: string, questions = 1, answer = 'An answer [Plan].'): ChatRecord {
	const s = new ChatSession();
	for (let i = 0; i < questions; i++) {
		const { assistant } = s.ask(`Question ${i + 1} of ${id}?`);
		s.apply(assistant, { type: 'sources', sources: [src] });
		s.apply(assistant, { type: 'done', answer, citations: [], sources: [src], declined: false });
	}
	const r = chatRecord(id, s.all, new Date(updatedAt));
	return r;
}

/** A file system in a Map, with switches to fail. */
class MemFiles implements HistoryFiles {
	files = new Map<string, string>();
	dirs = new Set<string>();
	writes: string[] = [];
	failWrites = false;
	failRead = false;
	async exists(path: string): Promise<boolean> {
		return this.files.has(path) || this.dirs.has(path);
	}
	async read(path: string): Promise<string> {
		if (this.failRead) throw new Error('EACCES: permission denied');
		const v = this.files.get(path);
		if (v === undefined) throw new Error(`ENOENT: ${path}`);
		return v;
	}
	async write(path: string, data: string): Promise<void> {
		if (this.failWrites) throw new Error('ENOSPC: no space left on device');
		this.writes.push(path);
		this.files.set(path, data);
	}
	async mkdir(path: string): Promise<void> {
		this.dirs.add(path);
	}
}

const PATH = '.obsidian/plugins/vask/chat-history.jsonl';

describe('history records', () => {
	it('a title is the first question on one line, cut at 80 characters', () => {
		expect(titleFrom('  What is\n the plan?  ')).toBe('What is the plan?');
		const long = titleFrom('word '.repeat(40));
		expect(long.length).toBe(80);
		expect(long.endsWith('…')).toBe(true);
		expect(titleFrom('   ')).toBe('Untitled chat');
	});

	it('ids are time-ordered and differ', () => {
		const a = newChatId(new Date(1000), () => 0.1);
		const b = newChatId(new Date(2000), () => 0.1);
		expect(a < b).toBe(true);
		expect(newChatId(new Date(1000), () => 0.2)).not.toBe(a);
	});

	it("a scope miss's closest names are kept, so a reopened chat can still ask again with them", () => {
		const s = new ChatSession();
		const { assistant } = s.ask('pricing in [[Projct X]] #runing?');
		const misses = [
			{ kind: 'note' as const, written: '[[Projct X]]', closest: ['[[Project X]]'] },
			{ kind: 'tag' as const, written: '#runing', closest: ['#running', '#run'] },
		];
		s.fail(assistant, new VaskError('scope_not_found', 'No note [[Projct X]] in the index. No tag #runing in the index.', 'Closest: [[Project X]]. Closest: #running, #run.', 400, misses));
		const [back] = parseHistory(serializeHistory([chatRecord('c1', s.all, new Date('2026-03-01T10:00:00Z'))])).records;
		const turn = liveTurns(back!)[1] as AssistantTurn;
		expect(turn.error).toBeInstanceOf(VaskError);
		expect((turn.error as VaskError).misses).toEqual(misses);
		// an error without misses keeps none (no empty list written to disk)
		s.fail(s.ask('again').assistant, new VaskError('model_missing', 'gone', ''));
		expect((chatRecord('c1', s.all, new Date()).turns[3] as AssistantTurn).error).toEqual({ code: 'model_missing', message: 'gone' });
	});

	it('a record keeps the turns as plain data, its title and creation date across updates, and the note it is about', () => {
		const s = new ChatSession();
		const { assistant } = s.ask('How often do I feed Bruno?', 'Cooking/Sourdough.md');
		s.fail(assistant, new VaskError('model_missing', 'model "x" not found', 'ollama pull x'));
		const first = chatRecord('c1', s.all, new Date('2026-03-01T10:00:00Z'));
		expect(first).toMatchObject({ id: 'c1', title: 'How often do I feed Bruno?', about: 'Cooking/Sourdough.md', createdAt: '2026-03-01T10:00:00.000Z' });
		expect((first.turns[1] as AssistantTurn).error).toEqual({ code: 'model_missing', message: 'model "x" not found', hint: 'ollama pull x' });
		const renamed = { ...first, title: 'Bruno', notePath: 'Vask chats/Bruno.md' };
		const later = chatRecord('c1', s.all, new Date('2026-03-02T10:00:00Z'), renamed);
		expect(later).toMatchObject({ title: 'Bruno', createdAt: '2026-03-01T10:00:00.000Z', updatedAt: '2026-03-02T10:00:00.000Z', notePath: 'Vask chats/Bruno.md' });
		// back in the pane, the error explains itself as it did
		const turn = liveTurns(later)[1] as AssistantTurn;
		expect(turn.error).toBeInstanceOf(VaskError);
		expect(describeError(turn.error).hint).toBe('ollama pull x');
		expect(summaryOf(later)).toEqual({
			id: 'c1',
			title: 'Bruno',
			createdAt: '2026-03-01T10:00:00.000Z',
			updatedAt: '2026-03-02T10:00:00.000Z',
			questions: 1,
			about: 'Cooking/Sourdough.md',
		});
	});

	it('serialises to JSON Lines and reads back the same chats, newest first, with the open chat', () => {
		const a = chat('a', '2026-01-01T00:00:00Z');
		const b = chat('b', '2026-02-01T00:00:00Z', 2);
		const text = serializeHistory([a, b], 'a');
		const lines = text.trimEnd().split('\n');
		expect(lines).toHaveLength(3);
		expect(JSON.parse(lines[0]!)).toEqual({ vask_chat_history: HISTORY_VERSION, current: 'a' });
		const parsed = parseHistory(text);
		expect(parsed.problems).toEqual([]);
		expect(parsed.version).toBe(HISTORY_VERSION);
		expect(parsed.current).toBe('a');
		expect(parsed.records.map((r) => r.id)).toEqual(['b', 'a']);
		expect(parsed.records[0]).toEqual(b);
	});

	it('a scoped chat reads back with its scope: the chips and the toggle\'s note come back on reopening', () => {
		const turns = [
			{ id: 1, role: 'user' as const, content: 'in [[Plan]], the risks?', paneScope: { kind: 'folder' as const, path: '01 Projects' } },
			{
				id: 2,
				role: 'assistant' as const,
				content: 'Budget [Plan].',
				sources: [],
				citations: [],
				declined: false,
				timeRange: null,
				scope: { notes: ['01 Projects/Plan.md'], tags: ['health', 'health/sleep'], folders: [] },
				readTime: true,
				seed: { seed: '01 Projects/Plan.md', title: 'Plan', words: 'connect to' },
				connect: true,
				status: 'done' as const,
			},
		];
		const record = chatRecord('scoped', turns, new Date('2026-03-01T10:00:00Z'));
		const [back] = parseHistory(serializeHistory([record])).records;
		expect(back!.turns).toEqual(turns);
		// an earlier file without these fields: no scope, nothing invented
		const old = JSON.parse(JSON.stringify(record)) as { turns: Record<string, unknown>[] };
		delete old.turns[0]!.paneScope;
		delete old.turns[1]!.scope;
		delete old.turns[1]!.seed;
		delete old.turns[1]!.connect;
		const migrated = migrateRecord(old)!;
		expect(migrated.turns[0]).not.toHaveProperty('paneScope');
		expect(migrated.turns[1]).toMatchObject({ scope: null, seed: null, connect: true });
	});

	it('a damaged line costs that chat only; a file that is not a history says so', () => {
		const a = chat('a', '2026-01-01T00:00:00Z');
		const b = chat('b', '2026-02-01T00:00:00Z');
		const text = serializeHistory([a, b]);
		const lines = text.split('\n');
		// a write cut short in the middle of chat b's line (the first record, newest first)
		lines[1] = lines[1]!.slice(0, 40);
		const parsed = parseHistory(lines.join('\n'));
		expect(parsed.records.map((r) => r.id)).toEqual(['a']);
		expect(parsed.problems).toEqual(['1 line could not be read']);

		expect(parseHistory('{"not": "a chat"}\n').problems).toEqual(['it is not a vask chat history']);
		expect(parseHistory('\u0000\u0001garbage').problems).toEqual(['it is not a vask chat history']);
		expect(parseHistory('')).toEqual({ records: [], current: null, problems: [], version: 0 });
	});

	it('a file from a newer version is read as far as it goes, and says so', () => {
		const text = serializeHistory([chat('a', '2026-01-01T00:00:00Z')]).replace(`"vask_chat_history":${HISTORY_VERSION}`, '"vask_chat_history":9');
		const parsed = parseHistory(text);
		expect(parsed.records.map((r) => r.id)).toEqual(['a']);
		expect(parsed.problems[0]).toContain('newer version');
	});

	it('migrates records: unfinished answers become interrupted (what arrived is kept), missing fields are filled, junk turns dropped', () => {
		const raw = {
			id: 'old',
			turns: [
				{ role: 'user', content: 'What is the pain rule?' },
				{ role: 'assistant', content: 'Stop when it hurts', status: 'streaming', sources: [src, { nope: 1 }], citations: 'x' },
				{ role: 'system', content: 'ignored' },
				{ role: 'user', content: 'And shoes?' },
				{ role: 'assistant', status: 'error' },
			],
			updatedAt: '2026-01-05T00:00:00Z',
		};
		const r = migrateRecord(raw)!;
		expect(r.title).toBe('What is the pain rule?');
		expect(r.createdAt).toBe('2026-01-05T00:00:00Z');
		expect(r.turns.map((t) => t.id)).toEqual([1, 2, 3, 4]);
		const answer = r.turns[1] as AssistantTurn;
		expect(answer).toMatchObject({ status: 'stopped', interrupted: true, content: 'Stop when it hurts', citations: [], readTime: true });
		expect(answer.sources).toEqual([src]);
		expect((r.turns[3] as AssistantTurn).error).toEqual({ code: 'incomplete', message: '' });
		// no question: not a chat
		expect(migrateRecord({ id: 'x', turns: [{ role: 'assistant', content: 'a' }] })).toBeNull();
		expect(migrateRecord({ turns: [] })).toBeNull();
		expect(migrateRecord('nope')).toBeNull();
	});

	it('an interrupted answer reopened is left out of the history a follow-up carries, as a stopped one is', () => {
		const r = migrateRecord({
			id: 'x',
			turns: [
				{ role: 'user', content: 'Q1' },
				{ role: 'assistant', content: 'A1', status: 'done' },
				{ role: 'user', content: 'Q2' },
				{ role: 'assistant', content: 'half', status: 'streaming' },
			],
		})!;
		const s = new ChatSession();
		s.load(liveTurns(r));
		const { history, user } = s.ask('Q3');
		expect(history).toEqual([
			{ role: 'user', content: 'Q1' },
			{ role: 'assistant', content: 'A1' },
		]);
		expect(user.id).toBe(5);
	});

	it('prunes the oldest chats past the count and size limits, never the open one', () => {
		const records = ['2026-01-01', '2026-01-02', '2026-01-03', '2026-01-04', '2026-01-05'].map((d, i) => chat(`c${i}`, `${d}T00:00:00Z`));
		const byCount = pruneHistory(records, { maxChats: 3, maxChars: 1e9 });
		expect(byCount.kept.map((r) => r.id)).toEqual(['c4', 'c3', 'c2']);
		expect(byCount.dropped.map((r) => r.id)).toEqual(['c1', 'c0']);
		// the oldest chat is open in the pane: it stays, the next oldest goes in its place
		const pinned = pruneHistory(records, { maxChats: 3, maxChars: 1e9 }, 'c0');
		expect(pinned.kept.map((r) => r.id).sort()).toEqual(['c0', 'c3', 'c4']);
		const size = JSON.stringify(records[0]).length;
		const bySize = pruneHistory(records, { maxChats: 100, maxChars: size * 2 + 1 });
		expect(bySize.kept.map((r) => r.id)).toEqual(['c4', 'c3']);
	});

	it('searches titles (and the note a chat is about), every word, ignoring case and accents', () => {
		const list = [
			{ ...summaryOf(chat('a', '2026-01-01T00:00:00Z')), title: 'Knee pain during a run' },
			{ ...summaryOf(chat('b', '2026-01-03T00:00:00Z')), title: 'Café opening hours' },
			{ ...summaryOf(chat('c', '2026-01-02T00:00:00Z')), title: 'Feeding schedule', about: 'Cooking/Sourdough starter log.md' },
		];
		expect(searchHistory(list, 'KNEE run').map((s) => s.id)).toEqual(['a']);
		expect(searchHistory(list, 'cafe').map((s) => s.id)).toEqual(['b']);
		expect(searchHistory(list, 'sourdough').map((s) => s.id)).toEqual(['c']);
		expect(searchHistory(list, '').map((s) => s.id)).toEqual(['b', 'c', 'a']);
		expect(searchHistory(list, 'knee café')).toEqual([]);
	});
});

describe('HistoryStore', () => {
	function store(files: MemFiles, timers = new FakeTimers(), opts: Partial<ConstructorParameters<typeof HistoryStore>[2]> = {}) {
		return new HistoryStore(files, PATH, { timers, saveDelayMs: 500, now: () => new Date('2026-03-01T12:00:00Z'), ...opts });
	}

	it('a missing file is an empty history, with nothing to say', async () => {
		const files = new MemFiles();
		const s = store(files);
		expect(await s.load()).toEqual({ chats: 0, problem: null, backup: null });
		expect(s.list()).toEqual([]);
		expect(files.writes).toEqual([]);
	});

	it('changes are written within the save delay, many in one write, and read back by the next start', async () => {
		const files = new MemFiles();
		const timers = new FakeTimers();
		const s = store(files, timers);
		await s.load();
		const r = chat('a', '2026-03-01T11:00:00Z');
		s.put(r);
		for (let i = 0; i < 20; i++) s.put({ ...r, title: `t${i}` }); // tokens streaming in
		expect(files.writes).toEqual([]);
		timers.advance(499);
		await settle();
		expect(files.writes).toEqual([]);
		timers.advance(1);
		await settle();
		expect(files.writes).toEqual([PATH]);
		expect(files.dirs.has('.obsidian/plugins/vask')).toBe(true);

		const again = store(files);
		expect(await again.load()).toEqual({ chats: 1, problem: null, backup: null });
		expect(again.get('a')?.title).toBe('t19');
		expect(again.currentId).toBe('a');
	});

	it('a corrupt file: the problem is said once, the file is copied aside, the readable chats are kept and written back', async () => {
		const files = new MemFiles();
		const good = serializeHistory([chat('a', '2026-01-01T00:00:00Z'), chat('b', '2026-01-02T00:00:00Z')], 'b');
		const damaged = good + '{"id": "c", "turns": [{"role": "user", "cont\n';
		files.files.set(PATH, damaged);
		const s = store(files);
		const first = await s.load();
		expect(first.problem).toBe('1 line could not be read');
		expect(first.chats).toBe(2);
		expect(first.backup).toBe('.obsidian/plugins/vask/chat-history.unreadable-2026-03-01T12-00-00-000Z.jsonl');
		expect(files.files.get(first.backup!)).toBe(damaged);
		expect(s.list().map((c) => c.id)).toEqual(['b', 'a']);
		// written back without the bad line: the next start has nothing to say
		const second = await store(files).load();
		expect(second).toEqual({ chats: 2, problem: null, backup: null });
	});

	it('a file that is all garbage: starts clean, says so once, the old file kept aside', async () => {
		const files = new MemFiles();
		files.files.set(PATH, 'PK\u0003\u0004 this is not json');
		const s = store(files);
		const first = await s.load();
		expect(first).toMatchObject({ chats: 0, problem: 'it is not a vask chat history' });
		expect(files.files.get(first.backup!)).toBe('PK\u0003\u0004 this is not json');
		s.put(chat('new', '2026-03-01T12:00:00Z'));
		await s.flush();
		expect(await store(files).load()).toEqual({ chats: 1, problem: null, backup: null });
	});

	it('a file that cannot be read, or copied aside, is left as it is, even when chats are asked afterwards', async () => {
		const files = new MemFiles();
		files.files.set(PATH, 'garbage');
		files.failRead = true;
		const s = store(files);
		expect((await s.load()).problem).toContain('EACCES');
		files.failRead = false;
		// the session goes on: chats are kept in memory, the file is not overwritten
		s.put(chat('a', '2026-03-01T11:00:00Z'));
		await s.flush();
		expect(s.list().map((c) => c.id)).toEqual(['a']);
		expect(files.files.get(PATH)).toBe('garbage');
		expect(files.writes).toEqual([]);

		files.failWrites = true;
		const t = store(files);
		const r = await t.load();
		expect(r.problem).toContain('it could not be copied aside');
		files.failWrites = false;
		t.put(chat('b', '2026-03-01T11:00:00Z'));
		await t.flush();
		expect(files.files.get(PATH)).toBe('garbage');
		// readable and copied aside next time: the file is repaired
		const u = store(files);
		expect((await u.load()).backup).not.toBeNull();
		u.put(chat('c', '2026-03-01T11:00:00Z'));
		await u.flush();
		expect(parseHistory(files.files.get(PATH)!).records.map((x) => x.id)).toEqual(['c']);
	});

	it('a failing write is reported once and retried with the next change', async () => {
		const files = new MemFiles();
		const errors: unknown[] = [];
		const s = store(files, new FakeTimers(), { onWriteError: (e) => errors.push(e) });
		await s.load();
		files.failWrites = true;
		s.put(chat('a', '2026-03-01T11:00:00Z'));
		await s.flush();
		s.put(chat('b', '2026-03-01T11:30:00Z'));
		await s.flush();
		expect(errors).toHaveLength(1);
		files.failWrites = false;
		s.put(chat('c', '2026-03-01T11:40:00Z'));
		await s.flush();
		expect(parseHistory(files.files.get(PATH)!).records.map((r) => r.id)).toEqual(['c', 'b', 'a']);
	});

	it('prunes on write past the limit, keeping the open chat', async () => {
		const files = new MemFiles();
		const s = store(files, new FakeTimers(), { limits: { maxChats: 2, maxChars: 1e9 } });
		await s.load();
		s.put(chat('old', '2026-01-01T00:00:00Z'));
		s.put(chat('mid', '2026-01-02T00:00:00Z'), false);
		s.put(chat('new', '2026-01-03T00:00:00Z'), false);
		await s.flush();
		expect(s.list().map((c) => c.id).sort()).toEqual(['new', 'old']);
		expect(parseHistory(files.files.get(PATH)!).records.map((r) => r.id)).toEqual(['new', 'old']);
	});

	it('rename, delete, clear; a renamed saved note is followed', async () => {
		const files = new MemFiles();
		const s = store(files);
		await s.load();
		let changes = 0;
		s.onChange(() => changes++);
		s.put(chat('a', '2026-01-01T00:00:00Z'));
		s.put(chat('b', '2026-01-02T00:00:00Z'));
		expect(s.rename('a', '  Knee   plan ')).toBe(true);
		expect(s.rename('a', '   ')).toBe(false);
		expect(s.get('a')!.title).toBe('Knee plan');
		s.setNotePath('a', 'Vask chats/Knee plan.md');
		s.noteRenamed('Vask chats/Knee plan.md', 'Health/Knee plan.md');
		expect(s.get('a')!.notePath).toBe('Health/Knee plan.md');
		expect(s.delete('b')).toBe(true);
		expect(s.currentId).toBeNull();
		expect(s.delete('b')).toBe(false);
		await s.flush();
		expect(parseHistory(files.files.get(PATH)!).records.map((r) => r.id)).toEqual(['a']);
		expect(s.clear()).toBe(1);
		await s.flush();
		expect(parseHistory(files.files.get(PATH)!).records).toEqual([]);
		expect(changes).toBe(5); // two new chats, a rename, a delete, the clear
	});
});
