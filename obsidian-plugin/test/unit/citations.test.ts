import { describe, expect, it } from 'vitest';
import { headingLabel, linkTargets, linkifyCitations, resolveCitation, type LinkTarget } from '../../src/lib/citations';
import { isIndexedPath, linkText, pageLabel } from '../../src/lib/paths';
import type { Citation, Source } from '../../src/lib/types';

function source(n: number, path: string, title: string, heading: string, anchor: string): Source {
	return {
		n,
		path,
		title,
		heading,
		anchor,
		line_start: 1,
		line_end: 5,
		score: 0.5,
		link: anchor ? `${path.replace(/\.md$/, '')}#${anchor}` : path.replace(/\.md$/, ''),
	};
}

const plan: Citation = { title: 'Plan', path: '01 Projects/Plan.md', heading: 'Plan > Risks', anchor: 'Risks', line: 12, link: '01 Projects/Plan#Risks' };
const sources = [
	source(1, '01 Projects/Plan.md', 'Plan', 'Plan > Timeline', 'Timeline'),
	source(2, 'Areas/Garden Log.md', 'Garden Log', 'Garden Log > Tomatoes', 'Tomatoes'),
	source(3, 'Inbox.md', 'Inbox', '', ''),
];
const targets = linkTargets([plan], sources);

describe('linkTargets', () => {
	it('puts citations before sources and drops duplicates', () => {
		const t = linkTargets([plan, plan], [sources[0]!, sources[0]!]);
		expect(t.map((x) => x.link)).toEqual(['01 Projects/Plan#Risks', '01 Projects/Plan#Timeline']);
	});

	it('builds a link from path and anchor when one is missing', () => {
		const t = linkTargets([{ ...plan, link: '' }], []);
		expect(t[0]!.link).toBe('01 Projects/Plan#Risks');
	});
});

describe('linkifyCitations', () => {
	it('turns [Title] into a wikilink to the citation (path#heading), keeping the title as text', () => {
		expect(linkifyCitations('The budget is the main risk [Plan].', targets)).toBe(
			'The budget is the main risk [[01 Projects/Plan#Risks|Plan]].',
		);
	});

	it('links titles known only from the sources, and notes without a heading', () => {
		expect(linkifyCitations('Water daily [Garden Log]. See [Inbox].', targets)).toBe(
			'Water daily [[Areas/Garden Log#Tomatoes|Garden Log]]. See [[Inbox|Inbox]].',
		);
	});

	it('matches titles case- and space-insensitively, and several citations in one bracket', () => {
		expect(linkifyCitations('x [ garden  log ] y [Plan; Inbox]', targets)).toBe(
			'x [[Areas/Garden Log#Tomatoes|garden  log]] y [[01 Projects/Plan#Risks|Plan]]; [[Inbox|Inbox]]',
		);
	});

	it('matches "Title > Heading" and "Title#Heading" to the right passage', () => {
		expect(linkifyCitations('[Plan > Timeline] and [Plan#Risks]', targets)).toBe(
			'[[01 Projects/Plan#Timeline|Plan > Timeline]] and [[01 Projects/Plan#Risks|Plan#Risks]]',
		);
	});

	it('leaves unknown labels, Markdown links, wikilinks, images, footnote-like refs and task boxes alone', () => {
		const md = [
			'Unknown [Nothing] here.',
			'A [Plan](https://example.com) link and [[Plan]] and ![Plan](img.png).',
			'- [ ] task',
			'[Plan]: https://example.com/def',
			'Escaped \\[Plan\\] text.',
		].join('\n');
		expect(linkifyCitations(md, targets)).toBe(md);
	});

	it('does not touch code spans or fenced code blocks', () => {
		const md = ['Use `arr[Plan]` here [Plan].', '```', 'x = y[Plan]', '```', '~~~~', '[Inbox]', '~~~~', 'after [Inbox]'].join('\n');
		expect(linkifyCitations(md, targets)).toBe(
			[
				'Use `arr[Plan]` here [[01 Projects/Plan#Risks|Plan]].',
				'```',
				'x = y[Plan]',
				'```',
				'~~~~',
				'[Inbox]',
				'~~~~',
				'after [[Inbox|Inbox]]',
			].join('\n'),
		);
	});

	it('handles adjacent citations and a bracket still open at the end of a streamed chunk', () => {
		expect(linkifyCitations('[Plan][Inbox] and [Gar', targets)).toBe('[[01 Projects/Plan#Risks|Plan]][[Inbox|Inbox]] and [Gar');
	});

	it('returns the text unchanged when there are no targets', () => {
		expect(linkifyCitations('[Plan]', [])).toBe('[Plan]');
	});

	it('keeps the wikilink well-formed when a title contains a pipe', () => {
		const t: LinkTarget[] = [{ title: 'A | B', path: 'ab.md', heading: '', anchor: '', link: 'ab' }];
		expect(linkifyCitations('see [A | B]', t)).toBe('see [[ab|A ∣ B]]');
	});
});

describe('resolveCitation', () => {
	it('matches a path or file name, and links the note when the heading is unknown', () => {
		expect(resolveCitation('01 Projects/Plan.md', targets)?.link).toBe('01 Projects/Plan#Risks');
		expect(resolveCitation('Plan > Nowhere', targets)?.link).toBe('01 Projects/Plan');
		expect(resolveCitation('Other', targets)).toBeNull();
	});
});

describe('headingLabel', () => {
	it('drops the note title from the heading path', () => {
		expect(headingLabel('Plan > Risks > Budget', 'Plan')).toBe('Risks › Budget');
		expect(headingLabel('Other > Risks', 'Plan')).toBe('Other › Risks');
		expect(headingLabel('', 'Plan')).toBe('');
		// the title, then an H1 that repeats it with other punctuation
		expect(headingLabel('Knee pain - physio notes > Knee pain — physio notes > The plan she gave me', 'Knee pain - physio notes')).toBe(
			'The plan she gave me',
		);
	});
});

describe('PDF pages and canvases', () => {
	it('a PDF passage links to its page and is labelled with it; a canvas links to the board', () => {
		expect(linkText('attachments/Handbook.pdf', '', 3)).toBe('attachments/Handbook.pdf#page=3');
		expect(linkText('01 Projects/Roadmap.canvas', '')).toBe('01 Projects/Roadmap.canvas');
		expect(linkText('01 Projects/Plan.md', 'Risks', null)).toBe('01 Projects/Plan#Risks');
		expect(pageLabel({ page: 3 })).toBe('p. 3');
		expect(pageLabel({ page: null })).toBe('');
		expect(pageLabel({})).toBe('');
	});

	it('boards and PDFs are files the server indexes, as notes are', () => {
		expect(['a/Plan.md', 'Board.canvas', 'x/Manual.PDF'].every(isIndexedPath)).toBe(true);
		expect(['diagram.png', 'notes.txt', 'canvas'].some(isIndexedPath)).toBe(false);
	});

	it('a source without a link of its own still opens the PDF at its page', () => {
		const pdf = { ...source(1, 'attachments/Handbook.pdf', 'Handbook', 'Handbook > Page 2', ''), link: '', page: 2 };
		const [target] = linkTargets([], [pdf]);
		expect(target!.link).toBe('attachments/Handbook.pdf#page=2');
		expect(linkifyCitations('The tide rule [Handbook].', [target!])).toBe(
			'The tide rule [[attachments/Handbook.pdf#page=2|Handbook]].',
		);
	});
});
