/** Plugin settings: defaults, validation of stored data, and what they mean for requests. */
import { TOKEN_SECRET, isSecretId } from './secrets';
import type { AskRequest, Filters } from './types';

export interface VaskSettings {
	serverUrl: string;
	/** The token in effect. Kept in Obsidian's keychain where the app has one (see secrets.ts), never in data.json there. */
	token: string;
	/** The keychain secret that holds the token (Obsidian 1.11.4+); '': none chosen. */
	tokenSecret: string;
	/** null: not set here, so the server's default applies (VASK_TOP_K). */
	topK: number | null;
	/** null: not set here, so the server's default applies (VASK_MIN_SIMILARITY). */
	minSimilarity: number | null;
	/** Empty: the server's default chat model. */
	chatModel: string;
	/** Comma separated folders to leave out of answers. */
	excludeFolders: string;
	/** Where "Save as note" writes chats (vault folder; empty: the vault root). */
	chatsFolder: string;
	/** false: saved chats say `vask: exclude`, so vask does not index (and cite) them. */
	indexSavedChats: boolean;
	/** The heading a link from the related pane goes under when the note does not name the linked note. */
	linkHeading: string;
	/** Desktop: start and supervise `vask serve` for this vault when a `vask` executable is found. */
	manageServer: boolean;
	/** Desktop: the `vask` executable to start; empty: looked for on the PATH and in ~/.local/bin. */
	vaskPath: string;
	/**
	 * Desktop: the instructions the embedding model of the server this plugin starts gets before each
	 * question and each passage (`--query-prefix`, `--document-prefix`), exactly as typed; empty: the
	 * model card's, for the models vask knows (or VASK_QUERY_PREFIX / VASK_DOCUMENT_PREFIX where it runs).
	 */
	queryPrefix: string;
	documentPrefix: string;
}

export const DEFAULT_SETTINGS: Readonly<VaskSettings> = Object.freeze({
	serverUrl: 'http://127.0.0.1:8765',
	token: '',
	tokenSecret: TOKEN_SECRET,
	topK: null,
	minSimilarity: null,
	chatModel: '',
	excludeFolders: '',
	chatsFolder: 'Vask chats',
	indexSavedChats: false,
	linkHeading: 'Related',
	manageServer: true,
	vaskPath: '',
	queryPrefix: '',
	documentPrefix: '',
});

/**
 * Version of the stored settings (data.json). Without it the data is from a
 * version that always stored top-k 6 and minimum similarity 0.25 as its
 * defaults, whether or not the user chose them.
 */
export const SETTINGS_VERSION = 2;

/** The values version 1 stored when the user had not changed them: read as "not set". */
const V1_DEFAULTS = { topK: 6, minSimilarity: 0.25 } as const;

/** What is saved to data.json: the settings and their version. */
export type StoredSettings = VaskSettings & { settingsVersion: number };

export function storedSettings(settings: VaskSettings): StoredSettings {
	return { ...settings, settingsVersion: SETTINGS_VERSION };
}

/** A number in [min, max], or null (unset) for an empty field, null, or anything that is not a number. */
function optionalNum(v: unknown, min: number, max: number, integer: boolean): number | null {
	const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
	if (!Number.isFinite(n)) return null;
	const r = integer ? Math.round(n) : n;
	return Math.min(max, Math.max(min, r));
}

/** The server takes an instruction of at most this many characters (a line or two). */
export const PREFIX_MAX_CHARS = 1000;

/** An instruction as typed: not trimmed (a trailing space counts), without what the server refuses; '' when blank. */
function prefix(v: unknown): string {
	if (typeof v !== 'string' || v.trim() === '') return '';
	return v.replace(/[\r\0]/g, '').slice(0, PREFIX_MAX_CHARS);
}

function str(v: unknown, fallback: string): string {
	return typeof v === 'string' ? v : fallback;
}

/** A keychain secret's name as stored: a valid ID, or '' (none chosen); undefined for anything else. */
function secretName(v: unknown): string | undefined {
	if (typeof v !== 'string') return undefined;
	const id = v.trim();
	return id === '' || isSecretId(id) ? id : undefined;
}

/** Merges stored data (anything, possibly from an older version) over the defaults. */
export function normalizeSettings(raw: unknown): VaskSettings {
	const r = typeof raw === 'object' && raw !== null ? (raw as Record<string, unknown>) : {};
	const url = str(r.serverUrl, DEFAULT_SETTINGS.serverUrl).trim();
	// Ranges as the server accepts them (1–50, 0–1).
	let topK = optionalNum(r.topK, 1, 50, true);
	let minSimilarity = optionalNum(r.minSimilarity, 0, 1, false);
	if (typeof r.settingsVersion !== 'number' || r.settingsVersion < SETTINGS_VERSION) {
		if (topK === V1_DEFAULTS.topK) topK = null;
		if (minSimilarity === V1_DEFAULTS.minSimilarity) minSimilarity = null;
	}
	return {
		serverUrl: url === '' ? DEFAULT_SETTINGS.serverUrl : url,
		token: str(r.token, '').trim(),
		tokenSecret: secretName(r.tokenSecret) ?? TOKEN_SECRET,
		topK,
		minSimilarity,
		chatModel: str(r.chatModel, '').trim(),
		excludeFolders: str(r.excludeFolders, ''),
		chatsFolder: str(r.chatsFolder, DEFAULT_SETTINGS.chatsFolder).trim(),
		indexSavedChats: r.indexSavedChats === true,
		linkHeading: str(r.linkHeading, DEFAULT_SETTINGS.linkHeading).replace(/[\r\n]+/g, ' ').trim() || DEFAULT_SETTINGS.linkHeading,
		manageServer: r.manageServer !== false,
		vaskPath: str(r.vaskPath, '').trim(),
		queryPrefix: prefix(r.queryPrefix),
		documentPrefix: prefix(r.documentPrefix),
	};
}

/** The settings after the user changed some of them (values repaired as on load; never migrated). */
export function updatedSettings(current: VaskSettings, patch: Partial<VaskSettings>): VaskSettings {
	return normalizeSettings({ ...storedSettings(current), ...patch });
}

/** "Archive, /Templates/ ,,Daily" → ["Archive", "Templates", "Daily"] (deduplicated). */
export function parseFolderList(text: string): string[] {
	const out: string[] = [];
	for (const part of text.split(/[,\n]/)) {
		const folder = part.trim().replace(/\\/g, '/').replace(/^\/+|\/+$/g, '');
		if (folder && !out.includes(folder)) out.push(folder);
	}
	return out;
}

export function buildFilters(settings: VaskSettings): Filters | undefined {
	const exclude = parseFolderList(settings.excludeFolders);
	return exclude.length > 0 ? { exclude_folders: exclude } : undefined;
}

/** The settings-dependent part of an /v1/ask body: only what is set here, so the server's defaults apply to the rest. */
export function askParams(settings: VaskSettings): Pick<AskRequest, 'top_k' | 'min_similarity' | 'filters' | 'chat_model'> {
	const p: Pick<AskRequest, 'top_k' | 'min_similarity' | 'filters' | 'chat_model'> = {};
	if (settings.topK !== null) p.top_k = settings.topK;
	if (settings.minSimilarity !== null) p.min_similarity = settings.minSimilarity;
	const filters = buildFilters(settings);
	if (filters) p.filters = filters;
	if (settings.chatModel) p.chat_model = settings.chatModel;
	return p;
}

/**
 * What is kept on this device only (Obsidian's vault-scoped localStorage), never in data.json,
 * which Obsidian Sync and other sync tools copy to every device: each device has its own token
 * (so one can be revoked alone) and may reach the server by another address.
 */
export interface DeviceSettings {
	serverUrl?: string;
	token?: string;
	/** The keychain secret that holds the token (where the app has a keychain; the token is not here then). */
	tokenSecret?: string;
	/** Whether this computer starts its own server, and which executable (a path differs per machine). */
	manageServer?: boolean;
	vaskPath?: string;
	/** The instructions its server's embedding model gets (the model is this computer's server's own). */
	queryPrefix?: string;
	documentPrefix?: string;
}

export const DEVICE_KEYS = ['serverUrl', 'token', 'tokenSecret', 'manageServer', 'vaskPath', 'queryPrefix', 'documentPrefix'] as const;

export function normalizeDevice(raw: unknown): DeviceSettings {
	const r = typeof raw === 'object' && raw !== null ? (raw as Record<string, unknown>) : {};
	const out: DeviceSettings = {};
	if (typeof r.serverUrl === 'string' && r.serverUrl.trim()) out.serverUrl = r.serverUrl.trim();
	if (typeof r.token === 'string' && r.token.trim()) out.token = r.token.trim();
	const secret = secretName(r.tokenSecret);
	if (secret !== undefined) out.tokenSecret = secret;
	if (typeof r.manageServer === 'boolean') out.manageServer = r.manageServer;
	if (typeof r.vaskPath === 'string' && r.vaskPath.trim()) out.vaskPath = r.vaskPath.trim();
	if (prefix(r.queryPrefix)) out.queryPrefix = prefix(r.queryPrefix);
	if (prefix(r.documentPrefix)) out.documentPrefix = prefix(r.documentPrefix);
	return out;
}

/**
 * The settings the server this plugin starts is given as flags (`--name=value`: an instruction may begin
 * with '-'); none when unset, so its own environment's or the model card's apply.
 */
export function serveArgs(settings: VaskSettings): string[] {
	const args: string[] = [];
	if (settings.queryPrefix) args.push(`--query-prefix=${settings.queryPrefix}`);
	if (settings.documentPrefix) args.push(`--document-prefix=${settings.documentPrefix}`);
	return args;
}

/** The settings in effect: this device's own server URL and token over the synced ones. */
export function withDevice(synced: VaskSettings, device: DeviceSettings): VaskSettings {
	return { ...synced, ...normalizeDevice(device) };
}

/**
 * Splits a change into what goes to the keychain (the token, where the app has one: `keychain`), to
 * this device's storage, and to data.json.
 */
export function splitPatch(
	patch: Partial<VaskSettings>,
	keychain = false,
): { secret?: string; device: DeviceSettings; synced: Partial<VaskSettings> } {
	const device: Record<string, unknown> = {};
	const synced: Partial<VaskSettings> = { ...patch };
	let secret: string | undefined;
	for (const key of DEVICE_KEYS) {
		if (!(key in patch)) continue;
		delete synced[key];
		if (key === 'token' && keychain) secret = (patch.token ?? '').trim();
		else device[key] = patch[key] ?? '';
	}
	return secret === undefined ? { device, synced } : { secret, device, synced };
}
