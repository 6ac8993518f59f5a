/**
 * Errors from the vask server (or from failing to reach it), and their
 * translation into plain words for the user.
 */

/** Error codes the server sends, plus the ones the client makes up itself. */
export const ErrorCode = {
	unauthorized: 'unauthorized',
	forbiddenHost: 'forbidden_host',
	badRequest: 'bad_request',
	notFound: 'not_found',
	payloadTooLarge: 'payload_too_large',
	ollamaUnavailable: 'ollama_unavailable',
	modelMissing: 'model_missing',
	notIndexed: 'not_indexed',
	/** A `[[Note]]`, `#tag` or `path:Folder` in the question that names nothing in the index. */
	scopeNotFound: 'scope_not_found',
	internal: 'internal',
	// client-side
	unreachable: 'server_unreachable',
	aborted: 'aborted',
	timeout: 'timeout',
	badResponse: 'bad_response',
	incomplete: 'incomplete',
	badSettings: 'bad_settings',
} as const;

export class VaskError extends Error {
	override readonly name = 'VaskError';
	constructor(
		readonly code: string,
		message: string,
		readonly hint: string = '',
		/** HTTP status, or 0 when there was no HTTP response. */
		readonly status: number = 0,
		/** `scope_not_found`: how to write the nearest names the index holds (`[[Note]]`, `#tag`, `path:"…"`). */
		readonly closest: readonly string[] = [],
	) {
		super(message);
	}
}

import { codeNames } from './scope';

const CODE_BY_STATUS: Record<number, string> = {
	400: ErrorCode.badRequest,
	401: ErrorCode.unauthorized,
	403: ErrorCode.forbiddenHost,
	404: ErrorCode.notFound,
	409: ErrorCode.notIndexed,
	413: ErrorCode.payloadTooLarge,
	500: ErrorCode.internal,
};

function isRecord(v: unknown): v is Record<string, unknown> {
	return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Builds a VaskError from a parsed `{"error": {...}}` body, or null if the body has another shape. */
export function errorFromBody(body: unknown, status: number): VaskError | null {
	if (!isRecord(body) || !isRecord(body.error)) return null;
	const e = body.error;
	const code = typeof e.code === 'string' && e.code ? e.code : CODE_BY_STATUS[status] ?? ErrorCode.internal;
	const message = typeof e.message === 'string' ? e.message : '';
	const hint = typeof e.hint === 'string' ? e.hint : '';
	const closest = Array.isArray(e.closest) ? e.closest.filter((c): c is string => typeof c === 'string' && c !== '') : [];
	return new VaskError(code, message, hint, status, closest);
}

/** Reads a failed response's body and turns it into a VaskError. Never throws. */
export async function errorFromResponse(res: Response): Promise<VaskError> {
	let text = '';
	try {
		text = await res.text();
	} catch {
		// body unreadable: fall through to the status code
	}
	let parsed: unknown = null;
	try {
		parsed = text ? JSON.parse(text) : null;
	} catch {
		parsed = null;
	}
	const fromBody = errorFromBody(parsed, res.status);
	if (fromBody) return fromBody;
	const code = CODE_BY_STATUS[res.status] ?? (res.status >= 500 ? ErrorCode.internal : ErrorCode.badResponse);
	return new VaskError(code, `HTTP ${res.status}${res.statusText ? ' ' + res.statusText : ''}`, '', res.status);
}

export function isAbortError(err: unknown): boolean {
	if (err instanceof VaskError) return err.code === ErrorCode.aborted;
	return isRecord(err) && (err as { name?: unknown }).name === 'AbortError';
}

/**
 * Normalises anything thrown by fetch / stream reading into a VaskError.
 * fetch rejects with a TypeError when nothing listens on the port (or the
 * request is blocked before it gets an answer): that is "server unreachable".
 */
export function toVaskError(err: unknown): VaskError {
	if (err instanceof VaskError) return err;
	if (isAbortError(err)) return new VaskError(ErrorCode.aborted, 'Stopped.');
	if (err instanceof TypeError) {
		return new VaskError(ErrorCode.unreachable, err.message || 'Failed to fetch');
	}
	const message = err instanceof Error ? err.message : String(err);
	return new VaskError(ErrorCode.internal, message);
}

/** What to tell the user. `message` and `hint` are Markdown. */
export interface PlainError {
	code: string;
	message: string;
	hint: string;
}

export interface ErrorContext {
	/** Absolute path of the vault on disk, if known. */
	vaultPath?: string | null;
	/** The server URL from the settings. */
	serverUrl?: string;
}

/**
 * The README installs vask with uv into the project's .venv, so `vask` alone is
 * not on PATH: commands are `uv run vask ...`, run from the vask folder.
 */
export const VASK_FOLDER = 'the vask folder (where you installed it)';

export function serveCommand(vaultPath?: string | null): string {
	const p = vaultPath && vaultPath.trim() ? vaultPath : '<path to your vault>';
	return `uv run vask serve --vault "${p}"`;
}

export function tokenCommand(vaultPath?: string | null): string {
	const p = vaultPath && vaultPath.trim() ? vaultPath : '<path to your vault>';
	return `uv run vask token --vault "${p}"`;
}

/** Turns any error into a message a person can act on. */
export function describeError(err: unknown, ctx: ErrorContext = {}): PlainError {
	const e = toVaskError(err);
	const serverMsg = e.message.trim();
	const serverHint = e.hint.trim();
	const where = ctx.serverUrl ? ` (looked for it at ${ctx.serverUrl})` : '';
	switch (e.code) {
		case ErrorCode.unreachable:
			return {
				code: e.code,
				message: `vask server is not running. Start it in a terminal, from ${VASK_FOLDER}: \`${serveCommand(ctx.vaultPath)}\``,
				hint: `No answer from the server${where}. If it runs on another address, change the server URL in Settings → Vask.`,
			};
		case ErrorCode.unauthorized:
			return {
				code: e.code,
				message: 'The vask token is wrong or missing, so the server refused the request.',
				hint: `In a terminal, from ${VASK_FOLDER}, run \`${tokenCommand(ctx.vaultPath)}\` to print the token, then paste it into Settings → Vask → Token.`,
			};
		case ErrorCode.ollamaUnavailable:
			return {
				code: e.code,
				message: serverMsg || 'Ollama is not reachable, so vask cannot embed or answer.',
				hint: serverHint || 'Start Ollama (`ollama serve`) and try again.',
			};
		case ErrorCode.modelMissing:
			return {
				code: e.code,
				message: serverMsg || 'A model vask needs is not installed in Ollama.',
				hint: serverHint || 'Download it with `ollama pull NAME` (NAME is the missing model), then try again.',
			};
		case ErrorCode.notIndexed:
			return {
				code: e.code,
				message: serverMsg || 'The vault has not been indexed yet.',
				hint: serverHint || 'Wait for indexing to finish, or run the command "Vask: Reindex vault".',
			};
		case ErrorCode.forbiddenHost:
			return {
				code: e.code,
				message: serverMsg || 'The server refused a request from this address.',
				hint: serverHint || 'Use http://127.0.0.1:PORT as the server URL in Settings → Vask.',
			};
		case ErrorCode.payloadTooLarge:
			return {
				code: e.code,
				message: serverMsg || 'The question or the conversation is too long for the server.',
				hint: serverHint || 'Start a new chat, or ask a shorter question.',
			};
		case ErrorCode.scopeNotFound:
			// The server's message names the mention and its hint the closest names; the chat pane
			// also turns those names into buttons that ask again with them.
			return {
				code: e.code,
				message: codeNames(serverMsg) || 'Your question names a note, tag or folder that is not in the index.',
				hint: codeNames(serverHint) || 'Check the spelling, or ask without it to search every note.',
			};
		case ErrorCode.aborted:
			return { code: e.code, message: 'Stopped.', hint: '' };
		case ErrorCode.timeout:
			return {
				code: e.code,
				message: 'The vask server took too long to answer.',
				hint: serverHint || 'It may be busy indexing; try again in a moment.',
			};
		case ErrorCode.incomplete:
			return {
				code: e.code,
				message: 'The answer was cut off before it was finished.',
				hint: serverHint || 'The server may have stopped or restarted. Try again.',
			};
		case ErrorCode.badSettings:
			return { code: e.code, message: serverMsg, hint: serverHint || 'Check Settings → Vask.' };
		case ErrorCode.badResponse:
			return {
				code: e.code,
				message: `Unexpected answer from ${ctx.serverUrl ?? 'the server'}: ${serverMsg}`,
				hint: serverHint || 'Is the server URL in Settings → Vask the address the vask server listens on?',
			};
		default:
			return {
				code: e.code,
				message: serverMsg || `The vask server failed (${e.code}${e.status ? `, HTTP ${e.status}` : ''}).`,
				hint: serverHint,
			};
	}
}
