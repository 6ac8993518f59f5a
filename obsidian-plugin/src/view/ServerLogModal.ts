/** The local server's last lines of output (the supervisor keeps them; the token is never among them). */
import { App, Modal, Notice } from 'obsidian';

export class ServerLogModal extends Modal {
	constructor(
		app: App,
		private readonly lines: () => string[],
	) {
		super(app);
	}

	override onOpen(): void {
		this.setTitle('Vask server log');
		const { contentEl } = this;
		contentEl.addClass('vask-server-log');
		const lines = this.lines();
		const pre = contentEl.createEl('pre', { cls: 'vask-server-log-lines' });
		pre.setText(lines.length ? lines.join('\n') : 'Nothing yet: the plugin has not started a server on this computer.');
		const buttons = contentEl.createDiv({ cls: 'vask-server-log-buttons' });
		buttons.createEl('button', { text: 'Copy' }).addEventListener('click', () => {
			void navigator.clipboard.writeText(lines.join('\n')).then(() => new Notice('Vask: server log copied'));
		});
		buttons.createEl('button', { text: 'Refresh' }).addEventListener('click', () => {
			contentEl.empty();
			this.onOpen();
		});
		pre.scrollTop = pre.scrollHeight;
	}

	override onClose(): void {
		this.contentEl.empty();
	}
}
