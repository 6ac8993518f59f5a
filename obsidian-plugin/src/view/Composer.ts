/**
 * The chat box under the answers: the question field with its `[[note` and
 * `#tag` suggestions, the "All notes / This note / This folder" toggle with the
 * line saying what it stands for now, Send (Stop while an answer streams) and
 * New chat. It checks a question can be sent; the view asks it.
 */
import type { App, Component, HoverParent } from 'obsidian';
import { basenameNoExt, stripMd } from '../lib/paths';
import { paneScope, type PaneScope, type ScopeMode } from '../lib/scope';
import { CHAT_SOURCE_PATH, createInternalLink, wireInternalLinks } from './links';
import { SuggestPopup } from './SuggestPopup';
import { vaultNotes, vaultTags } from './vaultIndex';

const SCOPE_LABELS: Record<ScopeMode, string> = { all: 'All notes', note: 'This note', folder: 'This folder' };

export interface ComposerHost {
	app: App;
	/** Holds the composer's DOM and workspace events (they end with it), and shows the toggle link's preview. */
	owner: Component & HoverParent;
	/** True while an answer streams: Enter does not send, the button stops it. */
	busy(): boolean;
	/** A question to send, with the note or folder the toggle limits it to (null: all notes). */
	send(question: string, scope: PaneScope | null): void;
	stop(): void;
	newChat(): void;
	/** The toggle changed: it is part of the view's saved state. */
	scopeChanged(): void;
}

export class Composer {
	/** Kept while the pane is open (and in its saved state); set before the DOM exists when a layout is restored. */
	private mode: ScopeMode = 'all';
	private readonly scopeButtons = new Map<ScopeMode, HTMLButtonElement>();
	private scopeTargetEl: HTMLElement | null = null;
	private inputEl!: HTMLTextAreaElement;
	private sendEl!: HTMLButtonElement;
	private suggest!: SuggestPopup;

	constructor(private readonly host: ComposerHost) {}

	/** Builds the composer at the end of `parent`. */
	mount(parent: HTMLElement): void {
		const { app, owner } = this.host;
		const composer = parent.createDiv({ cls: 'vask-composer' });
		// The toggle's "Only [[note]]" link opens the note too.
		wireInternalLinks(owner, app, composer, owner, () => CHAT_SOURCE_PATH);
		this.renderScopeToggle(composer);
		this.inputEl = composer.createEl('textarea', {
			cls: 'vask-input',
			attr: {
				rows: 3,
				placeholder: 'Ask your vault…  [[note, #tag or path:Folder asks only there. Enter sends, Shift+Enter: new line',
				'aria-label': 'Question',
			},
		});
		const buttons = composer.createDiv({ cls: 'vask-composer-buttons' });
		const newChatEl = buttons.createEl('button', { cls: 'vask-new-chat', text: 'New chat' });
		this.sendEl = buttons.createEl('button', { cls: ['vask-send', 'mod-cta'], text: 'Send' });

		// Before the Enter handler below: Enter in an open popup picks a suggestion and stops there.
		this.suggest = new SuggestPopup(owner, this.inputEl, composer, {
			notes: () => vaultNotes(app),
			tags: () => vaultTags(app),
		});
		owner.registerDomEvent(this.inputEl, 'keydown', (evt: KeyboardEvent) => {
			if (evt.defaultPrevented || evt.key !== 'Enter' || evt.shiftKey || evt.isComposing) return;
			evt.preventDefault();
			if (!this.host.busy()) this.submit();
		});
		owner.registerDomEvent(this.sendEl, 'click', () => {
			if (this.host.busy()) this.host.stop();
			else this.submit();
		});
		owner.registerDomEvent(newChatEl, 'click', () => this.host.newChat());
		owner.registerEvent(app.workspace.on('file-open', () => this.updateScopeTarget()));
		owner.registerEvent(app.workspace.on('active-leaf-change', () => this.updateScopeTarget()));
		// The choice may have come before the DOM (a restored layout): show it now.
		this.setScopeMode(this.mode);
	}

	/** The toggle's choice. */
	get scopeMode(): ScopeMode {
		return this.mode;
	}

	setScopeMode(mode: ScopeMode): void {
		if (mode !== this.mode) this.host.scopeChanged();
		this.mode = mode;
		for (const [m, button] of this.scopeButtons) {
			button.toggleClass('is-active', m === mode);
			button.setAttr('aria-checked', m === mode ? 'true' : 'false');
		}
		this.updateScopeTarget();
	}

	/** Send becomes Stop while an answer streams. */
	setBusy(busy: boolean): void {
		this.sendEl.setText(busy ? 'Stop' : 'Send');
		this.sendEl.toggleClass('mod-cta', !busy);
		this.sendEl.toggleClass('mod-warning', busy);
		this.sendEl.setAttr('aria-label', busy ? 'Stop the answer' : 'Send the question');
	}

	focus(): void {
		this.inputEl?.focus();
	}

	private activePath(): string | null {
		return this.host.app.workspace.getActiveFile()?.path ?? null;
	}

	private submit(): void {
		const q = this.inputEl.value.trim();
		if (!q) return;
		// "This note" with no note open: say so and keep the question, never search the whole vault instead.
		const scope = paneScope(this.mode, this.activePath());
		if (!scope.ok) {
			this.updateScopeTarget();
			this.scopeTargetEl?.setText(scope.reason);
			return;
		}
		this.suggest.close();
		this.inputEl.value = '';
		this.host.send(q, scope.scope);
	}

	private renderScopeToggle(composer: HTMLElement): void {
		const bar = composer.createDiv({ cls: 'vask-scope-bar' });
		const group = bar.createDiv({ cls: 'vask-scope-toggle', attr: { role: 'radiogroup', 'aria-label': 'Ask about' } });
		for (const mode of ['all', 'note', 'folder'] as const) {
			const button = group.createEl('button', {
				cls: 'vask-scope-option',
				text: SCOPE_LABELS[mode],
				attr: { role: 'radio', 'data-mode': mode, 'aria-checked': 'false' },
			});
			this.scopeButtons.set(mode, button);
			this.host.owner.registerDomEvent(button, 'click', () => this.setScopeMode(mode));
		}
		this.scopeTargetEl = bar.createDiv({ cls: 'vask-scope-target', attr: { 'aria-live': 'polite' } });
	}

	/** Says what "This note" / "This folder" stands for now, or that no note is open. */
	private updateScopeTarget(): void {
		const el = this.scopeTargetEl;
		if (!el) return;
		el.empty();
		el.removeClass('is-warn');
		if (this.mode === 'all') {
			el.hide();
			return;
		}
		el.show();
		const r = paneScope(this.mode, this.activePath());
		if (!r.ok) {
			el.addClass('is-warn');
			el.setText('No note open');
			el.setAttr('aria-label', r.reason);
			return;
		}
		el.removeAttribute('aria-label');
		if (!r.scope) {
			el.setText('The note is at the vault’s root: all notes');
		} else if (r.scope.kind === 'note') {
			el.appendText('Only ');
			createInternalLink(el, stripMd(r.scope.path), basenameNoExt(r.scope.path));
		} else {
			el.setText(`Only notes in ${r.scope.path}/`);
		}
	}
}
