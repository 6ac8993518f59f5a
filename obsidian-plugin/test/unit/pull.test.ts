import { describe, expect, it } from 'vitest';
import { VaskClient } from '../../src/lib/client';
import { PullTracker, formatBytes, missingModels } from '../../src/lib/pull';

function ndjsonResponse(lines: unknown[], status = 200): Response {
	return new Response(lines.map((l) => JSON.stringify(l) + '\n').join(''), { status, headers: { 'Content-Type': 'application/x-ndjson' } });
}

describe('PullTracker', () => {
	it('sums the layers Ollama reports into one fraction', () => {
		const t = new PullTracker();
		expect(t.push({ type: 'progress', status: 'pulling manifest' })).toEqual({ fraction: null, status: 'pulling manifest', bytes: '' });
		t.push({ type: 'progress', status: 'pulling aaa', total: 3_000_000_000, completed: 1_500_000_000 });
		const v = t.push({ type: 'progress', status: 'pulling bbb', total: 1_000_000_000, completed: 0 });
		expect(v.fraction).toBeCloseTo(0.375);
		expect(v.bytes).toBe('1.5 GB of 4.0 GB');
		t.push({ type: 'progress', status: 'pulling aaa', total: 3_000_000_000, completed: 3_000_000_000 });
		expect(t.push({ type: 'progress', status: 'pulling bbb', total: 1_000_000_000, completed: 1_000_000_000 }).fraction).toBe(1);
		expect(t.push({ type: 'progress', status: 'success' })).toMatchObject({ fraction: 1, status: 'success' });
	});

	it('formats sizes and reads the missing models with their roles', () => {
		expect([999, 1000, 1_234_567].map(formatBytes)).toEqual(['999 B', '1.0 KB', '1.2 MB']);
		expect(missingModels({ embed: 'e', chat: 'c', missing: ['c', 'e'] })).toEqual([
			{ model: 'c', role: 'chat' },
			{ model: 'e', role: 'embed' },
		]);
		expect(missingModels(undefined)).toEqual([]);
	});
});

describe('VaskClient.pullModel', () => {
	it('posts the model and hands on each progress line until done', async () => {
		const seen: { url: string; body: string; auth: string }[] = [];
		const client = new VaskClient({
			baseUrl: 'http://127.0.0.1:1',
			token: 'tok',
			fetch: (url, init) => {
				seen.push({ url: String(url), body: String(init?.body), auth: new Headers(init?.headers).get('Authorization') ?? '' });
				return Promise.resolve(
					ndjsonResponse([
						{ type: 'progress', status: 'pulling manifest' },
						{ type: 'progress', status: 'pulling a', total: 10, completed: 5 },
						{ type: 'done', model: 'm' },
					]),
				);
			},
		});
		const progress: string[] = [];
		await client.pullModel('m', { role: 'chat', onProgress: (p) => progress.push(p.status) });
		expect(progress).toEqual(['pulling manifest', 'pulling a']);
		expect(seen).toEqual([{ url: 'http://127.0.0.1:1/v1/models/pull', body: '{"model":"m","role":"chat"}', auth: 'Bearer tok' }]);
	});

	it('an error line, a stream without done and an HTTP error each throw with the code', async () => {
		const make = (res: Response) => new VaskClient({ baseUrl: 'http://127.0.0.1:1', token: 't', fetch: () => Promise.resolve(res) });
		await expect(make(ndjsonResponse([{ type: 'progress', status: 'x' }, { type: 'error', code: 'ollama_error', message: 'no such model', hint: 'h' }])).pullModel('m')).rejects.toMatchObject({
			code: 'ollama_error',
			message: 'no such model',
		});
		await expect(make(ndjsonResponse([{ type: 'progress', status: 'x' }])).pullModel('m')).rejects.toMatchObject({ code: 'incomplete' });
		const unsupported = new Response(JSON.stringify({ error: { code: 'pull_unsupported', message: 'only Ollama', hint: 'load it' } }), { status: 501 });
		await expect(make(unsupported).pullModel('m')).rejects.toMatchObject({ code: 'pull_unsupported', message: 'only Ollama' });
	});
});
