/** Settings: server URL, token (both this device's own), retrieval, chat model, folders to leave out, connection test. */
import { App, Notice, PluginSettingTab, SecretComponent, Setting, requireApiVersion, type Plugin } from 'obsidian';
import { testConnection } from '../lib/connection';
import { CHECK_MARKS, checkLevel, checklistSummary } from '../lib/doctor';
import { VASK_FOLDER, describeError, tokenCommand } from '../lib/errors';
import { TOKEN_SECRET, type TokenHome } from '../lib/secrets';
import { DEFAULT_SETTINGS, type VaskSettings } from '../lib/settings';
import type { Transport } from '../lib/transport';
import type { DoctorReport } from '../lib/types';
import type { VaskHost } from './host';
import { describeLocal, type LocalServerControl } from '../lib/localServerControl';
import { claudeCodeCommand, mcpServersJson, type McpTarget } from '../lib/mcpSnippet';

export interface SettingsHost extends VaskHost {
	updateSettings(patch: Partial<VaskSettings>): Promise<void>;
	makeTransports(): { streaming: Transport; buffered: Transport };
	readonly local: LocalServerControl;
	openServerLog(): void;
	/** Where requests go: the server this plugin started, once paired, else the URL and token below. */
	serverAddress(): { serverUrl: string; token: string };
	/** Where the token is kept on this device. */
	readonly tokenHome: TokenHome;
	/** Reads the keychain's token again (it may have been changed in Obsidian's own settings). */
	refreshSecret(): void;
}

/** Where the settings say the token is kept. */
const TOKEN_KEPT: Record<TokenHome, string> = {
	keychain: "Kept in Obsidian's keychain on this device, not synced.",
	device: 'Kept on this device only, not synced.',
	data: "Kept in the plugin's data.json: this version of Obsidian has no storage of its own per device, so sync tools copy it to your other devices.",
};

export class VaskSettingTab extends PluginSettingTab {
	constructor(
		app: App,
		plugin: Plugin,
		private readonly host: SettingsHost,
	) {
		super(app, plugin);
	}

	private localEl: HTMLElement | null = null;

	override display(): void {
		const { containerEl } = this;
		containerEl.empty();
		this.host.refreshSecret();
		const s = this.host.settings;
		if (this.host.local.status.kind !== 'mobile') this.displayLocal(containerEl);
		this.displayChecklist(containerEl);
		new Setting(containerEl).setName('Server').setHeading();

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

		this.displayToken(containerEl);

		new Setting(containerEl)
			.setName('Passages per answer (top-k)')
			.setDesc('How many note passages an answer may use (1–50). Empty: the server’s default (6 unless its settings say otherwise).')
			.addText((t) => {
				t.inputEl.type = 'number';
				t.setPlaceholder('Server default')
					.setValue(s.topK === null ? '' : String(s.topK))
					.onChange(async (v) => this.host.updateSettings({ topK: optionalNumber(v) }));
			});

		new Setting(containerEl)
			.setName('Minimum similarity')
			.setDesc(
				'Passages less similar than this (0–1) are left out. Empty: the server’s default (0.25 unless its settings say otherwise).',
			)
			.addText((t) => {
				t.inputEl.type = 'number';
				t.inputEl.step = '0.05';
				t.setPlaceholder('Server default')
					.setValue(s.minSimilarity === null ? '' : String(s.minSimilarity))
					.onChange(async (v) => this.host.updateSettings({ minSimilarity: optionalNumber(v) }));
			});

		new Setting(containerEl)
			.setName('Chat model')
			.setDesc('A model the server can answer with (suggested from its model server). Empty: the server’s default.')
			.addText((t) => {
				t.setPlaceholder('Server default')
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
			.setDesc('Comma separated, e.g. "archive, templates". Notes in them are not used for answers.')
			.addText((t) =>
				t
					.setPlaceholder('Archive, templates')
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

		new Setting(containerEl)
			.setName('Heading for links')
			.setDesc(
				`Where "Link" in the related notes puts a link when the note does not name the linked note already: as a list item under this heading, made at the end of the note if missing. Default: ${DEFAULT_SETTINGS.linkHeading}`,
			)
			.addText((t) =>
				t
					.setPlaceholder(DEFAULT_SETTINGS.linkHeading)
					.setValue(s.linkHeading)
					.onChange(async (v) => this.host.updateSettings({ linkHeading: v })),
			);

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
		this.displayAgents(containerEl);
	}

	/** Agents (MCP): the `mcpServers` entry for this vault, and Claude Code's command, each to copy. */
	private displayAgents(containerEl: HTMLElement): void {
		new Setting(containerEl).setName('Agents').setHeading();
		const local = this.host.local.status;
		const target: McpTarget = {
			vaultPath: this.host.errorContext().vaultPath ?? null,
			executable: local.kind === 'supervised' ? local.executable : null,
			serverUrl: this.host.serverAddress().serverUrl,
		};
		const json = mcpServersJson(target);
		const copy = (text: string, what: string): void => {
			void navigator.clipboard.writeText(text).then(() => new Notice(`Vask: ${what} copied`));
		};
		new Setting(containerEl)
			.setName('Add this vault to an agent')
			.setDesc(
				target.vaultPath
					? 'Through the Model Context Protocol (MCP). Claude Desktop, Cursor and LM Studio: add this to their mcpServers settings; the agent then starts ' +
							'`vask mcp` itself, which searches and reads this vault from its index, read-only. Claude Code: copy the command.'
					: 'An agent on another device reaches the server at /mcp with a token of its own (`vask token add NAME` on the ' +
							"server's machine, in place of the one shown).",
			)
			.addButton((b) => b.setButtonText('Copy JSON').onClick(() => copy(json, 'MCP settings')))
			.addButton((b) => b.setButtonText('Copy command').onClick(() => copy(claudeCodeCommand(target), 'command')));
		containerEl.createEl('pre', { cls: 'vask-mcp-snippet', text: json });
	}

	/**
	 * The token: where the app has a keychain (Obsidian 1.11.4+), Obsidian's own picker of its secrets
	 * (the setting holds the secret's name, "vask-token" unless another is picked); else a password field.
	 */
	private displayToken(containerEl: HTMLElement): void {
		const s = this.host.settings;
		const how =
			`This device's own token. On the server's machine, from ${VASK_FOLDER}: \`${tokenCommand(this.host.errorContext().vaultPath)}\` ` +
			'prints the one for Obsidian there; `uv run vask token add NAME` makes one for another device (shown once), ' +
			'and `uv run vask token revoke NAME` stops it.';
		const setting = new Setting(containerEl).setName('Token');
		const home = this.host.tokenHome;
		if (requireApiVersion('1.11.4') && home === 'keychain' && typeof SecretComponent === 'function') {
			setting
				.setDesc(
					`${how} Kept in Obsidian's keychain (Settings → Keychain) on this device, not synced, as the secret chosen here ` +
						`(${TOKEN_SECRET} unless you pick another).`,
				)
				.addComponent((el) =>
					new SecretComponent(this.app, el).setValue(s.tokenSecret).onChange(async (name) => this.host.updateSettings({ tokenSecret: name })),
				);
			return;
		}
		setting.setDesc(`${how} ${TOKEN_KEPT[home]}`).addText((t) => {
			t.inputEl.type = 'password';
			t.setPlaceholder('Token')
				.setValue(s.token)
				.onChange(async (v) => this.host.updateSettings({ token: v }));
		});
	}

	/** An instruction given to the server this plugin starts: applied once typing pauses, or the field is left. */
	private instructionSetting(
		containerEl: HTMLElement,
		name: string,
		desc: string,
		example: string,
		value: string,
		patch: (v: string) => Partial<VaskSettings>,
	): void {
		new Setting(containerEl)
			.setName(name)
			.setDesc(desc)
			.addText((t) => {
				t.setPlaceholder(`model card's (e5: '${example}')`)
					.setValue(value)
					.onChange(async (v) => this.host.updateSettings(patch(v)));
				t.inputEl.addEventListener('blur', () => this.host.local.applyNow());
				t.inputEl.addEventListener('keydown', (e) => {
					if (e.key === 'Enter') this.host.local.applyNow();
				});
			});
	}

	/** Desktop: the server this plugin starts, its executable, state, log and restart. */
	private displayLocal(containerEl: HTMLElement): void {
		const s = this.host.settings;
		new Setting(containerEl).setName('Server on this computer').setHeading();
		new Setting(containerEl)
			.setName('Start vask here')
			.setDesc(
				'Starts the vask server for this vault when Obsidian opens, connects to it without a token to copy, starts it again ' +
					'if it stops, and stops it when Obsidian closes. Off: the server URL and token below are used. This computer only.',
			)
			.addToggle((t) => t.setValue(s.manageServer).onChange(async (v) => this.host.updateSettings({ manageServer: v })));
		new Setting(containerEl)
			.setName('Vask executable')
			.setDesc(
				'Empty: looked for on the PATH and in ~/.local/bin, where `uv tool install` and `pipx` put it. ' +
					'Used once you stop typing or leave the field. This computer only.',
			)
			.addText((t) => {
				t.setPlaceholder(this.host.local.executableExample)
					.setValue(s.vaskPath)
					.onChange(async (v) => this.host.updateSettings({ vaskPath: v }));
				// (a path half typed is none: it is applied when the field is left or Enter pressed, or after a pause)
				t.inputEl.addEventListener('blur', () => this.host.local.applyNow());
				t.inputEl.addEventListener('keydown', (e) => {
					if (e.key === 'Enter') this.host.local.applyNow();
				});
			});
		this.instructionSetting(
			containerEl,
			'Question instruction',
			'What the embedding model gets before each question (`--query-prefix`), exactly as typed: a trailing space counts, ' +
				'\\n is a line break, `none` sends none. Empty: the model card\'s, for the models vask knows. A change applies at once; ' +
				'nothing is embedded again. Given to the server this plugin starts (one started by hand takes VASK_QUERY_PREFIX).',
			'query: ',
			s.queryPrefix,
			(v) => ({ queryPrefix: v }),
		);
		this.instructionSetting(
			containerEl,
			'Passage instruction',
			'What the embedding model gets before each passage of your notes (`--document-prefix`), as above. A change builds ' +
				'the index anew beside the old one, which answers until it is complete. Given to the server this plugin starts ' +
				'(one started by hand takes VASK_DOCUMENT_PREFIX).',
			'passage: ',
			s.documentPrefix,
			(v) => ({ documentPrefix: v }),
		);
		this.localEl = containerEl.createDiv({ cls: 'vask-local-status' });
		this.refreshLocal();
		new Setting(containerEl)
			.addButton((b) => b.setButtonText('Show server log').onClick(() => this.host.openServerLog()))
			.addButton((b) =>
				b.setButtonText('Restart server').onClick(async () => {
					b.setDisabled(true);
					try {
						await this.host.local.restart();
					} finally {
						b.setDisabled(false);
					}
				}),
			);
	}

	/** Redraws the local server's line (called as its state changes). */
	refreshLocal(): void {
		const el = this.localEl;
		if (!el || !el.isConnected) return;
		const line = describeLocal(this.host.local.status);
		el.empty();
		el.toggleClass('is-bad', !line.ok);
		el.createDiv({ text: line.text });
		if (line.help) el.createDiv({ cls: 'vask-test-hint', text: line.help });
	}

	/** The server's `vask doctor` checklist: each check, and each problem's fix. */
	private displayChecklist(containerEl: HTMLElement): void {
		new Setting(containerEl).setName('Setup checklist').setHeading();
		const list = containerEl.createDiv({ cls: 'vask-checklist' });
		const run = async (): Promise<void> => {
			list.empty();
			list.createDiv({ cls: 'vask-checklist-wait', text: 'Checking…' });
			let report: DoctorReport;
			try {
				report = await this.host.client.doctor();
			} catch (err) {
				list.empty();
				const e = describeError(err, this.host.errorContext());
				const row = list.createDiv({ cls: 'vask-check is-bad' });
				row.createSpan({ cls: 'vask-check-mark', text: '✗' });
				const body = row.createDiv({ cls: 'vask-check-body' });
				body.createDiv({ cls: 'vask-check-name', text: `No server to ask: ${e.message}` });
				if (e.hint) body.createDiv({ cls: 'vask-check-fix', text: e.hint });
				return;
			}
			list.empty();
			renderChecklist(list, report);
		};
		new Setting(containerEl)
			.setDesc('What `vask doctor` checks, asked of the server: the model server, each model, the vault, the index and the plugin.')
			.addButton((b) =>
				b.setButtonText('Check again').onClick(async () => {
					b.setDisabled(true);
					try {
						await run();
					} finally {
						b.setDisabled(false);
					}
				}),
			);
		containerEl.appendChild(list);
		void run();
	}

	private async testConnection(result: HTMLElement): Promise<void> {
		const s = this.host.serverAddress();
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

/** Each check as a row: its level's mark, what was checked and found, and the fix (or pointer) when not ok. */
export function renderChecklist(el: HTMLElement, report: DoctorReport): void {
	el.toggleClass('is-ok', report.ok);
	for (const check of report.checks) {
		const level = checkLevel(check);
		const { mark, cls } = CHECK_MARKS[level];
		const row = el.createDiv({ cls: ['vask-check', cls] });
		row.createSpan({ cls: 'vask-check-mark', text: mark, attr: { 'aria-label': level } });
		const body = row.createDiv({ cls: 'vask-check-body' });
		body.createDiv({ cls: 'vask-check-name', text: `${check.name}: ${check.detail}` });
		if (level !== 'ok' && check.fix) {
			body.createDiv({ cls: 'vask-check-fix', text: `${level === 'info' ? 'See' : 'Fix'}: ${check.fix}` });
		}
	}
	el.createDiv({ cls: 'vask-check-summary', text: checklistSummary(report) });
}
