/**
 * End to end, the first start with a model missing: a real `vask serve` with the models a new user
 * has configured (vask's defaults), the fake Ollama having the embedding model but not the chat
 * model. The settings tab's checklist is the server's real /v1/doctor, the missing model marked
 * with its fix; the chat pane offers to download it; once the model is there, "Check again" says
 * all is well. The README's picture of this (docs/screenshot-setup.png) is taken here, written to the
 * tracked file only with VASK_SCREENSHOT=1.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DoctorReport } from '../../src/lib/types';
import { buildPage, pluginDir, repoRoot, startPageServer, startVask, type PageServer, type VaskServer } from './support';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const TRACKED_SCREENSHOT = join(repoRoot, 'docs', 'screenshot-setup.png');
/** vask's default models (vask_server/config.py), as a new user has them. */
const EMBED_MODEL = 'mxbai-embed-large';
const CHAT_MODEL = 'qwen2.5:14b';

let vask: VaskServer;
let pageServer: PageServer;
let browser: Browser;
let tmp: string;
let trackedMtime: number | null = null;

/** VASK_SCREENSHOT=1: the tracked file; another value: that path; unset (or 0): a temporary folder. */
function screenshotPath(): string {
	const v = process.env.VASK_SCREENSHOT?.trim() ?? '';
	if (v === '' || v === '0') return join(tmp, 'screenshot-setup.png');
	return v === '1' ? TRACKED_SCREENSHOT : resolve(v);
}

beforeAll(async () => {
	if (!existsSync(CHROMIUM)) throw new Error(`Chromium not found at ${CHROMIUM}: install it or set CHROMIUM_PATH.`);
	trackedMtime = existsSync(TRACKED_SCREENSHOT) ? statSync(TRACKED_SCREENSHOT).mtimeMs : null;
	tmp = mkdtempSync(join(tmpdir(), 'vask-e2e-setup-'));
	// The plugin installed in the vault, so that the doctor's plugin check sees this release.
	const manifest = readFileSync(join(pluginDir, 'manifest.json'), 'utf8');
	vask = await startVask(
		{ '.obsidian/plugins/vask/manifest.json': manifest },
		{
			env: { VASK_EMBED_MODEL: EMBED_MODEL, VASK_CHAT_MODEL: CHAT_MODEL },
			fake: { embed_models: { [EMBED_MODEL]: 1024 }, chat_models: [] },
			excludedNotes: false,
		},
	);
	pageServer = await startPageServer(await buildPage(), vask.url);
	browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
});

afterAll(async () => {
	await browser?.close();
	await pageServer?.close();
	await vask?.stop();
	if (tmp) rmSync(tmp, { recursive: true, force: true });
});

/** The plugin in a page with its chat pane, and its settings tab beside it. */
async function openSetup(): Promise<Page> {
	const context = await browser.newContext({ viewport: { width: 1000, height: 560 }, deviceScaleFactor: 2 });
	const page = await context.newPage();
	const errors: string[] = [];
	page.on('pageerror', (e) => errors.push(String(e)));
	await page.addInitScript((cfg) => {
		(window as unknown as { __harnessConfig: unknown }).__harnessConfig = cfg;
	}, { vaultPath: vask.vault, settings: { serverUrl: pageServer.url, token: vask.token } });
	await page.goto(pageServer.url + '/');
	await page.waitForFunction(() => window.__ready === true || window.__harnessError !== undefined, null, { timeout: 20_000 });
	expect(await page.evaluate(() => window.__harnessError ?? null)).toBeNull();
	await page.evaluate(() => {
		const tab = (window.__vask!.plugin as unknown as { settingTabs: { containerEl: HTMLElement; display(): void }[] }).settingTabs[0]!;
		tab.display();
		const app = document.querySelector('.app-container')!;
		app.classList.add('with-settings');
		app.prepend(tab.containerEl);
	});
	expect(errors).toEqual([]);
	return page;
}

/** The checklist's rows once checked: mark, text, and the row's state. */
async function checklist(page: Page): Promise<{ state: string; name: string; fix: string | null }[]> {
	await page.locator('.vask-check-summary').waitFor({ timeout: 30_000 });
	return page.locator('.vask-checklist .vask-check').evaluateAll((rows) =>
		rows.map((row) => ({
			state: ['is-ok', 'is-bad', 'is-warn', 'is-note'].find((c) => row.classList.contains(c)) ?? '',
			name: row.querySelector('.vask-check-name')?.textContent ?? '',
			fix: row.querySelector('.vask-check-fix')?.textContent ?? null,
		})),
	);
}

async function doctor(): Promise<DoctorReport> {
	const res = await fetch(`${vask.url}/v1/doctor`, { headers: { Authorization: `Bearer ${vask.token}` } });
	expect(res.status).toBe(200);
	return (await res.json()) as DoctorReport;
}

describe('the first start with a model missing', () => {
	it('the checklist shows the server\'s doctor with the fix, the pane offers the download; then all is well', async () => {
		const page = await openSetup();
		const report = await doctor();
		expect(report.ok).toBe(false);
		const rows = await checklist(page);
		// Each of the server's checks, as it made them.
		expect(rows.map((r) => r.name)).toEqual(report.checks.map((c) => `${c.name}: ${c.detail}`));
		const bad = rows.filter((r) => r.state === 'is-bad');
		expect(bad, JSON.stringify(rows, null, 1)).toHaveLength(1);
		expect(bad[0]!.name).toContain(CHAT_MODEL);
		expect(bad[0]!.fix).toContain(`ollama pull ${CHAT_MODEL}`);
		expect(rows.find((r) => r.name.includes(EMBED_MODEL))?.state).toBe('is-ok');
		expect(rows.find((r) => r.name.startsWith('Obsidian plugin'))?.state).toBe('is-ok');
		expect(await page.locator('.vask-check-summary').innerText()).toContain('Fix the lines marked ✗');

		// The chat pane: the missing model, and a button that downloads it.
		const banner = page.locator('.vask-pull');
		await expect.poll(() => banner.isVisible(), { timeout: 20_000 }).toBe(true);
		expect(await banner.innerText()).toContain(`The chat model ${CHAT_MODEL} is not on the model server yet.`);
		expect(await banner.locator('button', { hasText: `Download ${CHAT_MODEL}` }).count()).toBe(1);

		await page.mouse.move(5, 550);
		const shot = screenshotPath();
		mkdirSync(dirname(shot), { recursive: true });
		await page.screenshot({ path: shot });
		expect(statSync(shot).size).toBeGreaterThan(10_000);
		if (shot !== TRACKED_SCREENSHOT) {
			const mtime = existsSync(TRACKED_SCREENSHOT) ? statSync(TRACKED_SCREENSHOT).mtimeMs : null;
			expect(mtime, `${TRACKED_SCREENSHOT} is only written with VASK_SCREENSHOT=1`).toBe(trackedMtime);
		}

		// The model arrives (as `ollama pull` in a terminal would do it): "Check again" says all is well.
		const res = await fetch(`${vask.fakeOllamaUrl}/fake/control`, { method: 'POST', body: JSON.stringify({ chat_models: [CHAT_MODEL] }) });
		expect(res.ok).toBe(true);
		await page.locator('.vertical-tab-content button', { hasText: 'Check again' }).click();
		await expect.poll(async () => (await page.locator('.vask-check-summary').count()) === 0 ? '' : page.locator('.vask-check-summary').innerText(), { timeout: 30_000 }).toBe('All is well.');
		const after = await checklist(page);
		expect(after.filter((r) => r.state === 'is-bad')).toEqual([]);
		expect((await doctor()).ok).toBe(true);
	});
});
