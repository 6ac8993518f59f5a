/**
 * Incremental NDJSON (newline-delimited JSON) parser. Bytes may arrive split
 * anywhere: in the middle of a line, or in the middle of a UTF-8 sequence.
 */

export class NdjsonParseError extends Error {
	override readonly name = 'NdjsonParseError';
	constructor(readonly line: string, cause: unknown) {
		super(`Invalid JSON line: ${line.length > 200 ? line.slice(0, 200) + '…' : line}`);
		this.cause = cause;
	}
}

export class NdjsonParser {
	private readonly decoder = new TextDecoder('utf-8');
	private buffer = '';

	/** Feeds a chunk; returns every complete value it finished. */
	push(chunk: Uint8Array | string): unknown[] {
		this.buffer += typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true });
		const out: unknown[] = [];
		let nl = this.buffer.indexOf('\n');
		while (nl !== -1) {
			const line = this.buffer.slice(0, nl);
			this.buffer = this.buffer.slice(nl + 1);
			this.parseLine(line, out);
			nl = this.buffer.indexOf('\n');
		}
		return out;
	}

	/** Ends the input; a last line without a trailing newline still counts. */
	end(): unknown[] {
		this.buffer += this.decoder.decode();
		const rest = this.buffer;
		this.buffer = '';
		const out: unknown[] = [];
		this.parseLine(rest, out);
		return out;
	}

	private parseLine(raw: string, out: unknown[]): void {
		const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
		if (line.trim() === '') return;
		try {
			out.push(JSON.parse(line));
		} catch (err) {
			throw new NdjsonParseError(line, err);
		}
	}
}

/** Reads a byte stream as NDJSON values, in order. */
export async function* readNdjson(body: ReadableStream<Uint8Array>): AsyncGenerator<unknown, void, undefined> {
	const reader = body.getReader();
	const parser = new NdjsonParser();
	try {
		for (;;) {
			const { value, done } = await reader.read();
			if (done) break;
			if (value) yield* parser.push(value);
		}
		yield* parser.end();
	} finally {
		reader.releaseLock();
	}
}
