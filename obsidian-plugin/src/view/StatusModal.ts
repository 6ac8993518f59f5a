/** Details behind the status bar: server, Ollama, models, index, and files that failed. */
import { describeEta } from '../lib/statusText';
import { App, Component, MarkdownRenderer, Modal } from 'obsidian';
import { describeError } from '../lib/errors';
import { notesCount, toExclusions, type Exclusions } from '../lib/exclusions';
import type { FileProblem, HealthInfo, IndexStatus } from '../lib/types';
import type { VaskHost } from './host';

export class StatusModal extends Modal {
	private readonly ctrl = new AbortController();
	private readonly component = new Component();

	constructor(
		app: App,
		private readonly host: VaskHost,
	) {
		super(app);
	}

	override onOpen(): void {
		this.titleEl.setText('Vask status');
		this.contentEl.addClass('vask-status-modal');
		this.component.load();
		void this.load();
	}

	override onClose(): void {
		this.ctrl.abort();
		this.component.unload();
		this.contentEl.empty();
	}

	private async load(): Promise<void> {
		const el = this.contentEl;
		el.empty();
		el.createDiv({ cls: 'vask-status-loading', text: 'Asking the server…' });
		const client = this.host.client;
		const untrack = this.host.track(this.ctrl);
		try {
			const [health, status] = await Promise.all([
				client.health({ signal: this.ctrl.signal }),
				client.status(this.ctrl.signal),
			]);
			this.render(health, status);
		} catch (err) {
			if (this.ctrl.signal.aborted) return;
			el.empty();
			const plain = describeError(err, this.host.errorContext());
			const box = el.createDiv({ cls: ['vask-error', 'markdown-rendered'], attr: { 'data-code': plain.code } });
			await MarkdownRenderer.render(this.app, plain.hint ? `${plain.message}\n\n${plain.hint}` : plain.message, box, '', this.component);
			this.buttons(el);
		} finally {
			untrack();
		}
	}

	private row(table: HTMLElement, name: string, value: string, cls?: string): void {
		const tr = table.createEl('tr');
		tr.createEl('th', { text: name });
		tr.createEl('td', { text: value, cls });
	}

	private render(h: HealthInfo, s: IndexStatus): void {
		const el = this.contentEl;
		el.empty();
		const table = el.createEl('table', { cls: 'vask-status-table' });
		this.row(table, 'Server', `${this.host.settings.serverUrl}${h.version ? ` (vask ${h.version})` : ''}`);
		if (h.vault) this.row(table, 'Vault', h.vault);
		if (h.ollama) {
			this.row(
				table,
				'Ollama',
				`${h.ollama.host} — ${h.ollama.reachable ? 'reachable' : 'NOT reachable'}`,
				h.ollama.reachable ? undefined : 'vask-bad',
			);
		}
		if (h.models) {
			this.row(table, 'Models', `embed: ${h.models.embed}, chat: ${h.models.chat}`);
			if (h.models.missing?.length) {
				this.row(table, 'Missing models', h.models.missing.map((m) => `ollama pull ${m}`).join('\n'), 'vask-bad');
			}
		}
		const p = s.progress;
		const left = p ? describeEta(p.eta_seconds) : '';
		const progress =
			p && (s.state === 'indexing' || s.state === 'paused')
				? `${s.state} ${Math.floor(p.percent)}% (${p.notes_done}/${p.notes_total} notes${p.rate !== null ? `, ${p.rate} chunks/s` : ''})${left ? ` · ${left}` : ''}`
				: s.state === 'indexing'
					? `indexing ${s.done}/${s.total}`
					: s.state;
		this.row(table, 'Index', `${progress} — ${s.notes} notes, ${s.chunks} chunks, ${s.pending} pending`);
		if (s.in_progress?.length) this.row(table, 'Now', s.in_progress.join(', '));
		this.row(table, 'Embedding', `${s.model} (${s.dimension} dimensions)`);
		this.row(table, 'Last sync', s.last_sync ? new Date(s.last_sync).toLocaleString() : 'never');
		const excluded = toExclusions(s.excluded);
		this.row(table, 'Excluded', excluded.total === 0 ? 'none' : `${notesCount(excluded.total)}, never indexed`);

		this.problems(el, 'Failed files', s.failed ?? [], 'vask-failed');
		this.problems(el, 'Skipped files', s.skipped ?? [], 'vask-skipped');
		this.exclusions(el, excluded);
		this.buttons(el);
	}

	/** How many notes each exclusion rule keeps out. Counts only: the server never sends their paths. */
	private exclusions(el: HTMLElement, ex: Exclusions): void {
		if (ex.total === 0) return;
		el.createEl('h4', { text: `Excluded notes (${ex.total})` });
		const ul = el.createEl('ul', { cls: ['vask-problems', 'vask-exclusions'] });
		for (const r of ex.rules) {
			const li = ul.createEl('li');
			li.createSpan({ cls: 'vask-exclusion-rule', text: r.rule });
			li.createSpan({ cls: 'vask-exclusion-count', text: notesCount(r.count) });
		}
	}

	private problems(el: HTMLElement, title: string, list: FileProblem[], cls: string): void {
		if (list.length === 0) return;
		el.createEl('h4', { text: `${title} (${list.length})` });
		const ul = el.createEl('ul', { cls: ['vask-problems', cls] });
		for (const p of list) {
			const li = ul.createEl('li');
			li.createSpan({ cls: 'vask-problem-path', text: p.path });
			li.createSpan({ cls: 'vask-problem-reason', text: p.reason });
		}
	}

	private buttons(el: HTMLElement): void {
		const row = el.createDiv({ cls: 'modal-button-container' });
		const refresh = row.createEl('button', { text: 'Refresh' });
		refresh.addEventListener('click', () => void this.load());
		const reindex = row.createEl('button', { cls: 'mod-cta', text: 'Reindex vault' });
		reindex.addEventListener('click', () => {
			void this.host.reindexVault().then(() => this.load());
		});
	}
}
