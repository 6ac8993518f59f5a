/**
 * What is said below an answer's text: the seed and time-range chips, the
 * server's notice, and the sources (grouped by how they link to the seed for
 * an answer about connections).
 */
import type { AssistantTurn } from '../lib/chat';
import { headingLabel } from '../lib/citations';
import { basenameNoExt, pageLabel, stripMd } from '../lib/paths';
import { byLinkKind, groupTitle, linkKind, linkLabel } from '../lib/seed';
import { dateSourceText, describeRange, isFileTimeDate, sourceDateText } from '../lib/time';
import type { SeedInfo, Source, TimeRange } from '../lib/types';
import { createInternalLink } from './links';

/** What the chips' buttons do: each asks the answer's question again, read another way. */
export interface SourcesActions {
	/** The time chip's "Search all dates". */
	searchAllDates: () => void;
	/** The seed chip's ✕: the question read as written. */
	askAsWritten: () => void;
}

/** Fills `el` for `turn`; hidden when there is nothing to say. */
export function renderSources(el: HTMLElement, turn: AssistantTurn, actions: SourcesActions): void {
	el.empty();
	// A time range is shown even with nothing found in it: that is when "Search all dates" helps most.
	if (turn.sources.length === 0 && !turn.notice && !turn.timeRange && !turn.seed) {
		el.hide();
		return;
	}
	el.show();
	if (turn.seed) renderSeed(el, turn.seed, actions.askAsWritten);
	if (turn.timeRange) renderTimeRange(el, turn.timeRange, actions.searchAllDates);
	// Said above the sources, where it applies: e.g. "Ollama is not reachable … keyword matches only".
	if (turn.notice) el.createDiv({ cls: 'vask-notice', text: turn.notice });
	if (turn.sources.length === 0) return;
	el.createDiv({
		cls: 'vask-sources-title',
		// Without an answer they are not sources of anything, only the notes that matched.
		text: turn.declined || turn.status === 'error' || (turn.status === 'stopped' && !turn.content) ? 'Matching notes' : 'Sources',
	});
	renderList(el, turn);
}

/**
 * An answer about connections: the seed's own passages when kept, then the
 * notes not linked yet, then the linked ones, apart.
 */
function renderList(el: HTMLElement, turn: AssistantTurn): void {
	const cited = new Set(turn.citations.map((c) => c.path));
	const seed = turn.seed;
	const groups = seed ? byLinkKind(turn.sources) : null;
	const ordered = groups ? [...groups.seed, ...groups.unlinked, ...groups.linked, ...groups.other] : turn.sources;
	const list = el.createEl('ol', { cls: 'vask-sources-list' });
	let lastKind: string | null = null;
	for (const s of ordered) {
		const kind = groups ? linkKind(s) : null;
		if (seed && kind !== lastKind && kind !== null) {
			list.createEl('li', { cls: 'vask-sources-group', attr: { role: 'presentation' }, text: groupTitle(kind, seed.title) });
			lastKind = kind;
		}
		renderSource(list, s, cited.has(s.path), seed);
	}
}

function renderSource(list: HTMLElement, s: Source, cited: boolean, seed: SeedInfo | null): void {
	const li = list.createEl('li', { cls: 'vask-source' });
	li.toggleClass('is-cited', cited);
	const head = li.createDiv({ cls: 'vask-source-head' });
	createInternalLink(head, s.link, s.title || basenameNoExt(s.path), 'vask-source-link');
	const meta = head.createDiv({ cls: 'vask-source-meta' });
	renderSourceDate(s, meta);
	if (typeof s.score === 'number') {
		meta.createSpan({ cls: 'vask-source-score', text: s.score.toFixed(2), attr: { 'aria-label': 'Score that ranked this source (above 1: it holds the exact words asked)' } });
	}
	// A PDF passage: its page ("p. 3", which the link opens) in place of the "Page 3" heading.
	const page = pageLabel(s);
	const label = page ? '' : headingLabel(s.heading ?? '', s.title ?? '');
	const sub = li.createDiv({ cls: 'vask-source-sub' });
	if (page) sub.createSpan({ cls: 'vask-source-page', text: page, attr: { 'aria-label': `Page ${s.page}` } });
	if (label) sub.createSpan({ cls: 'vask-source-heading', text: label });
	sub.createSpan({ cls: 'vask-source-path', text: s.path });
	const how = seed ? linkLabel(s, seed.title) : null;
	if (seed && how) {
		li.createDiv({
			cls: ['vask-source-link-kind', `is-${linkKind(s) ?? 'other'}`],
			text: s.near ? `${how} · near “${headingLabel(s.near, seed.title) || seed.title}”` : how,
		});
	}
}

/** The chip: the note whose connections were asked for, and a way to ask the question as written instead. */
function renderSeed(el: HTMLElement, seed: SeedInfo, askAsWritten: () => void): void {
	const chip = el.createDiv({ cls: 'vask-seed' });
	chip.createSpan({ cls: 'vask-seed-label', text: 'Connected to' });
	createInternalLink(chip, stripMd(seed.seed), seed.title, 'vask-seed-link');
	const remove = chip.createEl('button', {
		cls: 'vask-seed-remove',
		text: '✕',
		attr: { 'aria-label': `Ask as written, not as a question about what ${seed.words || 'connects to'} ${seed.title}` },
	});
	remove.addEventListener('click', askAsWritten);
}

/** The chip: which dates were searched, the words that said so, and a way to search all dates instead. */
function renderTimeRange(el: HTMLElement, range: TimeRange, searchAllDates: () => void): void {
	const chip = el.createDiv({ cls: 'vask-time-range' });
	const words = range.text.trim();
	const textEl = chip.createDiv({ cls: 'vask-time-range-text' });
	const label = textEl.createDiv({ cls: 'vask-time-range-label', text: describeRange(range) });
	if (words) {
		label.setAttr('aria-label', `Read from your question: “${words}”`);
		textEl.createDiv({ cls: 'vask-time-range-words', text: `“${words}”` });
	}
	if (range.notice) textEl.createDiv({ cls: 'vask-time-range-notice', text: range.notice });
	const all = chip.createEl('button', {
		cls: 'vask-time-range-all',
		text: 'Search all dates',
		attr: { 'aria-label': 'Ask this question again over notes from any time' },
	});
	all.addEventListener('click', searchAllDates);
}

/** "14 Feb 2026" beside a source; marked when only the file's modification time says so. */
function renderSourceDate(s: Source, meta: HTMLElement): void {
	const text = sourceDateText(s);
	if (!text) return; // an index built before dates were read
	const how = dateSourceText(s.date_source);
	meta.createSpan({ cls: 'vask-source-date', text, attr: { 'aria-label': how ? `Written ${text}, ${how}` : `Written ${text}` } });
	if (isFileTimeDate(s)) {
		meta.createSpan({
			cls: 'vask-source-date-kind',
			text: 'file date',
			attr: { 'aria-label': "No date in the note: this is the file's modification time, which sync tools and git checkouts rewrite" },
		});
	}
}
