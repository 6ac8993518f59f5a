/** The status bar item: indexing progress, or a warning when something is down. */
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
