/**
 * End to end: the plugin's real views, bundled for the browser with a
 * stand-in `obsidian` module, in headless Chromium, talking to a REAL
 * `vask serve` (over a temp copy of sample_vault, with the test fake for
 * Ollama) through a same-origin streaming proxy.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AssistantTurn, Turn } from '../../src/lib/chat';
import { sourceDateText } from '../../src/lib/time';
import {
	EXCLUDED_NOTES,
	EXCLUDE_GLOB,
	buildPage,
	freePort,
	readVaultNotes,
	repoRoot,
	startPageServer,
	startVask,
	type NoteInfo,
	type PageServer,
	type VaskServer,
} from './support';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** The README's picture of the chat pane: tracked, so written only when asked (VASK_SCREENSHOT). */
const TRACKED_SCREENSHOT = join(repoRoot, 'docs', 'screenshot-chat.png');

/** VASK_SCREENSHOT=1: the tracked file; another value: that path; unset (or 0): a temporary folder. */
function screenshotPath(tmp: string): string {
	const v = process.env.VASK_SCREENSHOT?.trim() ?? '';
	if (v === '' || v === '0') return join(tmp, 'screenshot-chat.png');
	return v === '1' ? TRACKED_SCREENSHOT : resolve(v);
}
const QUESTION = 'What is the pain rule during a run?';
/** Names a time: the sample vault's daily notes are dated by name (Daily/2026-02-14.md). */
const TIME_QUESTION = 'What did I write about running in February?';
/** Where the answer to QUESTION is: the note and the heading the sentence is under. */
const EXPECTED_PATH = '02 Areas/Health/Knee pain - physio notes.md';
const SAMPLE_PDF = 'attachments/Wirral Sea Swimmers handbook 2026.pdf';
const EXPECTED_LINK = '02 Areas/Health/Knee pain - physio notes#The plan she gave me';

let vask: VaskServer;
/** The test vault's notes, for the stand-in metadata cache. */
let vaultNotes: NoteInfo[] = [];
let pageServer: PageServer;
let deadServer: PageServer;
let browser: Browser;
let pageRoot: string | undefined;
/** mtime of the tracked screenshot before the run, to check that it is left alone unless asked for. */
let trackedMtime: number | null = null;
const contexts: BrowserContext[] = [];

interface OpenOptions {
	server?: PageServer;
	settings?: Record<string, unknown>;
	activeFile?: string;
	/** The browser's time zone (IANA name); default the machine's. */
	timezoneId?: string;
	/** Pins the page's clock (Date) to this moment; timers keep running. */
	fixedTime?: string;
}

async function openPage(opts: OpenOptions = {}): Promise<Page> {
	const server = opts.server ?? pageServer;
	const context = await browser.newContext({
		viewport: { width: 420, height: 780 },
		deviceScaleFactor: 2,
		...(opts.timezoneId ? { timezoneId: opts.timezoneId } : {}),
	});
	contexts.push(context);
	const page = await context.newPage();
	if (opts.fixedTime) await page.clock.setFixedTime(opts.fixedTime);
	const errors: string[] = [];
	page.on('pageerror', (e) => errors.push(String(e)));
	await page.addInitScript((cfg) => {
		(window as unknown as { __harnessConfig: unknown }).__harnessConfig = cfg;
	}, {
		vaultPath: vask.vault,
		notes: vaultNotes,
		activeFile: opts.activeFile,
		settings: { serverUrl: server.url, token: vask.token, ...opts.settings },
	});
	await page.goto(server.url + '/');
	await page.waitForFunction(() => window.__ready === true || window.__harnessError !== undefined, null, { timeout: 20_000 });
	const harnessError = await page.evaluate(() => window.__harnessError);
	expect(harnessError ?? null, 'the harness loaded the plugin').toBeNull();
	expect(errors).toEqual([]);
	return page;
}

/** The chat view's turns (plain data, read in the page). */
function conversation(page: Page): Promise<Turn[]> {
	return page.evaluate(() => {
		const leaf = window.__vask!.app.workspace.getLeavesOfType('vask-chat')[0]!;
		const view = leaf.view as unknown as { conversation: Turn[] };
		return JSON.parse(JSON.stringify(view.conversation)) as Turn[];
	});
}

async function ask(page: Page, question: string): Promise<void> {
	const input = page.locator('.vask-input');
	await input.click();
	await input.pressSequentially(question);
	await input.press('Enter');
}

function lastAnswer(page: Page) {
	return page.locator('.vask-msg-assistant').last();
}

async function fakeControl(body: Record<string, unknown>): Promise<void> {
	const res = await fetch(`${vask.fakeOllamaUrl}/fake/control`, { method: 'POST', body: JSON.stringify(body) });
	expect(res.ok).toBe(true);
}

async function fakeStats(): Promise<{ chat_calls: number; chat_streams_cancelled: number }> {
	const res = await fetch(`${vask.fakeOllamaUrl}/fake/stats`);
	return (await res.json()) as { chat_calls: number; chat_streams_cancelled: number };
}

interface AskBody {
	question: string;
	filters?: Record<string, string[]>;
	history?: { role: string; content: string }[];
	now?: string;
	read_time?: boolean;
}

function askBodies(server: PageServer): AskBody[] {
	return server.requests.filter((r) => r.path === '/v1/ask').map((r) => JSON.parse(r.body));
}

beforeAll(async () => {
	if (!existsSync(CHROMIUM)) {
		throw new Error(`Chromium not found at ${CHROMIUM}: install it (apt-get install chromium) or set CHROMIUM_PATH.`);
	}
	trackedMtime = existsSync(TRACKED_SCREENSHOT) ? statSync(TRACKED_SCREENSHOT).mtimeMs : null;
	vask = await startVask();
	vaultNotes = readVaultNotes(vask.vault);
	const root = await buildPage();
	pageRoot = root;
	pageServer = await startPageServer(root, vask.url);
	// A page server whose upstream is a port where nothing listens: "server not running".
	deadServer = await startPageServer(root, `http://127.0.0.1:${await freePort()}`);
	browser = await chromium.launch({
		executablePath: CHROMIUM,
		args: [
			'--headless',
			'--no-sandbox',
			'--disable-gpu',
			'--disable-quic',
			'--no-first-run',
			'--disable-background-networking',
			'--disable-component-update',
			'--disable-sync',
		],
		// launch() gives the browser a fresh temporary profile (user-data-dir) of its own.
	});
});

afterAll(async () => {
	for (const c of contexts) await c.close().catch(() => undefined);
	await browser?.close().catch(() => undefined);
	await pageServer?.close();
	await deadServer?.close();
	await vask?.stop();
	if (pageRoot) rmSync(pageRoot, { recursive: true, force: true });
});

describe('vask chat view in Chromium against the real server', () => {
	it('streams an answer with sources; a citation opens its note at the heading', async () => {
		// The fake model holds the answer after its first token until released: what is read "while streaming"
		// is read while the rest is held back, however slow the machine (ordered, not timed).
		await fakeControl({ token_delay: 0.04, hold_next: true });
		const page = await openPage();

		// The status bar is live from GET /v1/events (streamed through fetch with the token).
		const health = (await (await fetch(`${vask.url}/v1/health`, { headers: { Authorization: `Bearer ${vask.token}` } })).json()) as {
			index: { notes: number };
		};
		await expect
			.poll(() => page.locator('.status-bar-item.vask-statusbar').innerText(), { timeout: 20_000 })
			.toBe(`vask: indexed ✓ ${health.index.notes} notes`);

		await ask(page, QUESTION);
		const answer = lastAnswer(page);
		// Streaming: text shows up while the message is still receiving tokens.
		await page.locator('.vask-msg-assistant.is-streaming .vask-answer p').first().waitFor({ timeout: 30_000 });
		const partial = await answer.locator('.vask-answer').innerText();
		expect(partial.trim().length).toBeGreaterThan(0);
		expect(await page.locator('.vask-msg-assistant.is-streaming').count()).toBe(1);
		expect((await fetch(`${vask.fakeOllamaUrl}/fake/release`, { method: 'POST' })).ok).toBe(true);
		await page.locator('.vask-msg-assistant.is-done').waitFor({ timeout: 60_000 });
		const final = await answer.locator('.vask-answer').innerText();
		expect(final.length).toBeGreaterThan(partial.length);

		const renders = await page.evaluate(() => window.__renders as { markdown: string; streaming: boolean }[]);
		const streamed = renders.filter((r) => r.streaming && r.markdown.trim() !== '');
		// (rendered while the rest was held back: before the answer was done, not once at its end)
		expect(streamed.length, 'rendered while streaming').toBeGreaterThanOrEqual(1);
		expect(streamed[0]!.markdown.length).toBeLessThan(final.length);

		// The user's question is shown; the send button is back to "Send".
		await expect.poll(() => page.locator('.vask-msg-user .vask-msg-text').innerText()).toBe(QUESTION);
		expect(await page.locator('.vask-send').innerText()).toBe('Send');

		const turns = await conversation(page);
		const turn = turns[1] as AssistantTurn;
		expect(turn.status).toBe('done');
		expect(turn.citations.length).toBeGreaterThan(0);
		const citation = turn.citations[0]!;
		expect(citation.path).toBe(EXPECTED_PATH);
		expect(citation.link).toBe(EXPECTED_LINK);
		expect(turn.sources.map((s) => s.path)).toContain(citation.path);

		// The link passed to Obsidian points at a real note, at a real heading of it.
		expect(citation.link).toBe(
			citation.anchor ? `${citation.path.replace(/\.md$/, '')}#${citation.anchor}` : citation.path.replace(/\.md$/, ''),
		);
		const noteText = readFileSync(join(vask.vault, citation.path), 'utf8');
		if (citation.anchor) {
			const headings = [...noteText.matchAll(/^#{1,6}\s+(.+?)\s*$/gm)].map((m) => m[1]);
			expect(headings).toContain(citation.anchor);
		}

		// Sources list under the answer, each a link.
		const sourceLinks = answer.locator('.vask-sources a.internal-link');
		expect(await sourceLinks.count()).toBe(turn.sources.length);
		expect(turn.sources.length).toBeGreaterThan(0);
		expect(await sourceLinks.first().getAttribute('data-href')).toBe(turn.sources[0]!.link);
		// Beside each source, when it was written; a date known only from the file's modification time
		// (a copied vault: every undated note's file time is the copy's) is marked "file date".
		const sourceItems = answer.locator('.vask-source');
		const dateInfo = await sourceItems.evaluateAll((lis) =>
			lis.map((li) => [li.querySelector('.vask-source-date')?.textContent ?? null, li.querySelector('.vask-source-date-kind')?.textContent ?? null]),
		);
		expect(dateInfo).toEqual(turn.sources.map((s) => [sourceDateText(s), s.date_source === 'file-time' ? 'file date' : null]));
		expect(turn.sources.some((s) => s.date_source === 'file-time'), JSON.stringify(turn.sources.map((s) => s.date_source))).toBe(true);
		expect(turn.sources.every((s) => typeof s.date === 'string')).toBe(true);

		// The [Title] citation in the answer text is an internal link to the citation.
		const citeLink = answer.locator('.vask-answer a.internal-link').first();
		expect(await citeLink.innerText()).toBe(citation.title);
		expect(await citeLink.getAttribute('data-href')).toBe(citation.link);

		// Screenshot of the pane (mouse away from links).
		await page.mouse.move(5, 5);
		const screenshot = screenshotPath(pageRoot!); // the page folder is removed after the run
		mkdirSync(dirname(screenshot), { recursive: true });
		await page.screenshot({ path: screenshot });
		expect(existsSync(screenshot)).toBe(true);
		if (screenshot !== TRACKED_SCREENSHOT) {
			const mtime = existsSync(TRACKED_SCREENSHOT) ? statSync(TRACKED_SCREENSHOT).mtimeMs : null;
			expect(mtime, `${TRACKED_SCREENSHOT} is only written with VASK_SCREENSHOT=1`).toBe(trackedMtime);
		}

		// Hover → Obsidian's page preview event; click → openLinkText(path#heading).
		await citeLink.hover();
		await expect.poll(() => page.evaluate(() => window.__hovered.length)).toBeGreaterThan(0);
		const hovered = await page.evaluate(() => window.__hovered[window.__hovered.length - 1]!);
		expect(hovered).toMatchObject({ source: 'vask', linktext: citation.link, targetText: citation.title });

		await citeLink.click();
		await expect.poll(() => page.evaluate(() => window.__opened.length)).toBe(1);
		expect(await page.evaluate(() => window.__opened[0])).toEqual({ linktext: EXPECTED_LINK, sourcePath: '', newLeaf: false });

		// Ctrl-click on a source: a new tab.
		await sourceLinks.first().click({ modifiers: ['Control'] });
		await expect.poll(() => page.evaluate(() => window.__opened.length)).toBe(2);
		expect(await page.evaluate(() => window.__opened[1])).toEqual({
			linktext: turn.sources[0]!.link,
			sourcePath: '',
			newLeaf: 'tab',
		});
		await fakeControl({ token_delay: 0 });
	});

	it('a source on a PDF page shows the page, and opens the PDF there', async () => {
		const page = await openPage();
		await ask(page, 'What are the umbles?');
		const answer = lastAnswer(page);
		await answer.locator('.vask-source').first().waitFor({ timeout: 60_000 });
		await page.locator('.vask-msg-assistant.is-done').first().waitFor({ timeout: 60_000 });
		const turn = (await conversation(page))[1] as AssistantTurn;
		const pdf = turn.sources.find((s) => s.path === SAMPLE_PDF);
		expect(pdf, JSON.stringify(turn.sources.map((s) => s.path))).toBeDefined();
		expect(pdf!).toMatchObject({ page: 3, link: `${SAMPLE_PDF}#page=3` });
		const index = turn.sources.indexOf(pdf!);
		const item = answer.locator('.vask-source').nth(index);
		expect(await item.locator('.vask-source-page').textContent()).toBe('p. 3');
		// the "Page 3" heading is not shown beside it again
		expect(await item.locator('.vask-source-heading').count()).toBe(0);
		const opened = await page.evaluate(() => window.__opened.length);
		await item.locator('a.internal-link').click();
		await expect.poll(() => page.evaluate(() => window.__opened.length)).toBe(opened + 1);
		expect(await page.evaluate(() => window.__opened[window.__opened.length - 1])).toEqual({
			linktext: `${SAMPLE_PDF}#page=3`,
			sourcePath: '',
			newLeaf: false,
		});
		// notes keep their heading and no page
		for (const s of turn.sources.filter((x) => x.path.endsWith('.md'))) expect(s.page ?? null).toBeNull();
	});

	it('follow-up questions carry the conversation; New chat clears it', async () => {
		const page = await openPage();
		const before = askBodies(pageServer).length;
		await ask(page, QUESTION);
		await page.locator('.vask-msg-assistant.is-done').first().waitFor({ timeout: 60_000 });
		const first = (await conversation(page))[1] as AssistantTurn;

		await ask(page, 'And what did the physio say about the shoes?');
		await expect.poll(() => page.locator('.vask-msg-assistant.is-done').count(), { timeout: 60_000 }).toBe(2);
		const bodies = askBodies(pageServer).slice(before);
		expect(bodies).toHaveLength(2);
		expect(bodies[0]!.history ?? []).toEqual([]);
		expect(bodies[1]!.history).toEqual([
			{ role: 'user', content: QUESTION },
			{ role: 'assistant', content: first.content },
		]);
		// top-k and minimum similarity are not set in the plugin: the server's defaults apply
		for (const body of bodies) {
			expect(body).not.toHaveProperty('top_k');
			expect(body).not.toHaveProperty('min_similarity');
		}

		await page.locator('.vask-new-chat').click();
		expect(await page.locator('.vask-msg').count()).toBe(0);
		await ask(page, 'How often do I feed the sourdough starter in fridge mode?');
		await page.locator('.vask-msg-assistant.is-done').first().waitFor({ timeout: 60_000 });
		const third = askBodies(pageServer).slice(before)[2]!;
		expect(third.question).toBe('How often do I feed the sourdough starter in fridge mode?');
		expect(third.history ?? []).toEqual([]);
	});

	it('top-k and minimum similarity: "Server default" until set in the settings tab; old saved defaults count as unset', async () => {
		// Settings saved by the previous version, which stored its defaults 6 and 0.25 whether chosen or not.
		const page = await openPage({ settings: { topK: 6, minSimilarity: 0.25 } });
		await page.evaluate(() => {
			const tab = (window.__vask!.plugin as unknown as { settingTabs: { containerEl: HTMLElement; display(): void }[] }).settingTabs[0]!;
			tab.display();
			tab.containerEl.classList.add('vask-test-settings');
			document.body.appendChild(tab.containerEl);
		});
		const field = (name: string) =>
			page.locator('.vask-test-settings .setting-item').filter({ hasText: name }).locator('input');
		const topK = field('Passages per answer (top-k)');
		const similarity = field('Minimum similarity');
		for (const input of [topK, similarity]) {
			expect(await input.getAttribute('placeholder')).toBe('Server default');
			expect(await input.inputValue()).toBe('');
		}
		// The chat model's input suggests what the server's model server serves (GET /v1/models)
		const chatModel = field('Chat model');
		expect(await chatModel.getAttribute('list')).toBe('vask-chat-models');
		await expect
			.poll(() => page.locator('#vask-chat-models option').evaluateAll((os) => os.map((o) => o.getAttribute('value'))))
			.toContain('fake-chat');

		const bodies = () => askBodies(pageServer) as unknown as Record<string, unknown>[];
		const before = bodies().length;
		await ask(page, QUESTION);
		await expect.poll(() => page.locator('.vask-msg-assistant.is-done').count(), { timeout: 60_000 }).toBe(1);
		expect(bodies()[before]).not.toHaveProperty('top_k');
		expect(bodies()[before]).not.toHaveProperty('min_similarity');

		await topK.fill('3');
		await similarity.fill('0.3');
		await ask(page, 'And what did the physio say about the shoes?');
		await expect.poll(() => page.locator('.vask-msg-assistant.is-done').count(), { timeout: 60_000 }).toBe(2);
		expect(bodies()[before + 1]).toMatchObject({ top_k: 3, min_similarity: 0.3 });
		expect(await page.evaluate(() => window.__pluginData)).toMatchObject({ topK: 3, minSimilarity: 0.3, settingsVersion: 2 });

		await topK.fill('');
		await similarity.fill('');
		await ask(page, 'How often do I feed the sourdough starter in fridge mode?');
		await expect.poll(() => page.locator('.vask-msg-assistant.is-done').count(), { timeout: 60_000 }).toBe(3);
		expect(bodies()[before + 2]).not.toHaveProperty('top_k');
		expect(bodies()[before + 2]).not.toHaveProperty('min_similarity');
		expect(await page.evaluate(() => window.__pluginData)).toMatchObject({ topK: null, minSimilarity: null });
	});

	it('a question naming a time: a chip says which dates were searched, dates are beside the sources; "Search all dates" answers again from any time', async () => {
		// The asker's clock: 14 March 2026, 09:30 in Madrid (08:30 UTC). "In February" is February 2026 then.
		const page = await openPage({ timezoneId: 'Europe/Madrid', fixedTime: '2026-03-14T08:30:00Z' });
		const before = askBodies(pageServer).length;
		await ask(page, TIME_QUESTION);
		await page.locator('.vask-msg-assistant.is-done').waitFor({ timeout: 60_000 });
		const answer = lastAnswer(page);

		// `now` is the asker's local time with its offset, not UTC.
		const first = askBodies(pageServer).slice(before)[0]!;
		expect(first).toMatchObject({ question: TIME_QUESTION, now: '2026-03-14T09:30:00+01:00' });
		expect(first).not.toHaveProperty('read_time');

		const turn = (await conversation(page))[1] as AssistantTurn;
		expect(turn.timeRange).toEqual({ from: '2026-02-01', to: '2026-02-28', text: 'in February', notice: null });
		const chip = answer.locator('.vask-time-range');
		expect(await chip.count()).toBe(1);
		expect(await chip.locator('.vask-time-range-label').innerText()).toBe('Notes from 1 Feb – 28 Feb 2026');
		expect(await chip.locator('.vask-time-range-words').innerText()).toBe('“in February”');
		expect(await chip.locator('.vask-time-range-label').getAttribute('aria-label')).toBe('Read from your question: “in February”');
		// above the list of sources
		const chipFirst = await answer.evaluate((el) => {
			const c = el.querySelector('.vask-time-range')!;
			const list = el.querySelector('.vask-sources-list')!;
			return (c.compareDocumentPosition(list) & Node.DOCUMENT_POSITION_FOLLOWING) !== 0;
		});
		expect(chipFirst).toBe(true);

		// Every source was written in February 2026 (a day in it, or a span that takes it in, such as a
		// "## Q1 2026" section: what the server's range selects), and says when beside it.
		expect(turn.sources.length).toBeGreaterThan(0);
		for (const s of turn.sources) {
			expect(s.date! <= '2026-02-28' && (s.date_end ?? s.date)! >= '2026-02-01', `${s.path}: ${s.date} – ${s.date_end}`).toBe(true);
		}
		expect(turn.sources.some((s) => s.date?.startsWith('2026-02-') && s.date_end === s.date)).toBe(true);
		const shownDates = () =>
			answer
				.locator('.vask-source')
				.evaluateAll((lis) => lis.map((li) => li.querySelector('.vask-source-date')?.textContent ?? null));
		const febDates = await shownDates();
		expect(febDates).toEqual(turn.sources.map((s) => sourceDateText(s)));
		for (const d of febDates) expect(d).toMatch(/ 2026$/);
		expect(febDates.some((d) => /^\d{1,2} Feb 2026$/.test(d!))).toBe(true);

		// "Search all dates": the same question again, in place of this answer, with the time words not read.
		await chip.locator('button.vask-time-range-all').click();
		await expect.poll(() => askBodies(pageServer).length - before, { timeout: 10_000 }).toBe(2);
		await page.locator('.vask-msg-assistant.is-done').waitFor({ timeout: 60_000 });
		const again = askBodies(pageServer).slice(before)[1]!;
		expect(again).toMatchObject({ question: TIME_QUESTION, read_time: false, now: '2026-03-14T09:30:00+01:00' });
		expect(again.history ?? []).toEqual([]);
		expect(await page.locator('.vask-msg-user').count()).toBe(1);
		expect(await page.locator('.vask-msg-assistant').count()).toBe(1);
		expect(await answer.locator('.vask-time-range').count()).toBe(0);

		const all = (await conversation(page))[1] as AssistantTurn;
		expect(all.status).toBe('done');
		expect(all.timeRange).toBeNull();
		expect(all.content.trim()).not.toBe('');
		// From any time now: notes outside February are among the sources.
		expect(all.sources.some((s) => !(s.date ?? '').startsWith('2026-02-')), JSON.stringify(all.sources.map((s) => s.date))).toBe(true);
		expect(await shownDates()).toEqual(all.sources.map((s) => sourceDateText(s)));
		// A date known only from the file's modification time is marked as such; others are not.
		const marks = await answer
			.locator('.vask-source')
			.evaluateAll((lis) => lis.map((li) => li.querySelector('.vask-source-date-kind')?.textContent ?? null));
		expect(marks).toEqual(all.sources.map((s) => (s.date_source === 'file-time' ? 'file date' : null)));
	});

	it('Stop aborts the answer and the server stops generating', async () => {
		await fakeControl({ token_delay: 0.5 });
		try {
			const page = await openPage();
			const cancelledBefore = (await fakeStats()).chat_streams_cancelled;
			await ask(page, QUESTION);
			await page.locator('.vask-msg-assistant.is-streaming').waitFor({ timeout: 30_000 });
			expect(await page.locator('.vask-send').innerText()).toBe('Stop');
			await page.locator('.vask-send').click();
			await page.locator('.vask-msg-assistant.is-stopped').waitFor({ timeout: 10_000 });
			expect(await page.locator('.vask-stopped').innerText()).toBe('Stopped.');
			expect(await page.locator('.vask-send').innerText()).toBe('Send');
			// The server noticed the client left and stopped the model's stream.
			await expect.poll(async () => (await fakeStats()).chat_streams_cancelled, { timeout: 15_000 }).toBeGreaterThan(cancelledBefore);
		} finally {
			await fakeControl({ token_delay: 0 });
		}
	});

	it('says in plain words that the server is not running, with the command to start it', async () => {
		const page = await openPage({ server: deadServer });
		await expect
			.poll(() => page.locator('.status-bar-item.vask-statusbar').innerText(), { timeout: 20_000 })
			.toBe('vask: server not running ⚠');
		await ask(page, 'anything');
		const error = page.locator('.vask-msg-assistant.is-error .vask-error');
		await error.waitFor({ timeout: 20_000 });
		const text = await error.innerText();
		expect(text).toContain('vask server is not running. Start it in a terminal, from the vask folder (where you installed it):');
		expect(text).toContain(`uv run vask serve --vault "${vask.vault}"`);
		expect(await error.getAttribute('data-code')).toBe('server_unreachable');
	});

	it('says the token is wrong and where to find it', async () => {
		const page = await openPage({ settings: { token: 'not-the-token' } });
		await expect
			.poll(() => page.locator('.status-bar-item.vask-statusbar').innerText(), { timeout: 20_000 })
			.toBe('vask: token wrong ⚠');
		await ask(page, 'anything');
		const error = page.locator('.vask-msg-assistant.is-error .vask-error');
		await error.waitFor({ timeout: 20_000 });
		const text = await error.innerText();
		expect(text).toContain('token is wrong, missing or revoked');
		expect(text).toContain(`uv run vask token --vault "${vask.vault}"`);
		expect(await error.getAttribute('data-code')).toBe('unauthorized');
	});

	it('a chat model that is not pulled: shows the server message and the `ollama pull` hint', async () => {
		const page = await openPage({ settings: { chatModel: 'no-such-model' } });
		await ask(page, QUESTION);
		const error = page.locator('.vask-msg-assistant.is-error .vask-error');
		await error.waitFor({ timeout: 30_000 });
		expect(await error.getAttribute('data-code')).toBe('model_missing');
		expect(await error.innerText()).toContain('ollama pull no-such-model');
		const body = askBodies(pageServer).pop()!;
		expect(body).toMatchObject({ chat_model: 'no-such-model' });
	});

	it("shows the server's notice above the sources: the embedding model is gone, so keyword matches only", async () => {
		// The server's embedding model disappears from Ollama (as after `ollama rm`); chat still works.
		await fakeControl({ embed_models: {} });
		try {
			const page = await openPage();
			await ask(page, QUESTION);
			await page.locator('.vask-msg-assistant.is-done').waitFor({ timeout: 60_000 });
			const answer = lastAnswer(page);
			const notice = answer.locator('.vask-notice');
			expect(await notice.count()).toBe(1);
			const text = await notice.innerText();
			expect(text).toContain('keyword matches only');
			expect(text).toContain('ollama pull fake-embed');
			// above the list of sources, which the keyword search still found
			expect(await answer.locator('.vask-sources-list li').count()).toBeGreaterThan(0);
			const noticeFirst = await answer.evaluate((el) => {
				const n = el.querySelector('.vask-notice')!;
				const list = el.querySelector('.vask-sources-list')!;
				return (n.compareDocumentPosition(list) & Node.DOCUMENT_POSITION_FOLLOWING) !== 0;
			});
			expect(noticeFirst).toBe(true);
			const turn = (await conversation(page))[1] as AssistantTurn;
			expect(turn.notice).toBe(text);
		} finally {
			await fakeControl({ embed_models: { 'fake-embed': 96 } });
		}
		// and once the model is back, the next answer has no notice
		const page = await openPage();
		await ask(page, QUESTION);
		await page.locator('.vask-msg-assistant.is-done').waitFor({ timeout: 60_000 });
		expect(await lastAnswer(page).locator('.vask-notice').count()).toBe(0);
	});

	it('the related notes view lists notes related to the active note', async () => {
		const page = await openPage({ activeFile: '02 Areas/Cooking/Sourdough starter log.md' });
		await page.evaluate(() => window.__vask!.plugin.activateView('vask-related'));
		await page.locator('.vask-related-item').first().waitFor({ timeout: 20_000 });
		expect(await page.locator('.vask-related-header').innerText()).toBe('Related to Sourdough starter log');
		const request = pageServer.requests.filter((r) => r.path.startsWith('/v1/related')).pop()!;
		expect(request.path).toBe('/v1/related?path=02%20Areas%2FCooking%2FSourdough%20starter%20log.md&top_k=10');
		const first = page.locator('.vask-related-item a.internal-link').first();
		const href = await first.getAttribute('data-href');
		expect(href).toBeTruthy();
		expect(existsSync(join(vask.vault, `${href}.md`))).toBe(true);
		await first.click();
		await expect.poll(() => page.evaluate(() => window.__opened.length)).toBe(1);
		expect(await page.evaluate(() => window.__opened[0]!.linktext)).toBe(href);
	});

	it('the "Ask about the current note" command asks through a modal and sends current_note', async () => {
		const note = '02 Areas/Cooking/Sourdough starter log.md';
		const page = await openPage({ activeFile: note });
		const before = askBodies(pageServer).length;
		await page.evaluate(() => {
			const plugin = window.__vask!.plugin as unknown as { commands: { id: string; checkCallback?: (c: boolean) => unknown }[] };
			plugin.commands.find((c) => c.id === 'ask-current-note')!.checkCallback!(false);
		});
		const input = page.locator('.modal .vask-ask-input');
		await input.waitFor();
		expect(await page.locator('.modal .vask-ask-context').innerText()).toBe(note);
		await input.pressSequentially('How often do I feed Bruno in fridge mode?');
		await input.press('Enter');
		expect(await page.locator('.modal').count()).toBe(0);
		await page.locator('.vask-msg-assistant.is-done').waitFor({ timeout: 60_000 });
		expect(await page.locator('.vask-msg-user .vask-msg-context a.internal-link').getAttribute('data-href')).toBe(
			'02 Areas/Cooking/Sourdough starter log',
		);
		const body = askBodies(pageServer).slice(before)[0]!;
		expect(body).toMatchObject({ question: 'How often do I feed Bruno in fridge mode?', current_note: note });
		// The answer cites the note it was asked about.
		const turn = (await conversation(page))[1] as AssistantTurn;
		expect(turn.citations.map((c) => c.path)).toContain(note);
	});

	it('clicking the status bar shows the index details from /v1/status', async () => {
		const page = await openPage();
		const bar = page.locator('.status-bar-item.vask-statusbar');
		await expect.poll(() => bar.innerText(), { timeout: 20_000 }).toMatch(/^vask: indexed ✓ \d+ notes/);
		await bar.click();
		const table = page.locator('.modal .vask-status-table');
		await table.waitFor({ timeout: 10_000 });
		const status = (await (await fetch(`${vask.url}/v1/status`, { headers: { Authorization: `Bearer ${vask.token}` } })).json()) as {
			notes: number;
			chunks: number;
			excluded: Record<string, number>;
		};
		const text = await table.innerText();
		expect(text).toContain(`${status.notes} notes, ${status.chunks} chunks`);
		expect(text).toContain('reachable');

		// Exclusions: how many notes each rule keeps out, never which notes.
		expect(status.excluded).toEqual({ [`VASK_EXCLUDE ${EXCLUDE_GLOB}`]: 1, 'frontmatter vask: exclude': 1 });
		expect(text).toContain('Excluded\t2 notes, never indexed');
		const rules = await page
			.locator('.modal .vask-exclusions li')
			.evaluateAll((lis) => lis.map((li) => [li.querySelector('.vask-exclusion-rule')!.textContent, li.querySelector('.vask-exclusion-count')!.textContent]));
		expect(rules).toEqual([
			['frontmatter vask: exclude', '1 note'],
			[`VASK_EXCLUDE ${EXCLUDE_GLOB}`, '1 note'],
		]);
		const modal = await page.locator('.modal').innerText();
		for (const [path, body] of Object.entries(EXCLUDED_NOTES)) {
			for (const secret of [path, path.replace(/^.*\//, '').replace(/\.md$/, ''), /PRIVATE-[A-Z]+-MARKER/.exec(body)![0]]) {
				expect(modal).not.toContain(secret);
			}
		}
	});

	it('vault changes to notes are sent to /v1/reindex, batched after ~1 s', async () => {
		const page = await openPage();
		const before = pageServer.requests.filter((r) => r.path === '/v1/reindex').length;
		await page.evaluate(() => {
			const { app, TFile, TFolder } = window.__vask!;
			app.vault.trigger('modify', new TFile('02 Areas/Cooking/Weeknight dal.md'));
			app.vault.trigger('modify', new TFile('02 Areas/Cooking/Weeknight dal.md'));
			app.vault.trigger('modify', new TFile('attachments/tide-sync-diagram.png')); // not a note
			app.vault.trigger('rename', new TFile('00 Inbox/Renamed.md'), '00 Inbox/Untitled.md');
			app.vault.trigger('delete', new TFile('00 Inbox/Quick capture.md'));
			app.vault.trigger('delete', new TFolder('04 Archive'));
		});
		await page.waitForTimeout(400);
		expect(pageServer.requests.filter((r) => r.path === '/v1/reindex').length).toBe(before);
		await expect.poll(() => pageServer.requests.filter((r) => r.path === '/v1/reindex').length, { timeout: 5000 }).toBe(before + 1);
		const req = pageServer.requests.filter((r) => r.path === '/v1/reindex').pop()!;
		expect(req.method).toBe('POST');
		expect(JSON.parse(req.body)).toEqual({
			paths: ['02 Areas/Cooking/Weeknight dal.md', '00 Inbox/Untitled.md', '00 Inbox/Renamed.md', '00 Inbox/Quick capture.md'],
		});
	});

	it('a folder moved with 150 notes (300 paths) goes to /v1/reindex in requests of at most 200, all accepted', async () => {
		const page = await openPage();
		const reindexes = () => pageServer.requests.filter((r) => r.path === '/v1/reindex');
		const before = reindexes().length;
		await page.evaluate(() => {
			const { app, TFile } = window.__vask!;
			for (let i = 0; i < 150; i++) app.vault.trigger('rename', new TFile(`Moved to/n${i}.md`), `Moved from/n${i}.md`);
		});
		await expect.poll(() => reindexes().slice(before).filter((r) => r.status !== undefined).length, { timeout: 10_000 }).toBe(2);
		await page.waitForTimeout(300);
		const sent = reindexes().slice(before);
		expect(sent.map((r) => (JSON.parse(r.body) as { paths: string[] }).paths.length)).toEqual([200, 100]);
		expect(sent.map((r) => r.status)).toEqual([202, 202]);
		expect(await page.evaluate(() => window.__notices)).toEqual([]);
	});

	it('changed notes that cannot be sent for reindexing: a Notice says why, once while it keeps failing', async () => {
		const page = await openPage({ server: deadServer });
		const failures = () =>
			page.evaluate(() => window.__notices.filter((n) => n.includes('could not send') && n.includes('for reindexing')));
		await page.evaluate(() => {
			const { app, TFile } = window.__vask!;
			app.vault.trigger('modify', new TFile('02 Areas/Cooking/Weeknight dal.md'));
		});
		await expect.poll(failures, { timeout: 10_000 }).toHaveLength(1);
		const [notice] = await failures();
		expect(notice).toContain('could not send 1 changed note(s) for reindexing.');
		expect(notice).toContain('vask server is not running.');
		expect(notice).toContain(`uv run vask serve --vault "${vask.vault}"`);
		expect(notice).toContain('Vask: Reindex vault');
		// the next save fails the same way: no second Notice
		await page.evaluate(() => {
			const { app, TFile } = window.__vask!;
			app.vault.trigger('modify', new TFile('02 Areas/Cooking/Weeknight dal.md'));
		});
		await expect
			.poll(() => deadServer.requests.filter((r) => r.path === '/v1/reindex').length, { timeout: 10_000 })
			.toBe(2);
		await page.waitForTimeout(300);
		expect(await failures()).toHaveLength(1);
	});
});

/** The chips above an answer: [kind as shown, text]. */
function chipTexts(page: Page): Promise<[string, string][]> {
	return lastAnswer(page)
		.locator('.vask-scope-chip')
		.evaluateAll((els) =>
			els.map((e) => [e.querySelector('.vask-scope-chip-kind')!.textContent ?? '', e.querySelector('.vask-scope-chip-text')!.textContent ?? ''] as [string, string]),
		);
}

/** Suggestions shown under the chat box: their titles, in order. */
function suggestionTitles(page: Page): Promise<string[]> {
	return page.locator('.vask-suggest .suggestion-item .suggestion-title').allInnerTexts();
}

describe('scope: suggestions, chips, the pane toggle, names that match nothing', () => {
	const KNEE = '02 Areas/Health/Knee pain - physio notes.md';

	it('typing [[ suggests notes and # suggests tags; arrows move, Enter and Tab pick without sending, Escape closes', async () => {
		const page = await openPage();
		const before = askBodies(pageServer).length;
		const input = page.locator('.vask-input');
		await input.click();
		await input.pressSequentially('What did the physio say in [[knee p');
		const popup = page.locator('.vask-suggest');
		await popup.waitFor({ state: 'visible', timeout: 5000 });
		const titles = await suggestionTitles(page);
		expect(titles[0]).toBe('Knee pain - physio notes');
		// The matched letters are highlighted, as in Obsidian's link suggester.
		expect(await popup.locator('.suggestion-item').first().locator('.suggestion-highlight').allInnerTexts()).toEqual(['Knee p']);
		expect(await popup.locator('.suggestion-item.is-selected .suggestion-title').innerText()).toBe(titles[0]);
		if (titles.length > 1) {
			await input.press('ArrowDown');
			expect(await popup.locator('.suggestion-item.is-selected .suggestion-title').innerText()).toBe(titles[1]);
			await input.press('ArrowUp');
		}
		expect(await popup.locator('.suggestion-item.is-selected .suggestion-title').innerText()).toBe(titles[0]);
		await input.press('Enter');
		expect(await input.inputValue()).toBe('What did the physio say in [[Knee pain - physio notes]] ');
		expect(await popup.isVisible()).toBe(false);

		// An alias finds its note, and is kept as the link's display text.
		await input.pressSequentially('or [[liverpool');
		await popup.waitFor({ state: 'visible' });
		const first = popup.locator('.suggestion-item').first();
		expect(await first.locator('.suggestion-title').innerText()).toBe('Liverpool Half');
		expect(await first.locator('.suggestion-note').innerText()).toBe('01 Projects/Half marathon sub-1h45');
		await first.click();
		expect(await input.inputValue()).toBe('What did the physio say in [[Knee pain - physio notes]] or [[Half marathon sub-1h45|Liverpool Half]] ');

		// Tags: nested ones are offered, with how many notes use each; Tab picks too.
		await input.pressSequentially('about #heal');
		await popup.waitFor({ state: 'visible' });
		const tags = await suggestionTitles(page);
		expect(tags.slice(0, 3)).toEqual(['#health', '#health/knee', '#health/sleep']);
		const counts = Object.fromEntries(
			await popup.locator('.suggestion-item').evaluateAll((items) =>
				items.map((i) => [i.querySelector('.suggestion-title')!.textContent, Number(i.querySelector('.suggestion-flair')!.textContent)]),
			),
		);
		// Uses of the tag and of its nested tags (a parent counts its children's, as in Obsidian's tag pane).
		const tagged = (tag: string) => vaultNotes.flatMap((n) => n.tags).filter((t) => t === tag || t.startsWith(tag + '/')).length;
		expect(counts['#health']).toBe(tagged('health'));
		expect(counts['#health/sleep']).toBe(tagged('health/sleep'));
		await input.press('ArrowDown');
		await input.press('Tab');
		expect(await input.inputValue()).toMatch(/ about #health\/knee $/);

		// Escape closes the popup; the next Enter sends the question with the mentions as written.
		await input.pressSequentially('#sle');
		await popup.waitFor({ state: 'visible' });
		await input.press('Escape');
		expect(await popup.isVisible()).toBe(false);
		expect(askBodies(pageServer).length, 'no question sent while picking').toBe(before);
		await input.press('Enter');
		await expect.poll(() => askBodies(pageServer).length, { timeout: 10_000 }).toBe(before + 1);
		expect(askBodies(pageServer)[before]!.question).toBe(
			'What did the physio say in [[Knee pain - physio notes]] or [[Half marathon sub-1h45|Liverpool Half]] about #health/knee #sle',
		);
		await page.locator('.vask-msg-assistant.is-done, .vask-msg-assistant.is-error').waitFor({ timeout: 60_000 });
	});

	it('the Ask vault modal suggests too: Enter picks, the next Enter asks; the answer is scoped to the note', async () => {
		const page = await openPage();
		const before = askBodies(pageServer).length;
		await page.evaluate(() => {
			const plugin = window.__vask!.plugin as unknown as { commands: { id: string; callback?: () => unknown }[] };
			plugin.commands.find((c) => c.id === 'ask-vault')!.callback!();
		});
		const input = page.locator('.modal .vask-ask-input');
		await input.waitFor();
		await input.pressSequentially('How often do I feed it in [[sourdough');
		const popup = page.locator('.modal .vask-suggest');
		await popup.waitFor({ state: 'visible' });
		expect((await suggestionTitles(page))[0]).toBe('Sourdough starter log');
		await input.press('Enter');
		expect(await page.locator('.modal').count(), 'Enter picked, the modal is still open').toBe(1);
		expect(await input.inputValue()).toBe('How often do I feed it in [[Sourdough starter log]] ');
		await input.press('Enter');
		expect(await page.locator('.modal').count()).toBe(0);
		await page.locator('.vask-msg-assistant.is-done').waitFor({ timeout: 60_000 });
		expect(askBodies(pageServer)[before]!.question).toBe('How often do I feed it in [[Sourdough starter log]]');
		expect(await chipTexts(page)).toEqual([['note', 'Sourdough starter log']]);
		const turn = (await conversation(page))[1] as AssistantTurn;
		expect(turn.sources.length).toBeGreaterThan(0);
		expect(turn.sources.every((s) => s.path === '02 Areas/Cooking/Sourdough starter log.md')).toBe(true);
	});

	it('"what connects to this project?" sends the open note; a chip names the seed; sources are grouped not linked yet, then linked; ✕ asks as written', async () => {
		const seed = '01 Projects/Launch Tidepool app.md';
		const page = await openPage({ activeFile: seed });
		const before = askBodies(pageServer).length;
		await ask(page, 'Which of my notes connect to this project?');
		await page.locator('.vask-msg-assistant.is-done').waitFor({ timeout: 60_000 });
		const body = askBodies(pageServer)[before]!;
		expect(body).toMatchObject({ open_note: seed });
		expect(body).not.toHaveProperty('connect');
		expect(body).not.toHaveProperty('current_note'); // (the open note orders nothing: it only names "this")

		const turn = (await conversation(page))[1] as AssistantTurn;
		expect(turn.seed).toEqual({ seed, title: 'Launch Tidepool app', words: 'connect to' });
		expect(turn.sources.length).toBeGreaterThan(0);
		expect(turn.sources.every((s) => s.path !== seed)).toBe(true);
		const answer = lastAnswer(page);
		const chip = answer.locator('.vask-seed');
		expect(await chip.locator('.vask-seed-label').innerText()).toBe('Connected to');
		expect(await chip.locator('a.internal-link').innerText()).toBe('Launch Tidepool app');
		// the groups: "Not linked yet" before "Already linked", and each source says how it is linked
		const groups = await answer.locator('.vask-sources-group').allInnerTexts();
		expect(groups).toEqual(['Not linked yet', 'Already linked']);
		const kinds = await answer.locator('.vask-source .vask-source-link-kind').allInnerTexts();
		expect(kinds.length).toBe(turn.sources.length);
		const firstLinked = kinds.findIndex((k) => !k.startsWith('not linked yet'));
		expect(firstLinked).toBeGreaterThan(0);
		expect(kinds.slice(firstLinked).every((k) => !k.startsWith('not linked yet'))).toBe(true);

		// ✕: the same question again, in place of this answer, read as asked
		await chip.locator('button.vask-seed-remove').click();
		await expect.poll(() => askBodies(pageServer).length - before, { timeout: 10_000 }).toBe(2);
		await page.locator('.vask-msg-assistant.is-done').waitFor({ timeout: 60_000 });
		expect(askBodies(pageServer)[before + 1]).toMatchObject({ open_note: seed, connect: false });
		expect(await page.locator('.vask-msg-assistant').count()).toBe(1);
		expect(await answer.locator('.vask-seed').count()).toBe(0);
		expect(((await conversation(page))[1] as AssistantTurn).seed).toBeNull();
	});

	it('"what relates to this project?" with no note open: read as written, and the server\'s notice says so; no chip', async () => {
		const page = await openPage();
		const before = askBodies(pageServer).length;
		await ask(page, 'Which notes relate to this project?');
		await page.locator('.vask-msg-assistant.is-done').waitFor({ timeout: 60_000 });
		expect(askBodies(pageServer)[before]).not.toHaveProperty('open_note');
		const answer = lastAnswer(page);
		const notice = await answer.locator('.vask-notice').innerText();
		expect(notice).toContain('“relate to this project” would ask what connects to the note you have open');
		expect(notice).toContain('[[Note name]]');
		expect(await answer.locator('.vask-seed').count()).toBe(0);
		expect(((await conversation(page))[1] as AssistantTurn).seed).toBeNull();
	});

	it('"what could help with [[Weeknight dal]]?" keeps the note\'s own passages first, under their heading; ✕ asks as written', async () => {
		const seed = '02 Areas/Cooking/Weeknight dal.md';
		const page = await openPage();
		const before = askBodies(pageServer).length;
		await ask(page, 'What could help with [[Weeknight dal]]?');
		await page.locator('.vask-msg-assistant.is-done').waitFor({ timeout: 60_000 });
		const turn = (await conversation(page))[1] as AssistantTurn;
		expect(turn.seed).toEqual({ seed, title: 'Weeknight dal', words: 'could help with' });
		expect(turn.sources[0]).toMatchObject({ path: seed, linked: 'seed' });
		expect(turn.sources.filter((s) => s.linked !== 'seed').every((s) => s.path !== seed)).toBe(true);
		const answer = lastAnswer(page);
		const groups = await answer.locator('.vask-sources-group').allInnerTexts();
		expect(groups[0]).toBe('In Weeknight dal itself');
		expect(groups.slice(1).every((g) => g === 'Not linked yet' || g === 'Already linked')).toBe(true);
		const remove = answer.locator('.vask-seed button.vask-seed-remove');
		expect(await remove.getAttribute('aria-label')).toContain('Ask as written');
		await remove.click();
		await expect.poll(() => askBodies(pageServer).length - before, { timeout: 10_000 }).toBe(2);
		await page.locator('.vask-msg-assistant.is-done').waitFor({ timeout: 60_000 });
		expect(askBodies(pageServer)[before + 1]).toMatchObject({ connect: false });
		const again = (await conversation(page))[1] as AssistantTurn;
		expect(again.seed).toBeNull();
		expect(again.sources.every((s) => s.path === seed)).toBe(true);
		expect(await chipTexts(page)).toEqual([['note', 'Weeknight dal']]); // [[Weeknight dal]] a scope again
	});

	it('"This note" sends filters.paths and every source is from that note; "This folder" sends filters.folders; chips say so; the choice stays', async () => {
		const page = await openPage({ activeFile: KNEE });
		const before = askBodies(pageServer).length;
		const toggle = page.locator('.vask-scope-toggle');
		expect(await toggle.locator('.vask-scope-option').allInnerTexts()).toEqual(['All notes', 'This note', 'This folder']);
		expect(await toggle.locator('[aria-checked="true"]').innerText()).toBe('All notes');

		await toggle.locator('[data-mode="note"]').click();
		expect(await page.locator('.vask-scope-target').innerText()).toBe('Only Knee pain - physio notes');
		// which opens the note
		await page.locator('.vask-scope-target a.internal-link').click();
		await expect.poll(() => page.evaluate(() => window.__opened.map((o) => o.linktext))).toEqual(['02 Areas/Health/Knee pain - physio notes']);
		await ask(page, 'What should I do about the shoes?');
		await page.locator('.vask-msg-assistant.is-done').waitFor({ timeout: 60_000 });
		const noteBody = askBodies(pageServer)[before]!;
		expect(noteBody.filters).toEqual({ paths: [KNEE] });
		let turn = (await conversation(page))[1] as AssistantTurn;
		expect(turn.sources.length).toBeGreaterThan(0);
		expect(turn.sources.every((s) => s.path === KNEE), JSON.stringify(turn.sources.map((s) => s.path))).toBe(true);
		const chip = lastAnswer(page).locator('.vask-scope-chip');
		expect(await chipTexts(page)).toEqual([['this note', 'Knee pain - physio notes']]);
		// above the answer
		const chipsFirst = await lastAnswer(page).evaluate(
			(el) => (el.querySelector('.vask-scope')!.compareDocumentPosition(el.querySelector('.vask-answer')!) & Node.DOCUMENT_POSITION_FOLLOWING) !== 0,
		);
		expect(chipsFirst).toBe(true);
		await chip.click();
		await expect.poll(() => page.evaluate(() => window.__opened.length)).toBe(2);
		expect(await page.evaluate(() => window.__opened[1])).toEqual({ linktext: '02 Areas/Health/Knee pain - physio notes', sourcePath: '', newLeaf: false });
		// a middle-click opens it in a new tab, as on a link
		await chip.click({ button: 'middle' });
		await expect.poll(() => page.evaluate(() => window.__opened.length)).toBe(3);
		expect(await page.evaluate(() => window.__opened[2])).toEqual({ linktext: '02 Areas/Health/Knee pain - physio notes', sourcePath: '', newLeaf: 'tab' });

		// Still "This note" for the next question; then "This folder".
		expect(await toggle.locator('[aria-checked="true"]').innerText()).toBe('This note');
		await toggle.locator('[data-mode="folder"]').click();
		expect(await page.locator('.vask-scope-target').innerText()).toBe('Only notes in 02 Areas/Health/');
		await ask(page, 'How did I sleep?');
		await expect.poll(() => page.locator('.vask-msg-assistant.is-done').count(), { timeout: 60_000 }).toBe(2);
		expect(askBodies(pageServer)[before + 1]!.filters).toEqual({ folders: ['02 Areas/Health'] });
		turn = (await conversation(page))[3] as AssistantTurn;
		expect(turn.sources.length).toBeGreaterThan(0);
		expect(turn.sources.every((s) => s.path.startsWith('02 Areas/Health/')), JSON.stringify(turn.sources.map((s) => s.path))).toBe(true);
		expect(await chipTexts(page)).toEqual([['this folder', '02 Areas/Health']]);
		await lastAnswer(page).locator('.vask-scope-chip').click();
		await expect.poll(() => page.evaluate(() => window.__core)).toEqual([{ plugin: 'file-explorer', arg: '02 Areas/Health' }]);
		// Remembered with the pane's state (the workspace saves it: asked once per change).
		expect(await page.evaluate(() => (window.__vask!.app.workspace as unknown as { layoutSaves: number }).layoutSaves)).toBe(2);
		expect(
			await page.evaluate(() => (window.__vask!.app.workspace.getLeavesOfType('vask-chat')[0]!.view as unknown as { getState(): unknown }).getState()),
		).toMatchObject({ scope: 'folder' });

		// No note open: "This folder" has nothing to stand for; the question is kept, nothing is sent.
		await page.evaluate(() => {
			const ws = window.__vask!.app.workspace;
			ws.activeFile = null;
			ws.trigger('file-open', null);
		});
		expect(await page.locator('.vask-scope-target').innerText()).toBe('No note open');
		await ask(page, 'Anything about knees?');
		expect(await page.locator('.vask-scope-target').innerText()).toContain('No note is open, so there is no folder to ask about.');
		expect(await page.locator('.vask-input').inputValue()).toBe('Anything about knees?');
		expect(askBodies(pageServer).length).toBe(before + 2);
		// "All notes" sends no filter.
		await toggle.locator('[data-mode="all"]').click();
		await page.locator('.vask-input').press('Enter');
		await expect.poll(() => askBodies(pageServer).length, { timeout: 10_000 }).toBe(before + 3);
		expect(askBodies(pageServer)[before + 2]).not.toHaveProperty('filters');
		await expect.poll(() => page.locator('.vask-msg-assistant.is-done').count(), { timeout: 60_000 }).toBe(3);
		expect(await lastAnswer(page).locator('.vask-scope-chip').count()).toBe(0);
	});

	it("a scoped question's answer shows what the server applied as chips: notes open, tags search, folders show", async () => {
		const page = await openPage();
		const tagged = (tag: string) => new Set(vaultNotes.filter((n) => n.tags.some((t) => t === tag || t.startsWith(tag + '/'))).map((n) => n.path));
		const cases = [
			{ question: 'in [[Knee pain - physio notes]], what should I do about the shoes?', kind: 'note', within: (p: string) => p === KNEE },
			{ question: 'about #health, how did I sleep?', kind: 'tag', within: (p: string) => tagged('health').has(p) },
			{ question: 'in path:"02 Areas/Health" what helps the knee?', kind: 'folder', within: (p: string) => p.startsWith('02 Areas/Health/') },
		] as const;
		for (const [i, c] of cases.entries()) {
			// A new chat each time: a follow-up would keep the previous question's scope.
			if (i > 0) await page.locator('.vask-new-chat').click();
			await ask(page, c.question);
			await page.locator('.vask-msg-assistant.is-done').waitFor({ timeout: 60_000 });
			const turn = (await conversation(page))[1] as AssistantTurn;
			expect(turn.scope, c.question).not.toBeNull();
			expect(turn.sources.length, c.question).toBeGreaterThan(0);
			expect(turn.sources.every((s) => c.within(s.path)), `${c.question}: ${JSON.stringify(turn.sources.map((s) => s.path))}`).toBe(true);
			const chips = lastAnswer(page).locator('.vask-scope-chip');
			const shown = await chips.evaluateAll((els) =>
				els.map((e) => [e.getAttribute('data-kind'), e.getAttribute('data-value'), e.querySelector('.vask-scope-chip-more')?.textContent ?? null]),
			);
			const scope = turn.scope!;
			if (c.kind === 'note') {
				expect(scope).toEqual({ notes: [KNEE], tags: [], folders: [] });
				expect(shown).toEqual([['note', KNEE, null]]);
				expect(await chipTexts(page)).toEqual([['note', 'Knee pain - physio notes']]);
				// above the answer
				const chipsFirst = await lastAnswer(page).evaluate(
					(el) => (el.querySelector('.vask-scope')!.compareDocumentPosition(el.querySelector('.vask-answer')!) & Node.DOCUMENT_POSITION_FOLLOWING) !== 0,
				);
				expect(chipsFirst).toBe(true);
				await chips.first().click();
				await expect.poll(() => page.evaluate(() => window.__opened.map((o) => o.linktext))).toEqual(['02 Areas/Health/Knee pain - physio notes']);
			} else if (c.kind === 'tag') {
				// Nested tags are included by the server and shown inside the parent's chip.
				expect(scope.tags[0]).toBe('health');
				expect(scope.tags).toEqual(expect.arrayContaining(['health/knee', 'health/sleep']));
				expect(shown).toEqual([['tag', 'health', `+${scope.tags.length - 1}`]]);
				expect(await chips.first().getAttribute('aria-label')).toBe(
					`Search the notes tagged #health, with ${scope.tags.slice(1).map((t) => `#${t}`).join(', ')}`,
				);
				await chips.first().click();
				await expect.poll(() => page.evaluate(() => window.__core)).toEqual([{ plugin: 'global-search', arg: 'tag:#health' }]);
			} else {
				expect(scope).toEqual({ notes: [], tags: [], folders: ['02 Areas/Health'] });
				expect(shown).toEqual([['folder', '02 Areas/Health', null]]);
				await chips.first().click();
				await expect.poll(() => page.evaluate(() => window.__core.length)).toBe(2);
				expect(await page.evaluate(() => window.__core[1])).toEqual({ plugin: 'file-explorer', arg: '02 Areas/Health' });
			}
		}
	});

	it('a mention that matches nothing: says so in plain words, and the closest names ask again with them', async () => {
		const page = await openPage();
		const before = askBodies(pageServer).length;
		const wrong = 'in [[Knee pain physio]], what did the physio say about shoes?';
		await ask(page, wrong);
		const error = page.locator('.vask-msg-assistant.is-error .vask-error');
		await error.waitFor({ timeout: 20_000 });
		expect(await error.getAttribute('data-code')).toBe('scope_not_found');
		expect(pageServer.requests.filter((r) => r.path === '/v1/ask').pop()!.status).toBe(400);
		// What the server said, asked directly.
		const res = await fetch(`${vask.url}/v1/ask`, {
			method: 'POST',
			headers: { Authorization: `Bearer ${vask.token}`, 'Content-Type': 'application/json' },
			body: JSON.stringify({ question: wrong }),
		});
		expect(res.status).toBe(400);
		const server = ((await res.json()) as { error: { message: string; misses: { kind: string; written: string; closest: string[] }[] } }).error;
		expect(server.message).toBe('No note [[Knee pain physio]] in the index.');
		expect(server.misses.map((m) => [m.kind, m.written])).toEqual([['note', '[[Knee pain physio]]']]);
		const closest = server.misses[0]!.closest;
		expect(closest[0]).toBe('[[Knee pain - physio notes]]');

		const text = await error.innerText();
		expect(text).toContain('No note [[Knee pain physio]] in the index.');
		// The wrong name is shown as written, not as a link to a note that does not exist.
		expect(await error.locator('a.internal-link').count()).toBe(0);
		expect(await error.locator('code').first().innerText()).toBe('[[Knee pain physio]]');
		const options = error.locator('.vask-scope-fix-option');
		expect(await options.allInnerTexts()).toEqual(closest);
		expect(await options.first().getAttribute('aria-label')).toBe(
			'Ask again: “in [[Knee pain - physio notes]], what did the physio say about shoes?”',
		);

		await options.first().click();
		await expect.poll(() => askBodies(pageServer).length, { timeout: 10_000 }).toBe(before + 2);
		expect(askBodies(pageServer)[before + 1]!.question).toBe('in [[Knee pain - physio notes]], what did the physio say about shoes?');
		await page.locator('.vask-msg-assistant.is-done').waitFor({ timeout: 60_000 });
		expect(await page.locator('.vask-msg-user .vask-msg-text').allInnerTexts()).toEqual([
			wrong,
			'in [[Knee pain - physio notes]], what did the physio say about shoes?',
		]);
		// The fixed question is scoped: a chip, and every source from that note.
		expect(await chipTexts(page)).toEqual([['note', 'Knee pain - physio notes']]);
		const turn = (await conversation(page))[3] as AssistantTurn;
		expect(turn.sources.length).toBeGreaterThan(0);
		expect(turn.sources.every((s) => s.path === KNEE)).toBe(true);
	});
});
