/**
 * Incremental Server-Sent Events parser (the text/event-stream format of the
 * HTML standard), for use with a streaming fetch: unlike EventSource, fetch
 * can send an Authorization header.
 */

export interface SseEvent {
	/** `event:` field; "message" when absent. */
	event: string;
	/** `data:` lines joined with "\n". */
	data: string;
	/** Last event id seen on the stream (may come from an earlier event). */
	id: string;
	/** `retry:` in ms, when this event carried one. */
	retry?: number;
}

export interface SseHandlers {
	onEvent(event: SseEvent): void;
	/** Comment lines (`: ping`), text after the colon. Useful as a heartbeat. */
	onComment?(text: string): void;
}

export class SseParser {
	private readonly decoder = new TextDecoder('utf-8');
	private buffer = '';
	private sawFirstChunk = false;
	private eventType = '';
	private dataLines: string[] = [];
	private hasData = false;
	private lastId = '';
	private retry: number | undefined;

	constructor(private readonly handlers: SseHandlers) {}

	push(chunk: Uint8Array | string): void {
		let text = typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true });
		if (!this.sawFirstChunk && text.length > 0) {
			this.sawFirstChunk = true;
			if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
		}
		this.buffer += text;
		this.drain(false);
	}

	/** Ends the stream. An event not followed by a blank line is dropped, as the standard says. */
	end(): void {
		this.buffer += this.decoder.decode();
		this.drain(true);
		this.resetEvent();
	}

	private drain(final: boolean): void {
		let start = 0;
		const buf = this.buffer;
		for (let i = 0; i < buf.length; i++) {
			const c = buf.charCodeAt(i);
			if (c !== 10 && c !== 13) continue;
			if (c === 13 && i === buf.length - 1 && !final) {
				// A CR at the end of the chunk: it may be half of a CRLF. Wait for more.
				break;
			}
			this.line(buf.slice(start, i));
			if (c === 13 && buf.charCodeAt(i + 1) === 10) i++;
			start = i + 1;
		}
		this.buffer = buf.slice(start);
		if (final && this.buffer.length > 0) {
			this.line(this.buffer);
			this.buffer = '';
		}
	}

	private line(line: string): void {
		if (line === '') {
			this.dispatch();
			return;
		}
		if (line.charCodeAt(0) === 58 /* : */) {
			this.handlers.onComment?.(line.slice(1).replace(/^ /, ''));
			return;
		}
		const colon = line.indexOf(':');
		const field = colon === -1 ? line : line.slice(0, colon);
		let value = colon === -1 ? '' : line.slice(colon + 1);
		if (value.startsWith(' ')) value = value.slice(1);
		switch (field) {
			case 'event':
				this.eventType = value;
				break;
			case 'data':
				this.dataLines.push(value);
				this.hasData = true;
				break;
			case 'id':
				if (!value.includes('\u0000')) this.lastId = value;
				break;
			case 'retry':
				if (/^\d+$/.test(value)) this.retry = Number(value);
				break;
			default:
				// unknown fields are ignored
				break;
		}
	}

	private dispatch(): void {
		if (!this.hasData) {
			this.resetEvent();
			return;
		}
		const ev: SseEvent = {
			event: this.eventType || 'message',
			data: this.dataLines.join('\n'),
			id: this.lastId,
		};
		if (this.retry !== undefined) ev.retry = this.retry;
		this.resetEvent();
		this.handlers.onEvent(ev);
	}

	private resetEvent(): void {
		this.eventType = '';
		this.dataLines = [];
		this.hasData = false;
		this.retry = undefined;
	}
}
