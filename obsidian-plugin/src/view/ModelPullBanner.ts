/**
 * A line at the top of the chat pane when a configured model is missing from the model server: it
 * offers to download it (POST /v1/models/pull) and shows the download as a progress bar.
 */
import { Notice } from 'obsidian';
import { describeError } from '../lib/errors';
import { PullTracker, missingModels, pullElsewhere } from '../lib/pull';
import type { VaskHost } from './host';

export class ModelPullBanner {
	/** The pull running now, by model: a second click does not start a second download. */
	private pulling: string | null = null;

	constructor(
		private readonly el: HTMLElement,
		private readonly host: VaskHost,
	) {
		el.addClass('vask-pull');
		el.hide();
	}

	/** Asks the server which models are missing, and offers each (nothing when it cannot say). */
	async check(): Promise<void> {
		if (this.pulling) return;
		let missing: { model: string; role: 'embed' | 'chat' }[];
		let canPull: boolean;
		try {
			const health = await this.host.client.health();
			missing = missingModels(health.models);
			canPull = health.device?.can_pull !== false;
		} catch {
			return; // (not reachable: the status bar and the pane's errors say it)
		}
		this.el.empty();
		if (missing.length === 0) return void this.el.hide();
		this.el.show();
		for (const { model, role } of missing) {
			const row = this.el.createDiv({ cls: 'vask-pull-row' });
			const what = role === 'embed' ? 'embedding model' : 'chat model';
			row.createDiv({ cls: 'vask-pull-text', text: `The ${what} ${model} is not on the model server yet.` });
			if (!canPull) {
				// (only the computer vask runs on may start a download: the server refuses this device's token)
				row.createDiv({ cls: 'vask-pull-status', text: pullElsewhere(model) });
				continue;
			}
			const button = row.createEl('button', { cls: 'mod-cta', text: `Download ${model}` });
			button.addEventListener('click', () => void this.pull(row, model, role));
		}
	}

	private async pull(row: HTMLElement, model: string, role: 'embed' | 'chat'): Promise<void> {
		if (this.pulling) return;
		this.pulling = model;
		row.empty();
		row.createDiv({ cls: 'vask-pull-text', text: `Downloading ${model}…` });
		const bar = row.createEl('progress', { cls: 'vask-pull-bar' });
		const status = row.createDiv({ cls: 'vask-pull-status' });
		const ctrl = new AbortController();
		const untrack = this.host.track(ctrl);
		const tracker = new PullTracker();
		try {
			await this.host.client.pullModel(model, {
				role,
				signal: ctrl.signal,
				onProgress: (p) => {
					const view = tracker.push(p);
					if (view.fraction === null) bar.removeAttribute('value');
					else {
						bar.max = 1;
						bar.value = view.fraction;
					}
					status.setText(view.bytes ? `${view.status} · ${view.bytes}` : view.status);
				},
			});
			new Notice(`Vask: ${model} is downloaded.`);
			this.pulling = null;
			await this.check();
		} catch (err) {
			this.pulling = null;
			const e = describeError(err, this.host.errorContext());
			row.empty();
			row.addClass('is-bad');
			row.createDiv({ cls: 'vask-pull-text', text: `Could not download ${model}: ${e.message}` });
			if (e.hint) row.createDiv({ cls: 'vask-pull-status', text: e.hint });
			const again = row.createEl('button', { text: 'Try again' });
			again.addEventListener('click', () => void this.check());
		} finally {
			untrack();
		}
	}
}
