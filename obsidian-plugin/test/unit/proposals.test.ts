import { describe, expect, it } from 'vitest';
import { VaskClient, type FetchLike } from '../../src/lib/client';
import { VaskError } from '../../src/lib/errors';
import {
	StaleChange,
	beforeAfter,
	bySource,
	diffLines,
	processedText,
	sourceLabel,
	waitingCount,
	waitingText,
	writesInObsidian,
} from '../../src/lib/proposals';
import type { Proposal } from '../../src/lib/types';

const DIFF = [
	'--- a/Bread.md',
	'+++ b/Bread.md',
	'@@ -1,3 +1,3 @@',
	' # Bread',
	' ',
	'-I keep a sourdough starter.',
	'+I keep a [[Sourdough|sourdough]] starter.',
	'\\ No newline at end of file',
	'',
].join('\n');

function proposal(over: Partial<Proposal> = {}): Proposal {
	return {
		id: 'abcdef012345',
		kind: 'link',
		path: 'Bread.md',
		state: 'pending',
		summary: 'Link [[Sourdough|sourdough]] in Bread',
		source: 'links',
		device: 'default',
		created: '2026-03-14T09:00:00Z',
		undoable: false,
		before: 'I keep a sourdough starter.',
		after: 'I keep a [[Sourdough|sourdough]] starter.',
		...over,
	};
}

describe('proposed changes', () => {
	it('reads a unified diff line by line, and the lines it removes and adds', () => {
		expect(diffLines(DIFF).map((l) => l.kind)).toEqual(['file', 'file', 'hunk', 'context', 'context', 'del', 'add', 'note']);
		expect(diffLines('@@ -1 +1 @@\r\n-a\r\n+b\r\n')).toEqual([
			{ kind: 'hunk', text: '@@ -1 +1 @@' },
			{ kind: 'del', text: 'a' },
			{ kind: 'add', text: 'b' },
		]);
		expect(beforeAfter(DIFF)).toEqual({ before: ['I keep a sourdough starter.'], after: ['I keep a [[Sourdough|sourdough]] starter.'] });
	});

	it('counts what waits (stale ones too: they need a decision) and says it', () => {
		expect(waitingCount({ pending: 2, stale: 1, applied: 9 })).toBe(3);
		expect(waitingCount(undefined)).toBe(0);
		expect([waitingText(0), waitingText(1), waitingText(3)]).toEqual(['', '1 change to review', '3 changes to review']);
		expect(sourceLabel('links')).toBe('Link suggestions');
		expect(sourceLabel('claude')).toBe('From claude');
	});

	it('groups by source in the order given', () => {
		const groups = bySource([proposal({ id: '1', source: 'claude' }), proposal({ id: '2' }), proposal({ id: '3', source: 'claude' })]);
		expect(groups.map((g) => [g.source, g.proposals.map((p) => p.id)])).toEqual([
			['claude', ['1', '3']],
			['links', ['2']],
		]);
	});

	it('makes the change through Vault.process only while the note is exactly what it was proposed for', () => {
		const p = proposal();
		expect(processedText(p.before!, p)).toBe(p.after);
		expect(() => processedText(p.before + ' edited', p)).toThrow(StaleChange);
		expect(processedText(p.after!, p, true)).toBe(p.before);
		expect(() => processedText(p.before!, p, true)).toThrow(StaleChange);
		expect(() => processedText('x', proposal({ before: undefined }))).toThrow(StaleChange);
	});

	it('writes in Obsidian only where the server reads this very vault, and never a new note', () => {
		expect(writesInObsidian('/home/a/Vault', '/home/a/Vault/', proposal())).toBe(true);
		expect(writesInObsidian('C:\\Users\\a\\Vault', 'C:/Users/a/Vault', proposal())).toBe(true);
		expect(writesInObsidian('/srv/copy', '/home/a/Vault', proposal())).toBe(false);
		expect(writesInObsidian(null, '/home/a/Vault', proposal())).toBe(false);
		expect(writesInObsidian('/v', null, proposal())).toBe(false); // a phone
		expect(writesInObsidian('/v', '/v', proposal({ kind: 'create' }))).toBe(false);
	});
});

describe('the client for proposed changes', () => {
	function client(reply: (url: string, init: RequestInit) => Response): { c: VaskClient; calls: [string, RequestInit][] } {
		const calls: [string, RequestInit][] = [];
		const fetch: FetchLike = async (url, init = {}) => {
			calls.push([url, init]);
			return reply(url, init);
		};
		return { c: new VaskClient({ baseUrl: 'http://127.0.0.1:8765', token: 't', fetch }), calls };
	}
	const json = (body: unknown, status = 200): Response => new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });

	it('proposes a link, reads one, decides, and sends `written` only when the plugin wrote it', async () => {
		const { c, calls } = client((url) => (url.endsWith('/link') ? json({ proposal: proposal(), new: true, message: 'Proposed, waiting for approval.' }, 201) : json({ proposal: proposal({ state: 'applied' }) })));
		const res = await c.proposeLink('Bread.md', 'Sourdough.md', 'See also');
		expect(res.new).toBe(true);
		expect(calls[0]![0]).toBe('http://127.0.0.1:8765/v1/proposals/link');
		expect(JSON.parse(calls[0]![1].body as string)).toEqual({ path: 'Bread.md', target: 'Sourdough.md', heading: 'See also' });
		expect((await c.decide('abcdef012345', 'apply', true)).state).toBe('applied');
		expect(calls[1]![0]).toBe('http://127.0.0.1:8765/v1/proposals/abcdef012345/apply');
		expect(JSON.parse(calls[1]![1].body as string)).toEqual({ written: true });
		await c.decide('abcdef012345', 'reject');
		expect(JSON.parse(calls[2]![1].body as string)).toEqual({});
		await c.proposal('abc/def');
		expect(calls[3]![0]).toBe('http://127.0.0.1:8765/v1/proposals/abc%2Fdef');
	});

	it("a refusal comes back as the server's error, code and hint", async () => {
		const { c } = client(() =>
			json({ error: { code: 'stale_proposal', message: 'Bread.md changed since this was proposed', hint: 'Reject it' } }, 409),
		);
		const err = await c.decide('abcdef012345', 'apply').catch((e: unknown) => e);
		expect(err).toBeInstanceOf(VaskError);
		expect((err as VaskError).code).toBe('stale_proposal');
		expect((err as VaskError).hint).toBe('Reject it');
	});
});
