import { describe, expect, it } from 'vitest';
import { SseParser, type SseEvent } from '../../src/lib/sse';

function collect(): { events: SseEvent[]; comments: string[]; parser: SseParser } {
	const events: SseEvent[] = [];
	const comments: string[] = [];
	const parser = new SseParser({ onEvent: (e) => events.push(e), onComment: (c) => comments.push(c) });
	return { events, comments, parser };
}

describe('SseParser', () => {
	it('parses named events with JSON data', () => {
		const { events, parser } = collect();
		parser.push('event: status\ndata: {"state":"idle","notes":3}\n\n');
		expect(events).toEqual([{ event: 'status', data: '{"state":"idle","notes":3}', id: '' }]);
		expect(JSON.parse(events[0]!.data)).toEqual({ state: 'idle', notes: 3 });
	});

	it('defaults the event name to "message" and joins multi-line data with \\n', () => {
		const { events, parser } = collect();
		parser.push('data: one\ndata:two\ndata:  three\n\n');
		expect(events).toEqual([{ event: 'message', data: 'one\ntwo\n three', id: '' }]);
	});

	it('reports comments (heartbeats) and does not dispatch them as events', () => {
		const { events, comments, parser } = collect();
		parser.push(': ping\n\n:ping2\n\n');
		expect(events).toEqual([]);
		expect(comments).toEqual(['ping', 'ping2']);
	});

	it('handles CRLF and CR line endings, including a CRLF split across chunks', () => {
		const { events, parser } = collect();
		parser.push('event: status\r');
		parser.push('\ndata: a\r\r');
		parser.push('event: status\rdata: b\r\n\r\n');
		expect(events.map((e) => e.data)).toEqual(['a', 'b']);
		expect(events.every((e) => e.event === 'status')).toBe(true);
	});

	it('assembles events split at every byte, including inside UTF-8 sequences', () => {
		const text = 'event: status\ndata: {"message":"Ollama ist nicht erreichbar – prüfen"}\n\n: ping\n\nevent: status\ndata: {"n":2}\n\n';
		const bytes = new TextEncoder().encode(text);
		for (let cut = 1; cut < bytes.length; cut += 3) {
			const { events, comments, parser } = collect();
			parser.push(bytes.slice(0, cut));
			parser.push(bytes.slice(cut));
			expect(events.map((e) => JSON.parse(e.data)), `cut ${cut}`).toEqual([
				{ message: 'Ollama ist nicht erreichbar – prüfen' },
				{ n: 2 },
			]);
			expect(comments).toEqual(['ping']);
		}
	});

	it('ignores an event without data, keeps the last id, parses retry', () => {
		const { events, parser } = collect();
		parser.push('event: status\n\nid: 7\nretry: 3000\ndata: x\n\ndata: y\n\n');
		expect(events).toEqual([
			{ event: 'message', data: 'x', id: '7', retry: 3000 },
			{ event: 'message', data: 'y', id: '7' },
		]);
	});

	it('drops an unterminated event at the end of the stream, strips a leading BOM', () => {
		const { events, parser } = collect();
		parser.push('\uFEFFdata: first\n\ndata: unfinished');
		parser.end();
		expect(events.map((e) => e.data)).toEqual(['first']);
	});

	it('treats a field without a colon as a field with an empty value', () => {
		const { events, parser } = collect();
		parser.push('data\n\n');
		expect(events).toEqual([{ event: 'message', data: '', id: '' }]);
	});
});
