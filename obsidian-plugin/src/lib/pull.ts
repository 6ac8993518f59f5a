/**
 * A model's download as one progress bar: Ollama reports each layer of a model apart ("pulling
 * 8eeb52dfb3bb", bytes done of that layer's total), so the whole is the sum over the layers seen.
 */
import type { PullProgressEvent } from './types';

export interface PullView {
	/** 0–1 over the bytes of the layers seen so far; null before any layer has a size. */
	fraction: number | null;
	/** Ollama's step, as it says it ("pulling manifest", "verifying sha256 digest"). */
	status: string;
	/** "1.2 GB of 4.7 GB", or '' before any size is known. */
	bytes: string;
}

export class PullTracker {
	private readonly layers = new Map<string, { completed: number; total: number }>();
	private status = '';

	push(event: PullProgressEvent): PullView {
		this.status = event.status;
		if (typeof event.total === 'number' && event.total > 0) {
			const completed = Math.min(event.total, Math.max(0, event.completed ?? 0));
			this.layers.set(event.status, { completed, total: event.total });
		}
		return this.view();
	}

	view(): PullView {
		let completed = 0;
		let total = 0;
		for (const layer of this.layers.values()) {
			completed += layer.completed;
			total += layer.total;
		}
		return {
			fraction: total > 0 ? completed / total : null,
			status: this.status,
			bytes: total > 0 ? `${formatBytes(completed)} of ${formatBytes(total)}` : '',
		};
	}
}

export function formatBytes(n: number): string {
	const units = ['B', 'KB', 'MB', 'GB', 'TB'];
	let value = n;
	let unit = 0;
	while (value >= 1000 && unit < units.length - 1) {
		value /= 1000;
		unit++;
	}
	return `${unit === 0 ? value : value.toFixed(1)} ${units[unit]}`;
}

/** The models /v1/health says are missing, with the role each is configured for (which server pulls it). */
export function missingModels(models: { embed: string; chat: string; missing: string[] } | undefined): { model: string; role: 'embed' | 'chat' }[] {
	if (!models || !Array.isArray(models.missing)) return [];
	return models.missing
		.filter((m): m is string => typeof m === 'string' && m !== '')
		.map((model) => ({ model, role: model === models.embed ? 'embed' : 'chat' }));
}

/** What a device that may not start a download (not the computer vask runs on) is told instead. */
export function pullElsewhere(model: string): string {
	return `Download it on the computer vask runs on: its Vask pane offers it, or run \`ollama pull ${model}\` there.`;
}
