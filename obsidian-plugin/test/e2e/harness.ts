/**
 * Browser entry of the end-to-end test: builds a fake Obsidian window (right
 * sidebar + status bar), loads the real plugin into it through the `obsidian`
 * stand-in (esbuild aliases `obsidian` to ./obsidian-stub.ts), and opens the
 * chat view.
 */
import type { App as ObsidianApp, PluginManifest } from 'obsidian';
import VaskPlugin from '../../src/main';
import { App, TFile, TFolder, type NoteInfo } from './obsidian-stub';

interface HarnessConfig {
	vaultPath: string;
	/** The vault's notes, for the metadata cache (suggestions read names, aliases and tags from it). */
	notes?: NoteInfo[];
	activeFile?: string;
	settings: Record<string, unknown>;
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
	window.__pluginData = cfg.settings;
	const manifest = (await (await fetch('/manifest.json')).json()) as PluginManifest;

	const rightSplitEl = document.getElementById('right-split')!;
	const statusBarEl = document.getElementById('status-bar')!;
	const app = new App({ basePath: cfg.vaultPath, rightSplitEl, statusBarEl, notes: cfg.notes ?? [] });
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
