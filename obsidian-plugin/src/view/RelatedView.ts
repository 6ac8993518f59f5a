/** Notes most related to the active note (GET /v1/related), following the active note. */
import { ItemView, MarkdownRenderer, type HoverPopover, type WorkspaceLeaf } from 'obsidian';
import { debounce } from '../lib/debounce';
import { describeError, isAbortError } from '../lib/errors';
import { basenameNoExt, isMarkdownPath, stripMd } from '../lib/paths';
import type { RelatedNote } from '../lib/types';
import type { ProposalHost } from './host';
import { LinkModal } from './LinkModal';
import { createInternalLink, wireInternalLinks } from './links';

export const VIEW_TYPE_RELATED = 'vask-related';
const RELATED_COUNT = 10;

export class RelatedView extends ItemView {
	hoverPopover: HoverPopover | null = null;
	private listEl!: HTMLElement;
	private headerEl!: HTMLElement;
	private shownPath: string | null = null;
	private ctrl: AbortController | null = null;
	private readonly refreshSoon = debounce(() => void this.refresh(false), 400);

	constructor(
		leaf: WorkspaceLeaf,
		private readonly host: ProposalHost,
	) {
		super(leaf);
		this.navigation = false;
	}

	getViewType(): string {
		return VIEW_TYPE_RELATED;
	}

	getDisplayText(): string {
		return 'Related notes';
	}

	override getIcon(): string {
		return 'git-fork';
	}

	override async onOpen(): Promise<void> {
		this.addAction('refresh-cw', 'Refresh', () => void this.refresh(true));
		const root = this.contentEl;
		root.empty();
		root.addClass('vask-related');
		this.headerEl = root.createDiv({ cls: 'vask-related-header' });
		this.listEl = root.createDiv({ cls: 'vask-related-list' });
		wireInternalLinks(this, this.app, this.listEl, this, () => this.shownPath ?? '');
		this.registerEvent(this.app.workspace.on('active-leaf-change', () => this.refreshSoon()));
		this.registerEvent(this.app.workspace.on('file-open', () => this.refreshSoon()));
		this.register(() => {
			this.refreshSoon.cancel();
			this.ctrl?.abort();
		});
		await this.refresh(true);
	}

	override async onClose(): Promise<void> {
		this.refreshSoon.cancel();
		this.ctrl?.abort();
	}

	/** Loads the related notes of the active note (unless they are already shown, or `force`). */
	async refresh(force: boolean): Promise<void> {
		const file = this.app.workspace.getActiveFile();
		const path = file && isMarkdownPath(file.path) ? file.path : null;
		if (!path) {
			if (this.shownPath === null && !force && this.listEl.childElementCount > 0) return;
			this.ctrl?.abort();
			this.shownPath = null;
			this.headerEl.setText('');
			this.listEl.empty();
			this.listEl.createDiv({ cls: 'vask-related-empty', text: 'Open a note to see the notes related to it.' });
			return;
		}
		if (!force && path === this.shownPath) return;
		this.shownPath = path;
		this.ctrl?.abort();
		const ctrl = new AbortController();
		this.ctrl = ctrl;
		const untrack = this.host.track(ctrl);
		this.headerEl.setText(`Related to ${basenameNoExt(path)}`);
		this.listEl.empty();
		this.listEl.createDiv({ cls: 'vask-related-empty', text: 'Loading…' });
		try {
			const res = await this.host.client.related(path, RELATED_COUNT, ctrl.signal);
			if (this.ctrl !== ctrl) return;
			this.renderList(res.related ?? []);
		} catch (err) {
			if (this.ctrl !== ctrl || isAbortError(err)) return;
			this.shownPath = null; // try again on the next note change
			this.renderError(err);
		} finally {
			untrack();
			if (this.ctrl === ctrl) this.ctrl = null;
		}
	}

	private renderList(notes: RelatedNote[]): void {
		this.listEl.empty();
		if (notes.length === 0) {
			this.listEl.createDiv({ cls: 'vask-related-empty', text: 'No related notes found.' });
			return;
		}
		for (const note of notes) {
			const item = this.listEl.createDiv({ cls: 'vask-related-item' });
			const head = item.createDiv({ cls: 'vask-related-head' });
			createInternalLink(head, stripMd(note.path), note.title || basenameNoExt(note.path), 'vask-related-link');
			if (typeof note.score === 'number') head.createSpan({ cls: 'vask-related-score', text: note.score.toFixed(2) });
			const sub = item.createDiv({ cls: 'vask-related-sub' });
			sub.createSpan({ cls: ['vask-related-reason', `is-${(note.reason ?? '').replace(/\s+/g, '-')}`], text: note.reason });
			sub.createSpan({ cls: 'vask-related-path', text: note.path });
			if (note.linked === false && this.shownPath) this.linkButton(sub, this.shownPath, note);
		}
	}

	/** "Link" on a connection not linked yet: the change is shown before anything is written (LinkModal). */
	private linkButton(parent: HTMLElement, from: string, note: RelatedNote): void {
		const title = note.title || basenameNoExt(note.path);
		const b = parent.createEl('button', { cls: 'vask-related-link-button', text: 'Link', attr: { 'aria-label': `Link ${title} from this note` } });
		b.addEventListener('click', (evt) => {
			evt.preventDefault();
			evt.stopPropagation();
			new LinkModal(this.app, this.host, from, note.path, title, (linked) => {
				b.setText(linked ? 'Linked' : 'Link');
				b.disabled = linked;
			}).open();
		});
	}

	private renderError(err: unknown): void {
		const plain = describeError(err, this.host.errorContext());
		this.listEl.empty();
		const el = this.listEl.createDiv({ cls: ['vask-error', 'markdown-rendered'], attr: { 'data-code': plain.code } });
		void MarkdownRenderer.render(this.app, plain.hint ? `${plain.message}\n\n${plain.hint}` : plain.message, el, '', this);
	}
}
