/**
 * A small stand-in for the `obsidian` module, for running the plugin in a
 * plain browser page in the end-to-end test. It implements only the API
 * surface the plugin uses, close enough to Obsidian's behaviour, and records
 * what the plugin asked Obsidian to do on `window` (`__opened`, `__hovered`,
 * `__notices`, `__renders`) for the test to check.
 */

/* ---------- recording ---------- */

export interface OpenedLink {
	linktext: string;
	sourcePath: string;
	newLeaf: unknown;
}
export interface HoveredLink {
	source: string;
	linktext: string;
	sourcePath: string;
	targetText: string;
}
/** What the plugin asked Obsidian's core plugins to show: a search, a folder in the file explorer. */
export interface CoreCall {
	plugin: 'global-search' | 'file-explorer';
	arg: string;
}
export interface RenderRecord {
	markdown: string;
	/** Whether the element rendered into was inside a message still streaming. */
	streaming: boolean;
}

interface Recorder {
	__opened: OpenedLink[];
	__core: CoreCall[];
	__hovered: HoveredLink[];
	__notices: string[];
	__renders: RenderRecord[];
}

function rec(): Recorder {
	const w = window as unknown as Partial<Recorder>;
	w.__opened ??= [];
	w.__core ??= [];
	w.__hovered ??= [];
	w.__notices ??= [];
	w.__renders ??= [];
	return w as Recorder;
}

rec();

/* ---------- Obsidian's DOM helpers ---------- */

type ElInfo = {
	cls?: string | string[];
	text?: string | DocumentFragment;
	attr?: Record<string, string | number | boolean | null>;
	title?: string;
	parent?: Node;
	value?: string;
	type?: string;
	prepend?: boolean;
	placeholder?: string;
	href?: string;
};

function classes(cls: string | string[]): string[] {
	return (Array.isArray(cls) ? cls : cls.split(' ')).filter((c) => c !== '');
}

function makeEl<K extends keyof HTMLElementTagNameMap>(
	tag: K,
	o?: ElInfo | string,
	callback?: (el: HTMLElementTagNameMap[K]) => void,
): HTMLElementTagNameMap[K] {
	const el = document.createElement(tag);
	const info: ElInfo = typeof o === 'string' ? { cls: o } : o ?? {};
	if (info.cls) el.classList.add(...classes(info.cls));
	if (info.text !== undefined) {
		if (typeof info.text === 'string') el.textContent = info.text;
		else el.appendChild(info.text);
	}
	if (info.attr) {
		for (const [k, v] of Object.entries(info.attr)) {
			if (v === null || v === false) continue;
			el.setAttribute(k, v === true ? '' : String(v));
		}
	}
	if (info.title !== undefined) el.title = info.title;
	if (info.value !== undefined) (el as unknown as HTMLInputElement).value = info.value;
	if (info.type !== undefined) el.setAttribute('type', info.type);
	if (info.placeholder !== undefined) el.setAttribute('placeholder', info.placeholder);
	if (info.href !== undefined) el.setAttribute('href', info.href);
	if (info.parent) {
		if (info.prepend) info.parent.insertBefore(el, info.parent.firstChild);
		else info.parent.appendChild(el);
	}
	callback?.(el);
	return el;
}

function installDomHelpers(): void {
	const node = Node.prototype as unknown as Record<string, unknown>;
	const el = HTMLElement.prototype as unknown as Record<string, unknown>;
	node.createEl = function (this: Node, tag: keyof HTMLElementTagNameMap, o?: ElInfo | string, cb?: (e: HTMLElement) => void) {
		const info: ElInfo = typeof o === 'string' ? { cls: o } : { ...(o ?? {}) };
		info.parent = this;
		return makeEl(tag, info, cb);
	};
	node.createDiv = function (this: Node, o?: ElInfo | string, cb?: (e: HTMLElement) => void) {
		return (this as unknown as { createEl: typeof makeEl }).createEl('div', o, cb);
	};
	node.createSpan = function (this: Node, o?: ElInfo | string, cb?: (e: HTMLElement) => void) {
		return (this as unknown as { createEl: typeof makeEl }).createEl('span', o, cb);
	};
	node.empty = function (this: Node) {
		while (this.firstChild) this.removeChild(this.firstChild);
	};
	node.appendText = function (this: Node, text: string) {
		this.appendChild(document.createTextNode(text));
	};
	node.detach = function (this: Node) {
		this.parentNode?.removeChild(this);
	};
	el.setText = function (this: HTMLElement, text: string) {
		this.textContent = text;
	};
	el.addClass = function (this: HTMLElement, ...cls: string[]) {
		this.classList.add(...cls);
	};
	el.removeClass = function (this: HTMLElement, ...cls: string[]) {
		this.classList.remove(...cls);
	};
	el.toggleClass = function (this: HTMLElement, cls: string | string[], value: boolean) {
		for (const c of classes(cls)) this.classList.toggle(c, value);
	};
	el.hasClass = function (this: HTMLElement, cls: string) {
		return this.classList.contains(cls);
	};
	el.setAttr = function (this: HTMLElement, name: string, value: string | number | boolean | null) {
		if (value === null) this.removeAttribute(name);
		else this.setAttribute(name, String(value));
	};
	el.hide = function (this: HTMLElement) {
		this.style.display = 'none';
	};
	el.show = function (this: HTMLElement) {
		this.style.display = '';
	};
	const g = globalThis as unknown as Record<string, unknown>;
	g.createEl = makeEl;
	g.createDiv = (o?: ElInfo | string, cb?: (e: HTMLElement) => void) => makeEl('div', o, cb);
	g.createSpan = (o?: ElInfo | string, cb?: (e: HTMLElement) => void) => makeEl('span', o, cb);
	g.createFragment = (cb?: (f: DocumentFragment) => void) => {
		const f = document.createDocumentFragment();
		cb?.(f);
		return f;
	};
}
installDomHelpers();

/* ---------- events and components ---------- */

export interface EventRef {
	e: Events;
	name: string;
	fn: (...args: unknown[]) => unknown;
}

export class Events {
	private handlers = new Map<string, EventRef[]>();
	on(name: string, fn: (...args: never[]) => unknown): EventRef {
		const ref: EventRef = { e: this, name, fn: fn as (...args: unknown[]) => unknown };
		const list = this.handlers.get(name) ?? [];
		list.push(ref);
		this.handlers.set(name, list);
		return ref;
	}
	offref(ref: EventRef): void {
		const list = this.handlers.get(ref.name);
		if (list) this.handlers.set(ref.name, list.filter((r) => r !== ref));
	}
	trigger(name: string, ...data: unknown[]): void {
		for (const ref of [...(this.handlers.get(name) ?? [])]) ref.fn(...data);
	}
}

export class Component {
	private loaded = false;
	private children: Component[] = [];
	private cleanups: (() => void)[] = [];

	/** Returns what onload() returned, so that a caller can wait for an async onload (as Obsidian does for plugins). */
	load(): unknown {
		if (this.loaded) return undefined;
		this.loaded = true;
		const result = this.onload();
		for (const c of this.children) c.load();
		return result;
	}
	onload(): unknown {
		return undefined;
	}
	unload(): void {
		if (!this.loaded) return;
		this.loaded = false;
		for (const c of this.children.splice(0)) c.unload();
		for (const fn of this.cleanups.splice(0).reverse()) fn();
		this.onunload();
	}
	onunload(): void {}
	addChild<T extends Component>(c: T): T {
		this.children.push(c);
		if (this.loaded) c.load();
		return c;
	}
	removeChild<T extends Component>(c: T): T {
		const i = this.children.indexOf(c);
		if (i !== -1) {
			this.children.splice(i, 1);
			c.unload();
		}
		return c;
	}
	register(cb: () => unknown): void {
		this.cleanups.push(() => void cb());
	}
	registerEvent(ref: EventRef): void {
		this.register(() => ref.e.offref(ref));
	}
	registerDomEvent(el: EventTarget, type: string, cb: (evt: never) => unknown, options?: boolean | AddEventListenerOptions): void {
		const fn = cb as unknown as EventListener;
		el.addEventListener(type, fn, options);
		this.register(() => el.removeEventListener(type, fn, options));
	}
	registerInterval(id: number): number {
		this.register(() => window.clearInterval(id));
		return id;
	}
}

/* ---------- files, vault, workspace ---------- */

export class TAbstractFile {
	constructor(public path: string) {}
	get name(): string {
		return this.path.slice(this.path.lastIndexOf('/') + 1);
	}
}
export interface FileStat {
	ctime: number;
	mtime: number;
	size: number;
}
export class TFile extends TAbstractFile {
	stat: FileStat = { ctime: 0, mtime: 0, size: 0 };
	get extension(): string {
		const i = this.name.lastIndexOf('.');
		return i === -1 ? '' : this.name.slice(i + 1);
	}
	get basename(): string {
		const i = this.name.lastIndexOf('.');
		return i === -1 ? this.name : this.name.slice(0, i);
	}
}
let activeVault: Vault | null = null;

export class TFolder extends TAbstractFile {
	get children(): TAbstractFile[] {
		return activeVault?.childrenOf(this.path) ?? [];
	}
	isRoot(): boolean {
		return this.path === '/';
	}
}

/** The test vault's files on disk, through the page server's /__fs endpoints (support.ts). */
async function fsCall(op: string, params: Record<string, string>, body?: string): Promise<Response> {
	const res = await fetch(`/__fs/${op}?${new URLSearchParams(params).toString()}`, {
		method: body === undefined && op !== 'mkdir' && op !== 'rename' ? 'GET' : 'POST',
		...(body === undefined ? {} : { body }),
	});
	if (!res.ok && res.status !== 404) throw new Error(`${op} ${JSON.stringify(params)}: ${res.status} ${await res.text()}`);
	return res;
}

/** What the vault holds when the page loads (GET /__fs/list). */
export interface VaultListing {
	files: string[];
	folders: string[];
}

/**
 * The parts of Obsidian's DataAdapter the plugin uses: paths relative to the
 * vault, like Obsidian's. On disk through the page server; in memory when the
 * page server has no vault to serve (`memory`).
 */
class DiskAdapter {
	private readonly mem: Map<string, string> | null;
	constructor(
		private readonly basePath: string,
		memory = false,
	) {
		this.mem = memory ? new Map() : null;
	}
	getBasePath(): string {
		return this.basePath;
	}
	async exists(path: string): Promise<boolean> {
		if (this.mem) return this.mem.has(path) || [...this.mem.keys()].some((k) => k.startsWith(`${path}/`));
		return ((await (await fsCall('exists', { path })).json()) as { exists: boolean }).exists;
	}
	async read(path: string): Promise<string> {
		const text = this.mem ? this.mem.get(path) : await fsCall('read', { path }).then((r) => (r.status === 404 ? undefined : r.text()));
		if (text === undefined) throw new Error(`ENOENT: no such file or directory, open '${path}'`);
		return text;
	}
	async write(path: string, data: string): Promise<void> {
		if (this.mem) this.mem.set(path, data);
		else await fsCall('write', { path }, data);
	}
	async mkdir(path: string): Promise<void> {
		if (!this.mem) await fsCall('mkdir', { path });
	}
	/** For Vault.rename (Obsidian's adapter calls it rename; the plugin does not use it). */
	async move(from: string, to: string): Promise<void> {
		if (!this.mem) {
			await fsCall('rename', { from, to });
			return;
		}
		const text = this.mem.get(from);
		if (text !== undefined) {
			this.mem.delete(from);
			this.mem.set(to, text);
		}
	}
}

/** A note of the test vault as the harness describes it (read from disk on the Node side). */
export interface NoteInfo {
	path: string;
	mtime: number;
	aliases: string[];
	tags: string[];
}

export class Vault extends Events {
	readonly configDir = '.obsidian';
	adapter: DiskAdapter;
	private readonly entries = new Map<string, TAbstractFile>();
	private readonly root = new TFolder('/');
	/**
	 * `listing` null: the page server has no vault on disk, files live in memory.
	 * `notes`: the harness's note list (times, aliases, tags), which the metadata cache reads.
	 */
	constructor(
		basePath: string,
		listing: VaultListing | null = null,
		readonly notes: NoteInfo[] = [],
	) {
		super();
		this.adapter = new DiskAdapter(basePath, listing === null);
		listing ??= { files: [], folders: [] };
		for (const f of listing.folders) this.entries.set(f, new TFolder(f));
		for (const f of listing.files) this.entries.set(f, new TFile(f));
		for (const n of notes) {
			const existing = this.entries.get(n.path);
			const file = existing instanceof TFile ? existing : new TFile(n.path);
			file.stat = { ctime: n.mtime, mtime: n.mtime, size: 0 };
			this.entries.set(n.path, file);
		}
		activeVault = this;
	}
	getRoot(): TFolder {
		return this.root;
	}
	getAbstractFileByPath(path: string): TAbstractFile | null {
		if (path === '/') return this.root;
		const entry = this.entries.get(path);
		if (entry) return entry;
		// a folder known only from the notes under it (the note list names files, not folders)
		return [...this.entries.keys()].some((p) => p.startsWith(`${path}/`)) ? new TFolder(path) : null;
	}
	childrenOf(folder: string): TAbstractFile[] {
		const prefix = folder === '/' ? '' : `${folder}/`;
		return [...this.entries.values()].filter((e) => e.path.startsWith(prefix) && !e.path.slice(prefix.length).includes('/'));
	}
	getMarkdownFiles(): TFile[] {
		return [...this.entries.values()].filter((e): e is TFile => e instanceof TFile && e.extension === 'md');
	}
	async create(path: string, data: string): Promise<TFile> {
		if (this.entries.has(path) || (await this.adapter.exists(path))) throw new Error('File already exists.');
		await this.adapter.write(path, data);
		const file = new TFile(path);
		this.entries.set(path, file);
		this.trigger('create', file);
		return file;
	}
	async modify(file: TFile, data: string): Promise<void> {
		await this.adapter.write(file.path, data);
		this.trigger('modify', file);
	}
	/** As Obsidian's (1.1+): reads the note, writes what `fn` returns, all or nothing (`fn` may throw: nothing is written). */
	async process(file: TFile, fn: (data: string) => string): Promise<string> {
		const next = fn(await this.adapter.read(file.path));
		await this.adapter.write(file.path, next);
		this.processed.push(file.path);
		this.trigger('modify', file);
		return next;
	}
	/** The notes changed through process(), for tests. */
	readonly processed: string[] = [];
	async createFolder(path: string): Promise<TFolder> {
		if (this.entries.has(path)) throw new Error('Folder already exists.');
		await this.adapter.mkdir(path);
		const folder = new TFolder(path);
		this.entries.set(path, folder);
		return folder;
	}
	async read(file: TFile): Promise<string> {
		return this.adapter.read(file.path);
	}
	async cachedRead(file: TFile): Promise<string> {
		return this.adapter.read(file.path);
	}
	/** As when the user renames or moves a note in Obsidian. */
	async rename(file: TAbstractFile, newPath: string): Promise<void> {
		const oldPath = file.path;
		await this.adapter.move(oldPath, newPath);
		this.entries.delete(oldPath);
		file.path = newPath;
		this.entries.set(newPath, file);
		this.trigger('rename', file, oldPath);
	}
}

/** Obsidian's metadata cache, from the harness's note list: frontmatter aliases and tag counts. */
export class MetadataCache extends Events {
	constructor(private readonly vault: Vault) {
		super();
	}
	getFileCache(file: TFile): { frontmatter?: Record<string, unknown> } | null {
		const note = this.vault.notes.find((n) => n.path === file.path);
		if (!note) return null;
		return note.aliases.length ? { frontmatter: { aliases: note.aliases } } : {};
	}
	/** As Obsidian's: '#tag' as written → how many times it is used (here: once per note that has it). */
	getTags(): Record<string, number> {
		const out: Record<string, number> = {};
		for (const n of this.vault.notes) for (const tag of n.tags) out[`#${tag}`] = (out[`#${tag}`] ?? 0) + 1;
		return out;
	}
}

export function parseFrontMatterAliases(frontmatter: Record<string, unknown> | null): string[] | null {
	const v = frontmatter?.aliases ?? frontmatter?.alias;
	if (typeof v === 'string') return [v];
	return Array.isArray(v) ? v.filter((a): a is string => typeof a === 'string') : null;
}

type ViewCreator = (leaf: WorkspaceLeaf) => View;

export class WorkspaceLeaf {
	view!: View;
	readonly el: HTMLElement;
	constructor(
		readonly app: App,
		parent: HTMLElement,
	) {
		this.el = parent.createDiv({ cls: 'workspace-leaf' });
	}
	getViewState(): { type: string } {
		return { type: this.view?.getViewType() ?? 'empty' };
	}
	async setViewState(state: { type: string; active?: boolean }): Promise<void> {
		const creator = this.app.workspace.viewCreators.get(state.type);
		if (!creator) throw new Error(`no view registered for ${state.type}`);
		if (this.view) {
			await this.view.onClose();
			this.view.unload();
		}
		this.el.empty();
		const view = creator(this);
		this.view = view;
		this.el.appendChild(view.containerEl);
		view.load();
		await view.onOpen();
	}
	async loadIfDeferred(): Promise<void> {}
	detach(): void {
		void this.view?.onClose();
		this.view?.unload();
		this.el.remove();
		this.app.workspace.leaves = this.app.workspace.leaves.filter((l) => l !== this);
	}
}

export class Workspace extends Events {
	leaves: WorkspaceLeaf[] = [];
	viewCreators = new Map<string, ViewCreator>();
	activeFile: TFile | null = null;
	private ready = false;
	private readyCallbacks: (() => unknown)[] = [];
	constructor(
		private readonly app: App,
		readonly rightSplitEl: HTMLElement,
	) {
		super();
	}
	onLayoutReady(cb: () => unknown): void {
		if (this.ready) cb();
		else this.readyCallbacks.push(cb);
	}
	/** Test hook: the layout is ready. */
	layoutReady(): void {
		this.ready = true;
		for (const cb of this.readyCallbacks.splice(0)) cb();
	}
	getLeavesOfType(type: string): WorkspaceLeaf[] {
		return this.leaves.filter((l) => l.view?.getViewType() === type);
	}
	getRightLeaf(_split: boolean): WorkspaceLeaf | null {
		const leaf = new WorkspaceLeaf(this.app, this.rightSplitEl);
		this.leaves.push(leaf);
		return leaf;
	}
	async revealLeaf(leaf: WorkspaceLeaf): Promise<void> {
		for (const l of this.leaves) l.el.toggleClass('is-hidden', l !== leaf);
	}
	/** Obsidian saves the layout (each view's getState) soon after; counted here. */
	layoutSaves = 0;
	requestSaveLayout(): void {
		this.layoutSaves++;
	}
	getActiveFile(): TFile | null {
		return this.activeFile;
	}
	async openLinkText(linktext: string, sourcePath: string, newLeaf?: unknown): Promise<void> {
		rec().__opened.push({ linktext, sourcePath, newLeaf: newLeaf ?? false });
	}
	override trigger(name: string, ...data: unknown[]): void {
		if (name === 'hover-link') {
			const info = data[0] as { source: string; linktext: string; sourcePath: string; targetEl: HTMLElement };
			rec().__hovered.push({
				source: info.source,
				linktext: info.linktext,
				sourcePath: info.sourcePath,
				targetText: info.targetEl.textContent ?? '',
			});
		}
		super.trigger(name, ...data);
	}
}

/** Obsidian's core plugins Search and Files, recording what they were asked to show. */
class InternalPlugins {
	getPluginById(id: string): { enabled: boolean; instance: Record<string, unknown> } | null {
		if (id === 'global-search') {
			return { enabled: true, instance: { openGlobalSearch: (q: string) => rec().__core.push({ plugin: 'global-search', arg: q }) } };
		}
		if (id === 'file-explorer') {
			return {
				enabled: true,
				instance: { revealInFolder: (f: TAbstractFile) => rec().__core.push({ plugin: 'file-explorer', arg: f.path }) },
			};
		}
		return null;
	}
}

export class App {
	readonly workspace: Workspace;
	readonly vault: Vault;
	readonly metadataCache: MetadataCache;
	readonly internalPlugins = new InternalPlugins();
	readonly statusBarEl: HTMLElement;
	readonly modalContainerEl: HTMLElement;
	constructor(opts: {
		basePath: string;
		rightSplitEl: HTMLElement;
		statusBarEl: HTMLElement;
		modalContainerEl?: HTMLElement;
		notes?: NoteInfo[];
		listing?: VaultListing | null;
	}) {
		this.workspace = new Workspace(this, opts.rightSplitEl);
		this.vault = new Vault(opts.basePath, opts.listing, opts.notes);
		this.metadataCache = new MetadataCache(this.vault);
		this.statusBarEl = opts.statusBarEl;
		this.modalContainerEl = opts.modalContainerEl ?? document.body;
	}
	/** Obsidian 1.11.4+: the keychain; only on a page that asks for it (the harness's `secrets`). */
	secretStorage?: SecretStorage;
	/** Obsidian 1.8.7+: vault-scoped localStorage (this device only, not synced). */
	loadLocalStorage(key: string): unknown {
		const raw = window.localStorage.getItem(`stub-vault-${key}`);
		return raw === null ? null : (JSON.parse(raw) as unknown);
	}
	saveLocalStorage(key: string, data: unknown): void {
		if (data === null) window.localStorage.removeItem(`stub-vault-${key}`);
		else window.localStorage.setItem(`stub-vault-${key}`, JSON.stringify(data));
	}
}

/* ---------- views ---------- */

export abstract class View extends Component {
	app: App;
	navigation = true;
	containerEl: HTMLElement;
	constructor(public leaf: WorkspaceLeaf) {
		super();
		this.app = leaf.app;
		this.containerEl = createDiv({ cls: 'workspace-leaf-content' });
	}
	abstract getViewType(): string;
	abstract getDisplayText(): string;
	getIcon(): string {
		return '';
	}
	async onOpen(): Promise<void> {}
	async onClose(): Promise<void> {}
	getState(): Record<string, unknown> {
		return {};
	}
	async setState(_state: unknown, _result: unknown): Promise<void> {}
}

export abstract class ItemView extends View {
	contentEl: HTMLElement;
	private readonly actionsEl: HTMLElement;
	constructor(leaf: WorkspaceLeaf) {
		super(leaf);
		const header = this.containerEl.createDiv({ cls: 'view-header' });
		this.containerEl.setAttr('data-type', '');
		const titleContainer = header.createDiv({ cls: 'view-header-title-container' });
		const title = titleContainer.createDiv({ cls: 'view-header-title' });
		this.actionsEl = header.createDiv({ cls: 'view-actions' });
		this.contentEl = this.containerEl.createDiv({ cls: 'view-content' });
		// The title is known only once the subclass exists.
		queueMicrotask(() => {
			title.setText(this.getDisplayText());
			this.containerEl.setAttr('data-type', this.getViewType());
		});
	}
	addAction(icon: string, title: string, callback: (evt: MouseEvent) => unknown): HTMLElement {
		const a = this.actionsEl.createEl('a', { cls: ['view-action', 'clickable-icon'], attr: { 'aria-label': title, 'data-icon': icon } });
		setIcon(a, icon);
		a.addEventListener('click', (evt) => callback(evt));
		return a;
	}
}

export function setIcon(el: HTMLElement, icon: string): void {
	const glyphs: Record<string, string> = {
		'refresh-cw': '⟳',
		'message-circle': '💬',
		'square-pen': '✎',
		history: '↺',
		copy: '▣',
		'file-down': '⤓',
	};
	el.setText(glyphs[icon] ?? '•');
}

/* ---------- Markdown ---------- */

function renderInline(parent: HTMLElement, text: string): void {
	const re = /(`+)([\s\S]*?[^`])\1(?!`)|\[\[([^\]|]+)(?:\|([^\]]+))?\]\]|\[([^\]]+)\]\(([^)\s]+)\)|\*\*([^*]+)\*\*|\*([^*\s][^*]*)\*/g;
	let last = 0;
	for (const m of text.matchAll(re)) {
		const at = m.index ?? 0;
		if (at > last) parent.appendChild(document.createTextNode(text.slice(last, at)));
		last = at + m[0].length;
		if (m[1]) {
			parent.createEl('code', { text: m[2]!.trim() });
		} else if (m[3]) {
			const linktext = m[3];
			parent.createEl('a', {
				cls: 'internal-link',
				text: m[4] ?? linktext,
				href: linktext,
				attr: { 'data-href': linktext, target: '_blank', rel: 'noopener' },
			});
		} else if (m[5]) {
			parent.createEl('a', { cls: 'external-link', text: m[5], href: m[6]!, attr: { target: '_blank', rel: 'noopener' } });
		} else if (m[7]) {
			renderInline(parent.createEl('strong'), m[7]);
		} else if (m[8]) {
			renderInline(parent.createEl('em'), m[8]);
		}
	}
	if (last < text.length) parent.appendChild(document.createTextNode(text.slice(last)));
}

/** Minimal Markdown: headings, paragraphs, lists, quotes, fenced code, inline code, links, emphasis. */
export function renderMarkdown(markdown: string, el: HTMLElement): void {
	const lines = markdown.replace(/\r\n?/g, '\n').split('\n');
	let i = 0;
	while (i < lines.length) {
		const line = lines[i]!;
		const fence = /^\s*(```|~~~)(.*)$/.exec(line);
		if (fence) {
			const code: string[] = [];
			i++;
			while (i < lines.length && !lines[i]!.trim().startsWith(fence[1]!)) code.push(lines[i++]!);
			i++;
			el.createEl('pre').createEl('code', { text: code.join('\n') });
			continue;
		}
		if (line.trim() === '') {
			i++;
			continue;
		}
		const heading = /^(#{1,6})\s+(.*)$/.exec(line);
		if (heading) {
			renderInline(el.createEl(`h${heading[1]!.length}` as 'h1'), heading[2]!);
			i++;
			continue;
		}
		const item = /^\s*(?:[-*+]|(\d+)[.)])\s+/;
		if (item.test(line)) {
			const ordered = Boolean(item.exec(line)![1]);
			const list = el.createEl(ordered ? 'ol' : 'ul');
			while (i < lines.length && item.test(lines[i]!)) {
				renderInline(list.createEl('li'), lines[i]!.replace(item, ''));
				i++;
			}
			continue;
		}
		if (line.startsWith('>')) {
			const quote: string[] = [];
			while (i < lines.length && lines[i]!.startsWith('>')) quote.push(lines[i++]!.replace(/^>\s?/, ''));
			renderMarkdown(quote.join('\n'), el.createEl('blockquote'));
			continue;
		}
		const para: string[] = [];
		while (i < lines.length && lines[i]!.trim() !== '' && !/^(#{1,6}\s|\s*```|\s*~~~|>|\s*(?:[-*+]|\d+[.)])\s)/.test(lines[i]!)) {
			para.push(lines[i++]!);
		}
		const p = el.createEl('p');
		para.forEach((l, k) => {
			if (k > 0) p.createEl('br');
			renderInline(p, l);
		});
	}
}

export class MarkdownRenderer {
	static async render(_app: App, markdown: string, el: HTMLElement, _sourcePath: string, _component: Component): Promise<void> {
		rec().__renders.push({ markdown, streaming: el.closest('.is-streaming') !== null });
		renderMarkdown(markdown, el);
	}
}

/* ---------- keymap, notices, modals, settings ---------- */

export type PaneType = 'tab' | 'split' | 'window';

export class Keymap {
	static isModEvent(evt?: MouseEvent | KeyboardEvent | null): PaneType | boolean {
		if (!evt) return false;
		const mod = evt.ctrlKey || evt.metaKey;
		if (mod && evt.altKey && evt.shiftKey) return 'window';
		if (mod && evt.altKey) return 'split';
		if (mod) return 'tab';
		if ('button' in evt && evt.button === 1) return 'tab';
		return false;
	}
}

export class Notice {
	noticeEl: HTMLElement;
	constructor(message: string | DocumentFragment, _duration?: number) {
		const text = typeof message === 'string' ? message : message.textContent ?? '';
		rec().__notices.push(text);
		this.noticeEl = document.body.createDiv({ cls: 'notice', text });
		window.setTimeout(() => this.hide(), 4000);
	}
	setMessage(message: string): this {
		this.noticeEl.setText(message);
		return this;
	}
	hide(): void {
		this.noticeEl.remove();
	}
}

/** Obsidian's keychain (1.11.4+): secrets by ID, in memory. */
export class SecretStorage {
	readonly secrets = new Map<string, string>();
	constructor(initial: Record<string, string>) {
		for (const [id, value] of Object.entries(initial)) this.secrets.set(id, value);
	}
	setSecret(id: string, secret: string): void {
		if (!/^[a-z0-9-]+$/.test(id)) throw new Error(`invalid secret ID: ${id}`);
		this.secrets.set(id, secret);
	}
	getSecret(id: string): string | null {
		return this.secrets.get(id) ?? null;
	}
	listSecrets(): string[] {
		return [...this.secrets.keys()];
	}
}

/** The stand-in is as new as the obsidian package the plugin builds against. */
export function requireApiVersion(_version: string): boolean {
	return true;
}

/** The browser is no desktop app: the plugin keeps to the server URL and token, as on mobile. */
export const Platform = { isDesktop: false, isMobile: false, isDesktopApp: false, isMobileApp: false };

export class Modal {
	containerEl: HTMLElement;
	modalEl: HTMLElement;
	titleEl: HTMLElement;
	contentEl: HTMLElement;
	constructor(public app: App) {
		this.containerEl = createDiv({ cls: 'modal-container' });
		this.containerEl.createDiv({ cls: 'modal-bg' });
		this.modalEl = this.containerEl.createDiv({ cls: 'modal' });
		const close = this.modalEl.createDiv({ cls: 'modal-close-button', text: '×' });
		close.addEventListener('click', () => this.close());
		this.titleEl = this.modalEl.createDiv({ cls: 'modal-title' });
		this.contentEl = this.modalEl.createDiv({ cls: 'modal-content' });
	}
	setTitle(title: string): this {
		this.titleEl.setText(title);
		return this;
	}
	open(): void {
		this.app.modalContainerEl.appendChild(this.containerEl);
		this.onOpen();
	}
	close(): void {
		this.containerEl.remove();
		this.onClose();
	}
	onOpen(): void {}
	onClose(): void {}
}

class TextComponent {
	inputEl: HTMLInputElement;
	constructor(parent: HTMLElement) {
		this.inputEl = parent.createEl('input', { type: 'text' });
	}
	setPlaceholder(p: string): this {
		this.inputEl.placeholder = p;
		return this;
	}
	setValue(v: string): this {
		this.inputEl.value = v;
		return this;
	}
	getValue(): string {
		return this.inputEl.value;
	}
	onChange(cb: (v: string) => unknown): this {
		this.inputEl.addEventListener('input', () => void cb(this.inputEl.value));
		return this;
	}
}

class ToggleComponent {
	toggleEl: HTMLInputElement;
	constructor(parent: HTMLElement) {
		this.toggleEl = parent.createEl('input', { type: 'checkbox', cls: 'checkbox-container' });
	}
	setValue(v: boolean): this {
		this.toggleEl.checked = v;
		return this;
	}
	getValue(): boolean {
		return this.toggleEl.checked;
	}
	onChange(cb: (v: boolean) => unknown): this {
		this.toggleEl.addEventListener('change', () => void cb(this.toggleEl.checked));
		return this;
	}
}

class ButtonComponent {
	buttonEl: HTMLButtonElement;
	constructor(parent: HTMLElement) {
		this.buttonEl = parent.createEl('button');
	}
	setButtonText(t: string): this {
		this.buttonEl.setText(t);
		return this;
	}
	setCta(): this {
		this.buttonEl.addClass('mod-cta');
		return this;
	}
	setDisabled(d: boolean): this {
		this.buttonEl.disabled = d;
		return this;
	}
	onClick(cb: (evt: MouseEvent) => unknown): this {
		this.buttonEl.addEventListener('click', (evt) => void cb(evt));
		return this;
	}
}

/** Obsidian's secret picker (1.11.4+), stood in for by a field holding the chosen secret's name. */
export class SecretComponent {
	readonly inputEl: HTMLInputElement;
	constructor(
		public app: App,
		containerEl: HTMLElement,
	) {
		this.inputEl = containerEl.createEl('input', { type: 'text', cls: 'stub-secret-picker' });
	}
	setValue(name: string): this {
		this.inputEl.value = name;
		return this;
	}
	onChange(cb: (name: string) => unknown): this {
		this.inputEl.addEventListener('change', () => void cb(this.inputEl.value));
		return this;
	}
}

export class Setting {
	settingEl: HTMLElement;
	infoEl: HTMLElement;
	nameEl: HTMLElement;
	descEl: HTMLElement;
	controlEl: HTMLElement;
	constructor(containerEl: HTMLElement) {
		this.settingEl = containerEl.createDiv({ cls: 'setting-item' });
		this.infoEl = this.settingEl.createDiv({ cls: 'setting-item-info' });
		this.nameEl = this.infoEl.createDiv({ cls: 'setting-item-name' });
		this.descEl = this.infoEl.createDiv({ cls: 'setting-item-description' });
		this.controlEl = this.settingEl.createDiv({ cls: 'setting-item-control' });
	}
	setName(name: string): this {
		this.nameEl.setText(name);
		return this;
	}
	setDesc(desc: string): this {
		this.descEl.setText(desc);
		return this;
	}
	setHeading(): this {
		this.settingEl.addClass('setting-item-heading');
		return this;
	}
	addText(cb: (t: TextComponent) => unknown): this {
		cb(new TextComponent(this.controlEl));
		return this;
	}
	addToggle(cb: (t: ToggleComponent) => unknown): this {
		cb(new ToggleComponent(this.controlEl));
		return this;
	}
	addButton(cb: (b: ButtonComponent) => unknown): this {
		cb(new ButtonComponent(this.controlEl));
		return this;
	}
	addComponent(cb: (el: HTMLElement) => unknown): this {
		cb(this.controlEl);
		return this;
	}
}

export abstract class PluginSettingTab {
	containerEl: HTMLElement;
	constructor(
		public app: App,
		public plugin: Plugin,
	) {
		this.containerEl = createDiv({ cls: 'vertical-tab-content' });
	}
	abstract display(): void;
	hide(): void {
		this.containerEl.empty();
	}
}

/* ---------- plugin ---------- */

export interface PluginManifest {
	id: string;
	name: string;
	version: string;
	minAppVersion: string;
	description: string;
	author: string;
	isDesktopOnly?: boolean;
	/** The plugin's folder, vault-relative (Obsidian sets it when it loads the plugin). */
	dir?: string;
}

export interface Command {
	id: string;
	name: string;
	callback?: () => unknown;
	checkCallback?: (checking: boolean) => boolean | void;
}

export abstract class Plugin extends Component {
	settingTabs: PluginSettingTab[] = [];
	commands: Command[] = [];
	hoverSources: Record<string, unknown> = {};
	constructor(
		public app: App,
		public manifest: PluginManifest,
	) {
		super();
	}
	async loadData(): Promise<unknown> {
		return (window as unknown as { __pluginData?: unknown }).__pluginData ?? null;
	}
	async saveData(data: unknown): Promise<void> {
		(window as unknown as { __pluginData?: unknown }).__pluginData = JSON.parse(JSON.stringify(data));
	}
	registerView(type: string, creator: ViewCreator): void {
		this.app.workspace.viewCreators.set(type, creator);
		this.register(() => this.app.workspace.viewCreators.delete(type));
	}
	registerHoverLinkSource(id: string, info: unknown): void {
		this.hoverSources[id] = info;
	}
	addRibbonIcon(icon: string, title: string, callback: (evt: MouseEvent) => unknown): HTMLElement {
		const el = createDiv({ cls: 'side-dock-ribbon-action', attr: { 'aria-label': title } });
		setIcon(el, icon);
		el.addEventListener('click', (evt) => callback(evt));
		return el;
	}
	addCommand(command: Command): Command {
		this.commands.push(command);
		return command;
	}
	addSettingTab(tab: PluginSettingTab): void {
		this.settingTabs.push(tab);
	}
	addStatusBarItem(): HTMLElement {
		const el = this.app.statusBarEl.createDiv({ cls: ['status-bar-item', `plugin-${this.manifest.id}`] });
		this.register(() => el.remove());
		return el;
	}
}

export type HoverPopover = unknown;
export type HoverParent = { hoverPopover: HoverPopover | null };

/** Obsidian's requestUrl, stood in for by a buffered fetch: the whole body, then the answer. */
export async function requestUrl(req: {
	url: string;
	method?: string;
	body?: string;
	headers?: Record<string, string>;
	contentType?: string;
}): Promise<{ status: number; headers: Record<string, string>; text: string }> {
	const headers = { ...(req.headers ?? {}) };
	if (req.contentType) headers['Content-Type'] = req.contentType;
	const res = await fetch(req.url, { method: req.method ?? 'GET', headers, body: req.body });
	const out: Record<string, string> = {};
	res.headers.forEach((v, k) => (out[k] = v));
	return { status: res.status, headers: out, text: await res.text() };
}
