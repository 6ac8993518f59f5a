/** Scrolling of the chat's message list: the newest text stays in view unless the reader scrolled up. */

/** How near the bottom still counts as "at the bottom" (a line or so, in pixels). */
const NEAR_BOTTOM_PX = 48;

export class FollowScroll {
	constructor(private readonly el: HTMLElement) {}

	/** Read before the list grows: whether to follow it down afterwards. */
	atBottom(): boolean {
		const el = this.el;
		return el.scrollHeight - el.scrollTop - el.clientHeight < NEAR_BOTTOM_PX;
	}

	/** Keeps the newest text in view, unless the reader has scrolled up (`follow` false). */
	toBottom(follow: boolean): void {
		if (follow) this.el.scrollTop = this.el.scrollHeight;
	}
}
