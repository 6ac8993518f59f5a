/**
 * One answer in the chat pane: its status line, the streamed Markdown with
 * clickable citations, the scope chips above it, what is said below it
 * (answerSources.ts) and its ending (copy, "Stopped.", or the error with its
 * fixes). It draws what its turn holds; the view decides when.
 */
import { Component, MarkdownRenderer, Notice, type App } from 'obsidian';
import type { AssistantTurn, UserTurn } from '../lib/chat';
import { answerMarkdown } from '../lib/chatMarkdown';
import { RenderScheduler } from '../lib/debounce';
import { ErrorCode, describeError, toVaskError, type ErrorContext } from '../lib/errors';
import { fixQuestion, scopeChips, type PaneScope } from '../lib/scope';
import { renderSources } from './answerSources';
import type { FollowScroll } from './followScroll';
import { CHAT_SOURCE_PATH } from './links';
import { renderScopeChips } from './scopeChips';

/** Redrawing the whole answer on every token would be quadratic: at most this often while it streams. */
const RENDER_INTERVAL_MS = 60;

export interface AnswerCardHost {
	app: App;
	/** Owns what MarkdownRenderer registers for each rendering (the view: unloaded with it). */
	owner: Component;
	scroll: FollowScroll;
	errorContext(): ErrorContext;
	/** "Search all dates": the question again over the whole vault, in place of this answer. */
	searchAllDates(turn: AssistantTurn): void;
	/** The seed chip's ✕: the question again, in place of this answer, read as written. */
	askAsWritten(turn: AssistantTurn): void;
	/** A new question (a name offered in place of one that matched nothing). */
	ask(question: string, paneScope: PaneScope | null): void;
}

export class AnswerCard {
	readonly rootEl: HTMLElement;
	/** Chips: the notes, tags and folders the question was limited to. */
	private readonly scopeEl: HTMLElement;
	private readonly statusEl: HTMLElement;
	private readonly answerEl: HTMLElement;
	private readonly errorEl: HTMLElement;
	private readonly sourcesEl: HTMLElement;
	private readonly actionsEl: HTMLElement;
	/** Own what MarkdownRenderer registered for the current rendering of the answer and of the error. */
	private component: Component | null = null;
	private errorComponent: Component | null = null;
	private readonly scheduler: RenderScheduler;
	private disposed = false;

	constructor(
		parent: HTMLElement,
		readonly turn: AssistantTurn,
		private readonly host: AnswerCardHost,
	) {
		this.rootEl = parent.createDiv({ cls: ['vask-msg', 'vask-msg-assistant', 'is-waiting'] });
		this.scopeEl = this.rootEl.createDiv({ cls: 'vask-scope' });
		this.statusEl = this.rootEl.createDiv({ cls: 'vask-msg-status', text: 'Searching your notes…' });
		this.answerEl = this.rootEl.createDiv({ cls: ['vask-answer', 'markdown-rendered'] });
		this.errorEl = this.rootEl.createDiv({ cls: 'vask-error' });
		this.sourcesEl = this.rootEl.createDiv({ cls: 'vask-sources' });
		this.actionsEl = this.rootEl.createDiv({ cls: 'vask-msg-actions' });
		this.scheduler = new RenderScheduler(() => this.renderAnswer(), RENDER_INTERVAL_MS);
		this.errorEl.hide();
		this.sourcesEl.hide();
		this.scopeEl.hide();
	}

	/** The answer's text is drawn again soon (at most once per interval while tokens stream). */
	requestRender(): void {
		this.scheduler.request();
	}

	/** Draws the answer's text now, after a drawing under way. */
	flushRender(): Promise<void> {
		return this.scheduler.flush();
	}

	/** The waiting / streaming / done / stopped / error class, and the status line while waiting. */
	showState(): void {
		const { turn, rootEl, statusEl } = this;
		for (const s of ['waiting', 'streaming', 'done', 'stopped', 'error'] as const) {
			rootEl.toggleClass(`is-${s}`, turn.status === s);
		}
		rootEl.toggleClass('is-declined', turn.declined);
		if (turn.status === 'waiting') {
			statusEl.setText(turn.sources.length > 0 ? 'Writing the answer…' : 'Searching your notes…');
			statusEl.show();
		} else {
			statusEl.hide();
		}
	}

	/** The chips above the answer; `pane`: what the pane's toggle limited the question to. */
	showScope(pane: PaneScope | null): void {
		renderScopeChips(this.host.app, this.scopeEl, scopeChips(this.turn.scope, pane));
	}

	/** The chips, notice and sources below the answer. */
	showSources(): void {
		renderSources(this.sourcesEl, this.turn, {
			searchAllDates: () => this.host.searchAllDates(this.turn),
			askAsWritten: () => this.host.askAsWritten(this.turn),
		});
	}

	/** After the stream: the copy button, or the error / "stopped" note. `user`: the question answered. */
	showEnding(user: UserTurn): void {
		const { turn, actionsEl, errorEl } = this;
		actionsEl.empty();
		errorEl.empty();
		if (turn.status === 'done' || (turn.status === 'stopped' && turn.content)) {
			const copy = actionsEl.createEl('button', {
				cls: ['vask-copy', 'clickable-icon'],
				text: 'Copy',
				attr: { 'aria-label': 'Copy the answer' },
			});
			copy.addEventListener('click', () => void this.copy());
		}
		if (turn.status === 'stopped') {
			actionsEl.createSpan({ cls: 'vask-stopped', text: turn.interrupted ? 'Interrupted: Obsidian closed before the answer was complete.' : 'Stopped.' });
		}
		if (turn.status === 'error') this.showError(user);
		else errorEl.hide();
	}

	/** Emptied, for its question to be asked again in its place. */
	clear(): void {
		this.scheduler.cancel();
		this.dropComponent();
		for (const el of [this.answerEl, this.sourcesEl, this.actionsEl, this.errorEl]) el.empty();
		this.sourcesEl.hide();
		this.errorEl.hide();
	}

	/** Taken out of the pane: what its renderings registered is unloaded, and nothing is drawn any more. */
	dispose(): void {
		this.disposed = true;
		this.scheduler.cancel();
		this.dropComponent();
		if (this.errorComponent) this.host.owner.removeChild(this.errorComponent);
		this.errorComponent = null;
	}

	private async renderAnswer(): Promise<void> {
		if (this.disposed) return;
		const { owner, scroll } = this.host;
		const follow = scroll.atBottom();
		const md = answerMarkdown(this.turn);
		this.dropComponent();
		const component = owner.addChild(new Component());
		this.component = component;
		this.answerEl.empty();
		await MarkdownRenderer.render(this.host.app, md, this.answerEl, CHAT_SOURCE_PATH, component);
		scroll.toBottom(follow);
	}

	private dropComponent(): void {
		if (this.component) this.host.owner.removeChild(this.component);
		this.component = null;
	}

	private showError(user: UserTurn): void {
		const { errorEl, host } = this;
		const plain = describeError(this.turn.error, host.errorContext());
		errorEl.show();
		errorEl.setAttr('data-code', plain.code);
		const fixes = plain.code === ErrorCode.scopeNotFound ? this.showScopeFixes(user) : false;
		// With buttons for the closest names, the hint that lists them is not repeated.
		const md = plain.hint && !fixes ? `${plain.message}\n\n${plain.hint}` : plain.message;
		if (this.errorComponent) host.owner.removeChild(this.errorComponent);
		const component = host.owner.addChild(new Component());
		this.errorComponent = component;
		const box = createDiv({ cls: 'markdown-rendered' });
		errorEl.prepend(box);
		void MarkdownRenderer.render(host.app, md, box, CHAT_SOURCE_PATH, component);
	}

	/**
	 * `scope_not_found`: a button per closest name, asking the question again
	 * with that name in place of the one that matched nothing. False when the
	 * server named none, or sent no `misses` (an older server): the hint then
	 * says the names in plain text.
	 */
	private showScopeFixes(user: UserTurn): boolean {
		const misses = toVaskError(this.turn.error).misses.filter((m) => m.closest.length > 0);
		if (misses.length === 0) return false;
		for (const miss of misses) {
			const row = this.errorEl.createDiv({ cls: 'vask-scope-fix' });
			row.createSpan({ cls: 'vask-scope-fix-label', text: misses.length > 1 ? `Instead of ${miss.written}:` : 'Did you mean' });
			for (const name of miss.closest) {
				const fixed = fixQuestion(user.content, miss.written, name);
				const button = row.createEl('button', {
					cls: 'vask-scope-fix-option',
					text: name,
					attr: { 'aria-label': `Ask again: “${fixed}”`, 'data-question': fixed },
				});
				button.addEventListener('click', () => this.host.ask(fixed, user.paneScope ?? null));
			}
		}
		return true;
	}

	private async copy(): Promise<void> {
		try {
			await navigator.clipboard.writeText(answerMarkdown(this.turn));
			new Notice('Answer copied');
		} catch (err) {
			new Notice(`Could not copy: ${err instanceof Error ? err.message : String(err)}`);
		}
	}
}
