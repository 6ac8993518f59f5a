import { describe, expect, it } from 'vitest';
import { ChatSession } from '../../src/lib/chat';
import { ChatKeeper, type ChatStore } from '../../src/lib/chatKeeper';
import type { ChatRecord } from '../../src/lib/history';
import { FakeTimers } from './fakeTimers';

/** The history store's side of keeping: what was put, and which chat is open. */
class FakeStore implements ChatStore {
	readonly records = new Map<string, ChatRecord>();
	puts: ChatRecord[] = [];
	current: string | null = null;
	flushes = 0;
	get(id: string): ChatRecord | null {
		return this.records.get(id) ?? null;
	}
	put(record: ChatRecord): void {
		this.records.set(record.id, record);
		this.puts.push(record);
		this.current = record.id;
	}
	setCurrent(id: string | null): void {
		this.current = id;
	}
	async flush(): Promise<void> {
		this.flushes++;
	}
}

function setUp(): { session: ChatSession; store: FakeStore; timers: FakeTimers; keeper: ChatKeeper } {
	const session = new ChatSession();
	const store = new FakeStore();
	const timers = new FakeTimers();
	return { session, store, timers, keeper: new ChatKeeper(session, store, timers, 500) };
}

describe('ChatKeeper', () => {
	it('keeps nothing, and has no id, while the chat has no question', () => {
		const { store, keeper } = setUp();
		keeper.keep();
		expect(store.puts).toEqual([]);
		expect(keeper.id).toBeNull();
	});

	it('gives the chat an id with its first question and keeps it under that id after', () => {
		const { session, store, keeper } = setUp();
		session.ask('What is A?');
		keeper.keep();
		const id = keeper.id;
		expect(id).toMatch(/\S/);
		session.ask('And B?');
		keeper.keep();
		expect(store.puts.map((r) => r.id)).toEqual([id, id]);
		expect(store.puts[1]!.turns.filter((t) => t.role === 'user').map((t) => t.content)).toEqual(['What is A?', 'And B?']);
	});

	it('while tokens stream, keeps at most once per delay, with what arrived by then', () => {
		const { session, store, timers, keeper } = setUp();
		const { assistant } = session.ask('q');
		keeper.keep();
		for (const text of ['Hel', 'lo', ' there']) {
			session.apply(assistant, { type: 'token', text });
			keeper.keepSoon();
		}
		expect(store.puts).toHaveLength(1);
		timers.advance(499);
		expect(store.puts).toHaveLength(1);
		timers.advance(1);
		expect(store.puts).toHaveLength(2);
		const kept = store.puts[1]!.turns.find((t) => t.role === 'assistant');
		expect(kept?.content).toBe('Hello there');
		expect(timers.pending).toBe(0);
	});

	it('keeping at once drops the keeping that was waiting', () => {
		const { session, store, timers, keeper } = setUp();
		session.ask('q');
		keeper.keepSoon();
		keeper.keep();
		timers.advance(1000);
		expect(store.puts).toHaveLength(1);
	});

	it('open() makes a kept chat the one kept from then on; close() lets go of it and of a waiting keeping', () => {
		const { session, store, timers, keeper } = setUp();
		keeper.open('chat-1');
		expect(store.current).toBe('chat-1');
		session.ask('q');
		keeper.keepSoon();
		keeper.close();
		timers.advance(1000);
		expect(store.puts).toEqual([]);
		expect(keeper.id).toBeNull();
		keeper.open('chat-1');
		keeper.keep();
		expect(store.puts.map((r) => r.id)).toEqual(['chat-1']);
	});

	it('flush() writes through the store', async () => {
		const { store, keeper } = setUp();
		await keeper.flush();
		expect(store.flushes).toBe(1);
	});
});
