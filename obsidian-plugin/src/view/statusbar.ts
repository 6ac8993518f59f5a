/** The status bar items: indexing progress, or a warning when something is down; proposed changes waiting. */
import { waitingCount, waitingText, type ProposalCounts } from '../lib/proposals';
import { statusBarText, type Connection } from '../lib/statusText';

export class StatusBar {
	constructor(private readonly el: HTMLElement) {
		el.addClass('vask-statusbar');
		el.addClass('mod-clickable');
		el.setAttr('data-tooltip-position', 'top');
		this.update({ state: 'connecting' });
	}

	update(c: Connection): void {
		const v = statusBarText(c);
		this.el.setText(v.text);
		this.el.setAttr('aria-label', v.title);
		for (const level of ['ok', 'busy', 'warn'] as const) this.el.toggleClass(`is-${level}`, v.level === level);
	}
}

/** "2 changes to review": proposed changes waiting for a decision; hidden when none wait. */
export class ProposalsStatus {
	constructor(private readonly el: HTMLElement) {
		el.addClass('vask-proposals-status');
		el.addClass('mod-clickable');
		el.setAttr('data-tooltip-position', 'top');
		el.setAttr('aria-label', 'Proposed changes to notes: click to review them');
		this.update(undefined);
	}

	update(counts: ProposalCounts | undefined): void {
		const text = waitingText(waitingCount(counts));
		this.el.setText(text);
		if (text) this.el.show();
		else this.el.hide();
	}
}
