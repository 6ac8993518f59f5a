/**
 * Proposed changes to notes, as the views show them: a unified diff read line by line, what the status
 * bar says, grouping by source, and the checks a change made through Obsidian's Vault.process makes.
 * Pure: no Obsidian at run time.
 */
import type { Proposal } from './types';

export type DiffLineKind = 'file' | 'hunk' | 'add' | 'del' | 'context' | 'note';

export interface DiffLine {
	kind: DiffLineKind;
	/** The line without its +, - or space mark (for file, hunk and note lines: as written). */
	text: string;
}

/** A unified diff (`--- a/…`, `+++ b/…`, `@@ … @@`, then ` `/`+`/`-` lines) as kinds of lines; a CR at a line's end is dropped. */
export function diffLines(diff: string): DiffLine[] {
	const out: DiffLine[] = [];
	const lines = diff.split('\n');
	if (lines.length && lines[lines.length - 1] === '') lines.pop();
	for (const raw of lines) {
		const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
		if (line.startsWith('--- ') || line.startsWith('+++ ')) out.push({ kind: 'file', text: line });
		else if (line.startsWith('@@')) out.push({ kind: 'hunk', text: line });
		else if (line.startsWith('\\')) out.push({ kind: 'note', text: line });
		else if (line.startsWith('+')) out.push({ kind: 'add', text: line.slice(1) });
		else if (line.startsWith('-')) out.push({ kind: 'del', text: line.slice(1) });
		else out.push({ kind: 'context', text: line.slice(1) });
	}
	return out;
}

/** The lines a change removes and adds, for a short "before / after" beside the diff. */
export function beforeAfter(diff: string): { before: string[]; after: string[] } {
	const lines = diffLines(diff);
	return {
		before: lines.filter((l) => l.kind === 'del').map((l) => l.text),
		after: lines.filter((l) => l.kind === 'add').map((l) => l.text),
	};
}

/** How many proposals wait for a decision (pending, and stale ones: those still need one, a reject). */
export function waitingCount(counts: ProposalCounts | undefined): number {
	return (counts?.pending ?? 0) + (counts?.stale ?? 0);
}

export type ProposalCounts = Partial<Record<Proposal['state'], number>>;

/** The status bar's words for the waiting proposals; '' when none wait. */
export function waitingText(n: number): string {
	if (n <= 0) return '';
	return `${n} change${n === 1 ? '' : 's'} to review`;
}

/** Waiting proposals by source, each source's newest first, the sources in order of their newest proposal. */
export function bySource(proposals: readonly Proposal[]): { source: string; proposals: Proposal[] }[] {
	const groups = new Map<string, Proposal[]>();
	for (const p of proposals) {
		const list = groups.get(p.source);
		if (list) list.push(p);
		else groups.set(p.source, [p]);
	}
	return [...groups].map(([source, list]) => ({ source, proposals: list }));
}

/** The words for a source in a list: vask's own link suggestions by name, others as given. */
export function sourceLabel(source: string): string {
	return source === 'links' ? 'Link suggestions' : `From ${source}`;
}

export class StaleChange extends Error {
	override readonly name = 'StaleChange';
}

/**
 * The new text of a note for Vault.process: the proposal's text, only when the note is exactly what it
 * was proposed for (`undo`: back to that text, only when the note is exactly what was applied).
 * Throws StaleChange otherwise, so that Vault.process writes nothing.
 */
export function processedText(current: string, proposal: Proposal, undo = false): string {
	const expected = undo ? proposal.after : proposal.before;
	const next = undo ? proposal.before : proposal.after;
	if (expected === undefined || next === undefined) throw new StaleChange('the proposal was given without its texts');
	if (current !== expected) throw new StaleChange(`${proposal.path} changed since`);
	return next;
}

/**
 * Whether the plugin may write a change itself (through Obsidian's Vault.process) rather than ask the
 * server to: only when the server reads this very vault folder, for a change to a note that exists.
 */
export function writesInObsidian(serverVault: string | null, vaultPath: string | null, proposal: Proposal): boolean {
	if (!serverVault || !vaultPath || proposal.kind === 'create') return false;
	const norm = (p: string): string => p.replace(/\\/g, '/').replace(/\/+$/, '');
	return norm(serverVault) === norm(vaultPath);
}
