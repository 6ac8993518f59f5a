/** Clicks and hovers on internal links in vask's own views. */
import { Keymap, type App, type Component, type HoverParent, type PaneType } from 'obsidian';

export const HOVER_SOURCE = 'vask';

/** The chat's links are full vault paths, so they resolve from anywhere: no note to resolve them from. */
export const CHAT_SOURCE_PATH = '';

export function openLink(app: App, linktext: string, sourcePath: string, evt: MouseEvent): void {
	const newLeaf: PaneType | boolean = evt.button === 1 ? 'tab' : Keymap.isModEvent(evt);
	void app.workspace.openLinkText(linktext, sourcePath, newLeaf);
}

export function hoverLink(
	app: App,
	evt: MouseEvent,
	hoverParent: HoverParent,
	targetEl: HTMLElement,
	linktext: string,
	sourcePath: string,
): void {
	app.workspace.trigger('hover-link', {
		event: evt,
		source: HOVER_SOURCE,
		hoverParent,
		targetEl,
		linktext,
		sourcePath,
	});
}

function linkOf(evt: Event, container: HTMLElement): HTMLAnchorElement | null {
	const target = evt.target;
	if (!(target instanceof Element)) return null;
	const a = target.closest('a.internal-link');
	if (!(a instanceof HTMLAnchorElement) || !container.contains(a)) return null;
	return a;
}

function linktextOf(a: HTMLAnchorElement): string | null {
	return a.getAttribute('data-href') ?? a.getAttribute('href');
}

/**
 * Makes every `a.internal-link` inside `container` (now or added later, e.g.
 * by MarkdownRenderer) open its note on click (Ctrl/Cmd-click or middle-click:
 * in a new tab) and show Obsidian's page preview on hover.
 */
export function wireInternalLinks(
	component: Component,
	app: App,
	container: HTMLElement,
	hoverParent: HoverParent,
	sourcePath: () => string,
): void {
	const onClick = (evt: MouseEvent): void => {
		const a = linkOf(evt, container);
		if (!a) return;
		const linktext = linktextOf(a);
		if (!linktext) return;
		evt.preventDefault();
		evt.stopPropagation();
		if (evt.type === 'auxclick' && evt.button !== 1) return;
		openLink(app, linktext, sourcePath(), evt);
	};
	component.registerDomEvent(container, 'click', onClick);
	component.registerDomEvent(container, 'auxclick', onClick);
	component.registerDomEvent(container, 'mouseover', (evt: MouseEvent) => {
		const a = linkOf(evt, container);
		if (!a) return;
		const related = evt.relatedTarget;
		if (related instanceof Node && a.contains(related)) return; // moving inside the same link
		const linktext = linktextOf(a);
		if (linktext) hoverLink(app, evt, hoverParent, a, linktext, sourcePath());
	});
}

/** Creates an `a.internal-link` that wireInternalLinks handles. */
export function createInternalLink(parent: HTMLElement, linktext: string, text: string, cls?: string): HTMLAnchorElement {
	return parent.createEl('a', {
		cls: cls ? ['internal-link', cls] : 'internal-link',
		text,
		href: linktext,
		attr: { 'data-href': linktext, draggable: 'false' },
	});
}
