import { describe, expect, it } from 'vitest';
import { describeHealth } from '../../src/lib/health';
import { basenameNoExt, isMarkdownPath, linkText, stripMd } from '../../src/lib/paths';
import { DEFAULT_SETTINGS, askParams, normalizeSettings, parseFolderList } from '../../src/lib/settings';

describe('settings', () => {
	it('defaults match the documented ones', () => {
		expect(normalizeSettings(null)).toEqual({
			serverUrl: 'http://127.0.0.1:8765',
			token: '',
			topK: 6,
			minSimilarity: 0.25,
			chatModel: '',
			excludeFolders: '',
		});
	});

	it('repairs stored values of the wrong type or range', () => {
		const s = normalizeSettings({ serverUrl: '  ', token: ' t ', topK: '12', minSimilarity: 7, chatModel: 3, extra: 1 });
		expect(s).toEqual({ ...DEFAULT_SETTINGS, token: 't', topK: 12, minSimilarity: 1 });
		expect(normalizeSettings({ topK: 'abc', minSimilarity: -1 })).toMatchObject({ topK: 6, minSimilarity: 0 });
	});

	it('parses the folder list', () => {
		expect(parseFolderList(' Archive, /Templates/ ,,Daily\\Old , Archive')).toEqual(['Archive', 'Templates', 'Daily/Old']);
		expect(parseFolderList('')).toEqual([]);
	});

	it('turns settings into ask parameters (filters and model only when set)', () => {
		expect(askParams(DEFAULT_SETTINGS)).toEqual({ top_k: 6, min_similarity: 0.25 });
		expect(askParams({ ...DEFAULT_SETTINGS, chatModel: 'llama3.1:8b', excludeFolders: 'Archive, Templates' })).toEqual({
			top_k: 6,
			min_similarity: 0.25,
			chat_model: 'llama3.1:8b',
			filters: { exclude_folders: ['Archive', 'Templates'] },
		});
	});
});

describe('paths', () => {
	it('builds Obsidian link text', () => {
		expect(linkText('01 Projects/Plan.md', 'Risks')).toBe('01 Projects/Plan#Risks');
		expect(linkText('Inbox.md', '')).toBe('Inbox');
		expect(stripMd('a/b.MD')).toBe('a/b');
		expect(basenameNoExt('a/b c.md')).toBe('b c');
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
