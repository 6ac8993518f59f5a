/**
 * The kept chats, in memory and in one file. Writes are coalesced: the first
 * change starts a short timer and every change until it fires goes in the
 * same write, so a streaming answer is on disk within `saveDelayMs` of each
 * token (a crash keeps the question and what had arrived) without a write
 * per token. The file system comes in as an interface (Obsidian's
 * `vault.adapter` in the plugin, a Map in the tests).
 */
import { defaultTimers, type Timers } from './debounce';
import {
	DEFAULT_HISTORY_LIMITS,
	parseHistory,
	pruneHistory,
	serializeHistory,
	summaryOf,
	type ChatRecord,
	type ChatSummary,
	type HistoryLimits,
} from './history';
import { folderOf } from './paths';

/** What the store needs of a file system (a subset of Obsidian's DataAdapter). */
export interface HistoryFiles {
	exists(path: string): Promise<boolean>;
	read(path: string): Promise<string>;
	write(path: string, data: string): Promise<void>;
	mkdir(path: string): Promise<void>;
}

export interface HistoryStoreOptions {
	limits?: HistoryLimits;
	/** Longest a change waits to be written (ms). */
	saveDelayMs?: number;
	timers?: Timers;
	now?: () => Date;
	/** A write failed (the disk is full, the folder is read-only): said once until a write works. */
	onWriteError?: (err: unknown) => void;
}

export interface LoadResult {
	/** Chats read. */
	chats: number;
	/** What went wrong reading the file, in words for the user; null when it was fine (or absent). */
	problem: string | null;
	/** Where the unreadable file was kept, when it was. */
	backup: string | null;
}

export const DEFAULT_SAVE_DELAY_MS = 500;

export class HistoryStore {
	private readonly records = new Map<string, ChatRecord>();
	private current: string | null = null;
	private handle: unknown = null;
	private writing: Promise<void> | null = null;
	private dirty = false;
	private writeFailing = false;
	/** false after a load that could neither read the file nor copy it aside: writing would lose it. */
	private writable = true;
	private readonly limits: HistoryLimits;
	private readonly saveDelayMs: number;
	private readonly timers: Timers;
	private readonly now: () => Date;
	private readonly listeners = new Set<() => void>();

	constructor(
		private readonly files: HistoryFiles,
		/** The history file, e.g. ".obsidian/plugins/vask/chat-history.jsonl". */
		readonly path: string,
		private readonly opts: HistoryStoreOptions = {},
	) {
		this.limits = opts.limits ?? DEFAULT_HISTORY_LIMITS;
		this.saveDelayMs = opts.saveDelayMs ?? DEFAULT_SAVE_DELAY_MS;
		this.timers = opts.timers ?? defaultTimers;
		this.now = opts.now ?? (() => new Date());
	}

	/**
	 * Reads the file. A missing file is an empty history. An unreadable one (or
	 * one with unreadable lines) is copied aside first, so nothing of it is
	 * lost, and the chats that could be read are written back at once: the
	 * problem is reported by this load only, not by every start after it.
	 */
	async load(): Promise<LoadResult> {
		this.records.clear();
		this.current = null;
		this.writable = true;
		let text: string;
		try {
			if (!(await this.files.exists(this.path))) return { chats: 0, problem: null, backup: null };
			text = await this.files.read(this.path);
		} catch (err) {
			this.writable = false;
			return {
				chats: 0,
				problem: `it could not be read (${err instanceof Error ? err.message : String(err)}), so it is left as it is and chats are not kept until Obsidian is restarted with the file readable`,
				backup: null,
			};
		}
		const parsed = parseHistory(text, this.now());
		for (const r of parsed.records) this.records.set(r.id, r);
		this.current = parsed.current;
		if (parsed.problems.length === 0) return { chats: this.records.size, problem: null, backup: null };
		const backup = this.backupPath();
		try {
			await this.files.write(backup, text);
		} catch (err) {
			// Without a copy, rewriting would lose what could not be read: leave the file as it is.
			this.writable = false;
			return {
				chats: this.records.size,
				problem: `${parsed.problems.join('; ')}, and it could not be copied aside (${err instanceof Error ? err.message : String(err)}), so it is left as it is and new chats are not kept this time`,
				backup: null,
			};
		}
		this.dirty = true;
		await this.flush();
		return { chats: this.records.size, problem: parsed.problems.join('; '), backup };
	}

	private backupPath(): string {
		const stamp = this.now().toISOString().replace(/[:.]/g, '-');
		const dot = this.path.lastIndexOf('.');
		const base = dot > this.path.lastIndexOf('/') ? this.path.slice(0, dot) : this.path;
		return `${base}.unreadable-${stamp}.jsonl`;
	}

	/** Called after every change of the list (not of a chat's text): the history modal refreshes. */
	onChange(fn: () => void): () => void {
		this.listeners.add(fn);
		return () => this.listeners.delete(fn);
	}

	private changed(listChanged: boolean): void {
		this.dirty = true;
		this.schedule();
		if (listChanged) for (const fn of this.listeners) fn();
	}

	get size(): number {
		return this.records.size;
	}

	/** The chat that was open in the pane, to show it again when the pane opens. */
	get currentId(): string | null {
		return this.current;
	}

	list(): ChatSummary[] {
		return [...this.records.values()].map(summaryOf).sort((a, b) => (a.updatedAt < b.updatedAt ? 1 : a.updatedAt > b.updatedAt ? -1 : 0));
	}

	get(id: string): ChatRecord | null {
		return this.records.get(id) ?? null;
	}

	/** Keeps (or replaces) a chat; `open`: it is the chat in the pane now. */
	put(record: ChatRecord, open = true): void {
		const isNew = !this.records.has(record.id);
		this.records.set(record.id, record);
		if (open) this.current = record.id;
		this.changed(isNew);
	}

	/** The pane shows no kept chat ("New chat"). */
	setCurrent(id: string | null): void {
		if (this.current === id) return;
		this.current = id;
		this.changed(false);
	}

	rename(id: string, title: string): boolean {
		const r = this.records.get(id);
		const t = title.replace(/\s+/g, ' ').trim();
		if (!r || !t) return false;
		this.records.set(id, { ...r, title: t });
		this.changed(true);
		return true;
	}

	/** Remembers where the chat was saved as a note. */
	setNotePath(id: string, notePath: string | undefined): void {
		const r = this.records.get(id);
		if (!r || r.notePath === notePath) return;
		const next = { ...r };
		if (notePath) next.notePath = notePath;
		else delete next.notePath;
		this.records.set(id, next);
		this.changed(false);
	}

	/** A saved note was renamed or moved in the vault: the chats that point at it follow. */
	noteRenamed(oldPath: string, newPath: string): void {
		for (const r of this.records.values()) if (r.notePath === oldPath) this.setNotePath(r.id, newPath);
	}

	delete(id: string): boolean {
		if (!this.records.delete(id)) return false;
		if (this.current === id) this.current = null;
		this.changed(true);
		return true;
	}

	clear(): number {
		const n = this.records.size;
		this.records.clear();
		this.current = null;
		this.changed(true);
		return n;
	}

	private schedule(): void {
		if (this.handle !== null) return;
		this.handle = this.timers.setTimeout(() => {
			this.handle = null;
			void this.flush();
		}, this.saveDelayMs);
	}

	/** Writes pending changes now (after a write in progress). Never rejects. */
	async flush(): Promise<void> {
		if (this.handle !== null) {
			this.timers.clearTimeout(this.handle);
			this.handle = null;
		}
		while (this.writing) await this.writing;
		if (!this.dirty) return;
		this.dirty = false;
		this.writing = this.write().finally(() => {
			this.writing = null;
		});
		await this.writing;
	}

	private async write(): Promise<void> {
		if (!this.writable) {
			this.dirty = true; // kept in memory for this session only
			return;
		}
		const { kept, dropped } = pruneHistory([...this.records.values()], this.limits, this.current);
		for (const r of dropped) this.records.delete(r.id);
		const text = serializeHistory(kept, this.current);
		try {
			const dir = folderOf(this.path);
			if (dir && !(await this.files.exists(dir))) await this.files.mkdir(dir);
			await this.files.write(this.path, text);
			this.writeFailing = false;
		} catch (err) {
			this.dirty = true; // try again with the next change
			if (!this.writeFailing) this.opts.onWriteError?.(err);
			this.writeFailing = true;
		}
		if (dropped.length > 0) for (const fn of this.listeners) fn();
	}
}
