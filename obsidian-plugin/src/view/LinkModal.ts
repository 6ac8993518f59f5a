/**
 * "Link" on a connection in the related pane: the link is proposed, the person sees exactly what would
 * change (the diff), chooses the heading when the note does not name the linked note, and approves or
 * rejects; once applied, it can be undone here.
 */
import { Modal, Setting, type App } from 'obsidian';
import { describeError } from '../lib/errors';
import { beforeAfter } from '../lib/proposals';
import type { Proposal } from '../lib/types';
import { renderDiff } from './diff';
import type { ProposalHost } from './host';

export class LinkModal extends Modal {
	private proposal: Proposal | null = null;
	private heading: string;
	private busy = false;

	constructor(
		app: App,
		private readonly host: ProposalHost,
		private readonly path: string,
		private readonly target: string,
		private readonly targetTitle: string,
		/** Told when the link was applied (true) or undone (false). */
		private readonly done: (linked: boolean) => void = () => undefined,
	) {
		super(app);
		this.heading = host.settings.linkHeading;
	}

	override onOpen(): void {
		this.modalEl.addClass('vask-link-modal');
		this.setTitle(`Link ${this.targetTitle}`);
		void this.propose();
	}

	override onClose(): void {
		this.contentEl.empty();
	}

	private async propose(): Promise<void> {
		const { contentEl } = this;
		contentEl.empty();
		contentEl.createDiv({ cls: 'vask-proposal-loading', text: 'Preparing the change…' });
		try {
			const res = await this.host.client.proposeLink(this.path, this.target, this.heading);
			this.proposal = res.proposal;
			this.host.proposals.changed();
			this.render();
		} catch (err) {
			this.renderError(err);
		}
	}

	private render(): void {
		const p = this.proposal;
		if (!p) return;
		const { contentEl } = this;
		contentEl.empty();
		contentEl.createDiv({ cls: 'vask-proposal-summary', text: p.summary });
		contentEl.createDiv({ cls: 'vask-proposal-path', text: p.path });
		if (p.state === 'pending' && p.link?.placement === 'heading') {
			let typed = this.heading;
			new Setting(contentEl)
				.setName('Under heading')
				.setDesc(p.link.heading_created ? 'The note has no such heading: it is added at the end.' : 'The link goes last under it.')
				.addText((t) => t.setValue(this.heading).onChange((v) => (typed = v)))
				.addButton((b) =>
					b.setButtonText('Use this heading').onClick(() => {
						if (typed.trim() && typed.trim() !== this.heading) void this.replace(typed.trim());
					}),
				);
		}
		if (p.diff) {
			const { before, after } = beforeAfter(p.diff);
			const pair = contentEl.createDiv({ cls: 'vask-proposal-before-after' });
			if (before.length) pair.createDiv({ cls: 'vask-proposal-before', text: `Before: ${before.join('\n')}` });
			pair.createDiv({ cls: 'vask-proposal-after', text: `After: ${after.join('\n')}` });
			renderDiff(contentEl, p.diff);
		}
		const state = contentEl.createDiv({ cls: 'vask-proposal-state' });
		const buttons = contentEl.createDiv({ cls: 'vask-proposal-buttons modal-button-container' });
		if (p.state === 'pending') {
			this.button(buttons, 'Approve', 'mod-cta', () => this.decide('apply'));
			this.button(buttons, 'Reject', '', () => this.decide('reject'));
			this.button(buttons, 'Not now', '', () => this.close());
		} else if (p.state === 'stale') {
			state.setText('The note changed since this was prepared: nothing will be written.');
			this.button(buttons, 'Prepare again', 'mod-cta', () => this.replace(this.heading));
		} else if (p.state === 'applied') {
			state.setText(p.undoable ? 'Linked.' : 'Linked; the note changed since, so it can no longer be undone here.');
			if (p.undoable) this.button(buttons, 'Undo', '', () => this.decide('undo'));
			this.button(buttons, 'Close', 'mod-cta', () => this.close());
		} else {
			state.setText(p.state === 'undone' ? 'Undone: the note is as it was.' : 'Rejected: the note is unchanged.');
			this.button(buttons, 'Close', 'mod-cta', () => this.close());
		}
	}

	private button(parent: HTMLElement, text: string, cls: string, run: () => unknown): void {
		const b = parent.createEl('button', { text, cls: cls ? [cls, 'vask-proposal-button'] : 'vask-proposal-button' });
		b.addEventListener('click', () => {
			if (!this.busy) void run();
		});
	}

	/** The link proposed anew (under another heading, or against the note as it is now); the old proposal is rejected. */
	private async replace(heading: string): Promise<void> {
		const old = this.proposal;
		this.heading = heading;
		if (old && (old.state === 'pending' || old.state === 'stale')) {
			try {
				await this.host.proposals.reject(old);
			} catch {
				// decided elsewhere meanwhile: the new one is proposed all the same
			}
		}
		await this.propose();
	}

	private async decide(action: 'apply' | 'reject' | 'undo'): Promise<void> {
		const p = this.proposal;
		if (!p) return;
		this.busy = true;
		try {
			const actions = this.host.proposals;
			this.proposal = action === 'apply' ? await actions.apply(p) : action === 'undo' ? await actions.undo(p) : await actions.reject(p);
			this.proposal = { ...p, ...this.proposal };
			if (action === 'apply') this.done(true);
			if (action === 'undo') this.done(false);
			if (action === 'reject') {
				this.close();
				return;
			}
			this.render();
		} catch (err) {
			this.renderError(err, true);
		} finally {
			this.busy = false;
		}
	}

	private renderError(err: unknown, keep = false): void {
		const plain = describeError(err, this.host.errorContext());
		if (!keep) this.contentEl.empty();
		this.contentEl.querySelector('.vask-error')?.remove();
		const el = this.contentEl.createDiv({ cls: 'vask-error', attr: { 'data-code': plain.code } });
		el.createDiv({ text: plain.message });
		if (plain.hint) el.createDiv({ cls: 'vask-error-hint', text: plain.hint });
	}
}
