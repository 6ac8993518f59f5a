/**
 * What the chat pane reads from Obsidian for scope: the notes and tags to
 * suggest, and how to show a tag or a folder when a chip is clicked (a note chip opens as a link does).
 */
import { Notice, TFolder, parseFrontMatterAliases, type App } from 'obsidian';
import { tagCandidates, type NoteCandidate, type TagCandidate } from '../lib/suggest';

/** The vault's Markdown notes, with their frontmatter aliases, as Obsidian's link suggester sees them. */
export function vaultNotes(app: App): NoteCandidate[] {
	return app.vault.getMarkdownFiles().map((f) => {
		const aliases = parseFrontMatterAliases(app.metadataCache.getFileCache(f)?.frontmatter ?? null) ?? [];
		return { path: f.path, basename: f.basename, aliases: aliases.filter((a) => typeof a === 'string' && a.trim() !== ''), mtime: f.stat.mtime };
	});
}

/** `metadataCache.getTags()` is in Obsidian (tag → count, with '#') though not in its typings. */
interface TagCounts {
	getTags?: () => Record<string, number>;
}

/** The vault's tags (and the parents of nested ones) with how often each is used, without '#'. */
export function vaultTags(app: App): TagCandidate[] {
	return tagCandidates((app.metadataCache as unknown as TagCounts).getTags?.() ?? {});
}

/**
 * Obsidian's core plugins "Search" and "Files" (`app.internalPlugins`) have
 * no public API; both are used by many plugins this way. When one is turned
 * off, a Notice says what to do instead.
 */
interface InternalPlugins {
	internalPlugins?: {
		getPluginById?: (id: string) => { enabled?: boolean; instance?: Record<string, unknown> } | null;
	};
}

function corePlugin(app: App, id: string): Record<string, unknown> | null {
	const p = (app as unknown as InternalPlugins).internalPlugins?.getPluginById?.(id);
	return p && p.enabled !== false && p.instance ? p.instance : null;
}

/** Obsidian's search pane, searching `tag:#name` (which takes in its nested tags too). */
export function searchTag(app: App, tag: string): void {
	const search = corePlugin(app, 'global-search');
	const open = search?.openGlobalSearch;
	if (typeof open === 'function') open.call(search, `tag:#${tag}`);
	else new Notice(`Turn on the core plugin “Search” to list the notes tagged #${tag}.`);
}

/** The folder in Obsidian's file explorer. */
export function revealFolder(app: App, folder: string): void {
	const explorer = corePlugin(app, 'file-explorer');
	const reveal = explorer?.revealInFolder;
	const target = app.vault.getAbstractFileByPath(folder);
	if (typeof reveal === 'function' && target instanceof TFolder) reveal.call(explorer, target);
	else if (!(target instanceof TFolder)) new Notice(`There is no folder “${folder}” in this vault.`);
	else new Notice(`Turn on the core plugin “Files” to show the folder “${folder}”.`);
}
