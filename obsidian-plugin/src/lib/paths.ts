/** Vault path helpers (vault-relative, forward slashes). */

export function isMarkdownPath(path: string): boolean {
	return /\.md$/i.test(path);
}

/** The files vask indexes: notes, Canvas boards and PDFs. */
export function isIndexedPath(path: string): boolean {
	return /\.(md|canvas|pdf)$/i.test(path);
}

/** "01 Projects/Plan.md" → "01 Projects/Plan" (what Obsidian link text uses). */
export function stripMd(path: string): string {
	return path.replace(/\.md$/i, '');
}

/** "01 Projects/Plan.md" → "Plan". */
export function basenameNoExt(path: string): string {
	const name = path.slice(path.lastIndexOf('/') + 1);
	return stripMd(name);
}

/** "01 Projects/Plan.md" → "01 Projects"; "" at the vault's root. */
export function folderOf(path: string): string {
	const i = path.lastIndexOf('/');
	return i === -1 ? '' : path.slice(0, i);
}

/**
 * Link text for openLinkText: path without .md, plus `#heading` when there is one; a PDF's path
 * plus `#page=N`, which Obsidian's PDF viewer opens at that page.
 */
export function linkText(path: string, anchor?: string | null, page?: number | null): string {
	if (typeof page === 'number' && page >= 1) return `${path}#page=${page}`;
	const base = stripMd(path);
	return anchor ? `${base}#${anchor}` : base;
}

/** "p. 3" for a passage on a PDF's page; "" for anything else. */
export function pageLabel(source: { page?: number | null }): string {
	return typeof source.page === 'number' && source.page >= 1 ? `p. ${source.page}` : '';
}
