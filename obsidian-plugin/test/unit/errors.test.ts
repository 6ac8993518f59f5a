import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ErrorCode, VaskError, describeError, errorFromResponse, isAbortError, toVaskError } from '../../src/lib/errors';

const ctx = { vaultPath: '/home/ann/Notes Vault', serverUrl: 'http://127.0.0.1:8765' };

describe('describeError', () => {
	it('server not running: tells the exact command with the vault path, as installed by the README (uv, from the vask folder)', () => {
		const p = describeError(new TypeError('Failed to fetch'), ctx);
		expect(p.code).toBe(ErrorCode.unreachable);
		expect(p.message).toBe(
			'vask server is not running. Start it in a terminal, from the vask folder (where you installed it): `uv run vask serve --vault "/home/ann/Notes Vault"`',
		);
		expect(p.hint).toContain('http://127.0.0.1:8765');
	});

	it('server not running without a known vault path uses a placeholder', () => {
		const p = describeError(new VaskError(ErrorCode.unreachable, 'x'), {});
		expect(p.message).toContain('`uv run vask serve --vault "<path to your vault>"`');
	});

	it('401: says the token is wrong or missing and where to get it', () => {
		const p = describeError(new VaskError('unauthorized', 'missing bearer token', '', 401), ctx);
		expect(p.message).toMatch(/token is wrong, missing or revoked/);
		expect(p.hint).toContain('`uv run vask token --vault "/home/ann/Notes Vault"` prints the token');
		expect(p.hint).toContain('`uv run vask token add NAME` makes its own token');
		expect(p.hint).toContain('Settings → Vask → Token');
	});

	it('Ollama down: shows the server message and hint', () => {
		const p = describeError(
			new VaskError('ollama_unavailable', 'Cannot reach Ollama at http://127.0.0.1:11434', 'Start Ollama: `ollama serve`', 503),
			ctx,
		);
		expect(p.message).toBe('Cannot reach Ollama at http://127.0.0.1:11434');
		expect(p.hint).toBe('Start Ollama: `ollama serve`');
	});

	it('model missing: passes the server hint through, with a generic one as fallback', () => {
		const p = describeError(new VaskError('model_missing', 'Model qwen2.5:14b is not pulled', 'Run `ollama pull qwen2.5:14b`', 503), ctx);
		expect(p.hint).toBe('Run `ollama pull qwen2.5:14b`');
		const q = describeError(new VaskError('model_missing', '', '', 503), ctx);
		expect(q.message).toMatch(/not installed/);
		expect(q.hint).toContain('ollama pull');
	});

	it('an unknown server error keeps its message and hint', () => {
		const p = describeError(new VaskError('internal', 'disk full', 'free some space', 500), ctx);
		expect(p).toEqual({ code: 'internal', message: 'disk full', hint: 'free some space' });
		const q = describeError(new VaskError('weird', '', '', 500), ctx);
		expect(q.message).toBe('The vask server failed (weird, HTTP 500).');
	});

	it('an abort is just "Stopped."', () => {
		expect(describeError(new DOMException('x', 'AbortError'), ctx)).toEqual({ code: 'aborted', message: 'Stopped.', hint: '' });
	});
});

describe('errorFromResponse / toVaskError', () => {
	it('reads the contract error body', async () => {
		const e = await errorFromResponse(
			new Response(JSON.stringify({ error: { code: 'forbidden_host', message: 'Host not allowed', hint: 'use 127.0.0.1' } }), { status: 403 }),
		);
		expect([e.code, e.message, e.hint, e.status]).toEqual(['forbidden_host', 'Host not allowed', 'use 127.0.0.1', 403]);
	});

	it("keeps scope_not_found's misses, each with its closest names", async () => {
		const misses = [{ kind: 'tag', written: '#runing', closest: ['#running', 3] }];
		const error = { code: 'scope_not_found', message: 'No tag #runing in the index.', hint: 'Closest: #running.', misses, closest: ['#running'] };
		const e = await errorFromResponse(new Response(JSON.stringify({ error }), { status: 400 }));
		expect([e.code, e.status, e.misses]).toEqual(['scope_not_found', 400, [{ kind: 'tag', written: '#runing', closest: ['#running'] }]]);
		// A server from before misses: no misses, the hint still says the names.
		const old = await errorFromResponse(new Response(JSON.stringify({ error: { ...error, misses: undefined } }), { status: 400 }));
		expect([old.misses, old.hint]).toEqual([[], 'Closest: #running.']);
		const p = describeError(e);
		// The names as code: shown as written, not rendered as links (a wrong [[Note]] would link to nothing).
		expect(p).toEqual({ code: 'scope_not_found', message: 'No tag `#runing` in the index.', hint: 'Closest: `#running`.' });
	});

	it('uses the status when the body has no code', async () => {
		const e = await errorFromResponse(new Response(JSON.stringify({ error: { message: 'x' } }), { status: 404 }));
		expect(e.code).toBe('not_found');
		expect(e.message).toBe('x');
	});

	it('classifies thrown values', () => {
		expect(toVaskError(new TypeError('fetch failed')).code).toBe(ErrorCode.unreachable);
		expect(toVaskError(new DOMException('a', 'AbortError')).code).toBe(ErrorCode.aborted);
		expect(toVaskError(new Error('boom')).message).toBe('boom');
		expect(toVaskError('str').code).toBe(ErrorCode.internal);
		expect(isAbortError(new VaskError(ErrorCode.aborted, ''))).toBe(true);
		expect(isAbortError(new VaskError(ErrorCode.timeout, ''))).toBe(false);
	});
});

describe('commands in user-facing text', () => {
	/** Every .ts file under src/, recursively. */
	function sources(dir: string): string[] {
		return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
			d.isDirectory() ? sources(join(dir, d.name)) : d.name.endsWith('.ts') ? [join(dir, d.name)] : [],
		);
	}

	it('tell `uv run vask ...`: the README installs vask into .venv, so a bare `vask` is not on PATH', () => {
		const files = sources(join(__dirname, '../../src'));
		expect(files.length).toBeGreaterThan(10);
		const offenders: string[] = [];
		for (const file of files) {
			// user-facing text only: comments may name the command the plugin itself starts
			const text = readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');
			// a command: `vask serve`... in backticks, or followed by its options
			for (const m of text.matchAll(/(?<!uv run )\bvask (?:serve|token|index|status)\b(?=`| --)/g)) {
				offenders.push(`${file}: ${text.slice(Math.max(0, m.index - 30), m.index + 30)}`);
			}
		}
		expect(offenders).toEqual([]);
	});
});
