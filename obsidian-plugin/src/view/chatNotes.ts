/**
 * "Save as note": writes a kept chat into the vault through the vault API,
 * and finds the note again next time (the path remembered in the chat, the
 * chat id in the note's frontmatter when the note was renamed or moved).
 */
import { TFile, TFolder, type App } from 'obsidian';
import { CHAT_ID_KEY, chatIdOfNote, chatNote, chatNoteName, freeNotePath, normalizeFolder } from '../lib/chatMarkdown';
import type { ChatRecord } from '../lib/history';
import { isMarkdownPath } from '../lib/paths';

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
