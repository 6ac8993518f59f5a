/** The list of kept chats: search by title, reopen, rename, delete one, clear all (confirmed). */
import { App, Modal } from 'obsidian';
import { searchHistory, type ChatSummary } from '../lib/history';
import type { HistoryStore } from '../lib/historyStore';
import { basenameNoExt } from '../lib/paths';

export interface HistoryModalHost {
	readonly history: HistoryStore;
	/** Shows a kept chat in the pane, to read and continue. */
	reopenChat(id: string): Promise<void>;
	/** Deletes chats (one id, or all with null); the pane starts a new chat when its chat goes. */
	deleteChats(id: string | null): void;
}

/** "2 Mar 2026, 14:05": when the chat last changed. */
function when(iso: string): string {
	const d = new Date(iso);
	if (Number.isNaN(d.getTime())) return '';
	const date = d.toLocaleDateString('en-GB', { day: 'numeric', month: 'short', year: 'numeric' });
	const time = d.toLocaleTimeString('en-GB', { hour: '2-digit', minute: '2-digit' });
	return `${date}, ${time}`;
}

export class HistoryModal extends Modal {
	private listEl!: HTMLElement;
	private searchEl!: HTMLInputElement;
	private unsubscribe: (() => void) | null = null;

	constructor(
		app: App,
		private readonly host: HistoryModalHost,
	) {
		super(app);
	}

	override onOpen(): void {
		this.titleEl.setText('Chat history');
		this.modalEl.addClass('vask-history-modal');
		const el = this.contentEl;
		el.addClass('vask-history');
		this.searchEl = el.createEl('input', {
			type: 'search',
			cls: 'vask-history-search',
			attr: { placeholder: 'Search chats by title…', 'aria-label': 'Search chats by title' },
		});
		this.searchEl.addEventListener('input', () => this.render());
		this.listEl = el.createDiv({ cls: 'vask-history-list' });
		const footer = el.createDiv({ cls: 'vask-history-footer' });
		footer.createDiv({ cls: 'vask-history-where', text: `Kept in ${this.host.history.path}` });
		const clear = footer.createEl('button', { cls: ['vask-history-clear', 'mod-warning'], text: 'Clear all…' });
		clear.addEventListener('click', () => this.confirmClear());
		this.unsubscribe = this.host.history.onChange(() => this.render());
		this.render();
		window.setTimeout(() => this.searchEl.focus(), 0);
	}

	override onClose(): void {
		this.unsubscribe?.();
		this.unsubscribe = null;
		this.contentEl.empty();
	}

	private render(): void {
		const all = this.host.history.list();
		const shown = searchHistory(all, this.searchEl.value);
		this.listEl.empty();
		if (all.length === 0) {
			this.listEl.createDiv({ cls: 'vask-history-empty', text: 'No chats yet. Chats are kept here as you ask.' });
			return;
		}
		if (shown.length === 0) {
			this.listEl.createDiv({ cls: 'vask-history-empty', text: 'No chat title matches.' });
			return;
		}
		for (const s of shown) this.renderItem(s);
	}

	private renderItem(s: ChatSummary): void {
		const item = this.listEl.createDiv({ cls: 'vask-history-item', attr: { 'data-id': s.id } });
		if (s.id === this.host.history.currentId) item.addClass('is-current');
		const main = item.createDiv({ cls: 'vask-history-main', attr: { role: 'button', tabindex: 0, 'aria-label': `Open “${s.title}”` } });
		main.createDiv({ cls: 'vask-history-title', text: s.title });
		const meta = main.createDiv({ cls: 'vask-history-meta' });
		meta.createSpan({ cls: 'vask-history-date', text: when(s.updatedAt) });
		meta.createSpan({ cls: 'vask-history-turns', text: s.questions === 1 ? '1 question' : `${s.questions} questions` });
		if (s.about) meta.createSpan({ cls: 'vask-history-about', text: `About ${basenameNoExt(s.about)}` });
		const open = (): void => {
			this.close();
			void this.host.reopenChat(s.id);
		};
		main.addEventListener('click', open);
		main.addEventListener('keydown', (evt) => {
			if (evt.key === 'Enter') open();
		});
		const actions = item.createDiv({ cls: 'vask-history-actions' });
		const rename = actions.createEl('button', { cls: 'vask-history-rename', text: 'Rename', attr: { 'aria-label': 'Rename this chat' } });
		rename.addEventListener('click', () => this.startRename(item, s));
		const del = actions.createEl('button', { cls: 'vask-history-delete', text: 'Delete', attr: { 'aria-label': 'Delete this chat' } });
		del.addEventListener('click', () => this.host.deleteChats(s.id));
	}

	private startRename(item: HTMLElement, s: ChatSummary): void {
		const titleEl = item.querySelector('.vask-history-title');
		if (!(titleEl instanceof HTMLElement)) return;
		const input = createEl('input', { type: 'text', cls: 'vask-history-rename-input', value: s.title, attr: { 'aria-label': 'New title' } });
		titleEl.replaceWith(input);
		input.addEventListener('click', (evt) => evt.stopPropagation());
		let done = false;
		const finish = (save: boolean): void => {
			if (done) return;
			done = true;
			if (!save || !this.host.history.rename(s.id, input.value)) this.render();
		};
		input.addEventListener('keydown', (evt) => {
			evt.stopPropagation();
			if (evt.key === 'Enter') finish(true);
			else if (evt.key === 'Escape') {
				evt.preventDefault();
				finish(false);
			}
		});
		input.addEventListener('blur', () => finish(true));
		input.focus();
		input.select();
	}

	private confirmClear(): void {
		const n = this.host.history.size;
		if (n === 0) return;
		new ConfirmModal(this.app, {
			title: 'Clear chat history?',
			text: `This deletes all ${n} kept chat${n === 1 ? '' : 's'}. Notes saved from chats stay in the vault.`,
			confirm: `Delete ${n} chat${n === 1 ? '' : 's'}`,
			onConfirm: () => this.host.deleteChats(null),
		}).open();
	}
}

export class ConfirmModal extends Modal {
	constructor(
		app: App,
		private readonly opts: { title: string; text: string; confirm: string; onConfirm: () => void },
	) {
		super(app);
	}

	override onOpen(): void {
		this.titleEl.setText(this.opts.title);
		this.contentEl.addClass('vask-confirm');
		this.contentEl.createEl('p', { text: this.opts.text });
		const buttons = this.contentEl.createDiv({ cls: 'modal-button-container' });
		const yes = buttons.createEl('button', { cls: ['mod-warning', 'vask-confirm-yes'], text: this.opts.confirm });
		const no = buttons.createEl('button', { cls: 'vask-confirm-no', text: 'Cancel' });
		yes.addEventListener('click', () => {
			this.close();
			this.opts.onConfirm();
		});
		no.addEventListener('click', () => this.close());
	}

	override onClose(): void {
		this.contentEl.empty();
	}
}
