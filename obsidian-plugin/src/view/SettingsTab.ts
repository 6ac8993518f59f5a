/** Settings: server URL, token, retrieval, chat model, folders to leave out, connection test. */
import { App, PluginSettingTab, Setting, type Plugin } from 'obsidian';
import { VaskClient } from '../lib/client';
import { VASK_FOLDER, describeError, tokenCommand } from '../lib/errors';
import { DEFAULT_SETTINGS, type VaskSettings } from '../lib/settings';
import { describeHealth } from '../lib/health';
import type { VaskHost } from './host';

export interface SettingsHost extends VaskHost {
	updateSettings(patch: Partial<VaskSettings>): Promise<void>;
}

export class VaskSettingTab extends PluginSettingTab {
	constructor(
		app: App,
		plugin: Plugin,
		private readonly host: SettingsHost,
	) {
		super(app, plugin);
	}

	override display(): void {
		const { containerEl } = this;
		containerEl.empty();
		const s = this.host.settings;

		new Setting(containerEl)
			.setName('Server URL')
			.setDesc(`Where the vask server listens. Default: ${DEFAULT_SETTINGS.serverUrl}`)
			.addText((t) =>
				t
					.setPlaceholder(DEFAULT_SETTINGS.serverUrl)
					.setValue(s.serverUrl)
					.onChange(async (v) => this.host.updateSettings({ serverUrl: v })),
			);

		new Setting(containerEl)
			.setName('Token')
			.setDesc(`Printed by \`${tokenCommand(this.host.errorContext().vaultPath)}\`, run in a terminal from ${VASK_FOLDER}.`)
			.addText((t) => {
				t.inputEl.type = 'password';
				t.setPlaceholder('token')
					.setValue(s.token)
					.onChange(async (v) => this.host.updateSettings({ token: v }));
			});

		new Setting(containerEl)
			.setName('Passages per answer (top-k)')
			.setDesc('How many note passages an answer may use (1–50). Empty: the server’s default (VASK_TOP_K, 6 unless set).')
			.addText((t) => {
				t.inputEl.type = 'number';
				t.setPlaceholder('server default')
					.setValue(s.topK === null ? '' : String(s.topK))
					.onChange(async (v) => this.host.updateSettings({ topK: optionalNumber(v) }));
			});

		new Setting(containerEl)
			.setName('Minimum similarity')
			.setDesc(
				'Passages less similar than this (0–1) are left out. Empty: the server’s default (VASK_MIN_SIMILARITY, 0.25 unless set).',
			)
			.addText((t) => {
				t.inputEl.type = 'number';
				t.inputEl.step = '0.05';
				t.setPlaceholder('server default')
					.setValue(s.minSimilarity === null ? '' : String(s.minSimilarity))
					.onChange(async (v) => this.host.updateSettings({ minSimilarity: optionalNumber(v) }));
			});

		new Setting(containerEl)
			.setName('Chat model')
			.setDesc('An Ollama model name to answer with. Empty: the server’s default.')
			.addText((t) =>
				t
					.setPlaceholder('server default')
					.setValue(s.chatModel)
					.onChange(async (v) => this.host.updateSettings({ chatModel: v })),
			);

		new Setting(containerEl)
			.setName('Folders to leave out')
			.setDesc('Comma separated, e.g. "Archive, Templates". Notes in them are not used for answers.')
			.addText((t) =>
				t
					.setPlaceholder('Archive, Templates')
					.setValue(s.excludeFolders)
					.onChange(async (v) => this.host.updateSettings({ excludeFolders: v })),
			);

		new Setting(containerEl)
			.setName('Folder for saved chats')
			.setDesc(`Where "Save chat as note" writes. Empty: the vault root. Default: ${DEFAULT_SETTINGS.chatsFolder}`)
			.addText((t) =>
				t
					.setPlaceholder(DEFAULT_SETTINGS.chatsFolder)
					.setValue(s.chatsFolder)
					.onChange(async (v) => this.host.updateSettings({ chatsFolder: v })),
			);

		new Setting(containerEl)
			.setName('Index saved chats')
			.setDesc(
				'Off: saved chats say `vask: exclude` in their frontmatter, so vask leaves them out and an answer never cites an earlier answer as a note. Applies to chats saved from now on.',
			)
			.addToggle((t) => t.setValue(s.indexSavedChats).onChange(async (v) => this.host.updateSettings({ indexSavedChats: v })));

		const result = containerEl.createDiv({ cls: 'vask-test-result' });
		new Setting(containerEl)
			.setName('Test connection')
			.setDesc('Asks the server for /v1/health with these settings.')
			.addButton((b) =>
				b.setButtonText('Test connection').onClick(async () => {
					b.setDisabled(true);
					result.empty();
					result.setText('Testing…');
					try {
						await this.testConnection(result);
					} finally {
						b.setDisabled(false);
					}
				}),
			);
		// Keep the result under the button.
		containerEl.appendChild(result);
	}

	private async testConnection(result: HTMLElement): Promise<void> {
		const s = this.host.settings;
		const client = new VaskClient({ baseUrl: s.serverUrl, token: s.token, timeoutMs: 8000 });
		result.empty();
		result.removeClass('is-ok', 'is-bad');
		try {
			const health = await client.health();
			const { ok, lines } = describeHealth(health);
			result.addClass(ok ? 'is-ok' : 'is-bad');
			for (const line of lines) result.createDiv({ text: line });
		} catch (err) {
			const plain = describeError(err, this.host.errorContext());
			result.addClass('is-bad');
			result.createDiv({ text: plain.message });
			if (plain.hint) result.createDiv({ cls: 'vask-test-hint', text: plain.hint });
		}
	}
}

/** An emptied field means "not set" (the server's default), not 0. */
function optionalNumber(text: string): number | null {
	return text.trim() === '' ? null : Number(text);
}
