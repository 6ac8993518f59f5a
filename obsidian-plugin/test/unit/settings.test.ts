import { describe, expect, it } from 'vitest';
import { VaskClient } from '../../src/lib/client';
import { describeHealth } from '../../src/lib/health';
import { basenameNoExt, folderOf, isMarkdownPath, linkText, stripMd } from '../../src/lib/paths';
import {
	DEFAULT_SETTINGS,
	SETTINGS_VERSION,
	askParams,
	normalizeSettings,
	parseFolderList,
	serveArgs,
	storedSettings,
	updatedSettings,
	type VaskSettings,
} from '../../src/lib/settings';
import { normalizeDevice, splitPatch, withDevice } from '../../src/lib/settings';

/** The JSON body VaskClient.ask posts for a question asked with these settings (as the chat view builds it). */
async function askBody(settings: VaskSettings): Promise<Record<string, unknown>> {
	let body = '';
	const client = new VaskClient({
		baseUrl: 'http://127.0.0.1:8765',
		token: 't',
		fetch: async (_url, init) => {
			body = String(init?.body);
			return new Response('{"type":"done","answer":"","citations":[],"sources":[],"declined":false}\n');
		},
	});
	await client.ask({ question: 'q', ...askParams(settings) });
	return JSON.parse(body) as Record<string, unknown>;
}

describe('settings', () => {
	it('defaults match the documented ones: top-k and minimum similarity unset (the server decides)', () => {
		expect(normalizeSettings(null)).toEqual({
			serverUrl: 'http://127.0.0.1:8765',
			token: '',
			tokenSecret: 'vask-token',
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
	});

	it('the embedding instructions: kept as typed (a trailing space counts), per device, given to the server as flags', () => {
		const typed = normalizeSettings({ queryPrefix: 'query: ', documentPrefix: 'passage:\r\n' });
		expect(typed).toMatchObject({ queryPrefix: 'query: ', documentPrefix: 'passage:\n' });
		expect(normalizeSettings({ queryPrefix: '   ', documentPrefix: 7 })).toMatchObject({ queryPrefix: '', documentPrefix: '' });
		expect(normalizeSettings({ queryPrefix: 'x'.repeat(1200) }).queryPrefix.length).toBe(1000);
		expect(splitPatch({ queryPrefix: 'query: ', topK: 3 })).toEqual({ device: { queryPrefix: 'query: ' }, synced: { topK: 3 } });
		expect(withDevice(DEFAULT_SETTINGS, normalizeDevice({ documentPrefix: 'passage: ', queryPrefix: '' }))).toMatchObject({
			queryPrefix: '',
			documentPrefix: 'passage: ',
		});
		expect(serveArgs(DEFAULT_SETTINGS)).toEqual([]);
		// (`--name=value`: an instruction that begins with '-' is no option)
		expect(serveArgs({ ...DEFAULT_SETTINGS, queryPrefix: '-> ', documentPrefix: 'passage: ' })).toEqual([
			'--query-prefix=-> ',
			'--document-prefix=passage: ',
		]);
	});

	it('the heading for links: one line, trimmed; empty or not text is the default', () => {
		expect(normalizeSettings({ linkHeading: ' See also ' }).linkHeading).toBe('See also');
		expect(normalizeSettings({ linkHeading: 'Two\nlines' }).linkHeading).toBe('Two lines');
		expect(normalizeSettings({ linkHeading: '  ' }).linkHeading).toBe('Related');
		expect(normalizeSettings({ linkHeading: 4 }).linkHeading).toBe('Related');
	});

	it('the local server: on unless stored as false; its executable per device', () => {
		expect(normalizeSettings({ manageServer: 'no' }).manageServer).toBe(true);
		expect(normalizeSettings({ manageServer: false, vaskPath: ' /opt/vask ' })).toMatchObject({ manageServer: false, vaskPath: '/opt/vask' });
		expect(splitPatch({ manageServer: false, vaskPath: '/x', topK: 2 })).toEqual({ device: { manageServer: false, vaskPath: '/x' }, synced: { topK: 2 } });
		expect(withDevice(DEFAULT_SETTINGS, normalizeDevice({ manageServer: false, vaskPath: 7 }))).toMatchObject({ manageServer: false, vaskPath: '' });
	});

	it('saved chats: the folder is kept as typed (trimmed); indexing them is on only when stored as true', () => {
		expect(normalizeSettings({ chatsFolder: ' Chats/Vask ', indexSavedChats: true })).toMatchObject({
			chatsFolder: 'Chats/Vask',
			indexSavedChats: true,
		});
		expect(normalizeSettings({ chatsFolder: 3, indexSavedChats: 'yes' })).toMatchObject({ chatsFolder: 'Vask chats', indexSavedChats: false });
		expect(normalizeSettings({ chatsFolder: '' })).toMatchObject({ chatsFolder: '' });
	});

	it('repairs stored values of the wrong type or range; empty or not a number is unset', () => {
		const s = normalizeSettings({ serverUrl: '  ', token: ' t ', topK: '12', minSimilarity: 7, chatModel: 3, extra: 1 });
		expect(s).toEqual({ ...DEFAULT_SETTINGS, token: 't', topK: 12, minSimilarity: 1 });
		expect(normalizeSettings({ topK: 'abc', minSimilarity: -1 })).toMatchObject({ topK: null, minSimilarity: 0 });
		expect(normalizeSettings({ topK: '', minSimilarity: null, settingsVersion: 2 })).toMatchObject({ topK: null, minSimilarity: null });
		expect(normalizeSettings({ topK: 0, minSimilarity: 0, settingsVersion: 2 })).toMatchObject({ topK: 1, minSimilarity: 0 });
	});

	it('reads the old defaults saved by version 1 (top-k 6, similarity 0.25) as unset, and values the user changed as set', () => {
		const v1 = { serverUrl: 'http://127.0.0.1:8765', token: 't', topK: 6, minSimilarity: 0.25, chatModel: '', excludeFolders: '' };
		expect(normalizeSettings(v1)).toMatchObject({ topK: null, minSimilarity: null, token: 't' });
		expect(normalizeSettings({ ...v1, topK: 10 })).toMatchObject({ topK: 10, minSimilarity: null });
		expect(normalizeSettings({ ...v1, minSimilarity: 0.4 })).toMatchObject({ topK: null, minSimilarity: 0.4 });
	});

	it('keeps 6 and 0.25 when the user sets them in this version (saved with the version, read back as set)', () => {
		const set = updatedSettings(DEFAULT_SETTINGS, { topK: 6, minSimilarity: 0.25 });
		expect(set).toMatchObject({ topK: 6, minSimilarity: 0.25 });
		const saved = storedSettings(set);
		expect(saved.settingsVersion).toBe(SETTINGS_VERSION);
		expect(normalizeSettings(JSON.parse(JSON.stringify(saved)))).toEqual(set);
		// and unset again
		const unset = updatedSettings(set, { topK: null, minSimilarity: null });
		expect(normalizeSettings(JSON.parse(JSON.stringify(storedSettings(unset))))).toMatchObject({ topK: null, minSimilarity: null });
	});
	it('parses the folder list', () => {
		expect(parseFolderList(' Archive, /Templates/ ,,Daily\\Old , Archive')).toEqual(['Archive', 'Templates', 'Daily/Old']);
		expect(parseFolderList('')).toEqual([]);
	});

	it('turns settings into ask parameters (only what is set here)', () => {
		expect(askParams(DEFAULT_SETTINGS)).toEqual({});
		expect(askParams({ ...DEFAULT_SETTINGS, topK: 6, minSimilarity: 0.25 })).toEqual({ top_k: 6, min_similarity: 0.25 });
		expect(askParams({ ...DEFAULT_SETTINGS, chatModel: 'llama3.1:8b', excludeFolders: 'Archive, Templates' })).toEqual({
			chat_model: 'llama3.1:8b',
			filters: { exclude_folders: ['Archive', 'Templates'] },
		});
	});

	it('the /v1/ask body leaves out top_k and min_similarity unless set, so VASK_TOP_K / VASK_MIN_SIMILARITY apply', async () => {
		expect(await askBody(normalizeSettings(null))).toEqual({ question: 'q' });
		// settings saved by version 1 with its defaults untouched
		expect(await askBody(normalizeSettings({ token: 't', topK: 6, minSimilarity: 0.25 }))).toEqual({ question: 'q' });
		expect(await askBody(updatedSettings(DEFAULT_SETTINGS, { topK: 3 }))).toEqual({ question: 'q', top_k: 3 });
		expect(await askBody(updatedSettings(DEFAULT_SETTINGS, { minSimilarity: 0.4 }))).toEqual({ question: 'q', min_similarity: 0.4 });
	});
});

describe('paths', () => {
	it('builds Obsidian link text', () => {
		expect(linkText('01 Projects/Plan.md', 'Risks')).toBe('01 Projects/Plan#Risks');
		expect(linkText('Inbox.md', '')).toBe('Inbox');
		expect(stripMd('a/b.MD')).toBe('a/b');
		expect(basenameNoExt('a/b c.md')).toBe('b c');
		expect(basenameNoExt('Board.canvas')).toBe('Board.canvas'); // as Obsidian links it: with its extension
		expect(folderOf('a/b/c.md')).toBe('a/b');
		expect(folderOf('c.md')).toBe('');
		expect(isMarkdownPath('x/y.md')).toBe(true);
		expect(isMarkdownPath('x/y.png')).toBe(false);
	});
});

describe('describeHealth', () => {
	it('summarises a healthy server', () => {
		const r = describeHealth({
			status: 'ok',
			version: '0.1.0',
			vault: '/v',
			ollama: { host: 'http://127.0.0.1:11434', reachable: true },
			models: { embed: 'e', chat: 'c', missing: [] },
			index: { notes: 57, chunks: 300, pending: 0, model: 'e', dimension: 1024, last_sync: null },
		});
		expect(r.ok).toBe(true);
		expect(r.lines[0]).toBe('Connected to vask 0.1.0.');
		expect(r.lines).toContain('Index: 57 notes, 300 chunks, 0 pending');
	});

	it('flags Ollama down, missing models, and a token that was not accepted', () => {
		const r = describeHealth({
			status: 'ok',
			version: '0.1.0',
			ollama: { host: 'h', reachable: false },
			models: { embed: 'e', chat: 'c', missing: ['c'] },
		});
		expect(r.ok).toBe(false);
		expect(r.lines.join('\n')).toContain('NOT reachable');
		expect(r.lines.join('\n')).toContain('`ollama pull c`');
		expect(describeHealth({ status: 'ok' }).ok).toBe(false);
	});
});
