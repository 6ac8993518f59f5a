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
	tooManyAttempts: 'too_many_attempts',
	/** A `[[Note]]`, `#tag` or `path:Folder` in the question that names nothing in the index. */
	scopeNotFound: 'scope_not_found',
	/** A proposed change whose note changed since (or, for undo, since it was applied): nothing was written. */
	staleProposal: 'stale_proposal',
	/** This device's token may propose changes to notes but not apply, reject or undo them. */
	applyNotAllowed: 'apply_not_allowed',
	internal: 'internal',
	// client-side
	unreachable: 'server_unreachable',
	/** The server's certificate is not trusted by this device (self-signed, unknown CA). */
	tlsUntrusted: 'tls_untrusted',
	/** The certificate is for another name than the one in the server URL. */
	tlsName: 'tls_name_mismatch',
	tlsExpired: 'tls_expired',
	/** An https:// URL, but the server speaks plain HTTP there. */
	notHttps: 'not_https',
	/** An http:// URL, but the connection closed without an answer: the server probably wants https. */
	noAnswer: 'no_answer',
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
		/** `scope_not_found`: each mention that named nothing, with how to write the nearest names the index holds. */
		readonly misses: readonly ScopeMiss[] = [],
	) {
		super(message);
	}
}

import { codeNames, toScopeMisses, type ScopeMiss } from './scope';

const CODE_BY_STATUS: Record<number, string> = {
	400: ErrorCode.badRequest,
	401: ErrorCode.unauthorized,
	403: ErrorCode.forbiddenHost,
	404: ErrorCode.notFound,
	409: ErrorCode.notIndexed,
	413: ErrorCode.payloadTooLarge,
	429: ErrorCode.tooManyAttempts,
	500: ErrorCode.internal,
};

export function isRecord(v: unknown): v is Record<string, unknown> {
	return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Builds a VaskError from a parsed `{"error": {...}}` body, or null if the body has another shape. */
export function errorFromBody(body: unknown, status: number): VaskError | null {
	if (!isRecord(body) || !isRecord(body.error)) return null;
	const e = body.error;
	const code = typeof e.code === 'string' && e.code ? e.code : CODE_BY_STATUS[status] ?? ErrorCode.internal;
	const message = typeof e.message === 'string' ? e.message : '';
	const hint = typeof e.hint === 'string' ? e.hint : '';
	return new VaskError(code, message, hint, status, toScopeMisses(e.misses));
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
	const network = networkErrorCode(err);
	if (network) return new VaskError(network, networkErrorText(err));
	if (err instanceof TypeError) {
		return new VaskError(ErrorCode.unreachable, err.message || 'Failed to fetch');
	}
	const message = err instanceof Error ? err.message : String(err);
	return new VaskError(ErrorCode.internal, message);
}

/** The message and code of an error and of its causes (Node's fetch hides the reason in `cause`). */
function networkErrorText(err: unknown): string {
	const parts: string[] = [];
	let e: unknown = err;
	for (let depth = 0; depth < 4 && isRecord(e); depth++) {
		if (typeof e.code === 'string') parts.push(e.code);
		if (typeof e.message === 'string' && e.message) parts.push(e.message);
		e = e.cause;
	}
	if (typeof err === 'string') parts.push(err);
	return parts.join(': ');
}

/**
 * A TLS or protocol failure, told apart from "nothing listens there" by the words each platform
 * uses: Node (error codes), Chromium/Electron (net::ERR_*), iOS and Android web views.
 */
export function networkErrorCode(err: unknown): string | null {
	const text = networkErrorText(err);
	if (!text) return null;
	if (/CERT_HAS_EXPIRED|ERR_CERT_DATE_INVALID|certificate has expired|expired certificate/i.test(text)) return ErrorCode.tlsExpired;
	if (/ALTNAME|ERR_CERT_COMMON_NAME_INVALID|Hostname .* not verified|does not match|doesn't match/i.test(text)) return ErrorCode.tlsName;
	if (
		/SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER|ERR_CERT_AUTHORITY_INVALID|CERT_UNTRUSTED|certificate (is )?(not trusted|invalid|unknown)|Trust anchor|certificate for this server is invalid|unable to verify/i.test(
			text,
		)
	) {
		return ErrorCode.tlsUntrusted;
	}
	if (/WRONG_VERSION_NUMBER|wrong version number|ERR_SSL_PROTOCOL_ERROR|EPROTO|packet length too long|record layer/i.test(text)) {
		return ErrorCode.notHttps;
	}
	if (/UND_ERR_SOCKET|other side closed|socket hang up|ERR_EMPTY_RESPONSE|ECONNRESET|HPE_INVALID|Parse Error|ERR_INVALID_HTTP_RESPONSE/i.test(text)) {
		return ErrorCode.noAnswer;
	}
	return null;
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
				message: 'The vask token is wrong, missing or revoked, so the server refused the request.',
				hint:
					`On the server's machine, from ${VASK_FOLDER}: \`${tokenCommand(ctx.vaultPath)}\` prints the token for Obsidian on that machine; ` +
					'for another device (a phone, a second laptop) `uv run vask token add NAME` makes its own token. Paste it into Settings → Vask → Token. `uv run vask token list` shows which devices have one.',
			};
		case ErrorCode.tooManyAttempts:
			return {
				code: e.code,
				message: serverMsg || 'Too many wrong tokens were sent from this address, so the server waits before it checks another.',
				hint: serverHint || 'Wait a minute, check the token in Settings → Vask, and try again.',
			};
		case ErrorCode.tlsUntrusted:
			return {
				code: e.code,
				message: `This device does not trust the server's certificate${where}, so it will not connect (that is what keeps others from posing as your server).`,
				hint:
					'Install the certificate authority that signed it on this device (mkcert or your own CA: iOS needs it installed and then trusted in Settings → General → About → Certificate Trust Settings), or use a publicly trusted certificate such as Tailscale serve gives. The README section "One server, several devices" has the steps.',
			};
		case ErrorCode.tlsName:
			return {
				code: e.code,
				message: `The server's certificate is for another name than the one in the server URL${where}.`,
				hint: 'Use the name (or IP address) the certificate was made for in the server URL, or make a certificate that includes this one.',
			};
		case ErrorCode.tlsExpired:
			return {
				code: e.code,
				message: `The server's certificate has expired (or this device's clock is wrong)${where}.`,
				hint: 'Make a new certificate on the server and restart `uv run vask serve` with it; check the date on this device.',
			};
		case ErrorCode.notHttps:
			return {
				code: e.code,
				message: `The server does not speak HTTPS at this address${where}.`,
				hint: 'Start `uv run vask serve` with --tls-cert and --tls-key, or, on the same machine only, use http://127.0.0.1:PORT.',
			};
		case ErrorCode.noAnswer:
			return {
				code: e.code,
				message: `The server closed the connection without an answer${where}.`,
				hint: ctx.serverUrl?.startsWith('http://')
					? 'A vask server started with --tls-cert answers only HTTPS: change the server URL to https://.'
					: 'Check that the server URL points at the vask server, and that it is running.',
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
				hint:
					serverHint ||
					'Use http://127.0.0.1:PORT as the server URL, or start the server with --allowed-hosts naming the address you use.',
			};
		case ErrorCode.payloadTooLarge:
			return {
				code: e.code,
				message: serverMsg || 'The question or the conversation is too long for the server.',
				hint: serverHint || 'Start a new chat, or ask a shorter question.',
			};
		case ErrorCode.scopeNotFound:
			// The server's message names the mention and its hint the closest names; the chat pane
			// also turns the error's misses into buttons that ask again with those names.
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
