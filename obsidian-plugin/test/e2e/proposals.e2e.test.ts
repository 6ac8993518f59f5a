/**
 * End to end: proposed changes to notes in the plugin's real views, in headless Chromium, against a REAL
 * `vask serve` over a temp copy of sample_vault. From the related pane, "Link" on a connection not linked
 * yet shows the change as a diff; Approve writes it (through Vault.process where the server reads this
 * vault, else by the server), Undo puts the note back byte for byte; the proposed-changes view lists an
 * agent's edit with its diff, approves all from that source, and undoes; the status bar counts them.
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Proposal } from '../../src/lib/types';
import { buildPage, readVaultNotes, startPageServer, startVask, type NoteInfo, type PageServer, type VaskServer } from './support';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** A daily note whose prose names a note it does not link ("Harbourline"): the link goes at those words. */
const MENTIONING = 'Daily/2026-03-28.md';
const MENTIONED = '02 Areas/Work/Consulting - Harbourline.md';
/** A note whose connections not linked yet are not named in it: the link goes under a heading. */
const SEED = '02 Areas/Cooking/Sourdough starter log.md';

let vask: VaskServer;
let vaultNotes: NoteInfo[] = [];
let pageServer: PageServer;
let browser: Browser;
let pageRoot: string | undefined;
const contexts: BrowserContext[] = [];

async function openPage(activeFile: string, vaultPath = vask.vault): Promise<Page> {
	const context = await browser.newContext({ viewport: { width: 900, height: 900 } });
	contexts.push(context);
	const page = await context.newPage();
	const errors: string[] = [];
	page.on('pageerror', (e) => errors.push(String(e)));
	await page.addInitScript((cfg) => {
		(window as unknown as { __harnessConfig: unknown }).__harnessConfig = cfg;
	}, { vaultPath, notes: vaultNotes, activeFile, settings: { serverUrl: pageServer.url, token: vask.token } });
	await page.goto(pageServer.url + '/');
	await page.waitForFunction(() => window.__ready === true || window.__harnessError !== undefined, null, { timeout: 20_000 });
	expect(await page.evaluate(() => window.__harnessError ?? null)).toBeNull();
	expect(errors).toEqual([]);
	return page;
}

async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
	const res = await fetch(`${vask.url}${path}`, {
		method,
		headers: { Authorization: `Bearer ${vask.token}`, 'Content-Type': 'application/json' },
		body: body === undefined ? undefined : JSON.stringify(body),
	});
	const text = await res.text();
	expect(res.ok, text).toBe(true);
	return JSON.parse(text) as T;
}

function onDisk(path: string): Buffer {
	return readFileSync(join(vask.vault, path));
}

/** The related pane open on the page's active note, its items loaded. */
async function relatedPane(page: Page): Promise<void> {
	await page.evaluate(() => window.__vask!.plugin.activateView('vask-related'));
	await page.locator('.vask-related-item').first().waitFor({ timeout: 20_000 });
}

/** The "Link" button of the related item for `target`. */
function linkButton(page: Page, target: string) {
	return page.locator('.vask-related-item', { has: page.locator(`a.internal-link[data-href="${target.replace(/\.md$/, '')}"]`) }).locator('.vask-related-link-button');
}

/** Waits until the server has read the note again after a save (its index matches the vault). */
async function indexed(): Promise<void> {
	await expect
		.poll(async () => (await api<{ index: { pending: number } }>('GET', '/v1/health')).index.pending, { timeout: 20_000 })
		.toBe(0);
}

beforeAll(async () => {
	if (!existsSync(CHROMIUM)) {
		throw new Error(`Chromium not found at ${CHROMIUM}: install it (apt-get install chromium) or set CHROMIUM_PATH.`);
	}
	vask = await startVask();
	vaultNotes = readVaultNotes(vask.vault);
	pageRoot = await buildPage();
	pageServer = await startPageServer(pageRoot, vask.url, vask.vault);
	browser = await chromium.launch({
		executablePath: CHROMIUM,
		args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-sync'],
	});
});

afterAll(async () => {
	for (const c of contexts) await c.close().catch(() => undefined);
	await browser?.close().catch(() => undefined);
	await pageServer?.close();
	await vask?.stop();
	if (pageRoot) rmSync(pageRoot, { recursive: true, force: true });
});

describe('proposed changes in Chromium against the real server', () => {
	it('links an unlinked connection from the related pane at the words that name it: diff, approve, undo', async () => {
		const before = onDisk(MENTIONING);
		const page = await openPage(MENTIONING);
		await relatedPane(page);
		const button = linkButton(page, MENTIONED);
		await button.waitFor({ timeout: 10_000 });
		await button.click();

		const modal = page.locator('.vask-link-modal');
		await modal.locator('.vask-diff').waitFor({ timeout: 20_000 });
		expect(await modal.locator('.modal-title').innerText()).toBe('Link Consulting - Harbourline');
		expect(await modal.locator('.vask-proposal-summary').innerText()).toContain('at the words “Harbourline”');
		const added = await modal.locator('.vask-diff-line.is-add .vask-diff-text').allInnerTexts();
		const removed = await modal.locator('.vask-diff-line.is-del .vask-diff-text').allInnerTexts();
		expect(added).toHaveLength(1);
		expect(added[0]).toContain('[[Consulting - Harbourline|Harbourline]]');
		expect(removed[0]!.replace('Harbourline', '[[Consulting - Harbourline|Harbourline]]')).toBe(added[0]);
		expect(onDisk(MENTIONING).equals(before)).toBe(true); // shown, not written
		// the status bar counts the change waiting
		await expect.poll(() => page.locator('.vask-proposals-status').innerText(), { timeout: 10_000 }).toBe('1 change to review');

		await modal.getByRole('button', { name: 'Approve' }).click();
		await expect.poll(() => modal.locator('.vask-proposal-state').innerText(), { timeout: 20_000 }).toBe('Linked.');
		const listed = await api<{ proposals: Proposal[] }>('GET', '/v1/proposals?state=applied');
		const applied = listed.proposals.find((p) => p.path === MENTIONING)!;
		const shown = (await api<{ proposal: Proposal }>('GET', `/v1/proposals/${applied.id}`)).proposal;
		// exactly the shown text, written by Obsidian's Vault.process (the server reads this very vault)
		expect(onDisk(MENTIONING).toString('utf8')).toBe(shown.after);
		expect(shown.written_by).toBe('plugin');
		expect(await page.evaluate(() => (window.__vask!.app.vault as unknown as { processed: string[] }).processed)).toEqual([MENTIONING]);
		expect(await button.innerText()).toBe('Linked');
		await expect.poll(() => page.locator('.vask-proposals-status').isVisible(), { timeout: 10_000 }).toBe(false);
		await indexed();

		await modal.getByRole('button', { name: 'Undo' }).click();
		await expect.poll(() => modal.locator('.vask-proposal-state').innerText(), { timeout: 20_000 }).toBe('Undone: the note is as it was.');
		expect(onDisk(MENTIONING).equals(before)).toBe(true); // the exact bytes
		expect((await api<{ proposal: Proposal }>('GET', `/v1/proposals/${applied.id}`)).proposal.state).toBe('undone');
		expect(await button.innerText()).toBe('Link');
		await indexed();
	});

	it('on a device that does not read the server vault, the server writes it: under the chosen heading', async () => {
		const before = onDisk(SEED);
		const page = await openPage(SEED, '/another/copy/of/the/vault');
		await relatedPane(page);
		const first = page.locator('.vask-related-link-button').first();
		await first.click();
		const modal = page.locator('.vask-link-modal');
		await modal.locator('.vask-diff').waitFor({ timeout: 20_000 });
		expect(await modal.locator('.vask-proposal-summary').innerText()).toContain('under “Related” (a new heading)');
		// the person chooses another heading: proposed again under it, the first one rejected
		const heading = modal.locator('.setting-item input[type="text"]');
		await heading.fill('See also');
		await modal.getByRole('button', { name: 'Use this heading' }).click();
		await expect.poll(() => modal.locator('.vask-proposal-summary').innerText(), { timeout: 20_000 }).toContain('under “See also”');
		const added = await modal.locator('.vask-diff-line.is-add .vask-diff-text').allInnerTexts();
		expect(added.slice(-2)[0]).toBe('## See also');
		expect(added.slice(-1)[0]).toMatch(/^- \[\[.+\]\]$/);
		await modal.getByRole('button', { name: 'Approve' }).click();
		await expect.poll(() => modal.locator('.vask-proposal-state').innerText(), { timeout: 20_000 }).toBe('Linked.');
		const listed = await api<{ proposals: Proposal[] }>('GET', '/v1/proposals');
		const mine = listed.proposals.filter((p) => p.path === SEED);
		expect(mine.map((p) => p.state).sort()).toEqual(['applied', 'rejected']);
		const applied = (await api<{ proposal: Proposal }>('GET', `/v1/proposals/${mine.find((p) => p.state === 'applied')!.id}`)).proposal;
		expect(applied.written_by).toBe('server');
		expect(onDisk(SEED).toString('utf8')).toBe(applied.after);
		expect(await page.evaluate(() => (window.__vask!.app.vault as unknown as { processed: string[] }).processed)).toEqual([]);
		await indexed();
		await modal.getByRole('button', { name: 'Undo' }).click();
		await expect.poll(() => modal.locator('.vask-proposal-state').innerText(), { timeout: 20_000 }).toBe('Undone: the note is as it was.');
		expect(onDisk(SEED).equals(before)).toBe(true);
		await indexed();
	});

	it("the proposed-changes view shows an agent's edit with its diff; approve all from it, then undo", async () => {
		const note = '00 Inbox/Quick capture.md';
		const before = onDisk(note);
		const text = before.toString('utf8');
		const firstLine = text.split('\n').find((l) => l.trim().length > 3 && !l.startsWith('---'))!;
		await api('POST', '/v1/proposals', {
			path: note,
			edits: [{ old: firstLine, new: `${firstLine} (tidied)` }],
			source: 'e2e-agent',
			reason: 'a clearer first line',
		});
		const page = await openPage(note);
		await expect.poll(() => page.locator('.vask-proposals-status').innerText(), { timeout: 10_000 }).toBe('1 change to review');
		await page.locator('.vask-proposals-status').click();
		const view = page.locator('.vask-proposals');
		const item = view.locator('.vask-proposal-item.is-pending');
		await item.locator('.vask-diff').waitFor({ timeout: 20_000 });
		expect(await view.locator('.vask-proposals-source').innerText()).toBe('From e2e-agent (1)');
		expect(await item.locator('.vask-proposal-reason').innerText()).toBe('a clearer first line');
		expect(await item.locator('.vask-diff-line.is-add .vask-diff-text').innerText()).toBe(`${firstLine} (tidied)`);
		await view.getByRole('button', { name: 'Approve all' }).click();
		await view.locator('.vask-proposal-item.is-applied').waitFor({ timeout: 20_000 });
		expect(onDisk(note).toString('utf8')).toBe(text.replace(firstLine, `${firstLine} (tidied)`));
		await expect.poll(() => view.locator('.vask-proposals-header').innerText(), { timeout: 10_000 }).toBe('No changes to review');
		await indexed();
		await view.locator('.vask-proposal-item.is-applied').first().getByRole('button', { name: 'Undo' }).click();
		await expect.poll(() => onDisk(note).equals(before), { timeout: 20_000 }).toBe(true);
	});
});
