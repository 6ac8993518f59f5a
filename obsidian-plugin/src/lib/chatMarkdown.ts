/**
 * A kept chat as Markdown: the note "Save as note" writes (with frontmatter),
 * and the text "Copy chat as Markdown" puts on the clipboard. Citations and
 * sources become `[[path#heading|label]]` links, built as the pane builds them
 * (the server's link text: full vault path, heading with the characters
 * Obsidian drops from links already dropped), so they open the same place.
 */
import type { AssistantTurn, Turn } from './chat';
import { headingLabel, linkTargets, linkifyCitations } from './citations';
import type { ChatRecord } from './history';
import { basenameNoExt, stripMd } from './paths';
import { localIsoDateTime } from './time';
import type { Source } from './types';

/** The frontmatter key that ties a saved note to its chat, so a renamed note is found again. */
export const CHAT_ID_KEY = 'vask-chat';
/** The server's per-note opt-out (vask_server/core/exclude.py): a saved chat is not read as a note. */
export const EXCLUDE_KEY = 'vask';
export const DEFAULT_CHATS_FOLDER = 'Vask chats';
export const CHAT_TAG = 'vask-chat';

export interface ChatNoteOptions {
	/** Write `vask: exclude`, so vask does not index the note (and never cites an answer as a note). */
	exclude: boolean;
	/** Chat models used, for the frontmatter (the plugin's setting or the server's default). */
	models: string[];
	now: Date;
}

/** A YAML scalar that is always read back as the same string. */
function yamlString(s: string): string {
	return JSON.stringify(s);
}

function wikiSafe(s: string): string {
	return s.replace(/\|/g, '∣').replace(/\]\]/g, '] ]').replace(/[\r\n]+/g, ' ').trim();
}

function wikilink(link: string, label: string): string {
	// Brackets in a label can end the link early ("…[draft]]]"): shown as parentheses.
	const shown = wikiSafe(label).replace(/\[/g, '(').replace(/\]/g, ')');
	return `[[${wikiSafe(link)}|${shown}]]`;
}

/** "Knee pain - physio notes › The plan she gave me": the note, then the heading within it. */
function sourceLabel(s: Pick<Source, 'title' | 'path' | 'heading'>): string {
	const title = s.title || basenameNoExt(s.path);
	const heading = headingLabel(s.heading ?? '', title);
	return heading ? `${title} › ${heading}` : title;
}

/** The answer's Markdown with its `[Title]` citations linked, as in the pane. */
export function answerMarkdown(turn: AssistantTurn): string {
	return linkifyCitations(turn.content, linkTargets(turn.citations, turn.sources));
}

/** A question on one line, for a heading: no leading `#`, nothing that ends the heading. */
function headingText(question: string): string {
	const line = question.replace(/\s+/g, ' ').trim();
	return line.length > 120 ? `${line.slice(0, 119).trimEnd()}…` : line;
}

function quote(text: string): string {
	return text
		.trim()
		.split('\n')
		.map((l) => (l.trim() === '' ? '>' : `> ${l}`))
		.join('\n');
}

function endingNote(turn: AssistantTurn): string {
	if (turn.status === 'error') {
		const e = turn.error as { message?: unknown } | undefined;
		const msg = e && typeof e.message === 'string' && e.message ? `: ${e.message}` : '';
		return `*No answer${msg.replace(/\*/g, '')}*`;
	}
	if (turn.interrupted) return '*Interrupted: Obsidian closed before the answer was complete.*';
	if (turn.status === 'stopped') return '*Stopped.*';
	return '';
}

function sourcesList(turn: AssistantTurn): string {
	const cited = new Set(turn.citations.map((c) => c.link));
	const lines: string[] = [];
	const seen = new Set<string>();
	// Cited passages first: they are what the answer rests on.
	const ordered = [...turn.sources].sort((a, b) => Number(cited.has(b.link)) - Number(cited.has(a.link)));
	for (const s of ordered) {
		const link = s.link || stripMd(s.path);
		if (seen.has(link)) continue;
		seen.add(link);
		lines.push(`- ${wikilink(link, sourceLabel(s))}`);
	}
	for (const c of turn.citations) {
		if (seen.has(c.link)) continue;
		seen.add(c.link);
		lines.push(`- ${wikilink(c.link, sourceLabel(c))}`);
	}
	return lines.join('\n');
}

/** The questions and answers, each question a `##` heading. */
export function chatBody(record: Pick<ChatRecord, 'title' | 'turns'>): string {
	const out: string[] = [`# ${headingText(record.title)}`];
	const turns: readonly Turn[] = record.turns;
	for (let i = 0; i < turns.length; i++) {
		const t = turns[i]!;
		if (t.role === 'user') {
			out.push(`## ${headingText(t.content)}`);
			if (t.content.includes('\n') || headingText(t.content) !== t.content.trim()) out.push(quote(t.content));
			if (t.currentNote) out.push(`*About ${wikilink(stripMd(t.currentNote), basenameNoExt(t.currentNote))}*`);
			continue;
		}
		const answer = answerMarkdown(t).trim();
		if (answer) out.push(answer);
		const ending = endingNote(t);
		if (ending) out.push(ending);
		const sources = sourcesList(t);
		if (sources) out.push(`${t.declined || !answer ? 'Matching notes' : 'Sources'}:\n${sources}`);
	}
	return out.join('\n\n') + '\n';
}

/** The whole chat for the clipboard: the same text as the saved note, without frontmatter. */
export function chatAsMarkdown(record: Pick<ChatRecord, 'title' | 'turns'>): string {
	return chatBody(record);
}

/** The note "Save as note" writes: frontmatter (ids, dates, models, tags), then the chat. */
export function chatNote(record: ChatRecord, opts: ChatNoteOptions): string {
	const fm: string[] = ['---'];
	if (opts.exclude) fm.push(`${EXCLUDE_KEY}: exclude`);
	fm.push(`${CHAT_ID_KEY}: ${yamlString(record.id)}`);
	fm.push(`created: ${localIsoDateTime(new Date(record.createdAt))}`);
	fm.push(`updated: ${localIsoDateTime(opts.now)}`);
	const models = [...new Set(opts.models.filter((m) => m.trim() !== ''))];
	if (models.length > 0) {
		fm.push('models:');
		for (const m of models) fm.push(`  - ${yamlString(m)}`);
	}
	if (record.about) fm.push(`about: ${yamlString(`[[${stripMd(record.about)}]]`)}`);
	fm.push('tags:', `  - ${CHAT_TAG}`);
	fm.push('---');
	return `${fm.join('\n')}\n\n${chatBody(record)}`;
}

/** The chat id in a note's frontmatter (`vask-chat: "…"`), or null. */
export function chatIdOfNote(markdown: string): string | null {
	const m = /^---\r?\n([\s\S]*?)\r?\n---/.exec(markdown);
	if (!m) return null;
	const line = new RegExp(`^${CHAT_ID_KEY}:\\s*(.+?)\\s*$`, 'm').exec(m[1]!);
	if (!line) return null;
	const v = line[1]!;
	if (v.startsWith('"')) {
		try {
			return String(JSON.parse(v));
		} catch {
			return null;
		}
	}
	return v.replace(/^'(.*)'$/, '$1');
}

/** A file name for a chat's title: no characters that are not allowed in names or break links. */
export function chatNoteName(title: string): string {
	const name = title
		.replace(/[\\/:*?"<>|#^[\]]/g, ' ')
		.replace(/\s+/g, ' ')
		.trim()
		.replace(/^\.+/, '')
		.slice(0, 100)
		.trim();
	return name || 'Vask chat';
}

/** "Vask chats/", "/Vask chats" → "Vask chats"; empty: the vault root. */
export function normalizeFolder(folder: string): string {
	return folder
		.trim()
		.replace(/\\/g, '/')
		.replace(/\/{2,}/g, '/')
		.replace(/^\/+|\/+$/g, '');
}

/** The first free path for a new note: "Folder/Name.md", else "Folder/Name 2.md", … */
export function freeNotePath(folder: string, name: string, taken: (path: string) => boolean): string {
	const dir = normalizeFolder(folder);
	const prefix = dir ? `${dir}/` : '';
	for (let n = 1; ; n++) {
		const path = `${prefix}${name}${n === 1 ? '' : ` ${n}`}.md`;
		if (!taken(path)) return path;
	}
}
