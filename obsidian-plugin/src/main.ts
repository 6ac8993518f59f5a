/**
 * Vask: ask questions across the vault, answered from your notes by the local
 * vask server. This file only wires things up: settings, views, commands,
 * events, status bar and settings tab.
 */
import { Notice, Plugin, TFile, type TAbstractFile, type View, type WorkspaceLeaf } from 'obsidian';
import { VaskClient } from './lib/client';
import { PathBatcher, debounce } from './lib/debounce';
import { describeError, type ErrorContext } from './lib/errors';
import { isIndexedPath, isMarkdownPath } from './lib/paths';
import { DEFAULT_SETTINGS, normalizeSettings, storedSettings, updatedSettings, type VaskSettings } from './lib/settings';
import { StatusStream } from './lib/statusStream';
import type { Connection } from './lib/statusText';
import type { StatusEvent } from './lib/types';
import { AskModal } from './view/AskModal';
import { ChatView, VIEW_TYPE_CHAT, type AskOptions } from './view/ChatView';
import { HOVER_SOURCE } from './view/links';
import { RelatedView, VIEW_TYPE_RELATED } from './view/RelatedView';
import { VaskSettingTab, type SettingsHost } from './view/SettingsTab';
import { StatusBar } from './view/statusbar';
import { StatusModal } from './view/StatusModal';

export default class VaskPlugin extends Plugin implements SettingsHost {
	override settings: VaskSettings = { ...DEFAULT_SETTINGS };
	client!: VaskClient;
	connection: Connection = { state: 'connecting' };
	private lastStatus: StatusEvent | null = null;
	/** Sending changed notes failed, and the user was told; reset by the next send that works. */
	private reindexFailing = false;
	private readonly inflight = new Set<AbortController>();
	private statusBar!: StatusBar;
	private statusStream!: StatusStream;
	private batcher!: PathBatcher;
	private readonly restartStreamSoon = debounce(() => this.statusStream.restart(), 800);

	override async onload(): Promise<void> {
		await this.loadSettings();
		this.client = this.makeClient();

		this.registerView(VIEW_TYPE_CHAT, (leaf) => new ChatView(leaf, this));
		this.registerView(VIEW_TYPE_RELATED, (leaf) => new RelatedView(leaf, this));
		this.registerHoverLinkSource(HOVER_SOURCE, { display: 'Vask', defaultMod: true });
		this.addRibbonIcon('message-circle', 'Open vask chat', () => void this.openChat());
		this.addCommands();
		this.addSettingTab(new VaskSettingTab(this.app, this, this));

		const statusEl = this.addStatusBarItem();
		this.statusBar = new StatusBar(statusEl);
		this.registerDomEvent(statusEl, 'click', () => this.openStatusModal());

		this.statusStream = new StatusStream({
			connect: (h) => this.client.events(h),
			onOpen: () => this.setConnection({ state: 'live', status: this.lastStatus }),
			onStatus: (status) => {
				this.lastStatus = status;
				this.setConnection({ state: 'live', status });
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
		});

		this.register(() => {
			this.restartStreamSoon.cancel();
			this.statusStream.stop();
			void this.batcher.flush();
			for (const ctrl of this.inflight) ctrl.abort();
			this.inflight.clear();
		});
	}

	async loadSettings(): Promise<void> {
		this.settings = normalizeSettings(await this.loadData());
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
		this.settings = updatedSettings(this.settings, patch);
		await this.saveData(storedSettings(this.settings));
		this.client = this.makeClient();
		if (before.serverUrl !== this.settings.serverUrl || before.token !== this.settings.token) {
			this.setConnection({ state: 'connecting' });
			this.restartStreamSoon();
		}
	}

	private makeClient(): VaskClient {
		return new VaskClient({ baseUrl: this.settings.serverUrl, token: this.settings.token });
	}

	/** Absolute path of the vault on disk (desktop only). */
	vaultPath(): string | null {
		const adapter = this.app.vault.adapter as unknown as { getBasePath?: () => string };
		return typeof adapter.getBasePath === 'function' ? adapter.getBasePath() : null;
	}

	errorContext(): ErrorContext {
		return { vaultPath: this.vaultPath(), serverUrl: this.settings.serverUrl };
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
		this.addCommand({
			id: 'show-related',
			name: 'Show related notes',
			callback: () => void this.activateView(VIEW_TYPE_RELATED),
		});
		this.addCommand({ id: 'reindex-vault', name: 'Reindex vault', callback: () => void this.reindexVault() });
	}

	private registerVaultEvents(): void {
		const queue = (file: TAbstractFile, oldPath?: string): void => {
			if (!(file instanceof TFile)) return;
			const paths = [oldPath, file.path].filter((p): p is string => !!p && isIndexedPath(p));
			if (paths.length > 0) this.batcher.add(...paths);
		};
		this.registerEvent(this.app.vault.on('modify', (file) => queue(file)));
		this.registerEvent(this.app.vault.on('delete', (file) => queue(file)));
		this.registerEvent(this.app.vault.on('rename', (file, oldPath) => queue(file, oldPath)));
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

	async openChat(): Promise<ChatView | null> {
		const view = await this.activateView(VIEW_TYPE_CHAT);
		if (!(view instanceof ChatView)) return null;
		view.focusInput();
		return view;
	}

	async askInChat(question: string, opts: AskOptions = {}): Promise<void> {
		const view = await this.openChat();
		if (view) await view.ask(question, opts);
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
