/**
 * The popup under the chat box that suggests notes after `[[` and tags after
 * `#`, as Obsidian's editor does (the chat box is a textarea, not an editor,
 * so Obsidian's EditorSuggest does not apply). Matching, ranking and what a
 * pick inserts are in src/lib/suggest.ts.
 */
import type { Component } from 'obsidian';
import { stripMd } from '../lib/paths';
import {
	applySuggestion,
	findTrigger,
	insertionText,
	rankNotes,
	rankTags,
	type FuzzyMatch,
	type NoteCandidate,
	type Suggestion,
	type TagCandidate,
	type Trigger,
} from '../lib/suggest';

/** The vault's notes and tags, read when the popup opens (a vault changes while the pane is open). */
export interface SuggestSource {
	notes(): NoteCandidate[];
	tags(): TagCandidate[];
}

/** Element ids must be unique in the window: a chat pane and the Ask modal can both have a list. */
let nextId = 1;

export class SuggestPopup {
	readonly el: HTMLElement;
	private readonly id = `vask-suggest-${nextId++}`;
	private trigger: Trigger | null = null;
	private items: Suggestion[] = [];
	private selected = 0;
	/** Read once per opening: ranking then runs on every key without going back to the vault. */
	private notes: NoteCandidate[] | null = null;
	private tags: TagCandidate[] | null = null;

	constructor(
		component: Component,
		private readonly inputEl: HTMLTextAreaElement,
		parentEl: HTMLElement,
		private readonly source: SuggestSource,
	) {
		this.el = parentEl.createDiv({ cls: ['vask-suggest', 'suggestion-container'], attr: { role: 'listbox', id: this.id } });
		this.el.hide();
		this.inputEl.setAttr('aria-autocomplete', 'list');
		this.inputEl.setAttr('aria-controls', this.id);
		component.registerDomEvent(inputEl, 'input', () => this.update());
		component.registerDomEvent(inputEl, 'click', () => this.update());
		component.registerDomEvent(inputEl, 'keyup', (evt: KeyboardEvent) => {
			if (['ArrowLeft', 'ArrowRight', 'Home', 'End'].includes(evt.key)) this.update();
		});
		component.registerDomEvent(inputEl, 'keydown', (evt: KeyboardEvent) => this.onKey(evt));
		// A click on a suggestion must not blur the box first (mousedown comes before blur).
		component.registerDomEvent(this.el, 'mousedown', (evt: MouseEvent) => evt.preventDefault());
		component.registerDomEvent(inputEl, 'blur', () => this.close());
	}

	get isOpen(): boolean {
		return this.trigger !== null && this.items.length > 0;
	}

	/** The suggestions shown, best first (for tests and screen readers). */
	get shown(): readonly Suggestion[] {
		return this.isOpen ? this.items : [];
	}

	close(): void {
		this.trigger = null;
		this.items = [];
		this.notes = null;
		this.tags = null;
		this.el.empty();
		this.el.hide();
		this.inputEl.removeAttribute('aria-activedescendant');
		this.inputEl.setAttr('aria-expanded', 'false');
	}

	/** Re-reads what is typed at the caret and shows what matches it. */
	update(): void {
		const caret = this.inputEl.selectionStart ?? this.inputEl.value.length;
		if (this.inputEl.selectionEnd !== caret) return this.close();
		const trigger = findTrigger(this.inputEl.value, caret);
		if (!trigger) return this.close();
		const kindChanged = this.trigger?.kind !== trigger.kind || this.trigger.start !== trigger.start;
		this.trigger = trigger;
		if (trigger.kind === 'note') {
			this.notes ??= this.source.notes();
			this.items = rankNotes(trigger.query, this.notes);
		} else {
			this.tags ??= this.source.tags();
			this.items = rankTags(trigger.query, this.tags);
		}
		if (kindChanged || this.selected >= this.items.length) this.selected = 0;
		this.render();
	}

	private onKey(evt: KeyboardEvent): void {
		if (!this.isOpen || evt.isComposing) return;
		switch (evt.key) {
			case 'ArrowDown':
			case 'ArrowUp': {
				const step = evt.key === 'ArrowDown' ? 1 : -1;
				this.select((this.selected + step + this.items.length) % this.items.length);
				break;
			}
			case 'Enter':
			case 'Tab':
				// Enter picks the suggestion; it does not send the question.
				if (evt.shiftKey) return;
				this.pick(this.selected);
				break;
			case 'Escape':
				this.close();
				break;
			default:
				return;
		}
		evt.preventDefault();
		evt.stopImmediatePropagation();
	}

	private select(i: number): void {
		this.selected = i;
		const children = Array.from(this.el.children);
		children.forEach((c, k) => {
			c.toggleClass('is-selected', k === i);
			c.setAttr('aria-selected', k === i ? 'true' : 'false');
		});
		const el = children[i];
		if (el instanceof HTMLElement) {
			this.inputEl.setAttr('aria-activedescendant', el.id);
			el.scrollIntoView({ block: 'nearest' });
		}
	}

	/** Inserts the suggestion in place of what was typed, and puts the caret after it. */
	pick(i: number): void {
		const s = this.items[i];
		const trigger = this.trigger;
		if (!s || !trigger) return;
		const allPaths = (this.notes ?? this.source.notes()).map((n) => n.path);
		const { text, caret } = applySuggestion(this.inputEl.value, trigger, insertionText(s, allPaths));
		this.close();
		this.inputEl.value = text;
		this.inputEl.focus();
		this.inputEl.setSelectionRange(caret, caret);
	}

	private render(): void {
		this.el.empty();
		if (!this.isOpen) {
			this.el.hide();
			this.inputEl.setAttr('aria-expanded', 'false');
			return;
		}
		this.items.forEach((s, i) => {
			const item = this.el.createDiv({ cls: ['suggestion-item', 'mod-complex', 'vask-suggest-item'], attr: { role: 'option', id: `${this.id}-${i}` } });
			item.setAttr('data-kind', s.kind);
			const content = item.createDiv({ cls: 'suggestion-content' });
			if (s.kind === 'note') {
				highlighted(content.createDiv({ cls: 'suggestion-title' }), s.matchedText, s.match);
				// Which note: its path, when the name alone does not say it (an alias, or a folder).
				const where = stripMd(s.note.path);
				if (where !== s.matchedText) content.createDiv({ cls: 'suggestion-note', text: where });
			} else {
				highlighted(content.createDiv({ cls: 'suggestion-title' }), `#${s.tag.tag}`, shifted(s.match, 1));
				item.createDiv({ cls: 'suggestion-aux' }).createSpan({ cls: 'suggestion-flair', text: String(s.tag.count), attr: { 'aria-label': `used ${s.tag.count}×` } });
			}
			item.addEventListener('mousemove', () => {
				if (this.selected !== i) this.select(i);
			});
			item.addEventListener('click', () => this.pick(i));
		});
		this.el.show();
		this.inputEl.setAttr('aria-expanded', 'true');
		this.select(Math.min(this.selected, this.items.length - 1));
	}
}

function shifted(m: FuzzyMatch, by: number): FuzzyMatch {
	return { score: m.score, ranges: m.ranges.map(([a, b]) => [a + by, b + by] as [number, number]) };
}

/** The text with the matched characters in `suggestion-highlight` spans, as Obsidian shows them. */
function highlighted(el: HTMLElement, text: string, m: FuzzyMatch): void {
	let last = 0;
	for (const [a, b] of m.ranges) {
		if (a > last) el.appendText(text.slice(last, a));
		el.createSpan({ cls: 'suggestion-highlight', text: text.slice(a, b) });
		last = b;
	}
	if (last < text.length) el.appendText(text.slice(last));
}
