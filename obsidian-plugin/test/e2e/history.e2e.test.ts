/**
 * End to end, chat history: chats kept on disk (through the stand-in vault
 * adapter, in the test's vault) across reloads and a page closed mid-answer,
 * reopened from the history list and continued, a scope miss still offering
 * its closest names after a reload; "Save as note" writing a
 * note whose links resolve to the cited headings, updated by a second save,
 * and left out of the real server's index by its frontmatter.
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AssistantTurn, Turn } from '../../src/lib/chat';
import { parseHistory, serializeHistory, chatRecord } from '../../src/lib/history';
import { buildPage, repoRoot, startPageServer, startVask, type PageServer, type VaskServer } from './support';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const QUESTION = 'What is the pain rule during a run?';
const EXPECTED_LINK = '02 Areas/Health/Knee pain - physio notes#The plan she gave me';
const FOLLOW_UP = 'And what did the physio say about the shoes?';
const SOURDOUGH = 'How often do I feed the sourdough starter in fridge mode?';

/** A note whose cited heading has characters Obsidian drops from links (# | ^ [ ]). */
const SPECIAL_PATH = '01 Projects/Launch plan (v2).md';
const SPECIAL_NOTE = `# Launch plan (v2)

## Risks #1: budget [draft] | v2 ^old

The quokka budget rule: never spend more than forty zorbles on the launch party.

## Timeline

Invitations go out three weeks before the launch.
`;
const SPECIAL_QUESTION = 'What does the quokka budget rule say about zorbles?';

/** The README's picture of the history list: written only when asked (VASK_SCREENSHOT=1). */
const TRACKED_SCREENSHOT = join(repoRoot, 'docs', 'screenshot-history.png');

let vask: VaskServer;
let pageServer: PageServer;
let browser: Browser;
let pageRoot: string | undefined;
const contexts: BrowserContext[] = [];

function screenshotPath(): string {
	const v = process.env.VASK_SCREENSHOT?.trim() ?? '';
	if (v === '1') return TRACKED_SCREENSHOT;
	return join(pageRoot!, 'screenshot-history.png');
}

interface OpenOptions {
	pluginDir: string;
	settings?: Record<string, unknown>;
	activeFile?: string;
	/** Waits for this many notices before returning (a load that has something to say). */
	context?: BrowserContext;
}

async function openPage(opts: OpenOptions): Promise<Page> {
	const context =
		opts.context ??
		(await browser.newContext({ viewport: { width: 420, height: 780 }, deviceScaleFactor: 2, permissions: ['clipboard-read', 'clipboard-write'] }));
	if (!opts.context) contexts.push(context);
	const page = await context.newPage();
	const errors: string[] = [];
	page.on('pageerror', (e) => errors.push(String(e)));
	await page.addInitScript((cfg) => {
		(window as unknown as { __harnessConfig: unknown }).__harnessConfig = cfg;
	}, {
		vaultPath: vask.vault,
		activeFile: opts.activeFile,
		pluginDir: opts.pluginDir,
		settings: { serverUrl: pageServer.url, token: vask.token, ...opts.settings },
	});
	await page.goto(pageServer.url + '/');
	await ready(page);
	expect(errors).toEqual([]);
	return page;
}

async function ready(page: Page): Promise<void> {
	await page.waitForFunction(() => window.__ready === true || window.__harnessError !== undefined, null, { timeout: 20_000 });
	expect((await page.evaluate(() => window.__harnessError)) ?? null, 'the harness loaded the plugin').toBeNull();
}

function conversation(page: Page): Promise<Turn[]> {
	return page.evaluate(() => {
		const leaf = window.__vask!.app.workspace.getLeavesOfType('vask-chat')[0]!;
		return JSON.parse(JSON.stringify((leaf.view as unknown as { conversation: Turn[] }).conversation)) as Turn[];
	});
}

async function ask(page: Page, question: string): Promise<void> {
	const input = page.locator('.vask-input');
	await input.click();
	await input.pressSequentially(question);
	await input.press('Enter');
}

async function askAndWait(page: Page, question: string): Promise<void> {
	const done = await page.locator('.vask-msg-assistant.is-done').count();
	await ask(page, question);
	await expect.poll(() => page.locator('.vask-msg-assistant.is-done').count(), { timeout: 60_000 }).toBe(done + 1);
}

function action(page: Page, label: string) {
	return page.locator(`.view-action[aria-label="${label}"]`);
}

function historyFile(pluginDir: string): string {
	return join(vask.vault, pluginDir, 'chat-history.jsonl');
}

/** The chats in the history file on disk, as the plugin wrote them. */
function onDisk(pluginDir: string) {
	const file = historyFile(pluginDir);
	return existsSync(file) ? parseHistory(readFileSync(file, 'utf8')) : null;
}

interface AskBody {
	question: string;
	history?: { role: string; content: string }[];
}

function askBodies(): AskBody[] {
	return pageServer.requests.filter((r) => r.path === '/v1/ask').map((r) => JSON.parse(r.body) as AskBody);
}

async function fakeControl(body: Record<string, unknown>): Promise<void> {
	const res = await fetch(`${vask.fakeOllamaUrl}/fake/control`, { method: 'POST', body: JSON.stringify(body) });
	expect(res.ok).toBe(true);
}

async function search(query: string): Promise<string[]> {
	const res = await fetch(`${vask.url}/v1/search`, {
		method: 'POST',
		headers: { Authorization: `Bearer ${vask.token}`, 'content-type': 'application/json' },
		body: JSON.stringify({ query, top_k: 20, min_similarity: 0 }),
	});
	expect(res.status).toBe(200);
	return ((await res.json()) as { hits: { path: string }[] }).hits.map((h) => h.path);
}

/** How Obsidian matches a link's heading to a heading: the characters links cannot hold are spaces, spaces collapsed, case ignored. */
function headingKey(s: string): string {
	return s
		.replace(/[#|^[\]:\\]/g, ' ')
		.replace(/\s+/g, ' ')
		.trim()
		.toLowerCase();
}

/** Resolves `[[path#heading|label]]` as Obsidian does for a full vault path: the note, then the heading in it. */
function resolveLink(target: string): { file: string; heading: string | null } | null {
	const hash = target.indexOf('#');
	const path = hash === -1 ? target : target.slice(0, hash);
	const sub = hash === -1 ? '' : target.slice(hash + 1);
	const file = join(vask.vault, `${path}.md`);
	if (!existsSync(file)) return null;
	if (!sub) return { file: path, heading: null };
	const headings = [...readFileSync(file, 'utf8').matchAll(/^#{1,6}\s+(.+?)\s*$/gm)].map((m) => m[1]!);
	const heading = headings.find((h) => headingKey(h) === headingKey(sub));
	return heading ? { file: path, heading } : null;
}

function wikilinks(markdown: string): string[] {
	return [...markdown.matchAll(/\[\[([^\]|]+)(?:\|[^\]]*)?\]\]/g)].map((m) => m[1]!);
}

beforeAll(async () => {
	if (!existsSync(CHROMIUM)) throw new Error(`Chromium not found at ${CHROMIUM}: install it or set CHROMIUM_PATH.`);
	vask = await startVask({ [SPECIAL_PATH]: SPECIAL_NOTE });
	pageRoot = await buildPage();
	pageServer = await startPageServer(pageRoot, vask.url, vask.vault);
	browser = await chromium.launch({
		executablePath: CHROMIUM,
		args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
	});
});

afterAll(async () => {
	for (const c of contexts) await c.close().catch(() => undefined);
	await browser?.close().catch(() => undefined);
	await pageServer?.close();
	await vask?.stop();
	if (pageRoot) rmSync(pageRoot, { recursive: true, force: true });
});

describe('chat history in Chromium against the real server', () => {
	it('a chat is kept across a reload, reopened from the history list with working citations, and continued with its history', async () => {
		const pluginDir = '.obsidian/plugins/vask-reload';
		const page = await openPage({ pluginDir });
		expect(await page.locator('.vask-msg').count()).toBe(0);
		// Shift+Enter is a new line, not a question (Enter sends, in askAndWait).
		await page.locator('.vask-input').click();
		await page.locator('.vask-input').pressSequentially('first line');
		await page.locator('.vask-input').press('Shift+Enter');
		expect(await page.locator('.vask-input').inputValue()).toBe('first line\n');
		expect(await page.locator('.vask-msg').count()).toBe(0);
		await page.locator('.vask-input').fill('');
		await askAndWait(page, QUESTION);
		const first = (await conversation(page))[1] as AssistantTurn;
		expect(first.citations[0]?.link).toBe(EXPECTED_LINK);
		// Written by the plugin within a moment of the answer.
		await expect.poll(() => onDisk(pluginDir)?.records[0]?.turns[1]?.role === 'assistant' && (onDisk(pluginDir)!.records[0]!.turns[1] as AssistantTurn).status, { timeout: 5000 }).toBe('done');

		// Reload: a new plugin instance reads the file and shows the chat that was open.
		await page.reload();
		await ready(page);
		await expect.poll(() => page.locator('.vask-msg-user .vask-msg-text').allInnerTexts()).toEqual([QUESTION]);
		const restored = (await conversation(page))[1] as AssistantTurn;
		expect(restored.content).toBe(first.content);
		expect(restored.status).toBe('done');
		expect(await page.locator('.vask-msg-assistant.is-done .vask-answer a.internal-link').first().getAttribute('data-href')).toBe(EXPECTED_LINK);
		expect(await page.locator('.vask-msg-assistant .vask-sources a.internal-link').count()).toBe(first.sources.length);

		// Another chat, then back to the first from the history list.
		await page.locator('.vask-new-chat').click();
		expect(await page.locator('.vask-msg').count()).toBe(0);
		await askAndWait(page, SOURDOUGH);
		await expect.poll(() => onDisk(pluginDir)?.records.map((r) => (r.turns[1] as AssistantTurn).status)).toEqual(['done', 'done']);
		const dates = onDisk(pluginDir)!.records.map((r) => [r.title, r.updatedAt]);
		await action(page, 'Chat history').click();
		const items = page.locator('.modal .vask-history-item');
		await expect.poll(() => items.locator('.vask-history-title').allInnerTexts()).toEqual([SOURDOUGH, QUESTION]);
		expect(await items.first().locator('.vask-history-turns').innerText()).toBe('1 question');
		expect(await items.first().getAttribute('class')).toContain('is-current');
		await page.locator('.modal .vask-history-search').fill('pain RULE');
		await expect.poll(() => items.locator('.vask-history-title').allInnerTexts()).toEqual([QUESTION]);
		await items.first().locator('.vask-history-main').click();
		expect(await page.locator('.modal').count()).toBe(0);
		await expect.poll(() => page.locator('.vask-msg-user .vask-msg-text').allInnerTexts()).toEqual([QUESTION]);
		// Reopening is not a change: the chats keep their dates and order; the file says which is open.
		await expect.poll(() => onDisk(pluginDir)?.current).toBe(onDisk(pluginDir)!.records[1]!.id);
		expect(onDisk(pluginDir)!.records.map((r) => [r.title, r.updatedAt])).toEqual(dates);

		// Its citation opens the note at the heading, as in a fresh answer.
		await page.locator('.vask-answer a.internal-link').first().click();
		await expect.poll(() => page.evaluate(() => window.__opened.map((o) => o.linktext))).toEqual([EXPECTED_LINK]);

		// The follow-up carries the reopened chat's history.
		const before = askBodies().length;
		await askAndWait(page, FOLLOW_UP);
		const body = askBodies()[before]!;
		expect(body.question).toBe(FOLLOW_UP);
		expect(body.history).toEqual([
			{ role: 'user', content: QUESTION },
			{ role: 'assistant', content: first.content },
		]);
		// Still two chats; the reopened one has two questions now and is the newest.
		await expect.poll(() => onDisk(pluginDir)?.records.map((r) => [r.title, r.turns.length])).toEqual([
			[QUESTION, 4],
			[SOURDOUGH, 2],
		]);
	});

	it('a chat is kept when the page is closed mid-answer: the question and what had arrived', async () => {
		const pluginDir = '.obsidian/plugins/vask-closed';
		await fakeControl({ token_delay: 0.3 });
		let shown = '';
		try {
			const context = await browser.newContext({ viewport: { width: 420, height: 780 } });
			contexts.push(context);
			const page = await openPage({ pluginDir, context });
			await ask(page, QUESTION);
			const answer = page.locator('.vask-msg-assistant.is-streaming .vask-answer');
			await expect.poll(async () => ((await answer.count()) ? (await answer.innerText()).length : 0), { timeout: 30_000 }).toBeGreaterThan(15);
			// What the plugin has written while it streams: the question and part of the answer.
			await expect
				.poll(() => {
					const t = onDisk(pluginDir)?.records[0]?.turns[1] as AssistantTurn | undefined;
					return t ? t.content.length : 0;
				}, { timeout: 5000 })
				.toBeGreaterThan(15);
			shown = await answer.innerText();
			expect((await conversation(page))[1]).toMatchObject({ status: 'streaming' });
			await context.close(); // as when Obsidian quits (or crashes) mid-answer
		} finally {
			await fakeControl({ token_delay: 0 });
		}
		const page = await openPage({ pluginDir });
		await expect.poll(() => page.locator('.vask-msg-user .vask-msg-text').allInnerTexts()).toEqual([QUESTION]);
		const kept = (await conversation(page))[1] as AssistantTurn;
		expect(kept).toMatchObject({ status: 'stopped', interrupted: true });
		expect(kept.content.length).toBeGreaterThan(15);
		expect(await page.locator('.vask-msg-assistant.is-stopped .vask-stopped').innerText()).toContain('Interrupted');
		// What arrived is the start of the full answer (the fake model answers the same way each time).
		await page.locator('.vask-new-chat').click();
		await askAndWait(page, QUESTION);
		const full = ((await conversation(page))[1] as AssistantTurn).content;
		expect(full.startsWith(kept.content), `${JSON.stringify(kept.content)} starts ${JSON.stringify(full)}`).toBe(true);
		expect(shown.startsWith(kept.content.slice(0, 15))).toBe(true);
	});

	it('a question naming a note that is not there: the reopened chat still offers the closest names to ask again with', async () => {
		const pluginDir = '.obsidian/plugins/vask-scope-miss';
		const wrong = 'in [[Knee pain physio]], what did the physio say about shoes?';
		const fixed = 'in [[Knee pain - physio notes]], what did the physio say about shoes?';
		const page = await openPage({ pluginDir });
		await ask(page, wrong);
		const options = page.locator('.vask-msg-assistant.is-error .vask-error .vask-scope-fix-option');
		await options.first().waitFor({ timeout: 20_000 });
		const offered = await options.allInnerTexts();
		expect(offered[0]).toBe('[[Knee pain - physio notes]]');
		// The history file keeps the error's misses, as the server sent them.
		await expect
			.poll(() => (onDisk(pluginDir)?.records[0]?.turns[1] as AssistantTurn | undefined)?.error, { timeout: 5000 })
			.toMatchObject({ code: 'scope_not_found', misses: [{ kind: 'note', written: '[[Knee pain physio]]', closest: offered }] });

		await page.reload();
		await ready(page);
		await expect.poll(() => page.locator('.vask-msg-user .vask-msg-text').allInnerTexts()).toEqual([wrong]);
		expect(await page.locator('.vask-msg-assistant.is-error .vask-error').getAttribute('data-code')).toBe('scope_not_found');
		expect(await options.allInnerTexts()).toEqual(offered);
		expect(await options.first().getAttribute('aria-label')).toBe(`Ask again: “${fixed}”`);
		const before = askBodies().length;
		await options.first().click();
		await page.locator('.vask-msg-assistant.is-done').waitFor({ timeout: 60_000 });
		expect(askBodies()[before]!.question).toBe(fixed);
	});

	it('Save as note: a note whose links resolve to the cited headings, left out of the index; saving again updates it', async () => {
		const pluginDir = '.obsidian/plugins/vask-save';
		const page = await openPage({ pluginDir });
		await askAndWait(page, SPECIAL_QUESTION);
		const turn = (await conversation(page))[1] as AssistantTurn;
		const cited = turn.citations.find((c) => c.path === SPECIAL_PATH);
		expect(cited, JSON.stringify(turn.citations)).toBeDefined();
		// The passage under the heading with # | ^ [ ] in it, as the server links it.
		const special = turn.sources.find((x) => x.path === SPECIAL_PATH && x.anchor !== '');
		expect(special?.anchor, JSON.stringify(turn.sources.map((x) => [x.path, x.anchor]))).toBe('Risks 1: budget draft v2 old');

		await action(page, 'Save chat as note').click();
		const folder = join(vask.vault, 'Vask chats');
		await expect.poll(() => (existsSync(folder) ? readdirSync(folder) : []), { timeout: 10_000 }).toEqual([`${SPECIAL_QUESTION.replace('?', '')}.md`]);
		const notePath = `Vask chats/${SPECIAL_QUESTION.replace('?', '')}.md`;
		// Opened after saving.
		await expect.poll(() => page.evaluate(() => window.__opened.map((o) => o.linktext))).toEqual([notePath]);
		const note = readFileSync(join(vask.vault, notePath), 'utf8');
		await expect.poll(() => onDisk(pluginDir)?.records[0]?.id, { timeout: 5000 }).toBeTruthy();
		const id = onDisk(pluginDir)!.records[0]!.id;
		expect(note.startsWith(`---\nvask: exclude\nvask-chat: "${id}"\n`), note).toBe(true);
		expect(note).toMatch(/\nmodels:\n {2}- "fake-chat"\n/);
		expect(note).toContain('\ntags:\n  - vask-chat\n---\n');
		expect(note).toContain(`## ${SPECIAL_QUESTION}`);

		// Every link resolves, as Obsidian resolves it, to a note and (where it names one) a heading in it.
		const links = wikilinks(note);
		expect(links.length).toBeGreaterThan(1);
		for (const l of links) expect(resolveLink(l), l).not.toBeNull();
		expect(links).toContain(cited!.link);
		expect(links).toContain(special!.link);
		expect(resolveLink(special!.link)).toEqual({ file: '01 Projects/Launch plan (v2)', heading: 'Risks #1: budget [draft] | v2 ^old' });
		// The citation in the answer's text is the same link as in the pane.
		expect(note).toContain(`According to [[${cited!.link}|Launch plan (v2)]]`);
		// The history file is written a moment later (writes are throttled), so wait for it.
		await expect.poll(() => onDisk(pluginDir)?.records[0]?.notePath, { timeout: 5000 }).toBe(notePath);

		// Saving again, after a follow-up, updates the same note.
		await askAndWait(page, 'When do the invitations for the launch go out?');
		await action(page, 'Save chat as note').click();
		await expect.poll(() => readFileSync(join(vask.vault, notePath), 'utf8'), { timeout: 10_000 }).toContain('## When do the invitations for the launch go out?');
		expect(readdirSync(folder)).toHaveLength(1);
		expect(await page.evaluate(() => window.__notices.filter((n) => n.startsWith('Chat note updated')))).toEqual([`Chat note updated: ${notePath}`]);

		// The user renames and moves the note in Obsidian: the next save follows it.
		const moved = 'Archive/Quokka budget.md';
		await page.evaluate(
			async ([from, to]) => {
				const vault = window.__vask!.app.vault as unknown as { getAbstractFileByPath(p: string): unknown; rename(f: unknown, p: string): Promise<void> };
				await vault.rename(vault.getAbstractFileByPath(from!), to!);
			},
			[notePath, moved],
		);
		await askAndWait(page, 'What is the budget rule again?');
		await action(page, 'Save chat as note').click();
		await expect.poll(() => readFileSync(join(vask.vault, moved), 'utf8'), { timeout: 10_000 }).toContain('## What is the budget rule again?');
		expect(readdirSync(folder)).toHaveLength(0);
		await expect.poll(() => onDisk(pluginDir)!.records[0]!.notePath).toBe(moved);

		// "Index saved chats" on: the next chat's note has no opt-out, and the server indexes it;
		// the first one, saved with the opt-out, stays out of the index.
		await page.evaluate(() => {
			const tab = (window.__vask!.plugin as unknown as { settingTabs: { containerEl: HTMLElement; display(): void }[] }).settingTabs[0]!;
			tab.display();
			tab.containerEl.classList.add('vask-test-settings');
			document.body.appendChild(tab.containerEl);
		});
		const setting = (name: string) => page.locator('.vask-test-settings .setting-item').filter({ hasText: name });
		expect(await setting('Folder for saved chats').locator('input').inputValue()).toBe('Vask chats');
		const toggle = setting('Index saved chats').locator('input[type=checkbox]');
		expect(await toggle.isChecked()).toBe(false);
		await toggle.check();
		await expect.poll(() => page.evaluate(() => (window.__pluginData as { indexSavedChats?: boolean }).indexSavedChats)).toBe(true);
		await page.evaluate(() => document.querySelector('.vask-test-settings')?.remove());
		await page.locator('.vask-new-chat').click();
		await askAndWait(page, SOURDOUGH);
		await action(page, 'Save chat as note').click();
		const indexedPath = `Vask chats/${SOURDOUGH.replace('?', '')}.md`;
		await expect.poll(() => existsSync(join(vask.vault, indexedPath)), { timeout: 10_000 }).toBe(true);
		expect(readFileSync(join(vask.vault, indexedPath), 'utf8')).not.toMatch(/^vask:/m);
		await expect.poll(() => search('sourdough starter fridge mode feed'), { timeout: 30_000 }).toContain(indexedPath);
		const hits = await search('quokka budget rule forty zorbles launch party');
		expect(hits).toContain(SPECIAL_PATH);
		expect(hits).not.toContain(moved);
		// An indexed chat is cited like a note (which is why they are left out by default): remove it for the next tests.
		rmSync(join(vask.vault, indexedPath));
		await expect.poll(() => search('sourdough starter fridge mode feed'), { timeout: 30_000 }).not.toContain(indexedPath);
	});

	it('a saved note renamed while Obsidian was closed is found again by the chat id in its frontmatter', async () => {
		const pluginDir = '.obsidian/plugins/vask-save-renamed';
		const first = await openPage({ pluginDir });
		await askAndWait(first, 'How many grams of flour go into a feed in counter mode?');
		await action(first, 'Save chat as note').click();
		const saved = join(vask.vault, 'Vask chats/How many grams of flour go into a feed in counter mode.md');
		await expect.poll(() => existsSync(saved), { timeout: 10_000 }).toBe(true);
		await expect.poll(() => onDisk(pluginDir)?.records[0]?.notePath).toBe('Vask chats/How many grams of flour go into a feed in counter mode.md');
		await first.context().close();
		// Renamed outside Obsidian's sight: no rename event reaches the plugin.
		const renamed = join(vask.vault, 'Vask chats/Flour per feed.md');
		renameSync(saved, renamed);

		const page = await openPage({ pluginDir });
		await expect.poll(() => page.locator('.vask-msg-user').count()).toBe(1);
		await askAndWait(page, 'And in fridge mode?');
		await action(page, 'Save chat as note').click();
		await expect.poll(() => readFileSync(renamed, 'utf8'), { timeout: 10_000 }).toContain('## And in fridge mode?');
		expect(existsSync(saved)).toBe(false);
		await expect.poll(() => onDisk(pluginDir)?.records[0]?.notePath).toBe('Vask chats/Flour per feed.md');
		rmSync(renamed);
	});

	it('an unreadable history file: the pane opens, says so once, keeps the file aside and the chats it could read', async () => {
		const pluginDir = '.obsidian/plugins/vask-corrupt';
		const file = historyFile(pluginDir);
		mkdirSync(dirname(file), { recursive: true });
		const good = chatRecord(
			'kept-chat',
			[
				{ id: 1, role: 'user', content: 'A chat that was kept' },
				{ id: 2, role: 'assistant', content: 'Yes [Plan].', sources: [], citations: [], declined: false, timeRange: null, scope: null, readTime: true, seed: null, connect: true, status: 'done' },
			],
			new Date('2026-03-01T10:00:00Z'),
		);
		const damaged = serializeHistory([good], null) + '{"id":"lost","turns":[{"role":"us\n';
		writeFileSync(file, damaged);

		const page = await openPage({ pluginDir });
		await expect.poll(() => page.evaluate(() => window.__notices.filter((n) => n.includes('chat history')))).toHaveLength(1);
		const [notice] = await page.evaluate(() => window.__notices.filter((n) => n.includes('chat history')));
		expect(notice).toContain('1 line could not be read. 1 chat was read. The file was kept as');
		const backup = readdirSync(dirname(file)).filter((f) => f.startsWith('chat-history.unreadable-'));
		expect(backup).toHaveLength(1);
		expect(readFileSync(join(dirname(file), backup[0]!), 'utf8')).toBe(damaged);
		// The pane works, the readable chat is in the list.
		expect(await page.locator('.vask-input').isVisible()).toBe(true);
		await action(page, 'Chat history').click();
		await expect.poll(() => page.locator('.modal .vask-history-title').allInnerTexts()).toEqual(['A chat that was kept']);

		// The next start has nothing to say.
		await page.reload();
		await ready(page);
		await page.waitForTimeout(300);
		expect(await page.evaluate(() => window.__notices.filter((n) => n.includes('chat history')))).toEqual([]);
	});

	it('history list: "Ask about the current note" chats are labelled, rename, delete, copy as Markdown, clear all (confirmed)', async () => {
		// The plugin's real folder: where Obsidian keeps a plugin called "vask".
		const pluginDir = '.obsidian/plugins/vask';
		const note = '02 Areas/Cooking/Sourdough starter log.md';
		const page = await openPage({ pluginDir, activeFile: note });
		await askAndWait(page, QUESTION);
		await askAndWait(page, FOLLOW_UP);
		await page.locator('.vask-new-chat').click();
		await askAndWait(page, 'What did I write about running in February?');
		// "Ask about the current note" starts a chat of its own: the February chat stays as it is.
		await page.evaluate(() => {
			const plugin = window.__vask!.plugin as unknown as { commands: { id: string; checkCallback?: (c: boolean) => unknown }[] };
			plugin.commands.find((c) => c.id === 'ask-current-note')!.checkCallback!(false);
		});
		await page.locator('.modal .vask-ask-input').pressSequentially('How often do I feed Bruno in fridge mode?');
		await page.locator('.modal .vask-ask-input').press('Enter');
		await page.locator('.vask-msg-assistant.is-done').waitFor({ timeout: 60_000 });
		expect(await page.locator('.vask-msg-user').count()).toBe(1);

		// The command opens the list.
		await page.evaluate(() => {
			const plugin = window.__vask!.plugin as unknown as { commands: { id: string; callback?: () => unknown }[] };
			plugin.commands.find((c) => c.id === 'open-chat-history')!.callback!();
		});
		const items = page.locator('.modal .vask-history-item');
		await expect.poll(() => items.locator('.vask-history-title').allInnerTexts()).toEqual([
			'How often do I feed Bruno in fridge mode?',
			'What did I write about running in February?',
			QUESTION,
		]);
		expect(await items.first().locator('.vask-history-about').innerText()).toBe('About Sourdough starter log');
		expect(await items.nth(2).locator('.vask-history-turns').innerText()).toBe('2 questions');
		expect(await page.locator('.modal .vask-history-where').innerText()).toBe('Kept in .obsidian/plugins/vask/chat-history.jsonl');
		expect(readFileSync(join(vask.vault, '.obsidian/plugins/vask/chat-history.jsonl'), 'utf8')).toContain('How often do I feed Bruno in fridge mode?');
		await page.mouse.move(5, 5);
		const shot = screenshotPath();
		mkdirSync(dirname(resolve(shot)), { recursive: true });
		await page.screenshot({ path: shot });
		expect(existsSync(shot)).toBe(true);

		await page.locator('.modal .modal-close-button').click();
		expect(await page.locator('.modal').count()).toBe(0);

		// Copy the whole chat as Markdown (the command, as from the palette).
		await page.evaluate(() => {
			const plugin = window.__vask!.plugin as unknown as { commands: { id: string; checkCallback?: (c: boolean) => unknown }[] };
			plugin.commands.find((c) => c.id === 'copy-chat-markdown')!.checkCallback!(false);
		});
		await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toContain('## How often do I feed Bruno in fridge mode?');
		const copied = await page.evaluate(() => navigator.clipboard.readText());
		expect(copied).toContain('*About [[02 Areas/Cooking/Sourdough starter log|Sourdough starter log]]*');
		expect(copied).toContain('[[02 Areas/Cooking/Sourdough starter log');

		await action(page, 'Chat history').click();
		await items.first().waitFor();

		// Rename
		await items.nth(1).locator('.vask-history-rename').click();
		const input = page.locator('.modal .vask-history-rename-input');
		await input.fill('Running in February');
		await input.press('Enter');
		await expect.poll(() => items.locator('.vask-history-title').allInnerTexts()).toContain('Running in February');
		// Delete one: the open chat (the Bruno one); the pane starts a new chat.
		await items.first().locator('.vask-history-delete').click();
		await expect.poll(() => items.count()).toBe(2);
		expect(await page.locator('.vask-msg').count()).toBe(0);
		await expect.poll(() => onDisk(pluginDir)?.records.map((r) => r.title)).toEqual(['Running in February', QUESTION]);

		// Clear all asks first; Cancel keeps everything.
		await page.locator('.modal .vask-history-clear').click();
		await expect.poll(() => page.locator('.modal .vask-confirm p').innerText()).toContain('This deletes all 2 kept chats.');
		await page.locator('.modal .vask-confirm-no').click();
		expect(await items.count()).toBe(2);
		await page.locator('.modal .vask-history-clear').click();
		await page.locator('.modal .vask-confirm-yes').click();
		await expect.poll(() => page.locator('.modal .vask-history-empty').innerText()).toContain('No chats yet');
		await expect.poll(() => onDisk(pluginDir)?.records.length).toBe(0);
	});
});
