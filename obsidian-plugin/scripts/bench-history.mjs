// What keeping chats costs at the history's limit: the chat record made on every streamed event,
// the file's text written at most every 500 ms while an answer streams, and reading it at start.
// Run: node scripts/bench-history.mjs   (from obsidian-plugin/; bundles src/lib with esbuild first)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import esbuild from 'esbuild';

const dir = mkdtempSync(join(tmpdir(), 'vask-bench-history-'));
const out = join(dir, 'lib.mjs');
await esbuild.build({
	stdin: {
		contents: "export * from './src/lib/history'; export { ChatSession } from './src/lib/chat';",
		resolveDir: process.cwd(),
		loader: 'ts',
	},
	bundle: true,
	format: 'esm',
	platform: 'node',
	outfile: out,
	logLevel: 'warning',
});
const lib = await import(pathToFileURL(out).href);
rmSync(dir, { recursive: true, force: true });

const words = 'the plan she gave me was to keep the pain under three out of ten during a run and stop if it rises'.split(' ');
const text = (n, seed) => Array.from({ length: n }, (_, i) => words[(i * 7 + seed) % words.length]).join(' ');
const source = (i) => ({
	n: i + 1,
	path: `02 Areas/Health/Note ${i}.md`,
	title: `Note ${i}`,
	heading: `Note ${i} > Section ${i}`,
	anchor: `Section ${i}`,
	line_start: 10 * i,
	line_end: 10 * i + 8,
	score: 0.5,
	link: `02 Areas/Health/Note ${i}#Section ${i}`,
	date: '2026-02-14',
	date_end: '2026-02-14',
	date_source: 'heading',
});

/** A chat of `pairs` questions, each answer ~`answerWords` words with 6 sources and 2 citations. */
function chat(id, pairs, answerWords, day) {
	const s = new lib.ChatSession();
	for (let p = 0; p < pairs; p++) {
		const { assistant } = s.ask(`${text(12, p)}?`);
		const sources = Array.from({ length: 6 }, (_, i) => source(i + p));
		s.apply(assistant, { type: 'sources', sources });
		s.apply(assistant, {
			type: 'done',
			answer: text(answerWords, p),
			citations: sources.slice(0, 2).map((x) => ({ title: x.title, path: x.path, heading: x.heading, anchor: x.anchor, line: x.line_start, link: x.link })),
			sources,
			declined: false,
		});
	}
	return lib.chatRecord(id, s.all, new Date(Date.UTC(2026, 0, 1) + day * 60_000));
}

function median(xs) {
	const s = [...xs].sort((a, b) => a - b);
	return s[Math.floor(s.length / 2)];
}
function time(fn, runs) {
	const ts = [];
	for (let i = 0; i < runs; i++) {
		const t = process.hrtime.bigint();
		fn();
		ts.push(Number(process.hrtime.bigint() - t) / 1e6);
	}
	return { median: median(ts), max: Math.max(...ts) };
}

// 200 chats of 5 questions, answers of ~300 words: close to the 4,000,000-character limit.
const records = Array.from({ length: 200 }, (_, i) => chat(`c${i}`, 5, 300, i));
const fileText = lib.serializeHistory(records, 'c199');
const open = chat('open', 10, 300, 999);
const { kept, dropped } = lib.pruneHistory(records, lib.DEFAULT_HISTORY_LIMITS, 'c199');
const perEvent = time(() => lib.chatRecord('open', open.turns, new Date(), open), 200);
// While an answer streams, each write has one chat changed (a new record object) and the rest as before.
let streaming = open;
const all = [...records.slice(1), streaming];
const write = time(() => {
	streaming = lib.chatRecord('open', streaming.turns, new Date(), streaming);
	all[all.length - 1] = streaming;
	lib.serializeHistory(lib.pruneHistory(all, lib.DEFAULT_HISTORY_LIMITS, 'open').kept, 'open');
}, 30);
// The first write after a start: every line made anew.
const cold = time(() => {
	const fresh = records.map((r) => ({ ...r }));
	lib.serializeHistory(lib.pruneHistory(fresh, lib.DEFAULT_HISTORY_LIMITS, 'c199').kept, 'c199');
}, 10);
const read = time(() => lib.parseHistory(fileText), 30);
console.log(`history file: ${records.length} chats, ${fileText.length.toLocaleString('en')} characters; prune keeps ${kept.length}, drops ${dropped.length}`);
console.log(`chat record per streamed event (a 10-question chat, ${JSON.stringify(open).length.toLocaleString('en')} chars): median ${perEvent.median.toFixed(3)} ms, max ${perEvent.max.toFixed(3)} ms (200 runs)`);
console.log(`one write while an answer streams (prune + serialise, one chat changed): median ${write.median.toFixed(1)} ms, max ${write.max.toFixed(1)} ms (30 runs)`);
console.log(`first write after a start (every chat serialised): median ${cold.median.toFixed(1)} ms, max ${cold.max.toFixed(1)} ms (10 runs)`);
console.log(`parse the file at start: median ${read.median.toFixed(1)} ms, max ${read.max.toFixed(1)} ms (30 runs)`);
