/**
 * Vask: ask questions across the vault, answered from your notes by the local
 * vask server. This file only wires things up: settings, views, commands,
 * events, status bar and settings tab.
 */
import { Notice, Plugin, TFile, requestUrl, type TAbstractFile, type View, type WorkspaceLeaf } from 'obsidian';
import { VaskClient, joinUrl } from './lib/client';
import { sendsChangedNotes } from './lib/connection';
import { PathBatcher, debounce } from './lib/debounce';
import { describeError, type ErrorContext } from './lib/errors';
import { HistoryStore } from './lib/historyStore';
import { isIndexedPath, isMarkdownPath } from './lib/paths';
import { secretStoreOf, type TokenHome } from './lib/secrets';
import { DEFAULT_SETTINGS, serveArgs, type DeviceSettings, type VaskSettings } from './lib/settings';
import { SettingsStore } from './lib/settingsStore';
import { LocalServerControl } from './lib/localServerControl';
import { localSystem } from './desktop/localServer';
import { StatusStream } from './lib/statusStream';
import type { Pairing } from './lib/supervisor';
import { AutoTransport, bufferedTransport, fetchTransport, type Transport } from './lib/transport';
import type { Connection } from './lib/statusText';
import type { StatusEvent } from './lib/types';
import { AskModal } from './view/AskModal';
import { copyChat, saveChatAsNote } from './view/chatNotes';
import { ChatView, VIEW_TYPE_CHAT, type AskOptions } from './view/ChatView';
import { HistoryModal, type HistoryModalHost } from './view/HistoryModal';
import type { ProposalHost } from './view/host';
import { ProposalActions } from './view/proposalActions';
import { ProposalsView, VIEW_TYPE_PROPOSALS } from './view/ProposalsView';
import { HOVER_SOURCE } from './view/links';
import { RelatedView, VIEW_TYPE_RELATED } from './view/RelatedView';
import { ServerLogModal } from './view/ServerLogModal';
import { VaskSettingTab, type SettingsHost } from './view/SettingsTab';
import { ProposalsStatus, StatusBar } from './view/statusbar';
import { StatusModal } from './view/StatusModal';

/** The kept chats' file, in the plugin's folder: see "Chat history" in the plugin's README. */
const HISTORY_FILE = 'chat-history.jsonl';

/** This device's own settings (server URL, the local server's switches; the token where there is no keychain), in Obsidian's vault-scoped localStorage. */
const DEVICE_STORAGE_KEY = 'vask-device';

interface LocalStorageApp {
	loadLocalStorage?: (key: string) => unknown;
	saveLocalStorage?: (key: string, data: unknown) => void;
}

/** How often the count of proposed changes is asked for when nothing else prompts it (an agent may propose any time). */
const PROPOSALS_POLL_MS = 30_000;

export default class VaskPlugin extends Plugin implements SettingsHost, HistoryModalHost, ProposalHost {
	override settings: VaskSettings = { ...DEFAULT_SETTINGS };
	/** data.json (synced between devices), this device's storage, and Obsidian's keychain for the token. */
	private store: SettingsStore | null = null;
	/** The vault folder the server reads (/v1/health), once known: decides whether saves are sent. */
	private serverVault: string | null = null;
	client!: VaskClient;
	history!: HistoryStore;
	connection: Connection = { state: 'connecting' };
	private lastStatus: StatusEvent | null = null;
	/** Sending changed notes failed, and the user was told; reset by the next send that works. */
	private reindexFailing = false;
	private readonly inflight = new Set<AbortController>();
	/** The `vask serve` this plugin starts on desktop, and its paired address (which overrides the settings'). */
	local!: LocalServerControl;
	private settingTab: VaskSettingTab | null = null;
	private statusBar!: StatusBar;
	private proposalsStatus!: ProposalsStatus;
	/** Deciding on proposed changes to notes (through Vault.process when the server reads this vault). */
	proposals!: ProposalActions;
	private readonly countProposalsSoon = debounce(() => void this.countProposals(), 1500);
	private statusStream!: StatusStream;
	private batcher!: PathBatcher;
	private readonly restartStreamSoon = debounce(() => this.statusStream.restart(), 800);

	override async onload(): Promise<void> {
		await this.loadSettings();
		const settingsOf = (): VaskSettings => this.settings; // (replaced whole on every change: read it each time)
		this.local = new LocalServerControl({
			get settings() {
				return settingsOf();
			},
			vaultPath: () => this.vaultPath(),
			verify: async (p) => void (await this.makeClientFor(p.url, p.token).health()),
			pairingChanged: (p) => this.pairingChanged(p),
			runningElsewhere: async () => {
				const { serverUrl, token } = this.settings;
				if (!token) return null;
				try {
					const health = await this.makeClientFor(serverUrl, token).health();
					return health.vault === this.vaultPath() ? serverUrl : null;
				} catch {
					return null;
				}
			},
			stateChanged: () => this.settingTab?.refreshLocal(),
			notify: (text) => new Notice(text, 20_000),
		}, localSystem());
		this.client = this.makeClient();
		await this.loadHistory();
		this.proposals = new ProposalActions({
			app: this.app,
			client: () => this.client,
			serverVaultPath: () => this.serverVault,
			vaultPath: () => this.vaultPath(),
		});
		this.register(this.proposals.onChange(() => this.countProposalsSoon()));

		this.registerView(VIEW_TYPE_CHAT, (leaf) => new ChatView(leaf, this));
		this.registerView(VIEW_TYPE_RELATED, (leaf) => new RelatedView(leaf, this));
		this.registerView(VIEW_TYPE_PROPOSALS, (leaf) => new ProposalsView(leaf, this));
		this.registerHoverLinkSource(HOVER_SOURCE, { display: 'Vask', defaultMod: true });
		this.addRibbonIcon('message-circle', 'Open vask chat', () => void this.openChat());
		this.addCommands();
		this.settingTab = new VaskSettingTab(this.app, this, this);
		this.addSettingTab(this.settingTab);

		const statusEl = this.addStatusBarItem();
		this.statusBar = new StatusBar(statusEl);
		this.registerDomEvent(statusEl, 'click', () => this.openStatusModal());
		const proposalsEl = this.addStatusBarItem();
		this.proposalsStatus = new ProposalsStatus(proposalsEl);
		this.registerDomEvent(proposalsEl, 'click', () => void this.openProposals());
		this.registerInterval(window.setInterval(() => void this.countProposals(), PROPOSALS_POLL_MS));

		this.statusStream = new StatusStream({
			connect: (h) => {
				// A token changed in Obsidian's keychain settings is used from the next try on.
				this.refreshSecret(false);
				return this.client.events(h);
			},
			onOpen: () => {
				this.setConnection({ state: 'live', status: this.lastStatus });
				void this.learnServerVault();
				this.countProposalsSoon();
			},
			onStatus: (status) => {
				const startedIndexing = status.state === 'indexing' && this.lastStatus?.state !== 'indexing';
				this.lastStatus = status;
				this.setConnection({ state: 'live', status });
				this.countProposalsSoon(); // (a change applied elsewhere is re-indexed: the count may differ)
				if (startedIndexing) this.sendOpenNotesFirst();
			},
			onError: (error) => this.setConnection({ state: 'error', error }),
		});

		this.batcher = new PathBatcher(
			async (paths) => {
				await this.client.reindex(paths);
				this.reindexFailing = false;
			},
			{ wait: 1000, onError: (err, paths) => this.changedNotesFailed(err, paths) },
		);

		this.app.workspace.onLayoutReady(() => {
			this.registerVaultEvents();
			this.statusStream.start();
			void this.local.apply();
			this.registerEvent(this.app.workspace.on('file-open', () => this.sendOpenNotesFirst()));
		});

		// Obsidian quitting may not unload plugins: the server is asked to stop as the window goes (and
		// stops by itself when its stdin, held by this process, closes).
		this.registerDomEvent(window, 'beforeunload', () => void this.local.stop());
		this.register(() => {
			void this.local.stop();
			this.restartStreamSoon.cancel();
			this.countProposalsSoon.cancel();
			this.statusStream.stop();
			void this.batcher.flush();
			for (const ctrl of this.inflight) ctrl.abort();
			this.inflight.clear();
			void this.history.flush();
		});
	}

	/**
	 * The history lives in the plugin's own folder (not data.json, which holds
	 * settings and is rewritten whole on every settings change), which plugin
	 * updates leave alone.
	 */
	private async loadHistory(): Promise<void> {
		const dir = this.manifest.dir ?? `${this.app.vault.configDir}/plugins/${this.manifest.id}`;
		this.history = new HistoryStore(this.app.vault.adapter, `${dir}/${HISTORY_FILE}`, {
			onWriteError: (err) => this.errorNotice(err, 'could not save the chat history:'),
		});
		const loaded = await this.history.load();
		if (loaded.problem) {
			// Once: the readable chats were written back, so the next start reads the file without complaint.
			const kept = loaded.backup ? ` The file was kept as ${loaded.backup}.` : '';
			const chats = loaded.chats > 0 ? ` ${loaded.chats} chat${loaded.chats === 1 ? ' was' : 's were'} read.` : ' Starting with an empty history.';
			new Notice(`vask: the chat history could not be read completely: ${loaded.problem}.${chats}${kept}`, 15_000);
		}
	}

	private get localStorageApp(): LocalStorageApp {
		return this.app;
	}

	/**
	 * The settings' homes on this app: device storage from Obsidian 1.8.7 (before that the URL stays in
	 * data.json), the keychain from 1.11.4 (before that the token stays in device storage or data.json).
	 */
	private settingsStore(): SettingsStore {
		if (this.store) return this.store;
		const a = this.localStorageApp;
		const load = a.loadLocalStorage?.bind(this.app);
		const save = a.saveLocalStorage?.bind(this.app);
		this.store = new SettingsStore({
			loadData: () => this.loadData(),
			saveData: (data) => this.saveData(data),
			device: load && save ? { load: () => load(DEVICE_STORAGE_KEY), save: (data: DeviceSettings) => save(DEVICE_STORAGE_KEY, data) } : null,
			secrets: secretStoreOf(this.app),
		});
		return this.store;
	}

	/** Where the token is kept on this device: the keychain, device storage or data.json. */
	get tokenHome(): TokenHome {
		return this.settingsStore().tokenHome;
	}

	async loadSettings(): Promise<void> {
		this.settings = await this.settingsStore().load();
	}

	/** data.json changed on disk (e.g. synced from another device). */
	override async onExternalSettingsChange(): Promise<void> {
		const before = this.settings;
		await this.loadSettings();
		this.client = this.makeClient();
		if (before.serverUrl !== this.settings.serverUrl || before.token !== this.settings.token) this.restartStreamSoon();
	}

	async updateSettings(patch: Partial<VaskSettings>): Promise<void> {
		const before = this.settings;
		this.settings = await this.settingsStore().update(patch);
		this.client = this.makeClient();
		if (before.serverUrl !== this.settings.serverUrl || before.token !== this.settings.token) {
			this.setConnection({ state: 'connecting' });
			this.restartStreamSoon();
		}
		// (the executable's path and the server's flags once typing pauses: each keystroke is a path that
		// may not exist yet, or an instruction half typed)
		const flags = (v: VaskSettings): string => JSON.stringify(serveArgs(v));
		if (before.manageServer !== this.settings.manageServer) void this.local.apply();
		else if (before.vaskPath !== this.settings.vaskPath || flags(before) !== flags(this.settings)) this.local.applySoon();
	}

	/** The keychain's token was changed outside the plugin (in Obsidian's settings): use the new one. */
	refreshSecret(reconnect = true): void {
		const store = this.settingsStore();
		if (!store.refreshSecret()) return;
		this.settings = store.settings;
		this.client = this.makeClient();
		if (reconnect) this.restartStreamSoon();
	}

	/** The server this plugin started paired (or went away): requests go there, or back to the settings' server. */
	private pairingChanged(_pairing: Pairing | null): void {
		const before = this.client;
		this.client = this.makeClient();
		if (before.baseUrl === this.client.baseUrl) return;
		this.setConnection({ state: 'connecting' });
		this.restartStreamSoon();
	}

	/**
	 * The server requests go to: the one this plugin started, once paired; else the settings' URL and token.
	 * The paired token is kept in memory only, neither in the keychain nor in the settings: the server
	 * writes it to its 0600 pair file on every start and the plugin reads it there each time, so a
	 * stored copy would add a second place for the credential and go stale when the token is revoked
	 * or made anew (`vask token`), and the person never sees or types it. The settings' token is the
	 * one for a server the plugin did not start (another machine, or one started by hand).
	 */
	serverAddress(): { serverUrl: string; token: string } {
		const p = this.local?.pairing;
		return p ? { serverUrl: p.url, token: p.token } : { serverUrl: this.settings.serverUrl, token: this.settings.token };
	}

	openServerLog(): void {
		new ServerLogModal(this.app, () => this.local.logLines()).open();
	}

	/** Streaming fetch where it reaches the server, else Obsidian's requestUrl (chosen on first use). */
	makeTransports(): { streaming: Transport; buffered: Transport } {
		return { streaming: fetchTransport(), buffered: bufferedTransport(requestUrl) };
	}

	private makeClient(): VaskClient {
		this.serverVault = null;
		const { serverUrl, token } = this.serverAddress();
		return this.makeClientFor(serverUrl, token);
	}

	private makeClientFor(serverUrl: string, token: string): VaskClient {
		const { streaming, buffered } = this.makeTransports();
		let transport: Transport = streaming;
		try {
			transport = new AutoTransport(streaming, buffered, joinUrl(serverUrl, '/v1/health'));
		} catch {
			// a server URL that is no http(s) address: every request says so (bad_settings)
		}
		return new VaskClient({ baseUrl: serverUrl, token, transport });
	}

	private async learnServerVault(): Promise<void> {
		try {
			const health = await this.client.health();
			this.serverVault = typeof health.vault === 'string' ? health.vault : null;
		} catch {
			// unknown: saves are sent as before
		}
	}

	/** Absolute path of the vault on disk (desktop only). */
	vaultPath(): string | null {
		const adapter = this.app.vault.adapter as unknown as { getBasePath?: () => string };
		return typeof adapter.getBasePath === 'function' ? adapter.getBasePath() : null;
	}

	errorContext(): ErrorContext {
		return { vaultPath: this.vaultPath(), serverUrl: this.serverAddress().serverUrl };
	}

	track(ctrl: AbortController): () => void {
		this.inflight.add(ctrl);
		return () => this.inflight.delete(ctrl);
	}

	private setConnection(c: Connection): void {
		this.connection = c;
		this.statusBar.update(c);
	}

	private addCommands(): void {
		this.addCommand({
			id: 'ask-vault',
			name: 'Ask vault',
			callback: () => {
				new AskModal(this.app, { title: 'Ask vault', onSubmit: (q) => void this.askInChat(q) }).open();
			},
		});
		this.addCommand({
			id: 'ask-current-note',
			name: 'Ask about the current note',
			checkCallback: (checking) => {
				const file = this.app.workspace.getActiveFile();
				if (!file || !isMarkdownPath(file.path)) return false;
				if (!checking) {
					new AskModal(this.app, {
						title: 'Ask about the current note',
						context: file.path,
						onSubmit: (q) => void this.askInChat(q, { currentNote: file.path }),
					}).open();
				}
				return true;
			},
		});
		this.addCommand({ id: 'open-chat', name: 'Open chat', callback: () => void this.openChat() });
		this.addCommand({ id: 'open-chat-history', name: 'Open chat history', callback: () => this.openHistory() });
		const withChat = (run: (id: string) => Promise<void>) => (checking: boolean) => {
			const id = this.chatView()?.currentChatId ?? null;
			if (!id) return false;
			if (!checking) void run(id);
			return true;
		};
		this.addCommand({ id: 'save-chat-as-note', name: 'Save chat as note', checkCallback: withChat((id) => this.saveChatAsNote(id)) });
		this.addCommand({ id: 'copy-chat-markdown', name: 'Copy chat as Markdown', checkCallback: withChat((id) => this.copyChat(id)) });
		this.addCommand({
			id: 'show-related',
			name: 'Show related notes',
			callback: () => void this.activateView(VIEW_TYPE_RELATED),
		});
		this.addCommand({ id: 'review-proposed-changes', name: 'Review proposed changes', callback: () => void this.openProposals() });
		this.addCommand({ id: 'reindex-vault', name: 'Reindex vault', callback: () => void this.reindexVault() });
		this.addCommand({ id: 'pause-indexing', name: 'Pause indexing', callback: () => void this.pauseIndexing(true) });
		this.addCommand({ id: 'resume-indexing', name: 'Resume indexing', callback: () => void this.pauseIndexing(false) });
	}

	async pauseIndexing(paused: boolean): Promise<void> {
		try {
			await this.client.pauseIndexing(paused);
			new Notice(paused ? 'vask: indexing paused (searches go on)' : 'vask: indexing resumed');
		} catch (err) {
			this.errorNotice(err);
		}
	}

	/**
	 * While the server indexes, the notes open now and opened last go first: what the person is
	 * working on is what they will ask about. Best effort: an older server has no such endpoint.
	 */
	private sendOpenNotesFirst(): void {
		if (this.lastStatus?.state !== 'indexing') return;
		const active = this.app.workspace.getActiveFile();
		const paths = [...(active ? [active.path] : []), ...this.app.workspace.getLastOpenFiles()];
		const notes = [...new Set(paths)].filter((p) => isIndexedPath(p)).slice(0, 50);
		if (notes.length) void this.client.indexFirst(notes).catch(() => undefined);
	}

	private registerVaultEvents(): void {
		const queue = (file: TAbstractFile, oldPath?: string): void => {
			if (!(file instanceof TFile)) return;
			// A server that reads another copy of the vault (through a sync tool) sees the change itself.
			if (!sendsChangedNotes(this.serverAddress().serverUrl, this.serverVault, this.vaultPath())) return;
			const paths = [oldPath, file.path].filter((p): p is string => !!p && isIndexedPath(p));
			if (paths.length > 0) this.batcher.add(...paths);
		};
		this.registerEvent(this.app.vault.on('modify', (file) => queue(file)));
		this.registerEvent(this.app.vault.on('delete', (file) => queue(file)));
		this.registerEvent(this.app.vault.on('rename', (file, oldPath) => queue(file, oldPath)));
		// A chat saved as a note follows its note when it is renamed or moved.
		this.registerEvent(this.app.vault.on('rename', (file, oldPath) => this.history.noteRenamed(oldPath, file.path)));
	}

	/** Opens (or reveals) a view in the right sidebar. */
	async activateView(type: string): Promise<View | null> {
		const { workspace } = this.app;
		let leaf: WorkspaceLeaf | null = workspace.getLeavesOfType(type)[0] ?? null;
		if (!leaf) {
			leaf = workspace.getRightLeaf(false);
			if (!leaf) return null;
			await leaf.setViewState({ type, active: true });
		}
		await workspace.revealLeaf(leaf);
		if (typeof leaf.loadIfDeferred === 'function') await leaf.loadIfDeferred();
		return leaf.view;
	}

	async openProposals(): Promise<void> {
		await this.activateView(VIEW_TYPE_PROPOSALS);
	}

	/** The status bar's count of proposed changes waiting; hidden when none wait or the server cannot say. */
	private async countProposals(): Promise<void> {
		try {
			const list = await this.client.proposals('pending');
			this.proposalsStatus.update(list.counts);
		} catch {
			this.proposalsStatus.update(undefined);
		}
	}

	async openChat(): Promise<ChatView | null> {
		const view = await this.activateView(VIEW_TYPE_CHAT);
		if (!(view instanceof ChatView)) return null;
		view.focusInput();
		return view;
	}

	private chatView(): ChatView | null {
		const view = this.app.workspace.getLeavesOfType(VIEW_TYPE_CHAT)[0]?.view;
		return view instanceof ChatView ? view : null;
	}

	openHistory(): void {
		new HistoryModal(this.app, this).open();
	}

	async reopenChat(id: string): Promise<void> {
		const record = this.history.get(id);
		const view = await this.openChat();
		if (record && view) view.showChat(record);
	}

	deleteChats(id: string | null): void {
		const view = this.chatView();
		const open = view?.currentChatId ?? null;
		// The pane lets go of its chat first: it would keep it again otherwise.
		if (view && open !== null && (id === null || id === open)) view.newChat();
		if (id === null) this.history.clear();
		else this.history.delete(id);
		void this.history.flush();
	}

	copyChat(id: string): Promise<void> {
		return copyChat(this.history, id);
	}

	saveChatAsNote(id: string): Promise<void> {
		return saveChatAsNote(this.app, this, id);
	}

	async askInChat(question: string, opts: AskOptions = {}): Promise<void> {
		const view = await this.openChat();
		if (!view) return;
		// A question about a note starts a chat of its own (kept and listed as about that note),
		// unless the chat in the pane is about that note already.
		const first = view.conversation.find((t) => t.role === 'user');
		if (opts.currentNote && first && first.currentNote !== opts.currentNote) view.newChat();
		await view.ask(question, opts);
	}

	async reindexVault(): Promise<void> {
		try {
			const res = await this.client.reindex();
			new Notice(`vask: reindexing (${res.queued} notes queued)`);
		} catch (err) {
			this.errorNotice(err);
		}
	}

	/** Changed notes could not be sent for reindexing: say so once per run of failures (each save would repeat it). */
	private changedNotesFailed(err: unknown, paths: string[]): void {
		console.warn(`vask: could not queue ${paths.length} changed note(s) for reindexing`, err);
		if (this.reindexFailing) return;
		this.reindexFailing = true;
		this.errorNotice(err, `could not send ${paths.length} changed note(s) for reindexing.`, 'Once that is fixed, run "Vask: Reindex vault" to index them.');
	}

	private errorNotice(err: unknown, what = '', after = ''): void {
		const plain = describeError(err, this.errorContext());
		const lines = [`vask: ${what ? `${what} ` : ''}${plain.message}`, plain.hint, after].filter((l) => l !== '');
		new Notice(lines.join('\n').replace(/`/g, ''), 10_000);
	}

	openStatusModal(): void {
		new StatusModal(this.app, this).open();
	}
}
