/**
 * A DOM subtree as short indented lines, for structure assertions that read
 * like the pane: `tag.class.class [attr=value] "text"`, hidden elements marked
 * `(hidden)`. Only the attributes that carry meaning for the plugin are shown,
 * so a snapshot breaks on a change of structure, not on styling.
 */
const SHOWN_ATTRS = ['data-href', 'data-code', 'data-kind', 'data-value', 'data-question', 'data-mode', 'role', 'aria-checked'];

function line(el: Element): string {
	let s = el.tagName.toLowerCase();
	for (const c of el.classList) s += `.${c}`;
	for (const a of SHOWN_ATTRS) {
		const v = el.getAttribute(a);
		if (v !== null) s += ` [${a}=${v}]`;
	}
	if ((el as HTMLElement).style?.display === 'none') s += ' (hidden)';
	// An element holding text only: the text on its line.
	if (el.children.length === 0 && el.textContent) s += ` "${el.textContent}"`;
	return s;
}

export function outline(el: Element, depth = 0): string {
	const lines = [`${'  '.repeat(depth)}${line(el)}`];
	for (const node of el.childNodes) {
		if (node.nodeType === 1) lines.push(outline(node as Element, depth + 1));
		else if (node.nodeType === 3 && el.children.length > 0 && node.textContent?.trim()) {
			lines.push(`${'  '.repeat(depth + 1)}"${node.textContent}"`);
		}
	}
	return lines.join('\n');
}
