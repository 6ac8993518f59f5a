/** Plugin settings: defaults, validation of stored data, and what they mean for requests. */
import type { AskRequest, Filters } from './types';

export interface VaskSettings {
	serverUrl: string;
	token: string;
	topK: number;
	minSimilarity: number;
	/** Empty: the server's default chat model. */
	chatModel: string;
	/** Comma separated folders to leave out of answers. */
	excludeFolders: string;
}

export const DEFAULT_SETTINGS: Readonly<VaskSettings> = Object.freeze({
	serverUrl: 'http://127.0.0.1:8765',
	token: '',
	topK: 6,
	minSimilarity: 0.25,
	chatModel: '',
	excludeFolders: '',
});

function num(v: unknown, fallback: number, min: number, max: number, integer: boolean): number {
	const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
	if (!Number.isFinite(n)) return fallback;
	const r = integer ? Math.round(n) : n;
	return Math.min(max, Math.max(min, r));
}

function str(v: unknown, fallback: string): string {
	return typeof v === 'string' ? v : fallback;
}

/** Merges stored data (anything, possibly from an older version) over the defaults. */
export function normalizeSettings(raw: unknown): VaskSettings {
	const r = typeof raw === 'object' && raw !== null ? (raw as Record<string, unknown>) : {};
	const url = str(r.serverUrl, DEFAULT_SETTINGS.serverUrl).trim();
	return {
		serverUrl: url === '' ? DEFAULT_SETTINGS.serverUrl : url,
		token: str(r.token, '').trim(),
		topK: num(r.topK, DEFAULT_SETTINGS.topK, 1, 50, true),
		minSimilarity: num(r.minSimilarity, DEFAULT_SETTINGS.minSimilarity, 0, 1, false),
		chatModel: str(r.chatModel, '').trim(),
		excludeFolders: str(r.excludeFolders, ''),
	};
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

/** The settings-dependent part of an /v1/ask body. */
export function askParams(settings: VaskSettings): Pick<AskRequest, 'top_k' | 'min_similarity' | 'filters' | 'chat_model'> {
	const p: Pick<AskRequest, 'top_k' | 'min_similarity' | 'filters' | 'chat_model'> = {
		top_k: settings.topK,
		min_similarity: settings.minSimilarity,
	};
	const filters = buildFilters(settings);
	if (filters) p.filters = filters;
	if (settings.chatModel) p.chat_model = settings.chatModel;
	return p;
}
