/** A unified diff shown as lines marked added, removed or kept (the path is shown by the caller). */
import { diffLines } from '../lib/proposals';

const MARKS = { add: '+', del: '−', context: ' ', hunk: '', note: '', file: '' } as const;

export function renderDiff(parent: HTMLElement, diff: string): HTMLElement {
	const el = parent.createDiv({ cls: 'vask-diff' });
	for (const line of diffLines(diff)) {
		if (line.kind === 'file') continue;
		const row = el.createDiv({ cls: ['vask-diff-line', `is-${line.kind}`] });
		if (line.kind === 'hunk' || line.kind === 'note') {
			row.setText(line.text);
			continue;
		}
		row.createSpan({ cls: 'vask-diff-mark', text: MARKS[line.kind] });
		row.createSpan({ cls: 'vask-diff-text', text: line.text });
	}
	return el;
}
