/** The chips above an answer: what the pane's toggle and the question's mentions limited the search to. */
import type { App } from 'obsidian';
import { stripMd } from '../lib/paths';
import type { ScopeChip } from '../lib/scope';
import { openLink } from './links';
import { revealFolder, searchTag } from './vaultIndex';

/** Fills `el` with the chips; hidden when the question was not limited. */
export function renderScopeChips(app: App, el: HTMLElement, chips: readonly ScopeChip[]): void {
	el.empty();
	if (chips.length === 0) {
		el.hide();
		return;
	}
	el.show();
	el.createSpan({ cls: 'vask-scope-label', text: 'Only in' });
	for (const chip of chips) renderChip(app, el, chip);
}

/** A note chip opens the note, a tag chip searches the tag, a folder chip shows the folder. */
function renderChip(app: App, parent: HTMLElement, chip: ScopeChip): void {
	const what = chip.kind === 'note' ? 'Open the note' : chip.kind === 'tag' ? 'Search the notes tagged' : 'Show the folder';
	const extra = chip.includes.length ? `, with ${chip.includes.map((t) => `#${t}`).join(', ')}` : '';
	const el = parent.createEl('button', {
		cls: ['vask-scope-chip', `is-${chip.kind}`],
		attr: {
			'data-kind': chip.kind,
			'data-value': chip.value,
			'aria-label': `${what} ${chip.kind === 'tag' ? chip.label : chip.value}${extra}${chip.fromPane ? ' (chosen in the pane)' : ''}`,
		},
	});
	el.toggleClass('is-from-pane', chip.fromPane);
	el.createSpan({ cls: 'vask-scope-chip-kind', text: chip.fromPane ? `this ${chip.kind}` : chip.kind });
	el.createSpan({ cls: 'vask-scope-chip-text', text: chip.label });
	if (chip.includes.length) el.createSpan({ cls: 'vask-scope-chip-more', text: `+${chip.includes.length}` });
	el.addEventListener('click', (evt) => {
		if (chip.kind === 'note') openLink(app, stripMd(chip.value), '', evt);
		else if (chip.kind === 'tag') searchTag(app, chip.value);
		else revealFolder(app, chip.value);
	});
	// A middle-click opens a note chip's note in a new tab, as on a link (a button gets no click for it).
	if (chip.kind === 'note') {
		el.addEventListener('auxclick', (evt) => {
			if (evt.button === 1) openLink(app, stripMd(chip.value), '', evt);
		});
	}
}
