/** Vault path helpers (vault-relative, forward slashes). */

export function isMarkdownPath(path: string): boolean {
	return /\.md$/i.test(path);
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

/** Link text for openLinkText: path without .md, plus `#heading` when there is one. */
export function linkText(path: string, anchor?: string | null): string {
	const base = stripMd(path);
	return anchor ? `${base}#${anchor}` : base;
}
