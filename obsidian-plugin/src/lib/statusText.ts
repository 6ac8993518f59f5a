/** What the status bar says, from the state of the /v1/events connection. */
import { ErrorCode, type VaskError } from './errors';
import type { StatusEvent } from './types';

export type Connection =
	| { state: 'connecting' }
	| { state: 'live'; status: StatusEvent | null }
	| { state: 'error'; error: VaskError };

export type Level = 'ok' | 'busy' | 'warn';

export interface StatusBarText {
	text: string;
	/** Tooltip. */
	title: string;
	level: Level;
}

function plural(n: number, word: string): string {
	return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** "~40 min left", "~3 h 10 min left", "less than a minute left"; "" when not known (as the server's CLI says it). */
export function describeEta(seconds: number | null | undefined): string {
	if (typeof seconds !== 'number' || !Number.isFinite(seconds)) return '';
	const minutes = Math.round(seconds / 60);
	if (minutes < 1) return 'less than a minute left';
	if (minutes < 60) return `~${minutes} min left`;
	const hours = Math.floor(minutes / 60);
	const rest = minutes % 60;
	return rest ? `~${hours} h ${rest} min left` : `~${hours} h left`;
}

export function statusBarText(c: Connection): StatusBarText {
	if (c.state === 'connecting') {
		return { text: 'vask: connecting…', title: 'Connecting to the vask server', level: 'busy' };
	}
	if (c.state === 'error') {
		switch (c.error.code) {
			case ErrorCode.unreachable:
				return { text: 'vask: server not running ⚠', title: 'The vask server is not running. Click for details.', level: 'warn' };
			case ErrorCode.unauthorized:
				return { text: 'vask: token wrong ⚠', title: 'The vask token is wrong or missing. Click for details.', level: 'warn' };
			default:
				return { text: 'vask: disconnected ⚠', title: `${c.error.message} Click for details.`, level: 'warn' };
		}
	}
	const s = c.status;
	if (!s) return { text: 'vask: connected', title: 'Waiting for the index status', level: 'busy' };
	// The same words as the server's status: failed (could not be read) warns, skipped (on purpose) informs.
	const counts = [
		typeof s.failed === 'number' && s.failed > 0 ? `${s.failed} failed` : '',
		typeof s.skipped === 'number' && s.skipped > 0 ? `${s.skipped} skipped` : '',
	].filter(Boolean).join(', ');
	const failed = counts ? `, ${counts}` : '';
	if (s.ollama && s.ollama.reachable === false) {
		return {
			text: 'vask: Ollama unreachable ⚠',
			title: `${s.message ?? 'The vask server cannot reach Ollama.'} Click for details.`,
			level: 'warn',
		};
	}
	const p = s.progress;
	if (s.state === 'paused' || (s.paused && s.state !== 'idle')) {
		const where = p ? ` ${Math.floor(p.percent)}%` : '';
		return {
			text: `vask: indexing paused${where}`,
			title: `Indexing is paused${p ? ` at ${p.notes_done} of ${p.notes_total} notes` : ''}; searches go on. Run "Vask: Resume indexing" to go on where it stopped.`,
			level: 'busy',
		};
	}
	if (s.state === 'indexing' && p && p.notes_total > 0 && !s.stage) {
		// A long sync: how far by the notes' bytes (what the time left is measured in), and the time left
		const left = describeEta(p.eta_seconds);
		return {
			text: `vask: indexing ${Math.floor(p.percent)}%${left ? ` · ${left}` : ''}`,
			title: `Indexing the vault: ${p.notes_done} of ${p.notes_total} notes${failed}${p.rate !== null ? `, ${p.rate} chunks/s` : ''}${left ? `, ${left}` : ''}. Notes not embedded yet are found by keyword. Click for details.`,
			level: 'busy',
		};
	}
	if (s.state === 'indexing') {
		// Once every note is read no count moves for a while (tens of seconds in a large vault): say why,
		// and how long the step has run (the server sends it once a second), so the bar visibly moves.
		const seconds = typeof s.stage_seconds === 'number' ? `, ${Math.floor(s.stage_seconds)} s` : '';
		const stage = s.stage ? ` (${s.stage}${seconds})` : '';
		return {
			text: `vask: indexing ${s.done}/${s.total}${stage}`,
			title: `Indexing the vault: ${s.done} of ${s.total} files${failed}${s.stage ? `; now: ${s.stage}${seconds ? ` for${seconds.slice(1)}` : ''}` : ''}. Click for details.`,
			level: 'busy',
		};
	}
	return {
		text: `vask: indexed ✓ ${plural(s.notes, 'note')}${counts ? ` (${counts})` : ''}`,
		title: `${plural(s.notes, 'note')}, ${plural(s.chunks, 'chunk')} indexed${failed}. Click for details.`,
		level: typeof s.failed === 'number' && s.failed > 0 ? 'warn' : 'ok',
	};
}
