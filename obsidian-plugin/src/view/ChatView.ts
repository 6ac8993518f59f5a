/** The chat pane: questions, streamed Markdown answers with clickable citations, sources. */
import { ModelPullBanner } from './ModelPullBanner';
import { Component, ItemView, MarkdownRenderer, Notice, type HoverPopover, type ViewStateResult, type WorkspaceLeaf } from 'obsidian';
import { ChatSession, type AssistantTurn, type Turn, type UserTurn } from '../lib/chat';
import { headingLabel, linkTargets, linkifyCitations } from '../lib/citations';
import { RenderScheduler } from '../lib/debounce';
import { ErrorCode, VaskError, describeError, isAbortError, toVaskError } from '../lib/errors';
import { chatRecord, liveTurns, newChatId, type ChatRecord } from '../lib/history';
import { DEFAULT_SAVE_DELAY_MS } from '../lib/historyStore';
import { basenameNoExt, pageLabel, stripMd } from '../lib/paths';
import {
	fixQuestion,
	isScopeMode,
	paneScope,
	scopeChips,
	scopeRequestFilters,
	type PaneScope,
	type ScopeChip,
	type ScopeMode,
} from '../lib/scope';
import { askParams } from '../lib/settings';
import { byLinkKind, groupTitle, linkKind, linkLabel } from '../lib/seed';
import { dateSourceText, describeRange, isFileTimeDate, localIsoDateTime, sourceDateText } from '../lib/time';
import type { AskRequest, HistoryMessage, Source } from '../lib/types';
import type { VaskHost } from './host';
import { createInternalLink, openLink, wireInternalLinks } from './links';
import { SuggestPopup } from './SuggestPopup';
import { revealFolder, searchTag, vaultNotes, vaultTags } from './vaultIndex';

export const VIEW_TYPE_CHAT = 'vask-chat';

/** Links in answers are full vault paths, so they resolve from anywhere. */
const SOURCE_PATH = '';
const RENDER_INTERVAL_MS = 60;

interface AnswerUi {
	rootEl: HTMLElement;
	/** Chips: the notes, tags and folders the question was limited to. */
	scopeEl: HTMLElement;
	answerEl: HTMLElement;
	statusEl: HTMLElement;
	sourcesEl: HTMLElement;
	actionsEl: HTMLElement;
	errorEl: HTMLElement;
	/** Owns what MarkdownRenderer registers for the current rendering. */
	component: Component | null;
	errorComponent: Component | null;
	scheduler: RenderScheduler;
	/** Counts the requests made for this answer: a stream replaced by "Search all dates" is ignored. */
	run: number;
}

export interface AskOptions {
	/** Vault path of the note the question is about. */
	currentNote?: string;
	/** Limit the question to this note or folder (the pane's toggle), sent as filters. */
	paneScope?: PaneScope | null;
}

const SCOPE_LABELS: Record<ScopeMode, string> = { all: 'All notes', note: 'This note', folder: 'This folder' };

export class ChatView extends ItemView {
	hoverPopover: HoverPopover | null = null;
	private readonly session = new ChatSession();
	private controller: AbortController | null = null;
	private readonly answers = new Map<number, AnswerUi>();
	private messagesEl!: HTMLElement;
	/** Offers to download a configured model the model server does not have. */
	private pullBanner: ModelPullBanner | null = null;
	private emptyEl!: HTMLElement;
	private inputEl!: HTMLTextAreaElement;
	private sendEl!: HTMLButtonElement;
	private suggest!: SuggestPopup;
	/** The toggle "All notes / This note / This folder": kept while the pane is open (and in its saved state). */
	private scopeMode: ScopeMode = 'all';
	private scopeButtons = new Map<ScopeMode, HTMLButtonElement>();
	private scopeTargetEl!: HTMLElement;
	/** The kept chat shown, once it has a question (history). */
	private chatId: string | null = null;
	private persistTimer: number | null = null;

	constructor(
		leaf: WorkspaceLeaf,
		private readonly host: VaskHost,
	) {
		super(leaf);
		this.navigation = false;
	}

	getViewType(): string {
		return VIEW_TYPE_CHAT;
	}

	getDisplayText(): string {
		return 'Vask';
	}

	override getIcon(): string {
		return 'message-circle';
	}

	/** The turns shown, oldest first. */
	get conversation(): readonly Turn[] {
		return this.session.all;
	}

	/** True while an answer is being received. */
	get busy(): boolean {
		return this.controller !== null;
	}

	override async onOpen(): Promise<void> {
		const root = this.contentEl;
		root.empty();
		root.addClass('vask-chat');

		this.pullBanner = new ModelPullBanner(root.createDiv(), this.host);
		void this.pullBanner.check();
		this.messagesEl = root.createDiv({ cls: 'vask-messages' });
		this.emptyEl = this.messagesEl.createDiv({ cls: 'vask-empty' });
		this.renderEmpty();
		wireInternalLinks(this, this.app, this.messagesEl, this, () => SOURCE_PATH);

		const composer = root.createDiv({ cls: 'vask-composer' });
		// The toggle's "Only [[note]]" link opens the note too.
		wireInternalLinks(this, this.app, composer, this, () => SOURCE_PATH);
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
		this.suggest = new SuggestPopup(this, this.inputEl, composer, {
			notes: () => vaultNotes(this.app),
			tags: () => vaultTags(this.app),
		});
		this.registerDomEvent(this.inputEl, 'keydown', (evt: KeyboardEvent) => {
			if (evt.defaultPrevented || evt.key !== 'Enter' || evt.shiftKey || evt.isComposing) return;
			evt.preventDefault();
			if (!this.busy) this.submit();
		});
		this.registerDomEvent(this.sendEl, 'click', () => {
			if (this.busy) this.stop();
			else this.submit();
		});
		this.registerDomEvent(newChatEl, 'click', () => this.newChat());
		this.registerEvent(this.app.workspace.on('file-open', () => this.updateScopeTarget()));
		this.registerEvent(this.app.workspace.on('active-leaf-change', () => this.updateScopeTarget()));
		this.setBusy(false);
		this.setScopeMode(this.scopeMode);
		this.addHistoryActions();
	}

	override getState(): Record<string, unknown> {
		return { ...super.getState(), scope: this.scopeMode };
	}

	override async setState(state: unknown, result: ViewStateResult): Promise<void> {
		const mode = (state as { scope?: unknown } | null)?.scope;
		if (isScopeMode(mode)) this.setScopeMode(mode);
		await super.setState(state, result);
	}

	/** The toggle's choice. */
	get scopeChoice(): ScopeMode {
		return this.scopeMode;
	}

	setScopeMode(mode: ScopeMode): void {
		// Saved with the workspace layout (getState), so the choice outlives a restart.
		if (mode !== this.scopeMode) this.app.workspace.requestSaveLayout();
		this.scopeMode = mode;
		for (const [m, button] of this.scopeButtons) {
			button.toggleClass('is-active', m === mode);
			button.setAttr('aria-checked', m === mode ? 'true' : 'false');
		}
		this.updateScopeTarget();
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
			this.registerDomEvent(button, 'click', () => this.setScopeMode(mode));
		}
		this.scopeTargetEl = bar.createDiv({ cls: 'vask-scope-target', attr: { 'aria-live': 'polite' } });
	}

	/** Says what "This note" / "This folder" stands for now, or that no note is open. */
	private updateScopeTarget(): void {
		const el = this.scopeTargetEl;
		if (!el) return;
		el.empty();
		el.removeClass('is-warn');
		const mode = this.scopeMode;
		if (mode === 'all') {
			el.hide();
			return;
		}
		el.show();
		const active = this.app.workspace.getActiveFile()?.path ?? null;
		const r = paneScope(mode, active);
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

	override async onClose(): Promise<void> {
		this.stop();
		void this.host.history.flush();
	}

	/* ---------- history hooks: the UI is in HistoryModal, the store in lib/historyStore ---------- */

	/** Header buttons; and the chat that was open last time, shown again. */
	private addHistoryActions(): void {
		this.addAction('history', 'Chat history', () => this.host.openHistory());
		const withChat = (run: (id: string) => Promise<void>) => () => {
			if (this.chatId) void run(this.chatId);
			else new Notice('Ask a question first: there is no chat to keep yet.');
		};
		this.addAction('copy', 'Copy chat as Markdown', withChat((id) => this.host.copyChat(id)));
		this.addAction('file-down', 'Save chat as note', withChat((id) => this.host.saveChatAsNote(id)));
		const current = this.host.history.currentId;
		const record = current ? this.host.history.get(current) : null;
		if (record) this.showChat(record);
	}

	/** The id of the kept chat in the pane; null while it has no question. */
	get currentChatId(): string | null {
		return this.chatId;
	}

	/** Keeps the chat as it is now (the store writes it within a moment). */
	/**
	 * While an answer streams: kept at most every save delay, not on every token
	 * (each keeping copies the whole chat, and the store writes once per delay anyway).
	 */
	private persistSoon(): void {
		if (this.persistTimer !== null) return;
		this.persistTimer = window.setTimeout(() => {
			this.persistTimer = null;
			this.persist();
		}, DEFAULT_SAVE_DELAY_MS);
	}

	private persist(): void {
		if (this.persistTimer !== null) {
			window.clearTimeout(this.persistTimer);
			this.persistTimer = null;
		}
		if (this.session.isEmpty) return;
		this.chatId ??= newChatId();
		this.host.history.put(chatRecord(this.chatId, this.session.all, new Date(), this.host.history.get(this.chatId)));
	}

	/** Shows a kept chat, to read and to continue: a follow-up carries its history. */
	showChat(record: ChatRecord): void {
		this.reset();
		this.chatId = record.id;
		this.host.history.setCurrent(record.id);
		this.session.load(liveTurns(record));
		this.emptyEl.hide();
		let user: UserTurn | null = null;
		for (const turn of this.session.all) {
			if (turn.role === 'user') {
				this.renderUser(turn);
				user = turn;
				continue;
			}
			if (!user) continue; // (a kept chat always starts with a question)
			const ui = this.createAnswerUi(turn);
			this.renderScope(turn, ui, user.paneScope ?? null);
			ui.scheduler.request();
			this.renderSources(turn, ui);
			this.updateState(turn, ui);
			this.renderEnding(turn, ui, user);
		}
		this.scrollToBottom(true);
	}

	focusInput(): void {
		this.inputEl?.focus();
	}

	private submit(): void {
		const q = this.inputEl.value.trim();
		if (!q) return;
		// "This note" with no note open: say so and keep the question, never search the whole vault instead.
		const scope = paneScope(this.scopeMode, this.app.workspace.getActiveFile()?.path ?? null);
		if (!scope.ok) {
			this.updateScopeTarget();
			this.scopeTargetEl.setText(scope.reason);
			return;
		}
		this.suggest.close();
		this.inputEl.value = '';
		void this.ask(q, { paneScope: scope.scope });
	}

	/** Stops the answer being received, if any (the server stops when the request is aborted). */
	stop(): void {
		this.controller?.abort();
	}

	/** Clears the conversation: the next question starts without history. */
	newChat(): void {
		this.reset();
		this.host.history.setCurrent(null);
		this.renderEmpty();
		this.focusInput();
	}

	/** The pane without a conversation, the history's open chat left as it is (showChat sets it). */
	private reset(): void {
		this.stop();
		const active = this.session.active;
		if (active) {
			this.session.stop(active); // kept as stopped, not as interrupted
			this.persist();
		}
		// (Otherwise nothing changed since the last event was kept: switching chats leaves their dates alone.)
		if (this.persistTimer !== null) window.clearTimeout(this.persistTimer);
		this.persistTimer = null;
		this.session.clear();
		for (const ui of this.answers.values()) {
			ui.scheduler.cancel();
			if (ui.component) this.removeChild(ui.component);
			if (ui.errorComponent) this.removeChild(ui.errorComponent);
		}
		this.answers.clear();
		this.chatId = null;
		this.messagesEl.empty();
		this.emptyEl = this.messagesEl.createDiv({ cls: 'vask-empty' });
	}

	/** Asks a question; follow-ups carry the conversation so far. Resolves when the answer is complete. */
	async ask(question: string, opts: AskOptions = {}): Promise<void> {
		const q = question.trim();
		if (!q) return;
		if (this.busy) this.stop();
		// The note open as it is asked: what "this note" means in "what connects to this note?"
		const openNote = this.app.workspace.getActiveFile()?.path ?? null;
		const { user, assistant, history } = this.session.ask(q, opts.currentNote, opts.paneScope, openNote);
		if (this.host.settings.chatModel) assistant.model = this.host.settings.chatModel;
		this.persist();
		this.emptyEl.hide();
		this.renderUser(user);
		const ui = this.createAnswerUi(assistant);
		this.renderScope(assistant, ui, user.paneScope ?? null);
		this.scrollToBottom(true);
		await this.receive(user, assistant, ui, history);
	}

	/**
	 * "Search all dates": asks an answer's question again over the whole vault,
	 * in place of that answer (the question did not change, only how it was
	 * read), with the history it had.
	 */
	async searchAllDates(turn: AssistantTurn): Promise<void> {
		await this.askAgain(turn, { readTime: false });
	}

	/** The seed chip's ✕: the same question again, in place of this answer, read as asked (no seed). */
	async searchWithoutSeed(turn: AssistantTurn): Promise<void> {
		await this.askAgain(turn, { connect: false });
	}

	private async askAgain(turn: AssistantTurn, how: { readTime?: boolean; connect?: boolean }): Promise<void> {
		const ui = this.answers.get(turn.id);
		if (!ui) return;
		if (this.busy) this.stop();
		const again = this.session.retry(turn, how);
		if (!again) return;
		ui.scheduler.cancel();
		if (ui.component) this.removeChild(ui.component);
		ui.component = null;
		for (const el of [ui.answerEl, ui.sourcesEl, ui.actionsEl, ui.errorEl]) el.empty();
		ui.sourcesEl.hide();
		ui.errorEl.hide();
		this.updateState(turn, ui);
		this.persist();
		await this.receive(again.user, turn, ui, again.history);
	}

	/** Sends the question of `assistant` and streams the answer into it. */
	private async receive(user: UserTurn, assistant: AssistantTurn, ui: AnswerUi, history: HistoryMessage[]): Promise<void> {
		const run = ++ui.run;
		const current = (): boolean => ui.run === run && this.answers.get(assistant.id) === ui;
		const ctrl = new AbortController();
		this.controller = ctrl;
		const untrack = this.host.track(ctrl);
		this.setBusy(true);

		// The asker's own wall-clock time and offset: "yesterday" is their day, not UTC's.
		const req: AskRequest = { question: user.content, ...askParams(this.host.settings), now: localIsoDateTime(new Date()) };
		if (history.length > 0) req.history = history;
		if (user.currentNote) req.current_note = user.currentNote;
		if (user.openNote) req.open_note = user.openNote;
		if (!assistant.readTime) req.read_time = false;
		if (!assistant.connect) req.connect = false;
		const scopeFilters = scopeRequestFilters(user.paneScope ?? null);
		if (scopeFilters) req.filters = { ...req.filters, ...scopeFilters };

		try {
			await this.host.client.ask(req, {
				signal: ctrl.signal,
				onEvent: (ev) => {
					if (!current()) return;
					this.session.apply(assistant, ev);
					// written within a moment: a crash keeps what arrived
					if (ev.type === 'token') this.persistSoon();
					else this.persist();
					this.updateState(assistant, ui);
					if (ev.type === 'sources' || ev.type === 'done') this.renderScope(assistant, ui, user.paneScope ?? null);
					if (ev.type === 'sources') {
						const follow = this.isAtBottom();
						this.renderSources(assistant, ui);
						this.scrollToBottom(follow);
					} else if (ev.type === 'token') {
						ui.scheduler.request();
					}
				},
			});
		} catch (err) {
			// Not when this request was replaced ("Search all dates") or dropped ("New chat").
			if (current()) {
				if (isAbortError(err)) this.session.stop(assistant);
				else this.session.fail(assistant, err);
				if (err instanceof VaskError && err.code === ErrorCode.modelMissing) void this.pullBanner?.check();
			}
		} finally {
			untrack();
			if (this.controller === ctrl) {
				this.controller = null;
				this.setBusy(false);
			}
		}
		if (!current()) return;
		this.persist();
		void this.host.history.flush();
		await ui.scheduler.flush();
		const follow = this.isAtBottom();
		this.renderSources(assistant, ui);
		this.renderScope(assistant, ui, user.paneScope ?? null);
		this.updateState(assistant, ui);
		this.renderEnding(assistant, ui, user);
		this.scrollToBottom(follow);
	}

	private setBusy(busy: boolean): void {
		this.sendEl.setText(busy ? 'Stop' : 'Send');
		this.sendEl.toggleClass('mod-cta', !busy);
		this.sendEl.toggleClass('mod-warning', busy);
		this.sendEl.setAttr('aria-label', busy ? 'Stop the answer' : 'Send the question');
		this.contentEl.toggleClass('is-busy', busy);
	}

	private renderEmpty(): void {
		this.emptyEl.empty();
		this.emptyEl.createDiv({ cls: 'vask-empty-title', text: 'Ask your vault' });
		this.emptyEl.createDiv({
			cls: 'vask-empty-text',
			text: 'Answers come only from your notes, and cite the notes they come from. Follow-up questions keep the conversation.',
		});
	}

	private renderUser(turn: UserTurn): void {
		const el = this.messagesEl.createDiv({ cls: ['vask-msg', 'vask-msg-user'] });
		el.createDiv({ cls: 'vask-msg-text', text: turn.content });
		if (turn.currentNote) {
			const ctx = el.createDiv({ cls: 'vask-msg-context', text: 'About ' });
			createInternalLink(ctx, stripMd(turn.currentNote), basenameNoExt(turn.currentNote));
		}
	}

	private createAnswerUi(turn: AssistantTurn): AnswerUi {
		const rootEl = this.messagesEl.createDiv({ cls: ['vask-msg', 'vask-msg-assistant', 'is-waiting'] });
		const ui: AnswerUi = {
			rootEl,
			scopeEl: rootEl.createDiv({ cls: 'vask-scope' }),
			statusEl: rootEl.createDiv({ cls: 'vask-msg-status', text: 'Searching your notes…' }),
			answerEl: rootEl.createDiv({ cls: ['vask-answer', 'markdown-rendered'] }),
			errorEl: rootEl.createDiv({ cls: 'vask-error' }),
			sourcesEl: rootEl.createDiv({ cls: 'vask-sources' }),
			actionsEl: rootEl.createDiv({ cls: 'vask-msg-actions' }),
			component: null,
			errorComponent: null,
			scheduler: new RenderScheduler(() => this.renderAnswer(turn, ui), RENDER_INTERVAL_MS),
			run: 0,
		};
		ui.errorEl.hide();
		ui.sourcesEl.hide();
		ui.scopeEl.hide();
		this.answers.set(turn.id, ui);
		return ui;
	}

	/** The Markdown to render: the answer with `[Title]` citations turned into internal links. */
	answerMarkdown(turn: AssistantTurn): string {
		return linkifyCitations(turn.content, linkTargets(turn.citations, turn.sources));
	}

	private async renderAnswer(turn: AssistantTurn, ui: AnswerUi): Promise<void> {
		if (!this.answers.has(turn.id)) return;
		const follow = this.isAtBottom();
		const md = this.answerMarkdown(turn);
		if (ui.component) this.removeChild(ui.component);
		const component = this.addChild(new Component());
		ui.component = component;
		ui.answerEl.empty();
		await MarkdownRenderer.render(this.app, md, ui.answerEl, SOURCE_PATH, component);
		this.scrollToBottom(follow);
	}

	private updateState(turn: AssistantTurn, ui: AnswerUi): void {
		const el = ui.rootEl;
		for (const s of ['waiting', 'streaming', 'done', 'stopped', 'error'] as const) {
			el.toggleClass(`is-${s}`, turn.status === s);
		}
		el.toggleClass('is-declined', turn.declined);
		if (turn.status === 'waiting') {
			ui.statusEl.setText(turn.sources.length > 0 ? 'Writing the answer…' : 'Searching your notes…');
			ui.statusEl.show();
		} else {
			ui.statusEl.hide();
		}
	}

	private renderSources(turn: AssistantTurn, ui: AnswerUi): void {
		const el = ui.sourcesEl;
		el.empty();
		// A time range is shown even with nothing found in it: that is when "Search all dates" helps most.
		if (turn.sources.length === 0 && !turn.notice && !turn.timeRange && !turn.seed) {
			el.hide();
			return;
		}
		el.show();
		if (turn.seed) this.renderSeed(turn, el);
		if (turn.timeRange) this.renderTimeRange(turn, el);
		// Said above the sources, where it applies: e.g. "Ollama is not reachable … keyword matches only".
		if (turn.notice) el.createDiv({ cls: 'vask-notice', text: turn.notice });
		if (turn.sources.length === 0) return;
		const cited = new Set(turn.citations.map((c) => c.path));
		el.createDiv({
			cls: 'vask-sources-title',
			// Without an answer they are not sources of anything, only the notes that matched.
			text: turn.declined || turn.status === 'error' || (turn.status === 'stopped' && !turn.content) ? 'Matching notes' : 'Sources',
		});
		// An answer about connections: the seed's own passages when kept, then the notes not linked yet,
		// then the linked ones, apart.
		const groups = turn.seed ? byLinkKind(turn.sources) : null;
		const ordered = groups ? [...groups.seed, ...groups.unlinked, ...groups.linked, ...groups.other] : turn.sources;
		const list = el.createEl('ol', { cls: 'vask-sources-list' });
		let lastKind: string | null = null;
		for (const s of ordered) {
			const kind = groups ? linkKind(s) : null;
			if (groups && kind !== lastKind && kind !== null) {
				list.createEl('li', { cls: 'vask-sources-group', attr: { role: 'presentation' }, text: groupTitle(kind, turn.seed!.title) });
				lastKind = kind;
			}
			const li = list.createEl('li', { cls: 'vask-source' });
			li.toggleClass('is-cited', cited.has(s.path));
			const head = li.createDiv({ cls: 'vask-source-head' });
			createInternalLink(head, s.link, s.title || basenameNoExt(s.path), 'vask-source-link');
			const meta = head.createDiv({ cls: 'vask-source-meta' });
			this.renderSourceDate(s, meta);
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
			const how = turn.seed ? linkLabel(s, turn.seed.title) : null;
			if (how) {
				li.createDiv({
					cls: ['vask-source-link-kind', `is-${linkKind(s) ?? 'other'}`],
					text: s.near ? `${how} · near “${headingLabel(s.near, turn.seed!.title) || turn.seed!.title}”` : how,
				});
			}
		}
	}

	/** The chip: the note whose connections were asked for, and a way to ask the question as written instead. */
	private renderSeed(turn: AssistantTurn, el: HTMLElement): void {
		const seed = turn.seed!;
		const chip = el.createDiv({ cls: 'vask-seed' });
		chip.createSpan({ cls: 'vask-seed-label', text: 'Connected to' });
		createInternalLink(chip, stripMd(seed.seed), seed.title, 'vask-seed-link');
		const remove = chip.createEl('button', {
			cls: 'vask-seed-remove',
			text: '✕',
			attr: { 'aria-label': `Ask as written, not as a question about what ${seed.words || 'connects to'} ${seed.title}` },
		});
		remove.addEventListener('click', () => void this.searchWithoutSeed(turn));
	}

	/** The chip: which dates were searched, the words that said so, and a way to search all dates instead. */
	private renderTimeRange(turn: AssistantTurn, el: HTMLElement): void {
		const range = turn.timeRange!;
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
		all.addEventListener('click', () => void this.searchAllDates(turn));
	}

	/** "14 Feb 2026" beside a source; marked when only the file's modification time says so. */
	private renderSourceDate(s: Source, meta: HTMLElement): void {
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

	/** The chips above the answer: what the toggle and the question's mentions limited the search to. */
	private renderScope(turn: AssistantTurn, ui: AnswerUi, pane: PaneScope | null): void {
		const chips = scopeChips(turn.scope, pane);
		const el = ui.scopeEl;
		el.empty();
		if (chips.length === 0) {
			el.hide();
			return;
		}
		el.show();
		el.createSpan({ cls: 'vask-scope-label', text: 'Only in' });
		for (const chip of chips) this.renderChip(el, chip);
	}

	private renderChip(parent: HTMLElement, chip: ScopeChip): void {
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
			if (chip.kind === 'note') openLink(this.app, stripMd(chip.value), '', evt);
			else if (chip.kind === 'tag') searchTag(this.app, chip.value);
			else revealFolder(this.app, chip.value);
		});
		// A middle-click opens a note chip's note in a new tab, as on a link (a button gets no click for it).
		if (chip.kind === 'note') {
			el.addEventListener('auxclick', (evt) => {
				if (evt.button === 1) openLink(this.app, stripMd(chip.value), '', evt);
			});
		}
	}

	/** After the stream: copy button, or the error / "stopped" note. */
	private renderEnding(turn: AssistantTurn, ui: AnswerUi, user: UserTurn): void {
		ui.actionsEl.empty();
		ui.errorEl.empty();
		if (turn.status === 'done' || (turn.status === 'stopped' && turn.content)) {
			const copy = ui.actionsEl.createEl('button', {
				cls: ['vask-copy', 'clickable-icon'],
				text: 'Copy',
				attr: { 'aria-label': 'Copy the answer' },
			});
			copy.addEventListener('click', () => void this.copy(turn));
		}
		if (turn.status === 'stopped') {
			ui.actionsEl.createSpan({ cls: 'vask-stopped', text: turn.interrupted ? 'Interrupted: Obsidian closed before the answer was complete.' : 'Stopped.' });
		}
		if (turn.status === 'error') {
			const plain = describeError(turn.error, this.host.errorContext());
			ui.errorEl.show();
			ui.errorEl.setAttr('data-code', plain.code);
			const fixes = plain.code === ErrorCode.scopeNotFound ? this.renderScopeFixes(turn, ui, user) : false;
			// With buttons for the closest names, the hint that lists them is not repeated.
			const md = plain.hint && !fixes ? `${plain.message}\n\n${plain.hint}` : plain.message;
			if (ui.errorComponent) this.removeChild(ui.errorComponent);
			const component = this.addChild(new Component());
			ui.errorComponent = component;
			const box = createDiv({ cls: 'markdown-rendered' });
			ui.errorEl.prepend(box);
			void MarkdownRenderer.render(this.app, md, box, SOURCE_PATH, component);
		} else {
			ui.errorEl.hide();
		}
	}

	/**
	 * `scope_not_found`: a button per closest name, asking the question again
	 * with that name in place of the one that matched nothing. False when the
	 * server named none, or sent no `misses` (an older server): the hint then
	 * says the names in plain text.
	 */
	private renderScopeFixes(turn: AssistantTurn, ui: AnswerUi, user: UserTurn): boolean {
		const e = toVaskError(turn.error);
		const misses = e.misses.filter((m) => m.closest.length > 0);
		if (misses.length === 0) return false;
		for (const miss of misses) {
			const row = ui.errorEl.createDiv({ cls: 'vask-scope-fix' });
			row.createSpan({ cls: 'vask-scope-fix-label', text: misses.length > 1 ? `Instead of ${miss.written}:` : 'Did you mean' });
			for (const name of miss.closest) {
				const fixed = fixQuestion(user.content, miss.written, name);
				const button = row.createEl('button', {
					cls: 'vask-scope-fix-option',
					text: name,
					attr: { 'aria-label': `Ask again: “${fixed}”`, 'data-question': fixed },
				});
				button.addEventListener('click', () => void this.ask(fixed, { paneScope: user.paneScope ?? null }));
			}
		}
		return true;
	}

	private async copy(turn: AssistantTurn): Promise<void> {
		try {
			await navigator.clipboard.writeText(this.answerMarkdown(turn));
			new Notice('Answer copied');
		} catch (err) {
			new Notice(`Could not copy: ${err instanceof Error ? err.message : String(err)}`);
		}
	}

	private isAtBottom(): boolean {
		const el = this.messagesEl;
		return el.scrollHeight - el.scrollTop - el.clientHeight < 48;
	}

	/** Keeps the newest text in view, unless the reader has scrolled up (`follow` false). */
	private scrollToBottom(follow: boolean): void {
		if (follow) this.messagesEl.scrollTop = this.messagesEl.scrollHeight;
	}
}
