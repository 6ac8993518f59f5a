// @vitest-environment happy-dom
/**
 * One answer card in a DOM (happy-dom, with the browser test's stand-in for
 * `obsidian`): what it draws for each state of its turn, and what its buttons ask.
 */
import type { App as ObsidianApp, Component as ObsidianComponent } from 'obsidian';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ChatSession, type AssistantTurn, type UserTurn } from '../../src/lib/chat';
import { ErrorCode, VaskError } from '../../src/lib/errors';
import type { PaneScope } from '../../src/lib/scope';
import type { Source } from '../../src/lib/types';
import { AnswerCard, type AnswerCardHost } from '../../src/view/AnswerCard';
import { FollowScroll } from '../../src/view/followScroll';
import { App, Component, type CoreCall, type OpenedLink, type RenderRecord } from '../e2e/obsidian-stub';
import { outline } from '../helpers/domOutline';

/** The view's part: counts the renderings it holds, as the pane's ItemView would unload them. */
class Owner extends Component {
	live = 0;
	override addChild<T extends Component>(c: T): T {
		this.live++;
		return super.addChild(c);
	}
	override removeChild<T extends Component>(c: T): T {
		this.live--;
		return super.removeChild(c);
	}
}

const knee: Source = {
	n: 1,
	path: '02 Areas/Health/Knee pain.md',
	title: 'Knee pain',
	heading: 'Knee pain > The plan',
	anchor: 'The plan',
	line_start: 3,
	line_end: 9,
	score: 0.82,
	link: '02 Areas/Health/Knee pain#The plan',
	date: '2026-02-14',
	date_source: 'frontmatter:date',
};
const manual: Source = {
	n: 2,
	path: 'Manuals/Bike.pdf',
	title: 'Bike',
	heading: 'Page 3',
	anchor: '',
	line_start: 0,
	line_end: 0,
	score: 0.4,
	link: 'Manuals/Bike.pdf#page=3',
	page: 3,
	date: '2025-11-02',
	date_source: 'file-time',
};

let session: ChatSession;
let owner: Owner;
let app: App;
let asked: string[];
let parent: HTMLElement;

function host(): AnswerCardHost {
	return {
		app: app as unknown as ObsidianApp,
		owner: owner as unknown as ObsidianComponent,
		scroll: new FollowScroll(parent),
		errorContext: () => ({ serverUrl: 'http://127.0.0.1:8765' }),
		searchAllDates: (turn) => asked.push(`all dates #${turn.id}`),
		askAsWritten: (turn) => asked.push(`as written #${turn.id}`),
		ask: (question, scope) => asked.push(`ask "${question}" in ${scope ? `${scope.kind} ${scope.path}` : 'all notes'}`),
	};
}

function newCard(question = 'What did the physio say?', pane?: PaneScope): { card: AnswerCard; user: UserTurn; turn: AssistantTurn } {
	const { user, assistant } = session.ask(question, undefined, pane);
	return { card: new AnswerCard(parent, assistant, host()), user, turn: assistant };
}

const renders = (): RenderRecord[] => (window as unknown as { __renders: RenderRecord[] }).__renders;
const core = (): CoreCall[] => (window as unknown as { __core: CoreCall[] }).__core;
const notices = (): string[] => (window as unknown as { __notices: string[] }).__notices;
const opened = (): OpenedLink[] => (window as unknown as { __opened: OpenedLink[] }).__opened;
const part = (card: AnswerCard, cls: string): HTMLElement => card.rootEl.querySelector<HTMLElement>(`:scope > .${cls}`)!;
const click = (el: Element | null): void => void (el as HTMLElement).dispatchEvent(new MouseEvent('click', { bubbles: true }));

beforeEach(() => {
	document.body.empty();
	renders().length = 0;
	core().length = 0;
	opened().length = 0;
	notices().length = 0;
	session = new ChatSession();
	owner = new Owner();
	owner.load();
	const notes = [{ path: 'Sport/Run log.md', mtime: 0, aliases: [], tags: ['running'] }];
	app = new App({ basePath: '/vault', rightSplitEl: document.body.createDiv(), statusBarEl: document.body.createDiv(), notes });
	asked = [];
	parent = document.body.createDiv({ cls: 'vask-messages' });
});

afterEach(() => {
	vi.restoreAllMocks();
});

describe('AnswerCard', () => {
	it('starts waiting: the status line says it is searching, the parts with nothing to show are hidden', () => {
		const { card } = newCard();
		expect(outline(card.rootEl)).toMatchInlineSnapshot(`
			"div.vask-msg.vask-msg-assistant.is-waiting
			  div.vask-scope (hidden)
			  div.vask-msg-status "Searching your notes…"
			  div.vask-answer.markdown-rendered
			  div.vask-error (hidden)
			  div.vask-sources (hidden)
			  div.vask-msg-actions"
		`);
	});

	it('while it streams: the status line goes, the text is drawn as Markdown, marked as streaming', async () => {
		const { card, turn } = newCard();
		session.apply(turn, { type: 'sources', sources: [knee] });
		card.showState();
		expect(part(card, 'vask-msg-status').textContent).toBe('Writing the answer…');
		session.apply(turn, { type: 'token', text: 'Do the **squats** daily [Knee pain].' });
		card.showState();
		card.requestRender();
		await card.flushRender();
		expect(outline(card.rootEl)).toMatchInlineSnapshot(`
			"div.vask-msg.vask-msg-assistant.is-streaming
			  div.vask-scope (hidden)
			  div.vask-msg-status (hidden) "Writing the answer…"
			  div.vask-answer.markdown-rendered
			    p
			      "Do the "
			      strong "squats"
			      " daily "
			      a.internal-link [data-href=02 Areas/Health/Knee pain#The plan] "Knee pain"
			      "."
			  div.vask-error (hidden)
			  div.vask-sources (hidden)
			  div.vask-msg-actions"
		`);
		// Drawn inside a message marked as streaming (the pane's CSS keys on it), each time.
		expect(renders().length).toBeGreaterThan(0);
		expect(renders().every((r) => r.streaming)).toBe(true);
	});

	it('done: citations link to the cited heading, sources list date, score, heading or page, and the copy button comes', async () => {
		const { card, user, turn } = newCard();
		session.apply(turn, { type: 'sources', sources: [knee, manual] });
		session.apply(turn, {
			type: 'done',
			answer: 'Do the squats daily [Knee pain].',
			citations: [{ title: 'Knee pain', path: knee.path, heading: knee.heading, anchor: knee.anchor, line: 3, link: knee.link }],
			sources: [knee, manual],
			declined: false,
		});
		await card.flushRender();
		card.showSources();
		card.showState();
		card.showEnding(user);
		expect(outline(part(card, 'vask-answer'))).toMatchInlineSnapshot(`
			"div.vask-answer.markdown-rendered
			  p
			    "Do the squats daily "
			    a.internal-link [data-href=02 Areas/Health/Knee pain#The plan] "Knee pain"
			    ".""
		`);
		expect(outline(part(card, 'vask-sources'))).toMatchInlineSnapshot(`
			"div.vask-sources
			  div.vask-sources-title "Sources"
			  ol.vask-sources-list
			    li.vask-source.is-cited
			      div.vask-source-head
			        a.internal-link.vask-source-link [data-href=02 Areas/Health/Knee pain#The plan] "Knee pain"
			        div.vask-source-meta
			          span.vask-source-date "14 Feb 2026"
			          span.vask-source-score "0.82"
			      div.vask-source-sub
			        span.vask-source-heading "The plan"
			        span.vask-source-path "02 Areas/Health/Knee pain.md"
			    li.vask-source
			      div.vask-source-head
			        a.internal-link.vask-source-link [data-href=Manuals/Bike.pdf#page=3] "Bike"
			        div.vask-source-meta
			          span.vask-source-date "2 Nov 2025"
			          span.vask-source-date-kind "file date"
			          span.vask-source-score "0.40"
			      div.vask-source-sub
			        span.vask-source-page "p. 3"
			        span.vask-source-path "Manuals/Bike.pdf""
		`);
		expect(outline(part(card, 'vask-msg-actions'))).toMatchInlineSnapshot(`
			"div.vask-msg-actions
			  button.vask-copy.clickable-icon "Copy""
		`);
		expect(card.rootEl.className).toBe('vask-msg vask-msg-assistant is-done');
		expect(part(card, 'vask-error').style.display).toBe('none');

		// Copy gives the Markdown with the citations as links, which resolve wherever it is pasted in the vault.
		const copied: string[] = [];
		vi.spyOn(navigator.clipboard, 'writeText').mockImplementation(async (text: string) => void copied.push(text));
		click(card.rootEl.querySelector('.vask-copy'));
		await vi.waitFor(() => expect(notices()).toContain('Answer copied'));
		expect(copied).toEqual(['Do the squats daily [[02 Areas/Health/Knee pain#The plan|Knee pain]].']);
	});

	it('a question naming a time: the chip says the dates and the words, the notice is above the sources; "Search all dates" asks again', () => {
		const { card, turn } = newCard('What did I eat last week?');
		session.apply(turn, {
			type: 'sources',
			sources: [],
			notice: 'Ollama is not reachable. Showing keyword matches only.',
			time_range: { from: '2026-02-09', to: '2026-02-15', text: 'last week' },
		});
		card.showSources();
		expect(outline(part(card, 'vask-sources'))).toMatchInlineSnapshot(`
			"div.vask-sources
			  div.vask-time-range
			    div.vask-time-range-text
			      div.vask-time-range-label "Notes from 9 Feb – 15 Feb 2026"
			      div.vask-time-range-words "“last week”"
			    button.vask-time-range-all "Search all dates"
			  div.vask-notice "Ollama is not reachable. Showing keyword matches only.""
		`);
		click(card.rootEl.querySelector('.vask-time-range-all'));
		expect(asked).toEqual([`all dates #${turn.id}`]);
	});

	it('an answer about connections: the seed chip, then the sources grouped as the seed\'s own, not linked yet, linked; ✕ asks as written', () => {
		const { card, turn } = newCard('What could help with [[Back pain]]?');
		const s = (n: number, title: string, linked: string, near?: string): Source => ({
			...knee,
			n,
			path: `${title}.md`,
			title,
			heading: title,
			link: title,
			score: 1 - n / 10,
			date: null,
			linked,
			...(near ? { near } : {}),
		});
		session.apply(turn, {
			type: 'sources',
			sources: [s(1, 'Posture', 'links to'), s(2, 'Back pain', 'seed'), s(3, 'Desk setup', 'unlinked', 'Back pain > Sitting')],
			connection: { seed: 'Back pain.md', title: 'Back pain', words: 'could help with' },
		});
		card.showSources();
		expect(outline(part(card, 'vask-sources'))).toMatchInlineSnapshot(`
			"div.vask-sources
			  div.vask-seed
			    span.vask-seed-label "Connected to"
			    a.internal-link.vask-seed-link [data-href=Back pain] "Back pain"
			    button.vask-seed-remove "✕"
			  div.vask-sources-title "Sources"
			  ol.vask-sources-list
			    li.vask-sources-group [role=presentation] "In Back pain itself"
			    li.vask-source
			      div.vask-source-head
			        a.internal-link.vask-source-link [data-href=Back pain] "Back pain"
			        div.vask-source-meta
			          span.vask-source-score "0.80"
			      div.vask-source-sub
			        span.vask-source-path "Back pain.md"
			    li.vask-sources-group [role=presentation] "Not linked yet"
			    li.vask-source
			      div.vask-source-head
			        a.internal-link.vask-source-link [data-href=Desk setup] "Desk setup"
			        div.vask-source-meta
			          span.vask-source-score "0.70"
			      div.vask-source-sub
			        span.vask-source-path "Desk setup.md"
			      div.vask-source-link-kind.is-unlinked "not linked yet · near “Sitting”"
			    li.vask-sources-group [role=presentation] "Already linked"
			    li.vask-source
			      div.vask-source-head
			        a.internal-link.vask-source-link [data-href=Posture] "Posture"
			        div.vask-source-meta
			          span.vask-source-score "0.90"
			      div.vask-source-sub
			        span.vask-source-path "Posture.md"
			      div.vask-source-link-kind.is-linked "Back pain links here""
		`);
		click(card.rootEl.querySelector('.vask-seed-remove'));
		expect(asked).toEqual([`as written #${turn.id}`]);
	});

	it('scope chips: the pane\'s folder, the question\'s note and tag; each chip shows what it names in Obsidian', () => {
		const { card, user, turn } = newCard('Runs in [[Run log]] or #running?', { kind: 'folder', path: 'Sport' });
		session.apply(turn, { type: 'sources', sources: [knee], scope: { notes: ['Sport/Run log.md'], tags: ['running'], folders: [] } });
		card.showScope(user.paneScope ?? null);
		expect(outline(part(card, 'vask-scope'))).toMatchInlineSnapshot(`
			"div.vask-scope
			  span.vask-scope-label "Only in"
			  button.vask-scope-chip.is-folder.is-from-pane [data-kind=folder] [data-value=Sport]
			    span.vask-scope-chip-kind "this folder"
			    span.vask-scope-chip-text "Sport"
			  button.vask-scope-chip.is-note [data-kind=note] [data-value=Sport/Run log.md]
			    span.vask-scope-chip-kind "note"
			    span.vask-scope-chip-text "Run log"
			  button.vask-scope-chip.is-tag [data-kind=tag] [data-value=running]
			    span.vask-scope-chip-kind "tag"
			    span.vask-scope-chip-text "#running""
		`);
		for (const chip of card.rootEl.querySelectorAll('.vask-scope-chip')) click(chip);
		expect(opened().map((o) => o.linktext)).toEqual(['Sport/Run log']);
		expect(core()).toEqual([
			{ plugin: 'file-explorer', arg: 'Sport' },
			{ plugin: 'global-search', arg: 'tag:#running' },
		]);
	});

	it('stopped before any text: "Stopped.", no copy, and the notes found are only "Matching notes"; interrupted says why', () => {
		const { card, user, turn } = newCard();
		session.apply(turn, { type: 'sources', sources: [knee] });
		session.stop(turn);
		card.showSources();
		card.showState();
		card.showEnding(user);
		expect(outline(part(card, 'vask-msg-actions'))).toMatchInlineSnapshot(`
			"div.vask-msg-actions
			  span.vask-stopped "Stopped.""
		`);
		expect(part(card, 'vask-sources').querySelector('.vask-sources-title')?.textContent).toBe('Matching notes');
		turn.interrupted = true;
		card.showEnding(user);
		expect(part(card, 'vask-msg-actions').textContent).toBe('Interrupted: Obsidian closed before the answer was complete.');
	});

	it('an error: the message and its hint, as Markdown, with the error code', () => {
		const { card, user, turn } = newCard();
		session.fail(turn, new VaskError(ErrorCode.payloadTooLarge, 'The question is too long.', 'Start a **new chat**.', 413));
		card.showState();
		card.showEnding(user);
		expect(card.rootEl.className).toBe('vask-msg vask-msg-assistant is-error');
		expect(part(card, 'vask-msg-actions').childElementCount).toBe(0);
		expect(outline(part(card, 'vask-error'))).toMatchInlineSnapshot(`
			"div.vask-error [data-code=payload_too_large]
			  div.markdown-rendered
			    p "The question is too long."
			    p
			      "Start a "
			      strong "new chat"
			      ".""
		`);
	});

	it('a mention that matched nothing: a button per closest name asks the question again with it, in the same pane scope', () => {
		const pane: PaneScope = { kind: 'folder', path: 'Work' };
		const { card, user, turn } = newCard('Status of [[Projct X]]?', pane);
		const misses = [{ kind: 'note' as const, written: '[[Projct X]]', closest: ['[[Project X]]', '[[Project Y]]'] }];
		session.fail(turn, new VaskError(ErrorCode.scopeNotFound, 'No note [[Projct X]] in the index.', 'Closest: [[Project X]], [[Project Y]]', 404, misses));
		card.showEnding(user);
		expect(outline(part(card, 'vask-error'))).toMatchInlineSnapshot(`
			"div.vask-error [data-code=scope_not_found]
			  div.markdown-rendered
			    p
			      "No note "
			      code "[[Projct X]]"
			      " in the index."
			  div.vask-scope-fix
			    span.vask-scope-fix-label "Did you mean"
			    button.vask-scope-fix-option [data-question=Status of [[Project X]]?] "[[Project X]]"
			    button.vask-scope-fix-option [data-question=Status of [[Project Y]]?] "[[Project Y]]""
		`);
		click(card.rootEl.querySelector('.vask-scope-fix-option'));
		expect(asked).toEqual(['ask "Status of [[Project X]]?" in folder Work']);
	});

	it('clear() empties it for its question to be asked again; dispose() unloads its renderings and draws no more', async () => {
		const { card, user, turn } = newCard();
		session.apply(turn, { type: 'sources', sources: [knee] });
		session.apply(turn, { type: 'done', answer: 'Squats.', citations: [], sources: [knee], declined: false });
		await card.flushRender();
		card.showSources();
		card.showEnding(user);
		expect(owner.live).toBe(1);
		card.clear();
		expect(owner.live).toBe(0);
		for (const cls of ['vask-answer', 'vask-sources', 'vask-msg-actions', 'vask-error']) expect(part(card, cls).childElementCount).toBe(0);
		expect(part(card, 'vask-sources').style.display).toBe('none');

		const again = session.retry(turn, { readTime: false })!;
		session.apply(turn, { type: 'token', text: 'Squ' });
		await card.flushRender();
		session.fail(turn, new VaskError(ErrorCode.internal, 'boom'));
		card.showEnding(again.user);
		expect(owner.live).toBe(2); // the answer's rendering and the error's
		card.dispose();
		expect(owner.live).toBe(0);
		const drawn = renders().length;
		turn.content = 'Squats, twice a day.';
		await card.flushRender();
		expect(renders().length).toBe(drawn);
		expect(part(card, 'vask-answer').textContent).toBe('Squ');
	});
});
