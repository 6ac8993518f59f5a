/**
 * Suggestions while typing a question: `[[` suggests notes, `#` suggests tags,
 * as Obsidian's own editor does. Pure: what is typed, which notes and tags
 * exist, what to insert. The popup that shows them is src/view/SuggestPopup.ts.
 */
import { basenameNoExt, stripMd } from './paths';

export type TriggerKind = 'note' | 'tag';

/** A mention being typed: from `start` (the `[[` or `#`) to the caret, `query` in between. */
export interface Trigger {
	kind: TriggerKind;
	query: string;
	start: number;
	end: number;
}

/** Longest query still treated as a mention being typed (a stray `[[` far back is not). */
const MAX_QUERY = 120;
/** Characters of a tag as Obsidian writes them (letters, digits, `_`, `-`, `/`). */
const TAG_CHAR = /[\p{L}\p{N}_\-/]/u;
/** What may come before a `#` that starts a tag: the start, a space, an opening bracket, punctuation. */
const BEFORE_TAG = /[\s(,;]/;

/**
 * The mention the caret is in, if any: `[[` not yet closed on this line, or a
 * `#` at the start of a word followed by tag characters only.
 */
export function findTrigger(text: string, caret: number): Trigger | null {
	const before = text.slice(0, caret);
	const open = before.lastIndexOf('[[');
	if (open !== -1) {
		const query = before.slice(open + 2);
		// Inside `[[...` until it is closed, a line ends, or a heading or alias part begins.
		if (query.length <= MAX_QUERY && !/[\]\n|#[]/.test(query)) {
			return { kind: 'note', query, start: open, end: caret };
		}
	}
	let i = caret;
	while (i > 0 && TAG_CHAR.test(before[i - 1]!)) i--;
	if (i > 0 && before[i - 1] === '#') {
		const hash = i - 1;
		const prev = hash > 0 ? before[hash - 1]! : ' ';
		const query = before.slice(i);
		// "issue #12" is not a tag: Obsidian's tags have a character other than a digit.
		if (BEFORE_TAG.test(prev) && query.length <= MAX_QUERY && !/^[\d/]+$/.test(query)) {
			return { kind: 'tag', query, start: hash, end: caret };
		}
	}
	return null;
}

/** A fuzzy match: its score (higher is better) and the matched ranges of the text, for highlighting. */
export interface FuzzyMatch {
	score: number;
	ranges: [number, number][];
}

function isWordStart(text: string, i: number): boolean {
	if (i === 0) return true;
	const prev = text[i - 1]!;
	const cur = text[i]!;
	if (/[\s/\-_.()[\]]/.test(prev)) return true;
	// camelCase: "sourdoughStarter"
	return /\p{Ll}/u.test(prev) && /\p{Lu}/u.test(cur);
}

/**
 * Every character of the query, in order, in the text (case-insensitive; a
 * space in the query matches a space right there, else nothing), as
 * Obsidian's fuzzy search matches.
 * Consecutive characters and word starts score higher, gaps lower.
 * Greedy from each possible first character, best kept. Null: no match.
 */
export function fuzzyMatch(query: string, text: string): FuzzyMatch | null {
	return matchPrepared(prepareQuery(query), text, text.toLowerCase());
}

/** Lower case, trimmed, runs of spaces as one. */
function prepareQuery(query: string): string {
	return query.toLowerCase().trim().replace(/\s+/g, ' ');
}

/** Starting points tried per text: enough for the word starts of a name, bounded for long paths. */
const MAX_STARTS = 6;
/** How many later occurrences of a character are looked at for one at a word start. */
const MAX_LOOKAHEAD = 4;

function matchPrepared(q: string, text: string, t: string): FuzzyMatch | null {
	if (q === '') return { score: 0, ranges: [] };
	// Most texts do not hold the query at all: one pass says so before any scoring.
	if (!isSubsequence(q, t)) return null;
	// The query as one piece, best at a word start, scores above any scattered match: no search needed.
	const whole = wholeMatch(q, text, t);
	if (whole) return whole;
	let best: FuzzyMatch | null = null;
	let tried = 0;
	for (let first = t.indexOf(q[0]!); first !== -1 && tried < MAX_STARTS; first = t.indexOf(q[0]!, first + 1)) {
		if (tried > 0 && !isWordStart(text, first)) continue; // the first occurrence, then word starts only
		tried++;
		const m = matchFrom(q, text, t, first, true);
		if (m && (!best || m.score > best.score)) best = m;
	}
	// Jumping to word starts can run past what a plain left-to-right match finds.
	return best ?? matchFrom(q, text, t, t.indexOf(q[0]!), false);
}

/** The query as a substring of the text, at a word start if it is at one; null if it is not in it. */
function wholeMatch(q: string, text: string, t: string): FuzzyMatch | null {
	let at = t.indexOf(q);
	if (at === -1) return null;
	for (let i = at, seen = 0; i !== -1 && seen < MAX_STARTS; i = t.indexOf(q, i + 1), seen++) {
		if (isWordStart(text, i)) {
			at = i;
			break;
		}
	}
	// As matchFrom scores it: consecutive characters, a word start, the very start, the text's length.
	const score = 3 * (q.length - 1) + (isWordStart(text, at) ? 2 : 0) + (at === 0 ? 2 : 0) - text.length * 0.01;
	return { score, ranges: [[at, at + q.length]] };
}

/** Every non-space character of q in t, in order. */
function isSubsequence(q: string, t: string): boolean {
	let pos = 0;
	for (let k = 0; k < q.length; k++) {
		if (q[k] === ' ') continue;
		pos = t.indexOf(q[k]!, pos);
		if (pos === -1) return false;
		pos++;
	}
	return true;
}

function matchFrom(q: string, text: string, t: string, first: number, wordStarts: boolean): FuzzyMatch | null {
	const ranges: [number, number][] = [];
	let score = 0;
	let pos = first;
	for (let k = 0; k < q.length; k++) {
		if (q[k] === ' ' && t[pos] !== ' ') continue; // "knee p" also matches "Knee-pain"
		// Prefer the next character right after the last one, else at a word start, else the first found.
		let at = -1;
		if (k === 0) at = first;
		else if (t[pos] === q[k]) at = pos;
		else {
			const next = t.indexOf(q[k]!, pos);
			if (next === -1) return null;
			at = next;
			if (wordStarts) {
				let seen = 0;
				for (let j = next; j !== -1 && seen < MAX_LOOKAHEAD; j = t.indexOf(q[k]!, j + 1), seen++) {
					if (isWordStart(text, j)) {
						at = j;
						break;
					}
				}
			}
		}
		const last = ranges[ranges.length - 1];
		if (last && last[1] === at) {
			last[1] = at + 1;
			score += 3; // consecutive
		} else {
			if (last) score -= Math.min(at - last[1], 10) * 0.2; // a gap
			ranges.push([at, at + 1]);
		}
		if (isWordStart(text, at)) score += 2;
		if (at === 0) score += 2;
		pos = at + 1;
	}
	// Shorter texts with the same matches rank first ("Run" before "Running log").
	score -= text.length * 0.01;
	return { score, ranges };
}

/** A note that can be suggested. */
export interface NoteCandidate {
	/** Vault path with .md. */
	path: string;
	/** Name without folder and extension. */
	basename: string;
	/** Frontmatter aliases. */
	aliases: string[];
	/** Last modified (ms since epoch): with nothing typed yet, the most recent come first. */
	mtime: number;
}

export interface NoteSuggestion {
	kind: 'note';
	note: NoteCandidate;
	/** Set when the query matched an alias rather than the name. */
	alias?: string;
	/** What the match is shown on (the name, the alias or the path) and where the query matched it. */
	matchedText: string;
	match: FuzzyMatch;
}

export interface TagCandidate {
	/** Without '#', as written in the notes ("health/knee"). */
	tag: string;
	/** Notes that use it. */
	count: number;
}

/**
 * Tags from Obsidian's counts ('#tag' → uses, as written), with the parents of
 * nested tags added: `#health` is worth suggesting when only `#health/knee` is
 * written, since a `#health` scope takes in its nested tags. A parent's count
 * is its own uses plus its children's, as Obsidian's tag pane shows it.
 */
export function tagCandidates(counts: Record<string, number>): TagCandidate[] {
	const out = new Map<string, number>();
	for (const [written, n] of Object.entries(counts)) {
		const parts = written.replace(/^#/, '').split('/');
		for (let i = 1; i <= parts.length; i++) {
			const tag = parts.slice(0, i).join('/');
			if (tag) out.set(tag, (out.get(tag) ?? 0) + n);
		}
	}
	return [...out].map(([tag, count]) => ({ tag, count }));
}

export interface TagSuggestion {
	kind: 'tag';
	tag: TagCandidate;
	match: FuzzyMatch;
}

export type Suggestion = NoteSuggestion | TagSuggestion;

export const SUGGEST_LIMIT = 20;

/** A note's name, aliases and path (without .md), each with its lower-case form: made once per note. */
interface Prepared {
	texts: { text: string; lower: string; weight: number; alias?: string }[];
	path: { text: string; lower: string };
}
const PREPARED = new WeakMap<NoteCandidate, Prepared>();

function prepared(note: NoteCandidate): Prepared {
	let p = PREPARED.get(note);
	if (!p) {
		const path = stripMd(note.path);
		p = {
			texts: [
				{ text: note.basename, lower: note.basename.toLowerCase(), weight: 1 },
				...note.aliases.map((alias) => ({ text: alias, lower: alias.toLowerCase(), weight: 0.95, alias })),
			],
			path: { text: path, lower: path.toLowerCase() },
		};
		PREPARED.set(note, p);
	}
	return p;
}

/** Notes matching the query, best first: on the name, then aliases, then the whole path. */
export function rankNotes(query: string, notes: readonly NoteCandidate[], limit = SUGGEST_LIMIT): NoteSuggestion[] {
	const q = prepareQuery(query);
	if (q === '') {
		return [...notes]
			.sort((a, b) => b.mtime - a.mtime || byText(a.basename, b.basename))
			.slice(0, limit)
			.map((note) => ({ kind: 'note', note, matchedText: note.basename, match: { score: 0, ranges: [] } }));
	}
	const withFolder = q.includes('/');
	const out: NoteSuggestion[] = [];
	for (const note of notes) {
		const p = prepared(note);
		let best: NoteSuggestion | null = null;
		for (const t of p.texts) {
			const m = matchPrepared(q, t.text, t.lower);
			if (m && (!best || m.score * t.weight > best.match.score)) {
				best = { kind: 'note', note, matchedText: t.text, match: { score: m.score * t.weight, ranges: m.ranges } };
				if (t.alias !== undefined) best.alias = t.alias;
			}
		}
		// The path only when the query names a folder ("Health/knee") or nothing else matched.
		if (!best || withFolder) {
			const m = matchPrepared(q, p.path.text, p.path.lower);
			if (m && (!best || m.score * 0.7 > best.match.score)) {
				best = { kind: 'note', note, matchedText: p.path.text, match: { score: m.score * 0.7, ranges: m.ranges } };
			}
		}
		if (best) keepBest(out, best, limit, compareNotes);
	}
	return out;
}

function compareNotes(a: NoteSuggestion, b: NoteSuggestion): number {
	return b.match.score - a.match.score || b.note.mtime - a.note.mtime || byText(a.note.path, b.note.path);
}

/**
 * Adds `item` to `top` (kept sorted, at most `limit` long) if it ranks among
 * the best: a one-letter query matches nearly every note, and sorting them all
 * on every key is most of the time taken.
 */
function keepBest<T>(top: T[], item: T, limit: number, compare: (a: T, b: T) => number): void {
	if (top.length === limit && compare(item, top[limit - 1]!) >= 0) return;
	let i = top.length;
	while (i > 0 && compare(item, top[i - 1]!) < 0) i--;
	top.splice(i, 0, item);
	if (top.length > limit) top.pop();
}

/** Plain code-point order for ties: localeCompare is slow over thousands of notes on every key. */
function byText(a: string, b: string): number {
	return a < b ? -1 : a > b ? 1 : 0;
}

/** Tags matching the query, best first; with nothing typed, the most used. */
export function rankTags(query: string, tags: readonly TagCandidate[], limit = SUGGEST_LIMIT): TagSuggestion[] {
	const q = query.trim().replace(/^#/, '');
	const out: TagSuggestion[] = [];
	for (const tag of tags) {
		const m = fuzzyMatch(q, tag.tag);
		if (!m) continue;
		// A tag that starts with what was typed (or one of its nested parts does) comes first.
		const parts = tag.tag.toLowerCase().split('/');
		const prefix = q !== '' && parts.some((_, i) => parts.slice(i).join('/').startsWith(q.toLowerCase()));
		out.push({ kind: 'tag', tag, match: { score: m.score + (prefix ? 5 : 0), ranges: m.ranges } });
	}
	out.sort((a, b) => b.match.score - a.match.score || b.tag.count - a.tag.count || byText(a.tag.tag, b.tag.tag));
	return out.slice(0, limit);
}

/**
 * The link text for a note, as Obsidian writes the shortest link: its name
 * when no other note has it, else its path without .md.
 */
export function linktextFor(path: string, allPaths: readonly string[]): string {
	const name = basenameNoExt(path);
	const clash = allPaths.some((p) => p !== path && basenameNoExt(p).toLowerCase() === name.toLowerCase());
	return clash ? stripMd(path) : name;
}

/** What a suggestion inserts: `[[Name]]`, `[[Name|alias]]` (matched on an alias), or `#tag`. */
export function insertionText(s: Suggestion, allPaths: readonly string[]): string {
	if (s.kind === 'tag') return `#${s.tag.tag}`;
	const link = linktextFor(s.note.path, allPaths);
	return s.alias ? `[[${link}|${s.alias}]]` : `[[${link}]]`;
}

/**
 * The text with the mention being typed replaced by `insert`, and where the
 * caret goes (after it and a space). A `]]` already right after the caret is
 * taken in, not doubled.
 */
export function applySuggestion(text: string, trigger: Trigger, insert: string): { text: string; caret: number } {
	let end = trigger.end;
	if (trigger.kind === 'note' && text.startsWith(']]', end)) end += 2;
	const after = text.slice(end);
	const space = after === '' || !/^[\s?.!,;:)]/.test(after) ? ' ' : '';
	const head = text.slice(0, trigger.start) + insert + space;
	// With the space already there, the caret goes past it.
	const caret = head.length + (space === '' && /^\s/.test(after) ? 1 : 0);
	return { text: head + after, caret };
}
