// How long ranking the [[ suggestions takes per keystroke on a real vault's note names.
//   node scripts/bench-suggest.mjs <vault> [--copies N] [--against other/suggest.ts]
// --copies: the vault's notes N times over (in other folders), for a larger vault.
// --against: a second version of src/lib/suggest.ts, measured alternately with this one in one sitting.
// A fixed CPU loop is timed before each round: its time says how loaded the machine was.
import { readdirSync, statSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import esbuild from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const vault = args.find((a, i) => !a.startsWith('--') && !args[i - 1]?.startsWith('--'));
if (!vault) {
	console.error('usage: node scripts/bench-suggest.mjs <vault> [--copies N] [--against other/suggest.ts]');
	process.exit(2);
}
const opt = (name) => {
	const i = args.indexOf(name);
	return i === -1 ? undefined : args[i + 1];
};
const copies = Number(opt('--copies') ?? 1);
const QUERIES = ['p', 'pl', 'plu', 'plug', 'plugin', 'dataview', 'how to', 'zzz', 'templ', 'daily/2'];
const ROUNDS = 5;

const notes = [];
(function walk(dir) {
	for (const d of readdirSync(join(vault, dir), { withFileTypes: true })) {
		if (d.name.startsWith('.')) continue;
		const rel = dir ? `${dir}/${d.name}` : d.name;
		if (d.isDirectory()) walk(rel);
		else if (d.name.endsWith('.md')) notes.push({ path: rel, basename: d.name.slice(0, -3), aliases: [], mtime: statSync(join(vault, rel)).mtimeMs });
	}
})('');
const list = Array.from({ length: copies }, (_, i) => notes.map((n) => ({ ...n, path: copies > 1 ? `copy${i}/${n.path}` : n.path }))).flat();

const tmp = mkdtempSync(join(tmpdir(), 'vask-bench-suggest-'));
async function load(name, file) {
	const out = join(tmp, `${name}.mjs`);
	await esbuild.build({ entryPoints: [file], bundle: true, format: 'esm', platform: 'node', outfile: out, logLevel: 'warning' });
	return { name, rankNotes: (await import(pathToFileURL(out).href)).rankNotes };
}
const versions = [await load('this', resolve(here, '../src/lib/suggest.ts'))];
if (opt('--against')) versions.push(await load('against', resolve(opt('--against'))));

function spin() {
	const t = performance.now();
	let x = 0;
	for (let i = 0; i < 5e7; i++) x += i % 7;
	return [performance.now() - t, x];
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const times = Object.fromEntries(versions.map((v) => [v.name, []]));
for (let round = 0; round < ROUNDS; round++) {
	const [ref] = spin();
	const line = [`round ${round + 1}: reference loop ${ref.toFixed(0)} ms`];
	for (const v of round % 2 ? [...versions].reverse() : versions) {
		const ts = [];
		for (const q of QUERIES) {
			const t = performance.now();
			v.rankNotes(q, list);
			ts.push(performance.now() - t);
		}
		times[v.name].push(...ts);
		line.push(`${v.name} median ${median(ts).toFixed(1)} ms`);
	}
	console.log(line.join(' | '));
}
console.log(`${list.length} notes, ${QUERIES.length} queries x ${ROUNDS} rounds`);
for (const v of versions) {
	const ts = times[v.name];
	console.log(`${v.name}: median ${median(ts).toFixed(1)} ms, p90 ${[...ts].sort((a, b) => a - b)[Math.floor(ts.length * 0.9)].toFixed(1)} ms per keystroke`);
}
rmSync(tmp, { recursive: true, force: true });
