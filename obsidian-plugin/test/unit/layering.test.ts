import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const libDir = join(__dirname, '../../src/lib');

describe('src/lib layering', () => {
	it('never imports obsidian at run time (type-only imports are allowed)', () => {
		const offenders: string[] = [];
		let imports = 0;
		for (const name of readdirSync(libDir).filter((f) => f.endsWith('.ts'))) {
			const text = readFileSync(join(libDir, name), 'utf8');
			for (const m of text.matchAll(/^\s*import\s+(type\s+)?[^;]*?from\s+['"]([^'"]+)['"]/gms)) {
				imports++;
				const typeOnly = Boolean(m[1]);
				const from = m[2]!;
				if (from === 'obsidian' && !typeOnly) offenders.push(name);
				if (from.startsWith('../')) offenders.push(`${name} imports ${from}`);
			}
			if (/require\(['"]obsidian['"]\)|import\(['"]obsidian['"]\)/.test(text)) offenders.push(name);
		}
		expect(offenders).toEqual([]);
		expect(imports).toBeGreaterThan(10); // the scan does see the imports
	});
});
