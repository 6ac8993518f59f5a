/** A prompt for a question; the answer appears in the chat pane. */
import { App, Component, Modal } from 'obsidian';
import { SuggestPopup } from './SuggestPopup';
import { vaultNotes, vaultTags } from './vaultIndex';

export interface AskModalOptions {
	title: string;
	/** Shown above the input, e.g. the note the question is about. */
	context?: string;
	onSubmit: (question: string) => void;
}

export class AskModal extends Modal {
	/** Owns the suggestion popup's listeners while the modal is open. */
	private readonly component = new Component();

	constructor(
		app: App,
		private readonly opts: AskModalOptions,
	) {
		super(app);
	}

	override onOpen(): void {
		this.titleEl.setText(this.opts.title);
		this.contentEl.addClass('vask-ask-modal');
		if (this.opts.context) this.contentEl.createDiv({ cls: 'vask-ask-context', text: this.opts.context });
		this.component.load();
		const field = this.contentEl.createDiv({ cls: 'vask-ask-field' });
		const input = field.createEl('textarea', {
			cls: 'vask-ask-input',
			attr: { rows: 3, placeholder: 'Your question…  (Enter to ask, Shift+Enter for a new line)', 'aria-label': 'Question' },
		});
		const buttons = this.contentEl.createDiv({ cls: 'modal-button-container' });
		const ask = buttons.createEl('button', { cls: 'mod-cta', text: 'Ask' });
		const cancel = buttons.createEl('button', { text: 'Cancel' });
		const submit = (): void => {
			const q = input.value.trim();
			if (!q) return;
			this.close();
			this.opts.onSubmit(q);
		};
		// `[[` and `#` suggest notes and tags here as in the chat pane; registered first, so that Enter
		// on a suggestion picks it and does not ask.
		const suggest = new SuggestPopup(this.component, input, field, { notes: () => vaultNotes(this.app), tags: () => vaultTags(this.app) });
		suggest.el.addClass('is-below');
		input.addEventListener('keydown', (evt) => {
			if (evt.defaultPrevented) return;
			if (evt.key === 'Enter' && !evt.shiftKey && !evt.isComposing) {
				evt.preventDefault();
				submit();
			}
		});
		ask.addEventListener('click', submit);
		cancel.addEventListener('click', () => this.close());
		window.setTimeout(() => input.focus(), 0);
	}

	override onClose(): void {
		this.component.unload();
		this.contentEl.empty();
	}
}
