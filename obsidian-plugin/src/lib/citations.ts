/**
 * Turns the `[Note Title]` citations in an answer into Obsidian internal links
 * (`[[path#heading|Note Title]]`), so that MarkdownRenderer renders them as
 * clickable `a.internal-link` elements.
 */
import { basenameNoExt, linkText, stripMd } from './paths';
import type { Citation, Source } from './types';

export interface LinkTarget {
	title: string;
	/** Link text for openLinkText, e.g. "01 Projects/Plan#Risks". */
	link: string;
	path: string;
	heading: string;
	anchor: string;
}

function targetOf(x: {
	title: string;
	path: string;
	heading?: string;
	anchor?: string;
	link?: string;
	page?: number | null;
}): LinkTarget {
	return {
		title: x.title ?? '',
		path: x.path ?? '',
		heading: x.heading ?? '',
		anchor: x.anchor ?? '',
		link: x.link || linkText(x.path ?? '', x.anchor, x.page),
	};
}

/** Citations first (they say which heading a title refers to), then sources in rank order. */
export function linkTargets(citations: readonly Citation[], sources: readonly Source[]): LinkTarget[] {
	const out: LinkTarget[] = [];
	const seen = new Set<string>();
	for (const x of [...citations, ...sources]) {
		if (!x || typeof x.path !== 'string') continue;
		const t = targetOf(x);
		const key = `${t.title}\u0000${t.link}`;
		if (seen.has(key)) continue;
		seen.add(key);
		out.push(t);
	}
	return out;
}

function norm(s: string): string {
	return s.normalize('NFC').trim().replace(/\s+/g, ' ').toLowerCase();
}

/** Finds the target a bracketed label refers to, or null. */
export function resolveCitation(label: string, targets: readonly LinkTarget[]): LinkTarget | null {
	const n = norm(label);
	if (!n) return null;
	const byTitle = targets.find((t) => norm(t.title) === n);
	if (byTitle) return byTitle;
	const bare = norm(stripMd(label));
	const byPath = targets.find((t) => norm(stripMd(t.path)) === bare || norm(basenameNoExt(t.path)) === bare);
	if (byPath) return byPath;
	// "Title > Heading", "Title#Heading", "Title › Heading"
	const m = /^(.+?)\s*(?:#|>|›)\s*(.+)$/.exec(label.trim());
	if (m) {
		const title = norm(m[1]!);
		const heading = norm(m[2]!);
		const sameTitle = targets.filter((t) => norm(t.title) === title || norm(basenameNoExt(t.path)) === title);
		const exact = sameTitle.find(
			(t) => norm(t.anchor) === heading || norm(t.heading) === heading || norm(t.heading).endsWith('> ' + heading),
		);
		if (exact) return exact;
		if (sameTitle[0]) {
			// The heading is not among the retrieved passages: link the note itself.
			const t = sameTitle[0];
			return { ...t, link: stripMd(t.path), heading: '', anchor: '' };
		}
	}
	return null;
}

function safe(s: string): string {
	return s.replace(/\|/g, '∣').replace(/\]\]/g, '] ]').replace(/\n/g, ' ');
}

function wikilink(t: LinkTarget, label: string): string {
	return `[[${safe(t.link)}|${safe(label.trim())}]]`;
}

/** `[label]` → wikilink text, or null when the label cites nothing known. */
function replaceLabel(label: string, targets: readonly LinkTarget[]): string | null {
	const one = resolveCitation(label, targets);
	if (one) return wikilink(one, label);
	// "[Plan; Ideas]" / "[Plan, Ideas]": several citations in one pair of brackets.
	const parts = label.split(/(\s*[;,]\s*)/);
	if (parts.length < 3) return null;
	let out = '';
	for (let i = 0; i < parts.length; i++) {
		const part = parts[i]!;
		if (i % 2 === 1) {
			out += part;
			continue;
		}
		const t = resolveCitation(part, targets);
		if (!t) return null;
		out += wikilink(t, part);
	}
	return out;
}

const FENCE = /^ {0,3}(`{3,}|~{3,})/;

/** Linkifies one line that is not inside a code block. */
function linkifyLine(line: string, targets: readonly LinkTarget[]): string {
	let out = '';
	let i = 0;
	while (i < line.length) {
		const c = line[i]!;
		if (c === '\\') {
			out += line.slice(i, i + 2);
			i += 2;
			continue;
		}
		if (c === '`') {
			let run = 1;
			while (line[i + run] === '`') run++;
			const fence = '`'.repeat(run);
			let close = line.indexOf(fence, i + run);
			while (close !== -1 && line[close + run] === '`') {
				let r = close;
				while (line[r] === '`') r++;
				close = line.indexOf(fence, r);
			}
			const end = close === -1 ? i + run : close + run;
			out += line.slice(i, end);
			i = end;
			continue;
		}
		if (c === '[') {
			if (line[i + 1] === '[') {
				// Already a wikilink: keep it as it is.
				const close = line.indexOf(']]', i + 2);
				const end = close === -1 ? i + 2 : close + 2;
				out += line.slice(i, end);
				i = end;
				continue;
			}
			let j = i + 1;
			while (j < line.length && line[j] !== ']' && line[j] !== '[') j++;
			if (j >= line.length || line[j] === '[') {
				out += c;
				i++;
				continue;
			}
			const label = line.slice(i + 1, j);
			const next = line[j + 1];
			const isImage = i > 0 && line[i - 1] === '!';
			if (next === '(') {
				// A Markdown link or image: copy through the closing parenthesis.
				const close = line.indexOf(')', j + 2);
				const end = close === -1 ? j + 1 : close + 1;
				out += line.slice(i, end);
				i = end;
				continue;
			}
			if ((next === ':' && line.slice(0, i).trim() === '') || isImage) {
				out += line.slice(i, j + 1);
				i = j + 1;
				continue;
			}
			const replaced = replaceLabel(label, targets);
			out += replaced ?? line.slice(i, j + 1);
			i = j + 1;
			continue;
		}
		out += c;
		i++;
	}
	return out;
}

/**
 * Replaces each `[Title]` that names a known citation/source with a wikilink
 * to it. Leaves code (fenced and inline), existing links and unknown labels
 * alone.
 */
export function linkifyCitations(markdown: string, targets: readonly LinkTarget[]): string {
	if (targets.length === 0 || !markdown.includes('[')) return markdown;
	const lines = markdown.split('\n');
	let fence: string | null = null;
	for (let k = 0; k < lines.length; k++) {
		const line = lines[k]!;
		const m = FENCE.exec(line);
		if (fence !== null) {
			if (m && m[1]![0] === fence[0] && m[1]!.length >= fence.length && line.trim() === m[1]) fence = null;
			continue;
		}
		if (m) {
			fence = m[1]!;
			continue;
		}
		lines[k] = linkifyLine(line, targets);
	}
	return lines.join('\n');
}

/** Letters and digits only: "Knee pain — physio notes" and "Knee pain - physio notes" compare equal. */
function loose(s: string): string {
	return s.normalize('NFKC').toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '');
}

/**
 * A heading path for display: "Plan > Risks > Budget" in note "Plan" →
 * "Risks › Budget" (the note title is shown beside it already).
 */
export function headingLabel(heading: string, title: string): string {
	const parts = heading
		.split('>')
		.map((p) => p.trim())
		.filter((p) => p !== '');
	// The path may start with the note title and its H1 (often the title again, spelled a little differently).
	const t = loose(title);
	while (parts.length > 0 && loose(parts[0]!) === t) parts.shift();
	return parts.join(' › ');
}
