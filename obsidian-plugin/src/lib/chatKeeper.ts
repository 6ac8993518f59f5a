/**
 * Keeps the pane's chat in the history store as it happens, so that a crash
 * or a quit mid-answer loses nothing that had arrived. The store writes to
 * disk on its own delay; this decides when the chat is handed to it.
 */
import type { ChatSession } from './chat';
import { defaultTimers, type Timers } from './debounce';
import { chatRecord, newChatId } from './history';
import { DEFAULT_SAVE_DELAY_MS, type HistoryStore } from './historyStore';

/** The parts of the history store the pane's chat needs. */
export type ChatStore = Pick<HistoryStore, 'get' | 'put' | 'setCurrent' | 'flush'>;

export class ChatKeeper {
	/** The kept chat shown, once it has a question. */
	private chatId: string | null = null;
	private timer: unknown = null;

	constructor(
		private readonly session: ChatSession,
		private readonly store: ChatStore,
		private readonly timers: Timers = defaultTimers,
		private readonly delay: number = DEFAULT_SAVE_DELAY_MS,
	) {}

	/** The id of the kept chat; null while it has no question. */
	get id(): string | null {
		return this.chatId;
	}

	/**
	 * While an answer streams: kept at most once per save delay, not on every token
	 * (each keeping copies the whole chat, and the store writes once per delay anyway).
	 */
	keepSoon(): void {
		if (this.timer !== null) return;
		this.timer = this.timers.setTimeout(() => {
			this.timer = null;
			this.keep();
		}, this.delay);
	}

	/** Keeps the chat as it is now (the store writes it within a moment). */
	keep(): void {
		this.cancel();
		if (this.session.isEmpty) return;
		this.chatId ??= newChatId();
		this.store.put(chatRecord(this.chatId, this.session.all, new Date(), this.store.get(this.chatId)));
	}

	/** Writes what the store holds now, e.g. when an answer is complete. */
	flush(): Promise<void> {
		return this.store.flush();
	}

	/** From now on the kept chat `id` is the one shown (a chat reopened from the history). */
	open(id: string): void {
		this.chatId = id;
		this.store.setCurrent(id);
	}

	/**
	 * The pane lets go of its chat: a keeping still waiting is dropped, since
	 * nothing changed since the last event was kept, and switching chats must
	 * not touch their dates.
	 */
	close(): void {
		this.cancel();
		this.chatId = null;
	}

	private cancel(): void {
		if (this.timer === null) return;
		this.timers.clearTimeout(this.timer);
		this.timer = null;
	}
}
