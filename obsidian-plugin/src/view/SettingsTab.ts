/** Settings: server URL, token (both this device's own), retrieval, chat model, folders to leave out, connection test. */
import { App, PluginSettingTab, Setting, type Plugin } from 'obsidian';
import { testConnection } from '../lib/connection';
import { VASK_FOLDER, tokenCommand } from '../lib/errors';
import { DEFAULT_SETTINGS, type VaskSettings } from '../lib/settings';
import type { Transport } from '../lib/transport';
import type { VaskHost } from './host';

export interface SettingsHost extends VaskHost {
	updateSettings(patch: Partial<VaskSettings>): Promise<void>;
	makeTransports(): { streaming: Transport; buffered: Transport };
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
			.setDesc(
				`Where the vask server listens: ${DEFAULT_SETTINGS.serverUrl} on this machine, or its https:// address ` +
					'from another device (a phone, a second laptop). Kept on this device only, not synced.',
			)
			.addText((t) =>
				t
					.setPlaceholder(DEFAULT_SETTINGS.serverUrl)
					.setValue(s.serverUrl)
					.onChange(async (v) => this.host.updateSettings({ serverUrl: v })),
			);

		new Setting(containerEl)
			.setName('Token')
			.setDesc(
				`This device's own token. On the server's machine, from ${VASK_FOLDER}: \`${tokenCommand(this.host.errorContext().vaultPath)}\` ` +
					'prints the one for Obsidian there; `uv run vask token add NAME` makes one for another device (shown once), ' +
					'and `uv run vask token revoke NAME` stops it. Kept on this device only, not synced.',
			)
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
			.setDesc('A model the server can answer with (suggested from its model server). Empty: the server’s default.')
			.addText((t) => {
				t.setPlaceholder('server default')
					.setValue(s.chatModel)
					.onChange(async (v) => this.host.updateSettings({ chatModel: v }));
				// The names the answers' server serves, as the input's suggestions; none when it cannot say.
				const list = containerEl.createEl('datalist', { attr: { id: 'vask-chat-models' } });
				t.inputEl.setAttr('list', 'vask-chat-models');
				void this.host.client
					.chatModels()
					.then((names) => {
						for (const name of names) list.createEl('option', { attr: { value: name } });
					})
					.catch(() => undefined);
			});

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
			.setDesc('Reaches the server with these settings, and says in plain words what fails: the address, the certificate, the token.')
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
		const { streaming, buffered } = this.host.makeTransports();
		const report = await testConnection({
			baseUrl: s.serverUrl,
			token: s.token,
			streaming,
			buffered,
			context: this.host.errorContext(),
		});
		result.empty();
		result.removeClass('is-ok', 'is-bad');
		result.addClass(report.ok ? 'is-ok' : 'is-bad');
		for (const line of report.lines) result.createDiv({ text: line });
		if (report.error?.hint) result.createDiv({ cls: 'vask-test-hint', text: report.error.hint });
	}
}

/** An emptied field means "not set" (the server's default), not 0. */
function optionalNumber(text: string): number | null {
	return text.trim() === '' ? null : Number(text);
}
