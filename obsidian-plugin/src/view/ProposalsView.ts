/**
 * Proposed changes to notes (GET /v1/proposals): those waiting, by source, each with its diff, to
 * approve or reject (or every one from a source at once); and the changes applied lately, to undo.
 */
import { ItemView, type HoverPopover, type WorkspaceLeaf } from 'obsidian';
import { describeError, isAbortError } from '../lib/errors';
import { bySource, sourceLabel, waitingCount } from '../lib/proposals';
import { stripMd } from '../lib/paths';
import type { Proposal } from '../lib/types';
import { renderDiff } from './diff';
import type { ProposalHost } from './host';
import { createInternalLink, wireInternalLinks } from './links';

export const VIEW_TYPE_PROPOSALS = 'vask-proposals';
/** Waiting changes shown with their diffs (each one more request); the others by their summary. */
const DIFFS_SHOWN = 50;
/** Applied changes listed for undo, the newest first. */
const RECENT_APPLIED = 10;

export class ProposalsView extends ItemView {
	hoverPopover: HoverPopover | null = null;
	private headerEl!: HTMLElement;
	private listEl!: HTMLElement;
	private ctrl: AbortController | null = null;
	private busy = false;

	constructor(
		leaf: WorkspaceLeaf,
		private readonly host: ProposalHost,
	) {
		super(leaf);
		this.navigation = false;
	}

	getViewType(): string {
		return VIEW_TYPE_PROPOSALS;
	}

	getDisplayText(): string {
		return 'Proposed changes';
	}

	override getIcon(): string {
		return 'git-pull-request';
	}

	override async onOpen(): Promise<void> {
		this.addAction('refresh-cw', 'Refresh', () => void this.refresh());
		const root = this.contentEl;
		root.empty();
		root.addClass('vask-proposals');
		this.headerEl = root.createDiv({ cls: 'vask-proposals-header' });
		this.listEl = root.createDiv({ cls: 'vask-proposals-list' });
		wireInternalLinks(this, this.app, this.listEl, this, () => '');
		this.register(this.host.proposals.onChange(() => void this.refresh()));
		this.register(() => this.ctrl?.abort());
		await this.refresh();
	}

	override async onClose(): Promise<void> {
		this.ctrl?.abort();
	}

	async refresh(): Promise<void> {
		if (this.busy) return;
		this.ctrl?.abort();
		const ctrl = new AbortController();
		this.ctrl = ctrl;
		const untrack = this.host.track(ctrl);
		try {
			const list = await this.host.client.proposals(undefined, ctrl.signal);
			const waiting = list.proposals.filter((p) => p.state === 'pending' || p.state === 'stale');
			// each waiting one with its diff (a list carries none, to stay small); the first ones, an agent may queue hundreds
			const shown = await Promise.all(waiting.slice(0, DIFFS_SHOWN).map((p) => this.host.client.proposal(p.id, ctrl.signal)));
			const full = [...shown, ...waiting.slice(DIFFS_SHOWN)];
			if (this.ctrl !== ctrl) return;
			const applied = list.proposals.filter((p) => p.state === 'applied').slice(0, RECENT_APPLIED);
			this.render(full, applied, waitingCount(list.counts));
		} catch (err) {
			if (this.ctrl !== ctrl || isAbortError(err)) return;
			this.renderError(err);
		} finally {
			untrack();
			if (this.ctrl === ctrl) this.ctrl = null;
		}
	}

	private render(waiting: Proposal[], applied: Proposal[], count: number): void {
		this.headerEl.setText(count ? `${count} change${count === 1 ? '' : 's'} to review` : 'No changes to review');
		this.listEl.empty();
		for (const group of bySource(waiting)) {
			const section = this.listEl.createDiv({ cls: 'vask-proposals-group' });
			const head = section.createDiv({ cls: 'vask-proposals-group-head' });
			head.createSpan({ cls: 'vask-proposals-source', text: `${sourceLabel(group.source)} (${group.proposals.length})` });
			if (group.proposals.some((p) => p.state === 'pending')) {
				this.button(head, 'Approve all', 'mod-cta', async () => {
					const res = await this.host.client.applyAll(group.source);
					this.host.proposals.changed();
					if (res.not_applied.length) throw new Error(`${res.not_applied.length} could not be applied: ${res.not_applied[0]!.message}`);
				});
			}
			for (const p of group.proposals) this.renderItem(section, p);
		}
		if (waiting.length === 0) this.listEl.createDiv({ cls: 'vask-proposals-empty', text: 'Nothing waits for a decision.' });
		if (applied.length) {
			const section = this.listEl.createDiv({ cls: 'vask-proposals-group is-applied' });
			section.createDiv({ cls: 'vask-proposals-group-head', text: 'Applied lately' });
			for (const p of applied) {
				const item = section.createDiv({ cls: 'vask-proposal-item is-applied', attr: { 'data-id': p.id } });
				item.createDiv({ cls: 'vask-proposal-summary', text: p.summary });
				this.noteLink(item, p);
				if (p.undoable) this.button(item, 'Undo', '', () => this.host.proposals.undo(p));
				else item.createDiv({ cls: 'vask-proposal-state', text: 'The note changed since: no undo.' });
			}
		}
	}

	private renderItem(parent: HTMLElement, p: Proposal): void {
		const item = parent.createDiv({ cls: ['vask-proposal-item', `is-${p.state}`], attr: { 'data-id': p.id } });
		item.createDiv({ cls: 'vask-proposal-summary', text: p.summary });
		this.noteLink(item, p);
		if (p.reason) item.createDiv({ cls: 'vask-proposal-reason', text: p.reason });
		if (p.state === 'stale') {
			item.createDiv({ cls: 'vask-proposal-state', text: 'The note changed since this was proposed: it will not be applied.' });
		}
		if (p.diff) renderDiff(item, p.diff);
		const buttons = item.createDiv({ cls: 'vask-proposal-buttons' });
		if (p.state === 'pending') this.button(buttons, 'Approve', 'mod-cta', () => this.host.proposals.apply(p));
		if (p.state === 'stale' && p.kind === 'link' && p.link) {
			const target = p.link.target;
			this.button(buttons, 'Propose again', 'mod-cta', async () => {
				await this.host.proposals.reject(p);
				await this.host.client.proposeLink(p.path, target, p.link?.heading ?? undefined);
				this.host.proposals.changed();
			});
		}
		this.button(buttons, 'Reject', '', () => this.host.proposals.reject(p));
	}

	private noteLink(parent: HTMLElement, p: Proposal): void {
		const el = parent.createDiv({ cls: 'vask-proposal-path' });
		createInternalLink(el, stripMd(p.path), p.path, 'vask-proposal-note');
	}

	private button(parent: HTMLElement, text: string, cls: string, run: () => Promise<unknown>): void {
		const b = parent.createEl('button', { text, cls: cls ? [cls, 'vask-proposal-button'] : 'vask-proposal-button' });
		b.addEventListener('click', () => {
			if (this.busy) return;
			this.busy = true;
			this.contentEl.querySelector('.vask-proposals-error')?.remove();
			b.disabled = true;
			run()
				.catch((err: unknown) => this.renderError(err, true))
				.finally(() => {
					this.busy = false;
					b.disabled = false;
					void this.refresh();
				});
		});
	}

	private renderError(err: unknown, keep = false): void {
		const plain = describeError(err, this.host.errorContext());
		if (!keep) this.listEl.empty();
		this.contentEl.querySelector('.vask-proposals-error')?.remove();
		const el = createDiv({ cls: ['vask-error', 'vask-proposals-error'], attr: { 'data-code': plain.code } });
		el.createDiv({ text: plain.message });
		if (plain.hint) el.createDiv({ cls: 'vask-error-hint', text: plain.hint });
		this.contentEl.insertBefore(el, this.listEl);
	}
}
