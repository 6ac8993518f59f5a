import { describe, expect, it } from 'vitest';
import { NdjsonParseError, NdjsonParser, readNdjson } from '../../src/lib/ndjson';

const enc = new TextEncoder();

function streamOf(chunks: Uint8Array[]): ReadableStream<Uint8Array> {
	return new ReadableStream({
		start(c) {
			for (const ch of chunks) c.enqueue(ch);
			c.close();
		},
	});
}

describe('NdjsonParser', () => {
	it('parses whole lines in one chunk', () => {
		const p = new NdjsonParser();
		expect(p.push('{"a":1}\n{"b":2}\n')).toEqual([{ a: 1 }, { b: 2 }]);
		expect(p.end()).toEqual([]);
	});

	it('joins a line split across chunks at every possible position', () => {
		const text = '{"type":"token","text":"hello"}\n{"type":"done","answer":"hi"}\n';
		for (let cut = 0; cut <= text.length; cut++) {
			const p = new NdjsonParser();
			const got = [...p.push(text.slice(0, cut)), ...p.push(text.slice(cut)), ...p.end()];
			expect(got, `cut at ${cut}`).toEqual([
				{ type: 'token', text: 'hello' },
				{ type: 'done', answer: 'hi' },
			]);
		}
	});

	it('decodes a multi-byte UTF-8 character split between chunks', () => {
		const bytes = enc.encode('{"text":"naïve 日本 🙂"}\n');
		// split inside every multi-byte sequence
		for (let cut = 1; cut < bytes.length; cut++) {
			const p = new NdjsonParser();
			const got = [...p.push(bytes.slice(0, cut)), ...p.push(bytes.slice(cut)), ...p.end()];
			expect(got, `cut at byte ${cut}`).toEqual([{ text: 'naïve 日本 🙂' }]);
		}
	});

	it('feeds one byte at a time', () => {
		const bytes = enc.encode('{"x":"é"}\r\n\n{"y":[1,2]}');
		const p = new NdjsonParser();
		const got: unknown[] = [];
		for (const b of bytes) got.push(...p.push(new Uint8Array([b])));
		expect(got).toEqual([{ x: 'é' }]); // the last line has no newline yet
		expect(p.end()).toEqual([{ y: [1, 2] }]);
	});

	it('skips blank lines and strips CR', () => {
		const p = new NdjsonParser();
		expect(p.push('\n  \r\n{"a":1}\r\n\n')).toEqual([{ a: 1 }]);
	});

	it('throws NdjsonParseError with the bad line', () => {
		const p = new NdjsonParser();
		let caught: unknown;
		try {
			p.push('{"ok":true}\n{not json}\n');
		} catch (err) {
			caught = err;
		}
		expect(caught).toBeInstanceOf(NdjsonParseError);
		expect((caught as NdjsonParseError).line).toBe('{not json}');
	});
});

describe('readNdjson', () => {
	it('yields values from a byte stream in order, across chunk and UTF-8 boundaries', async () => {
		const all = enc.encode('{"n":1,"s":"ü"}\n{"n":2}\n{"n":3}');
		const chunks = [all.slice(0, 13), all.slice(13, 14), all.slice(14, 20), all.slice(20)];
		const got: unknown[] = [];
		for await (const v of readNdjson(streamOf(chunks))) got.push(v);
		expect(got).toEqual([{ n: 1, s: 'ü' }, { n: 2 }, { n: 3 }]);
	});
});
