/**
 * Scope of a question: what the server applied from mentions in the question
 * (`[[Note]]`, `#tag`, `path:Folder`), the chat pane's "This note / This
 * folder" toggle (sent as request filters), and a mention that matched nothing
 * (`scope_not_found`, with the closest names).
 */
import { basenameNoExt, folderOf, isMarkdownPath } from './paths';
import type { Filters } from './types';

/** What the server says it searched within; null: the whole vault. */
export interface AppliedScope {
	notes: string[];
	tags: string[];
	folders: string[];
}

function strings(v: unknown): string[] {
	return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string' && x !== '') : [];
}

/** The `scope` of a response, checked; null when absent, null or empty. */
export function toScope(v: unknown): AppliedScope | null {
	if (typeof v !== 'object' || v === null || Array.isArray(v)) return null;
	const o = v as Record<string, unknown>;
	const scope = { notes: strings(o.notes), tags: strings(o.tags), folders: strings(o.folders) };
	return scope.notes.length + scope.tags.length + scope.folders.length > 0 ? scope : null;
}

/** The chat pane's toggle: ask all notes, the active note only, or the active note's folder. */
export type ScopeMode = 'all' | 'note' | 'folder';

export const SCOPE_MODES: readonly ScopeMode[] = ['all', 'note', 'folder'];

export function isScopeMode(v: unknown): v is ScopeMode {
	return typeof v === 'string' && (SCOPE_MODES as readonly string[]).includes(v);
}

/** The toggle's choice made concrete for one question. */
export interface PaneScope {
	kind: 'note' | 'folder';
	/** A note's vault path (with .md), or a folder path. */
	path: string;
}

export type PaneScopeResult =
	| { ok: true; scope: PaneScope | null }
	/** The toggle asks for a note and none is open: say so rather than search the whole vault. */
	| { ok: false; reason: string };

/**
 * What the toggle means with this note open. A note at the vault's root: its
 * folder is the whole vault, so "This folder" needs no filter.
 */
export function paneScope(mode: ScopeMode, activePath: string | null): PaneScopeResult {
	if (mode === 'all') return { ok: true, scope: null };
	if (!activePath || !isMarkdownPath(activePath)) {
		return {
			ok: false,
			reason: `No note is open, so there is no ${mode === 'note' ? 'note' : 'folder'} to ask about. Open a note, or choose “All notes”.`,
		};
	}
	if (mode === 'note') return { ok: true, scope: { kind: 'note', path: activePath } };
	const folder = folderOf(activePath);
	return { ok: true, scope: folder === '' ? null : { kind: 'folder', path: folder } };
}

/** The request filters for the toggle's scope (the API's existing `filters.paths` / `filters.folders`). */
export function scopeRequestFilters(scope: PaneScope | null): Filters | undefined {
	if (!scope) return undefined;
	return scope.kind === 'note' ? { paths: [scope.path] } : { folders: [scope.path] };
}

export interface ScopeChip {
	kind: 'note' | 'tag' | 'folder';
	/** Note path (with .md), tag (without '#'), or folder path. */
	value: string;
	/** Shown on the chip: the note's name, `#tag`, the folder's path. */
	label: string;
	/** Nested tags the chip takes in (`#health` takes in `#health/knee`). */
	includes: string[];
	/** From the pane's toggle rather than the question. */
	fromPane: boolean;
}

/**
 * The chips above an answer: the toggle's note or folder first, then what the
 * question named. Nested tags the server added go inside their parent's chip.
 */
export function scopeChips(applied: AppliedScope | null, pane: PaneScope | null): ScopeChip[] {
	const chips: ScopeChip[] = [];
	const seen = new Set<string>();
	const add = (chip: ScopeChip): void => {
		const key = `${chip.kind}:${chip.value}`;
		if (seen.has(key)) return;
		seen.add(key);
		chips.push(chip);
	};
	if (pane) {
		add({
			kind: pane.kind,
			value: pane.path,
			label: pane.kind === 'note' ? basenameNoExt(pane.path) : pane.path,
			includes: [],
			fromPane: true,
		});
	}
	if (!applied) return chips;
	for (const path of applied.notes) add({ kind: 'note', value: path, label: basenameNoExt(path), includes: [], fromPane: false });
	const tags = applied.tags;
	for (const tag of tags) {
		const parent = tags.find((t) => t !== tag && tag.startsWith(t + '/'));
		if (parent) continue;
		add({
			kind: 'tag',
			value: tag,
			label: `#${tag}`,
			includes: tags.filter((t) => t.startsWith(tag + '/')),
			fromPane: false,
		});
	}
	for (const folder of applied.folders) add({ kind: 'folder', value: folder, label: folder, includes: [], fromPane: false });
	return chips;
}

/** A scope mention that matched nothing, as the server's `scope_not_found` error lists it in `misses`. */
export interface ScopeMiss {
	kind: 'note' | 'tag' | 'folder';
	/** As written in the question: "[[Projct X]]", "#runing", 'path:"Projcts"'. */
	written: string;
	/** How to write the closest names the index holds, closest first. */
	closest: string[];
}

const MISS_KINDS: ReadonlySet<string> = new Set(['note', 'tag', 'folder']);

/**
 * The `misses` of a `scope_not_found` error (or of one kept in the history),
 * checked: entries of another shape are dropped. Empty when absent (a server
 * from before `misses`): the error is then shown as plain text, without buttons.
 */
export function toScopeMisses(v: unknown): ScopeMiss[] {
	if (!Array.isArray(v)) return [];
	const out: ScopeMiss[] = [];
	for (const m of v) {
		if (typeof m !== 'object' || m === null || Array.isArray(m)) continue;
		const o = m as Record<string, unknown>;
		if (typeof o.kind !== 'string' || !MISS_KINDS.has(o.kind) || typeof o.written !== 'string' || o.written === '') continue;
		out.push({ kind: o.kind as ScopeMiss['kind'], written: o.written, closest: strings(o.closest) });
	}
	return out;
}

/** `[[...]]`, `path:"..."`, `path:word` or `#tag`, as the server writes names in its messages. */
const NAME_RE = /\[\[[^\]\n]+\]\]|path:"[^"\n]+"|path:\S+?(?=[,.]?(?:\s|$))|#[\p{L}\p{N}_\-/]+/gu;

/** Names put in code spans, so that Markdown shows `[[Projct X]]` as written, not as a link to nothing. */
export function codeNames(text: string): string {
	return text.replace(NAME_RE, (name) => '`' + name + '`');
}

/** The question with the mention that matched nothing replaced by a name that exists. */
export function fixQuestion(question: string, written: string, replacement: string): string {
	const i = question.indexOf(written);
	if (i !== -1) return question.slice(0, i) + replacement + question.slice(i + written.length);
	// Not there as the server reported it (the question was edited, or cased differently): case-blind.
	const j = question.toLowerCase().indexOf(written.toLowerCase());
	if (j !== -1) return question.slice(0, j) + replacement + question.slice(j + written.length);
	return `${question.trim()} ${replacement}`;
}

/** What a closest name is, for its button: "[[Project X]]" → note "Project X". */
export function nameKind(name: string): { kind: 'note' | 'tag' | 'folder'; value: string } {
	if (name.startsWith('[[')) return { kind: 'note', value: name.slice(2, -2).split('|')[0]!.split('#')[0]! };
	if (name.startsWith('path:')) return { kind: 'folder', value: name.slice(5).replace(/^"|"$/g, '') };
	return { kind: 'tag', value: name.replace(/^#/, '') };
}

/** A folder mention as the server parses it: quoted when the folder's path has a space. */
export function folderMention(folder: string): string {
	return /[\s"]/.test(folder) ? `path:"${folder}"` : `path:${folder}`;
}
