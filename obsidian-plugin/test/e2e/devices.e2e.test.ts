/**
 * End to end, settings for several devices: the real settings tab in headless Chromium against a
 * real `vask serve`. "Test connection" says what works and, in plain words, what does not; the
 * server URL and token go to this device's storage, never to data.json (which sync tools copy).
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPage, freePort, startPageServer, startVask, type PageServer, type VaskServer } from './support';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
let vask: VaskServer;
let pageServer: PageServer;
let browser: Browser;

beforeAll(async () => {
	if (!existsSync(CHROMIUM)) throw new Error(`Chromium not found at ${CHROMIUM}: install it or set CHROMIUM_PATH.`);
	vask = await startVask();
	pageServer = await startPageServer(await buildPage(), vask.url);
	browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
});

afterAll(async () => {
	await browser?.close();
	await pageServer?.close();
	await vask?.stop();
});

/** `secrets`: the app has a keychain (Obsidian 1.11.4+) holding these. */
async function openSettings(secrets?: Record<string, string>): Promise<Page> {
	const page = await (await browser.newContext()).newPage();
	await page.addInitScript(
		(cfg) => {
			(window as unknown as { __harnessConfig: unknown }).__harnessConfig = cfg;
		},
		{ vaultPath: vask.vault, settings: { serverUrl: pageServer.url, token: vask.token }, ...(secrets ? { secrets } : {}) },
	);
	await page.goto(pageServer.url + '/');
	await page.waitForFunction(() => window.__ready === true || window.__harnessError !== undefined, null, { timeout: 20_000 });
	expect(await page.evaluate(() => window.__harnessError ?? null)).toBeNull();
	await page.evaluate(() => {
		const tab = (window.__vask!.plugin as unknown as { settingTabs: { containerEl: HTMLElement; display(): void }[] }).settingTabs[0]!;
		tab.display();
		tab.containerEl.classList.add('vask-test-settings');
		document.body.appendChild(tab.containerEl);
	});
	return page;
}

async function testConnection(page: Page): Promise<string> {
	const result = page.locator('.vask-test-settings .vask-test-result');
	await page.locator('.vask-test-settings button', { hasText: 'Test connection' }).click();
	await expect.poll(async () => (await result.innerText()).trim() !== 'Testing…' && (await result.innerText()).trim() !== '', { timeout: 20_000 }).toBe(true);
	return result.innerText();
}

describe('settings for several devices', () => {
	it('Test connection: streaming works; a wrong token and a dead address are told in plain words', async () => {
		const page = await openSettings();
		const ok = await testConnection(page);
		expect(ok).toContain('Answers stream');
		expect(ok).toContain('Connected to vask');
		expect(await page.locator('.vask-test-settings .vask-test-result').getAttribute('class')).toContain('is-ok');

		const token = page.locator('.vask-test-settings .setting-item').filter({ hasText: 'Token' }).locator('input');
		await token.fill('a-token-this-server-never-made');
		const wrong = await testConnection(page);
		expect(wrong).toContain('wrong, missing or revoked');
		expect(wrong).toContain('vask token add NAME');

		// the token went to this device's storage; data.json (synced) keeps what it had
		expect(await page.evaluate(() => (window.__pluginData as { token: string }).token)).toBe(vask.token);
		expect(await page.evaluate(() => window.__vask!.app.loadLocalStorage('vask-device'))).toEqual({
			token: 'a-token-this-server-never-made',
		});

		const url = page.locator('.vask-test-settings .setting-item').filter({ hasText: 'Server URL' }).locator('input');
		await url.fill(`http://127.0.0.1:${await freePort()}`);
		const dead = await testConnection(page);
		expect(dead).toContain('vask server is not running');
	});

	it("an app with a keychain: the token moves there from data.json, and the setting picks the secret", async () => {
		const page = await openSettings({ 'other-vask': 'a-token-this-server-never-made' });
		const keychain = () =>
			page.evaluate(() => Object.fromEntries(window.__vask!.app.secretStorage!.secrets) as Record<string, string>);
		expect(await keychain()).toEqual({ 'other-vask': 'a-token-this-server-never-made', 'vask-token': vask.token });
		expect(await page.evaluate(() => (window.__pluginData as { token: string }).token)).toBe('');
		expect(await page.evaluate(() => window.__vask!.app.loadLocalStorage('vask-device'))).toBeNull();
		expect(await testConnection(page)).toContain('Connected to vask');

		const token = page.locator('.vask-test-settings .setting-item').filter({ hasText: "This device's own token" });
		expect(await token.innerText()).toContain("Obsidian's keychain");
		expect(await token.locator('input[type=password]').count()).toBe(0);
		const picker = token.locator('input.stub-secret-picker');
		expect(await picker.inputValue()).toBe('vask-token');
		await picker.fill('other-vask');
		await picker.dispatchEvent('change');
		expect(await testConnection(page)).toContain('wrong, missing or revoked');
		expect(await page.evaluate(() => window.__vask!.app.loadLocalStorage('vask-device'))).toEqual({ tokenSecret: 'other-vask' });

		// The secret's value changed in Obsidian's keychain settings: the tab shown again uses it.
		await page.evaluate((t) => window.__vask!.app.secretStorage!.setSecret('other-vask', t), vask.token);
		await page.evaluate(() => (window.__vask!.plugin as unknown as { settingTabs: { display(): void }[] }).settingTabs[0]!.display());
		expect(await testConnection(page)).toContain('Connected to vask');
		expect(await page.evaluate(() => JSON.stringify(window.__pluginData))).not.toContain(vask.token);
	});

	it('Agents: the mcpServers entry for this vault, ready to copy', async () => {
		const page = await openSettings();
		const snippet = page.locator('.vask-test-settings pre.vask-mcp-snippet');
		const json = JSON.parse(await snippet.innerText()) as { mcpServers: { vask: { command: string; args: string[] } } };
		expect(json.mcpServers.vask.args).toEqual(['mcp', '--vault', vask.vault]);
		const row = page.locator('.vask-test-settings .setting-item').filter({ hasText: 'Add this vault to an agent' });
		expect(await row.locator('button', { hasText: 'Copy JSON' }).count()).toBe(1);
		expect(await row.locator('button', { hasText: 'Copy command' }).count()).toBe(1);
	});
});
