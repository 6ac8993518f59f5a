/**
 * End to end in a real browser, the settings' "Vask executable" as a person types in it: the plugin runs
 * on a desktop whose Node is stood in for (fake-desktop.ts: processes are recorded, not run), with its
 * own settings tab, control, supervisor and launcher. Typing a new path leaves the running server alone
 * until typing pauses; then the server is swapped once, for the path typed; leaving the field applies a
 * path at once; never are two servers alive. No vask server is needed: the plugin's requests go nowhere.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPage, freePort, startPageServer, type PageServer } from './support';
import type { FakeDesktopConfig, SpawnRecord } from './fake-desktop';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

let pageServer: PageServer;
let browser: Browser;

beforeAll(async () => {
	if (!existsSync(CHROMIUM)) throw new Error(`Chromium not found at ${CHROMIUM}: install it or set CHROMIUM_PATH.`);
	// (a port nothing listens on: the plugin's requests to its server fail, as with none running)
	pageServer = await startPageServer(await buildPage(), `http://127.0.0.1:${await freePort()}`);
	browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
});

afterAll(async () => {
	await browser?.close();
	await pageServer?.close();
});

async function openDesktop(desktop: FakeDesktopConfig, vaultPath: string): Promise<{ page: Page; errors: string[] }> {
	const page = await (await browser.newContext()).newPage();
	const errors: string[] = [];
	page.on('pageerror', (e) => errors.push(String(e)));
	await page.addInitScript((cfg) => {
		(window as unknown as { __harnessConfig: unknown }).__harnessConfig = cfg;
	}, { vaultPath, settings: { serverUrl: pageServer.url }, desktop });
	await page.goto(pageServer.url + '/');
	await page.waitForFunction(() => window.__ready === true || window.__harnessError !== undefined, null, { timeout: 20_000 });
	expect(await page.evaluate(() => window.__harnessError ?? null)).toBeNull();
	await page.evaluate(() => {
		const tab = (window.__vask!.plugin as unknown as { settingTabs: { containerEl: HTMLElement; display(): void }[] }).settingTabs[0]!;
		tab.display();
		document.querySelector('.app-container')!.prepend(tab.containerEl);
	});
	return { page, errors };
}

const spawned = (page: Page): Promise<SpawnRecord[]> => page.evaluate(() => window.__spawned);
const pending = (page: Page): Promise<boolean> =>
	page.evaluate(() => (window.__vask!.plugin as unknown as { local: { applyPending: boolean } }).local.applyPending);

describe('the Vask executable setting, typed into', () => {
	it('leaves the server alone while typing, swaps it once typing pauses, and at once when the field is left', async () => {
		const { page, errors } = await openDesktop(
			{ platform: 'linux', home: '/home/u', files: ['/home/u/.local/bin/vask', '/opt/vask/bin/vask'] },
			'/home/u/Notes',
		);
		await page.waitForFunction(() => window.__spawned.length === 1);
		const [first] = await spawned(page);
		expect(first).toMatchObject({ command: '/home/u/.local/bin/vask', alive: true });
		expect(first!.args.slice(0, 3)).toEqual(['serve', '--vault', '/home/u/Notes']);

		const field = page.locator('.setting-item', { hasText: 'Vask executable' }).locator('input');
		expect(await field.getAttribute('placeholder')).toBe('/path/to/vask');
		await field.click();
		await field.pressSequentially('/opt/vask/bin/vask', { delay: 40 });
		// Each keystroke was a path that does not exist yet ('/', '/o', …): the server was left alone.
		expect(await pending(page)).toBe(true);
		expect(await spawned(page)).toEqual([first]);
		await page.waitForFunction(() => window.__spawned.length === 2, null, { timeout: 10_000 });
		const afterPause = await spawned(page);
		expect(afterPause.map((r) => [r.command, r.alive, r.ended])).toEqual([
			['/home/u/.local/bin/vask', false, ['stdin', 'SIGTERM']], // stopped as on unload
			['/opt/vask/bin/vask', true, []],
		]);

		// Cleared and left: the field is applied as it is when left (empty: the one found on the PATH)
		await field.fill('');
		expect(await pending(page)).toBe(true);
		await field.press('Tab');
		expect(await pending(page)).toBe(false); // (applied on leaving, not after the pause)
		await page.waitForFunction(() => window.__spawned.length === 3, null, { timeout: 10_000 });
		expect((await spawned(page)).map((r) => [r.command, r.alive])).toEqual([
			['/home/u/.local/bin/vask', false],
			['/opt/vask/bin/vask', false],
			['/home/u/.local/bin/vask', true],
		]);
		expect(await page.evaluate(() => window.__maxAlive)).toBe(1);
		expect(await page.locator('.vask-local-status').textContent()).toBe('Starting vask…');
		expect(errors).toEqual([]);
	});

	it('on Windows, the field shows a vask.exe path, and a .cmd typed there is said to need vask.exe', async () => {
		const { page, errors } = await openDesktop(
			{ platform: 'win32', home: 'C:\\Users\\u', files: ['C:\\Users\\u\\.local\\bin\\vask.exe', 'C:\\tools\\vask.cmd'] },
			'C:\\Users\\u\\Notes',
		);
		await page.waitForFunction(() => window.__spawned.length === 1);
		expect((await spawned(page))[0]!.command).toBe('C:\\Users\\u\\.local\\bin\\vask.exe');
		const field = page.locator('.setting-item', { hasText: 'Vask executable' }).locator('input');
		expect(await field.getAttribute('placeholder')).toBe('C:\\Users\\u\\.local\\bin\\vask.exe');
		await field.fill('"C:\\tools\\vask.cmd"'); // (as Explorer's "Copy as path" gives it)
		await field.press('Enter');
		await page.waitForFunction(() => !window.__spawned[0]!.alive);
		// Windows has no SIGTERM: the server was asked to stop by its stdin alone.
		expect((await spawned(page))[0]!.ended).toEqual(['stdin']);
		await expect.poll(() => page.locator('.vask-local-status').textContent()).toContain('C:\\tools\\vask.cmd is a script that needs a shell');
		expect((await spawned(page)).length).toBe(1);
		expect(errors).toEqual([]);
	});
});
