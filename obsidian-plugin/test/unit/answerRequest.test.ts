import { describe, expect, it } from 'vitest';
import { AnswerRequests, askRequest, type AnswerRequestDeps } from '../../src/lib/answerRequest';
import { ChatSession } from '../../src/lib/chat';
import { ErrorCode, VaskError } from '../../src/lib/errors';
import { DEFAULT_SETTINGS, type VaskSettings } from '../../src/lib/settings';
import type { AskDoneEvent, AskEvent, AskRequest, Source } from '../../src/lib/types';

const src: Source = { n: 1, path: 'a.md', title: 'A', heading: 'A', anchor: '', line_start: 1, line_end: 2, score: 0.5, link: 'a' };
const done: AskDoneEvent = { type: 'done', answer: 'A is a letter [A].', citations: [], sources: [src], declined: false };

/** One request the fake client was sent: the test plays its stream and its end. */
interface Call {
	req: AskRequest;
	signal: AbortSignal;
	emit(ev: AskEvent): void;
	finish(): void;
	fail(err: unknown): void;
}

/** A client whose requests end only when the test says so, or when aborted (as the real one: VaskError `aborted`). */
class FakeClient {
	calls: Call[] = [];
	ask(req: AskRequest, opts: { signal?: AbortSignal; onEvent?: (ev: AskEvent) => void } = {}): Promise<AskDoneEvent> {
		return new Promise((resolve, reject) => {
			const signal = opts.signal!;
			signal.addEventListener('abort', () => reject(new VaskError(ErrorCode.aborted, 'Stopped.')));
			this.calls.push({ req, signal, emit: (ev) => opts.onEvent?.(ev), finish: () => resolve(done), fail: reject });
		});
	}
	last(): Call {
		return this.calls[this.calls.length - 1]!;
	}
}

function setUp(settings: VaskSettings = DEFAULT_SETTINGS) {
	const session = new ChatSession();
	const client = new FakeClient();
	const log: string[] = [];
	let tracked = 0;
	const deps: AnswerRequestDeps = {
		session,
		keeper: {
			keep: () => log.push('keep'),
			keepSoon: () => log.push('keepSoon'),
			flush: async () => void log.push('flush'),
		},
		client: () => client,
		settings: () => settings,
		track: () => {
			tracked++;
			return () => tracked--;
		},
		onBusy: (busy) => log.push(busy ? 'busy' : 'idle'),
		now: () => new Date(2026, 2, 14, 9, 30, 0),
	};
	const requests = new AnswerRequests(deps);
	return { session, client, log, requests, tracked: () => tracked };
}

/** Lets the request's awaits run. */
const settle = () => new Promise((r) => setTimeout(r, 0));

describe('askRequest', () => {
	it('sends the question with the local time, and nothing it does not need', () => {
		const s = new ChatSession();
		const { user, assistant, history } = s.ask('What is A?');
		const req = askRequest(user, assistant, history, DEFAULT_SETTINGS, new Date(2026, 2, 14, 9, 30, 0));
		expect(req.question).toBe('What is A?');
		expect(req.now).toMatch(/^2026-03-14T09:30:00[+-]\d\d:\d\d$/);
		expect(Object.keys(req).sort()).toEqual(['now', 'question']);
	});

	it('carries the history, the notes, "as written" and "all dates", and the pane scope merged into the settings\' filters', () => {
		const s = new ChatSession();
		const first = s.ask('What is A?');
		s.apply(first.assistant, done);
		const { user, assistant, history } = s.ask('And B?', 'Notes/B.md', { kind: 'folder', path: 'Notes' }, 'Notes/Open.md');
		assistant.readTime = false;
		assistant.connect = false;
		const settings = { ...DEFAULT_SETTINGS, topK: 4, excludeFolders: 'Archive', chatModel: 'small' };
		const req = askRequest(user, assistant, history, settings, new Date());
		expect(req).toMatchObject({
			question: 'And B?',
			history: [
				{ role: 'user', content: 'What is A?' },
				{ role: 'assistant', content: 'A is a letter [A].' },
			],
			current_note: 'Notes/B.md',
			open_note: 'Notes/Open.md',
			read_time: false,
			connect: false,
			top_k: 4,
			chat_model: 'small',
			filters: { exclude_folders: ['Archive'], folders: ['Notes'] },
		});
	});
});

describe('AnswerRequests', () => {
	it('applies the stream to the answer, keeps tokens soon and the rest at once, and is busy until the end', async () => {
		const { session, client, log, requests, tracked } = setUp();
		const { user, assistant, history } = session.ask('What is A?');
		const seen: string[] = [];
		const ended = requests.receive(user, assistant, history, { onEvent: (ev) => seen.push(`${ev.type}:${assistant.status}`) });
		expect(requests.busy).toBe(true);
		expect(tracked()).toBe(1);
		const call = client.last();
		call.emit({ type: 'sources', sources: [src] });
		call.emit({ type: 'token', text: 'A is' });
		call.emit(done);
		call.finish();
		expect(await ended).toBe(true);
		expect(seen).toEqual(['sources:waiting', 'token:streaming', 'done:done']);
		expect(assistant.content).toBe('A is a letter [A].');
		expect(log).toEqual(['busy', 'keep', 'keepSoon', 'keep', 'idle', 'keep', 'flush']);
		expect(requests.busy).toBe(false);
		expect(tracked()).toBe(0);
	});

	it('stop() aborts the request: the answer is kept as stopped, with what had arrived', async () => {
		const { session, client, requests } = setUp();
		const { user, assistant, history } = session.ask('q');
		const ended = requests.receive(user, assistant, history, { onEvent: () => {} });
		client.last().emit({ type: 'token', text: 'Half' });
		requests.stop();
		expect(await ended).toBe(true);
		expect(client.last().signal.aborted).toBe(true);
		expect(assistant).toMatchObject({ status: 'stopped', content: 'Half' });
		expect(requests.busy).toBe(false);
	});

	it('a failed request fails the answer and is reported; a stopped one is not', async () => {
		const { session, client, requests } = setUp();
		const failed: unknown[] = [];
		const a = session.ask('q');
		const ended = requests.receive(a.user, a.assistant, a.history, { onEvent: () => {}, onFailed: (e) => failed.push(e) });
		const err = new VaskError(ErrorCode.modelMissing, 'no model');
		client.last().fail(err);
		expect(await ended).toBe(true);
		expect(a.assistant.status).toBe('error');
		expect(a.assistant.error).toBe(err);
		expect(failed).toEqual([err]);

		const b = session.ask('q2');
		const stopped = requests.receive(b.user, b.assistant, b.history, { onEvent: () => {}, onFailed: (e) => failed.push(e) });
		requests.stop();
		await stopped;
		expect(failed).toHaveLength(1);
	});

	it('a request replaced by another for the same answer is ignored: its late events, its end, and busy stays with the new one', async () => {
		const { session, client, log, requests } = setUp();
		const { user, assistant, history } = session.ask('in March?');
		const events: AskEvent[] = [];
		const first = requests.receive(user, assistant, history, { onEvent: (ev) => events.push(ev) });
		const old = client.last();
		const again = session.retry(assistant, { readTime: false })!;
		const second = requests.receive(again.user, assistant, again.history, { onEvent: (ev) => events.push(ev) });
		expect(client.last().req.read_time).toBe(false);
		old.emit({ type: 'token', text: 'stale' });
		old.fail(new VaskError(ErrorCode.internal, 'late'));
		expect(await first).toBe(false);
		expect(events).toEqual([]);
		expect(assistant.status).toBe('waiting');
		expect(requests.busy).toBe(true);
		log.length = 0;
		client.last().emit(done);
		client.last().finish();
		expect(await second).toBe(true);
		expect(assistant.content).toBe(done.answer);
		expect(log).toEqual(['keep', 'idle', 'keep', 'flush']);
	});

	it('dropAll() lets go of the requests under way ("New chat"): nothing more is applied or kept for them', async () => {
		const { session, client, log, requests } = setUp();
		const { user, assistant, history } = session.ask('q');
		const events: AskEvent[] = [];
		const ended = requests.receive(user, assistant, history, { onEvent: (ev) => events.push(ev) });
		requests.stop();
		requests.dropAll();
		client.last().emit({ type: 'token', text: 'late' });
		expect(await ended).toBe(false);
		expect(events).toEqual([]);
		expect(assistant.status).toBe('waiting'); // the view keeps it as stopped itself before letting go
		expect(log).toEqual(['busy', 'idle']);
		await settle();
		expect(log).toEqual(['busy', 'idle']);
	});

	it('the client is read as each request starts (the plugin rebuilds it when the settings change)', async () => {
		const session = new ChatSession();
		const clients = [new FakeClient(), new FakeClient()];
		let i = 0;
		const r = new AnswerRequests({
			session,
			keeper: { keep: () => {}, keepSoon: () => {}, flush: async () => {} },
			client: () => clients[i++]!,
			settings: () => DEFAULT_SETTINGS,
			track: () => () => {},
			onBusy: () => {},
		});
		for (const q of ['one', 'two']) {
			const a = session.ask(q);
			const ended = r.receive(a.user, a.assistant, a.history, { onEvent: () => {} });
			clients[i - 1]!.last().finish();
			await ended;
		}
		expect(clients.map((c) => c.calls.map((call) => call.req.question))).toEqual([['one'], ['two']]);
	});
});
