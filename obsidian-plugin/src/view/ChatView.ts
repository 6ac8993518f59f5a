/**
 * The chat pane, as an Obsidian view: wires the composer (Composer.ts), the
 * messages with a card per answer (MessageList.ts, AnswerCard.ts), the request
 * lifecycle (lib/answerRequest.ts) and the keeping of the chat
 * (lib/chatKeeper.ts). The history list is HistoryModal's; the store, lib/historyStore's.
 */
import { ItemView, Notice, type HoverPopover, type ViewStateResult, type WorkspaceLeaf } from 'obsidian';
import { AnswerRequests } from '../lib/answerRequest';
import { ChatSession, type AssistantTurn, type Turn, type UserTurn } from '../lib/chat';
import { ChatKeeper } from '../lib/chatKeeper';
import { ErrorCode, VaskError } from '../lib/errors';
import { liveTurns, type ChatRecord } from '../lib/history';
import { isScopeMode, type PaneScope, type ScopeMode } from '../lib/scope';
import type { AskEvent, HistoryMessage } from '../lib/types';
import type { AnswerCard } from './AnswerCard';
import { Composer } from './Composer';
import type { VaskHost } from './host';
import { MessageList } from './MessageList';
import { ModelPullBanner } from './ModelPullBanner';

export const VIEW_TYPE_CHAT = 'vask-chat';

export interface AskOptions {
	/** Vault path of the note the question is about. */
	currentNote?: string;
	/** Limit the question to this note or folder (the pane's toggle), sent as filters. */
	paneScope?: PaneScope | null;
}

export class ChatView extends ItemView {
	hoverPopover: HoverPopover | null = null;
	private readonly session = new ChatSession();
	private readonly keeper: ChatKeeper;
	private readonly requests: AnswerRequests;
	private readonly composer: Composer;
	private messages!: MessageList;
	/** Offers to download a configured model the model server does not have. */
	private pullBanner: ModelPullBanner | null = null;

	constructor(
		leaf: WorkspaceLeaf,
		private readonly host: VaskHost,
	) {
		super(leaf);
		this.navigation = false;
		this.keeper = new ChatKeeper(this.session, host.history);
		this.requests = new AnswerRequests({
			session: this.session,
			keeper: this.keeper,
			client: () => host.client,
			settings: () => host.settings,
			track: (ctrl) => host.track(ctrl),
			onBusy: (busy) => this.setBusy(busy),
		});
		// Built before the DOM: a restored layout sets the toggle (setState) whenever it comes.
		this.composer = new Composer({
			app: this.app,
			owner: this,
			busy: () => this.busy,
			send: (question, scope) => void this.ask(question, { paneScope: scope }),
			stop: () => this.stop(),
			newChat: () => this.newChat(),
			// Saved with the workspace layout (getState), so the choice outlives a restart.
			scopeChanged: () => this.app.workspace.requestSaveLayout(),
		});
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
		return this.requests.busy;
	}

	override async onOpen(): Promise<void> {
		const root = this.contentEl;
		root.empty();
		root.addClass('vask-chat');

		this.pullBanner = new ModelPullBanner(root.createDiv(), this.host);
		void this.pullBanner.check();
		this.messages = new MessageList(root, {
			app: this.app,
			owner: this,
			errorContext: () => this.host.errorContext(),
			searchAllDates: (turn) => void this.searchAllDates(turn),
			askAsWritten: (turn) => void this.searchWithoutSeed(turn),
			ask: (question, paneScope) => void this.ask(question, { paneScope }),
		});
		this.messages.showEmpty();
		this.composer.mount(root);
		this.setBusy(false);
		this.addHistoryActions();
	}

	override getState(): Record<string, unknown> {
		return { ...super.getState(), scope: this.composer.scopeMode };
	}

	override async setState(state: unknown, result: ViewStateResult): Promise<void> {
		const mode = (state as { scope?: unknown } | null)?.scope;
		if (isScopeMode(mode)) this.setScopeMode(mode);
		await super.setState(state, result);
	}

	/** The toggle's choice. */
	get scopeChoice(): ScopeMode {
		return this.composer.scopeMode;
	}

	setScopeMode(mode: ScopeMode): void {
		this.composer.setScopeMode(mode);
	}

	override async onClose(): Promise<void> {
		this.stop();
		void this.host.history.flush();
	}

	/** Header buttons; and the chat that was open last time, shown again. */
	private addHistoryActions(): void {
		this.addAction('history', 'Chat history', () => this.host.openHistory());
		const withChat = (run: (id: string) => Promise<void>) => () => {
			const id = this.keeper.id;
			if (id) void run(id);
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
		return this.keeper.id;
	}

	/** Shows a kept chat, to read and to continue: a follow-up carries its history. */
	showChat(record: ChatRecord): void {
		this.reset();
		this.keeper.open(record.id);
		this.session.load(liveTurns(record));
		this.messages.hideEmpty();
		let user: UserTurn | null = null;
		for (const turn of this.session.all) {
			if (turn.role === 'user') {
				this.messages.addQuestion(turn);
				user = turn;
				continue;
			}
			if (!user) continue; // (a kept chat always starts with a question)
			const card = this.messages.addAnswer(turn);
			card.showScope(user.paneScope ?? null);
			card.requestRender();
			card.showSources();
			card.showState();
			card.showEnding(user);
		}
		this.messages.scroll.toBottom(true);
	}

	focusInput(): void {
		this.composer.focus();
	}

	/** Stops the answer being received, if any (the server stops when the request is aborted). */
	stop(): void {
		this.requests.stop();
	}

	/** Clears the conversation: the next question starts without history. */
	newChat(): void {
		this.reset();
		this.host.history.setCurrent(null);
		this.messages.showEmpty();
		this.focusInput();
	}

	/** The pane without a conversation, the history's open chat left as it is (showChat sets it). */
	private reset(): void {
		this.stop();
		const active = this.session.active;
		if (active) {
			this.session.stop(active); // kept as stopped, not as interrupted
			this.keeper.keep();
		}
		this.keeper.close();
		this.requests.dropAll();
		this.session.clear();
		this.messages.clear();
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
		this.keeper.keep();
		this.messages.hideEmpty();
		this.messages.addQuestion(user);
		const card = this.messages.addAnswer(assistant);
		card.showScope(user.paneScope ?? null);
		this.messages.scroll.toBottom(true);
		await this.receive(user, card, history);
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
		const card = this.messages.card(turn.id);
		if (!card) return;
		if (this.busy) this.stop();
		const again = this.session.retry(turn, how);
		if (!again) return;
		card.clear();
		card.showState();
		this.keeper.keep();
		await this.receive(again.user, card, again.history);
	}

	/** Streams the answer to `user` into `card`, then draws how it ended. */
	private async receive(user: UserTurn, card: AnswerCard, history: HistoryMessage[]): Promise<void> {
		const pane = user.paneScope ?? null;
		const scroll = this.messages.scroll;
		const onEvent = (ev: AskEvent): void => {
			card.showState();
			if (ev.type === 'sources' || ev.type === 'done') card.showScope(pane);
			if (ev.type === 'sources') {
				const follow = scroll.atBottom();
				card.showSources();
				scroll.toBottom(follow);
			} else if (ev.type === 'token') {
				card.requestRender();
			}
		};
		const onFailed = (err: unknown): void => {
			if (err instanceof VaskError && err.code === ErrorCode.modelMissing) void this.pullBanner?.check();
		};
		if (!(await this.requests.receive(user, card.turn, history, { onEvent, onFailed }))) return;
		await card.flushRender();
		const follow = scroll.atBottom();
		card.showSources();
		card.showScope(pane);
		card.showState();
		card.showEnding(user);
		scroll.toBottom(follow);
	}

	private setBusy(busy: boolean): void {
		this.composer.setBusy(busy);
		this.contentEl.toggleClass('is-busy', busy);
	}
}
