import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

type Zip = (entries: { name: string; data: Buffer }[], date?: Date) => Buffer;

describe('the release zip (scripts/zip.mjs)', () => {
	it('is a ZIP archive another tool reads back byte for byte', async () => {
		const path = '../../scripts/zip.mjs';
		const { zip } = (await import(path)) as { zip: Zip };
		const files = [
			{ name: 'main.js', data: Buffer.from('console.log("vask");\n'.repeat(500)) },
			{ name: 'manifest.json', data: readFileSync(join(__dirname, '../../manifest.json')) },
			{ name: 'styles.css', data: Buffer.from('') },
		];
		const out = join(mkdtempSync(join(tmpdir(), 'vask-zip-')), 'vask.zip');
		writeFileSync(out, zip(files, new Date(2026, 11, 5, 9, 30, 12)));
		// Python's zipfile checks every CRC and size, and gives the names, times and contents back
		const script = [
			'import json, sys, zipfile',
			'z = zipfile.ZipFile(sys.argv[1])',
			'assert z.testzip() is None',
			'print(json.dumps([[i.filename, list(i.date_time), i.compress_type, z.read(i).decode()] for i in z.infolist()]))',
		].join('\n');
		const run = spawnSync('python3', ['-c', script, out], { encoding: 'utf8' });
		expect(run.stderr).toBe('');
		const read = JSON.parse(run.stdout) as [string, number[], number, string][];
		expect(read.map((r) => r[0])).toEqual(['main.js', 'manifest.json', 'styles.css']);
		expect(read.map((r) => r[3])).toEqual(files.map((f) => f.data.toString('utf8')));
		expect(read[0]![1]).toEqual([2026, 12, 5, 9, 30, 12]);
		expect(read[0]![2]).toBe(8); // deflated
	});
});
