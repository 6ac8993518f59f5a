/**
 * "Save as note": writes a kept chat into the vault through the vault API,
 * and finds the note again next time (the path remembered in the chat, the
 * chat id in the note's frontmatter when the note was renamed or moved).
 * Also "Copy chat as Markdown".
 */
import { Notice, TFile, TFolder, type App } from 'obsidian';
import { CHAT_ID_KEY, chatAsMarkdown, chatIdOfNote, chatNote, chatNoteName, freeNotePath, normalizeFolder } from '../lib/chatMarkdown';
import type { VaskClient } from '../lib/client';
import type { ChatRecord } from '../lib/history';
import type { HistoryStore } from '../lib/historyStore';
import { isMarkdownPath } from '../lib/paths';
import type { VaskSettings } from '../lib/settings';

export interface SaveChatOptions {
	folder: string;
	exclude: boolean;
	models: string[];
	now?: Date;
}

export interface SavedChat {
	path: string;
	/** false: a new note; true: the chat's earlier note was updated. */
	updated: boolean;
}

async function ensureFolder(app: App, folder: string): Promise<void> {
	if (!folder) return;
	let path = '';
	for (const part of folder.split('/')) {
		path = path ? `${path}/${part}` : part;
		const existing = app.vault.getAbstractFileByPath(path);
		if (existing instanceof TFolder) continue;
		if (existing) throw new Error(`"${path}" is a file, so it cannot be the folder for saved chats. Change the folder in Settings → Vask.`);
		await app.vault.createFolder(path);
	}
}

/** The note this chat was saved to: at the path it remembers, else any note whose frontmatter names the chat. */
async function findNote(app: App, record: ChatRecord, folder: string): Promise<TFile | null> {
	if (record.notePath) {
		const f = app.vault.getAbstractFileByPath(record.notePath);
		if (f instanceof TFile && chatIdOfNote(await app.vault.cachedRead(f)) === record.id) return f;
	}
	// Renamed or moved while the plugin was not running: Obsidian's cache knows every note's frontmatter.
	const cache = (app as Partial<App>).metadataCache;
	if (cache && typeof cache.getFileCache === 'function') {
		for (const f of app.vault.getMarkdownFiles()) {
			if (cache.getFileCache(f)?.frontmatter?.[CHAT_ID_KEY] === record.id) return f;
		}
	}
	// Without the cache (or before it is ready): read the notes in the chats folder.
	const dir = folder ? app.vault.getAbstractFileByPath(folder) : app.vault.getRoot();
	if (dir instanceof TFolder) {
		for (const child of dir.children) {
			if (child instanceof TFile && isMarkdownPath(child.path) && chatIdOfNote(await app.vault.cachedRead(child)) === record.id) return child;
		}
	}
	return null;
}

/** Writes the chat's note: updates the one it was saved to before, or creates one in the folder. */
export async function saveChatNote(app: App, record: ChatRecord, opts: SaveChatOptions): Promise<SavedChat> {
	const text = chatNote(record, { exclude: opts.exclude, models: opts.models, now: opts.now ?? new Date() });
	const folder = normalizeFolder(opts.folder);
	const existing = await findNote(app, record, folder);
	if (existing) {
		await app.vault.modify(existing, text);
		return { path: existing.path, updated: true };
	}
	await ensureFolder(app, folder);
	const path = freeNotePath(folder, chatNoteName(record.title), (p) => app.vault.getAbstractFileByPath(p) !== null);
	const file = await app.vault.create(path, text);
	return { path: file.path, updated: false };
}

/** What saving needs of the plugin. */
export interface SaveChatHost {
	readonly history: HistoryStore;
	readonly settings: VaskSettings;
	readonly client: VaskClient;
}

/** The chat models a chat used: the ones asked for, else the server's default (asked for now, if it answers). */
async function chatModels(record: ChatRecord, client: VaskClient): Promise<string[]> {
	const models = new Set<string>();
	let unnamed = false;
	for (const t of record.turns) {
		if (t.role !== 'assistant') continue;
		if (t.model) models.add(t.model);
		else unnamed = true;
	}
	if (unnamed) {
		try {
			const health = await client.health({ signal: AbortSignal.timeout(3000) });
			if (health.models?.chat) models.add(health.models.chat);
		} catch {
			// The note is saved without it.
		}
	}
	return [...models];
}

/** "Save chat as note": writes (or updates) the chat's note, remembers where, says so and opens it. */
export async function saveChatAsNote(app: App, host: SaveChatHost, id: string): Promise<void> {
	const record = host.history.get(id);
	if (!record) return;
	try {
		const saved = await saveChatNote(app, record, {
			folder: host.settings.chatsFolder,
			exclude: !host.settings.indexSavedChats,
			models: await chatModels(record, host.client),
		});
		host.history.setNotePath(id, saved.path);
		void host.history.flush();
		new Notice(saved.updated ? `Chat note updated: ${saved.path}` : `Chat saved as ${saved.path}`);
		await app.workspace.openLinkText(saved.path, '', false);
	} catch (err) {
		new Notice(`vask: could not save the chat as a note: ${err instanceof Error ? err.message : String(err)}`, 10_000);
	}
}

/** "Copy chat as Markdown": the note's text without its frontmatter. */
export async function copyChat(history: HistoryStore, id: string): Promise<void> {
	const record = history.get(id);
	if (!record) return;
	try {
		await navigator.clipboard.writeText(chatAsMarkdown(record));
		new Notice('Chat copied as Markdown');
	} catch (err) {
		new Notice(`Could not copy: ${err instanceof Error ? err.message : String(err)}`);
	}
}
