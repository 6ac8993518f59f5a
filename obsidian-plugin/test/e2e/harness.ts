/**
 * Browser entry of the end-to-end test: builds a fake Obsidian window (right
 * sidebar + status bar), loads the real plugin into it through the `obsidian`
 * stand-in (esbuild aliases `obsidian` to ./obsidian-stub.ts), and opens the
 * chat view.
 */
import type { App as ObsidianApp, PluginManifest } from 'obsidian';
import VaskPlugin from '../../src/main';
import { App, SecretStorage, TFile, TFolder, type NoteInfo, type VaultListing } from './obsidian-stub';
import { installFakeDesktop, type FakeDesktopConfig } from './fake-desktop';

interface HarnessConfig {
	vaultPath: string;
	/** The vault's notes, for the metadata cache (suggestions read names, aliases and tags from it). */
	notes?: NoteInfo[];
	activeFile?: string;
	/** The plugin's folder in the vault, where the chat history is kept; unset: one of this page's own. */
	pluginDir?: string;
	settings: Record<string, unknown>;
	/** The app's keychain (Obsidian 1.11.4+) and what it holds; unset: an app without one. */
	secrets?: Record<string, string>;
	/** A desktop app, whose Node is stood in for (fake-desktop.ts); unset: no desktop, as on mobile. */
	desktop?: FakeDesktopConfig;
}

declare global {
	interface Window {
		__harnessConfig: HarnessConfig;
		__pluginData?: unknown;
		__vask?: { app: App; plugin: VaskPlugin; TFile: typeof TFile; TFolder: typeof TFolder };
		__ready?: boolean;
		__harnessError?: string;
	}
}

async function main(): Promise<void> {
	const cfg = window.__harnessConfig;
	if (cfg.desktop) installFakeDesktop(cfg.desktop);
	window.__pluginData = cfg.settings;
	const manifest = (await (await fetch('/manifest.json')).json()) as PluginManifest;
	// A page that does not name a folder gets a fresh one: chats kept by one test never show in another.
	manifest.dir = cfg.pluginDir ?? `.obsidian/plugins/vask-page-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
	// Without a vault on the page server (startPageServer's third argument), the files live in memory.
	const res = await fetch('/__fs/list');
	const listing = res.ok ? ((await res.json()) as VaultListing) : null;

	const rightSplitEl = document.getElementById('right-split')!;
	const statusBarEl = document.getElementById('status-bar')!;
	const app = new App({ basePath: cfg.vaultPath, rightSplitEl, statusBarEl, listing, notes: cfg.notes ?? [] });
	if (cfg.secrets) app.secretStorage = new SecretStorage(cfg.secrets);
	if (cfg.activeFile) app.workspace.activeFile = new TFile(cfg.activeFile);

	const plugin = new VaskPlugin(app as unknown as ObsidianApp, manifest);
	// Obsidian calls load(), which runs onload(); wait for it as Obsidian does.
	await (plugin.load() as unknown as Promise<void>);
	app.workspace.layoutReady();
	await plugin.openChat();
	window.__vask = { app, plugin, TFile, TFolder };
	window.__ready = true;
}

main().catch((err: unknown) => {
	window.__harnessError = err instanceof Error ? `${err.message}\n${err.stack}` : String(err);
	console.error(err);
});

declare global {
	interface Window {
		__opened: import('./obsidian-stub').OpenedLink[];
		__core: import('./obsidian-stub').CoreCall[];
		__hovered: import('./obsidian-stub').HoveredLink[];
		__renders: import('./obsidian-stub').RenderRecord[];
		__notices: string[];
	}
}
