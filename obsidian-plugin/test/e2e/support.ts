/**
 * End-to-end test support (Node side): the real vask server with the fake
 * Ollama, the browser bundle of the plugin, and a static server that also
 * proxies /v1/* to vask (same origin for the page, streamed, not buffered).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import {
	cpSync,
	existsSync,
	mkdirSync,
	mkdtempSync,
	readFileSync,
	readdirSync,
	renameSync,
	rmSync,
	statSync,
	writeFileSync,
} from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, extname, join, normalize, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import esbuild from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));
export const pluginDir = resolve(here, '../..');
export const repoRoot = resolve(pluginDir, '..');

export async function freePort(): Promise<number> {
	return new Promise((res, rej) => {
		const srv = net.createServer();
		srv.unref();
		srv.on('error', rej);
		srv.listen(0, '127.0.0.1', () => {
			const { port } = srv.address() as net.AddressInfo;
			srv.close(() => res(port));
		});
	});
}

export interface Proc {
	proc: ChildProcess;
	output(): string;
	stop(): Promise<void>;
}

/** Starts a command in its own process group; resolves once stdout+stderr match `ready`. */
export function startProcess(
	cmd: string,
	args: string[],
	opts: { cwd: string; env?: NodeJS.ProcessEnv; ready: RegExp; timeoutMs: number; name: string },
): Promise<Proc & { match: RegExpMatchArray }> {
	const proc = spawn(cmd, args, {
		cwd: opts.cwd,
		env: { ...process.env, ...opts.env },
		detached: true,
		stdio: ['ignore', 'pipe', 'pipe'],
	});
	let out = '';
	let exited = false;
	const exitPromise = new Promise<void>((r) => proc.once('exit', () => r()));
	// If the test run ends without cleaning up, do not leave the server behind.
	const onExit = (): void => {
		try {
			if (!exited && proc.pid !== undefined) process.kill(-proc.pid, 'SIGKILL');
		} catch {
			// already gone
		}
	};
	process.once('exit', onExit);
	proc.once('exit', () => {
		exited = true;
		process.off('exit', onExit);
	});
	const stop = async (): Promise<void> => {
		if (exited || proc.pid === undefined) return;
		try {
			process.kill(-proc.pid, 'SIGTERM');
		} catch {
			return;
		}
		const killTimer = setTimeout(() => {
			try {
				if (!exited && proc.pid !== undefined) process.kill(-proc.pid, 'SIGKILL');
			} catch {
				// already gone
			}
		}, 5000);
		await exitPromise;
		clearTimeout(killTimer);
	};
	return new Promise((res, rej) => {
		const timer = setTimeout(() => {
			void stop();
			rej(new Error(`${opts.name} did not get ready within ${opts.timeoutMs} ms. Output:\n${out}`));
		}, opts.timeoutMs);
		const onData = (buf: Buffer): void => {
			out += buf.toString();
			const m = out.match(opts.ready);
			if (m) {
				clearTimeout(timer);
				proc.stdout?.off('data', onData);
				proc.stderr?.off('data', onData);
				// keep draining so the pipes never fill up
				proc.stdout?.on('data', (b: Buffer) => (out += b.toString()));
				proc.stderr?.on('data', (b: Buffer) => (out += b.toString()));
				res({ proc, match: m, output: () => out, stop });
			}
		};
		proc.stdout?.on('data', onData);
		proc.stderr?.on('data', onData);
		proc.once('exit', (code) => {
			clearTimeout(timer);
			rej(new Error(`${opts.name} exited with ${code} before it was ready. Output:\n${out}`));
		});
	});
}

function uv(args: string[]): [string, string[]] {
	return ['uv', ['run', '--project', repoRoot, ...args]];
}

export interface VaskServer {
	url: string;
	token: string;
	vault: string;
	fakeOllamaUrl: string;
	output(): string;
	stop(): Promise<void>;
}

/** Notes kept out of the index in the e2e vault, one per kind of rule; their words must never show. */
export const EXCLUDED_NOTES: Record<string, string> = {
	'Private/Therapy notes.md': '# Therapy notes\n\nPRIVATE-THERAPY-MARKER: nothing here may reach the plugin.\n',
	'03 Resources/Salary talk.md': '---\nvask: exclude\n---\n# Salary talk\n\nPRIVATE-SALARY-MARKER: the number I asked for.\n',
};
/** The glob that keeps Private/ out (VASK_EXCLUDE), as the status reports its rule. */
export const EXCLUDE_GLOB = 'Private/**';

export interface StartOptions {
	/** The server's environment over the tests' own (e.g. other model names). */
	env?: Record<string, string>;
	/** Sent to the fake Ollama's /fake/control before the server starts (e.g. the models it has). */
	fake?: Record<string, unknown>;
	/** false: without EXCLUDED_NOTES (the doctor counts a note excluded by its frontmatter as not indexed yet). */
	excludedNotes?: boolean;
}

/**
 * The real `vask serve` over a temp copy of sample_vault (plus EXCLUDED_NOTES,
 * kept out by VASK_EXCLUDE and by a note's frontmatter, and `extraNotes`, path → text), with the
 * test fake for Ollama.
 */
export async function startVask(extraNotes: Record<string, string> = {}, opts: StartOptions = {}): Promise<VaskServer> {
	const tmp = mkdtempSync(join(tmpdir(), 'vask-e2e-'));
	const vault = join(tmp, 'vault');
	const indexDir = join(tmp, 'index');
	cpSync(join(repoRoot, 'sample_vault'), vault, { recursive: true });
	for (const [path, text] of Object.entries({ ...(opts.excludedNotes === false ? {} : EXCLUDED_NOTES), ...extraNotes })) {
		mkdirSync(dirname(join(vault, path)), { recursive: true });
		writeFileSync(join(vault, path), text);
	}

	const [c1, a1] = uv(['python', '-m', 'tests.fake_ollama', '--port', String(await freePort())]);
	const fake = await startProcess(c1, a1, {
		cwd: repoRoot,
		ready: /listening on (http:\/\/127\.0\.0\.1:\d+)/,
		timeoutMs: 120_000,
		name: 'fake Ollama',
	});
	const fakeOllamaUrl = fake.match[1]!;
	const env = { OLLAMA_HOST: fakeOllamaUrl, VASK_EMBED_MODEL: 'fake-embed', VASK_CHAT_MODEL: 'fake-chat', VASK_EXCLUDE: EXCLUDE_GLOB, ...opts.env };
	if (opts.fake) {
		const res = await fetch(`${fakeOllamaUrl}/fake/control`, { method: 'POST', body: JSON.stringify(opts.fake) });
		if (!res.ok) {
			await fake.stop();
			throw new Error(`the fake Ollama refused ${JSON.stringify(opts.fake)}: HTTP ${res.status}`);
		}
	}
	const port = await freePort();
	const [c2, a2] = uv(['vask', 'serve', '--vault', vault, '--index-dir', indexDir, '--port', String(port)]);
	let vask: Proc;
	try {
		vask = await startProcess(c2, a2, {
			cwd: repoRoot,
			env,
			ready: /listening on (http:\/\/127\.0\.0\.1:\d+)/,
			timeoutMs: 180_000,
			name: 'vask serve',
		});
	} catch (err) {
		await fake.stop();
		throw err;
	}
	const url = `http://127.0.0.1:${port}`;
	const stop = async (): Promise<void> => {
		await vask.stop();
		await fake.stop();
		rmSync(tmp, { recursive: true, force: true });
	};
	try {
		const token = await runToken(vault, indexDir, env);
		await waitIndexed(url, token);
		return { url, token, vault, fakeOllamaUrl, output: () => vask.output(), stop };
	} catch (err) {
		const log = vask.output();
		await stop();
		throw new Error(`${String(err)}\nvask serve output:\n${log}`);
	}
}

async function runToken(vault: string, indexDir: string, env: NodeJS.ProcessEnv): Promise<string> {
	const [cmd, args] = uv(['vask', 'token', '--vault', vault, '--index-dir', indexDir]);
	return new Promise((res, rej) => {
		const p = spawn(cmd, args, { cwd: repoRoot, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
		let out = '';
		let err = '';
		p.stdout.on('data', (b: Buffer) => (out += b.toString()));
		p.stderr.on('data', (b: Buffer) => (err += b.toString()));
		p.once('exit', (code) => {
			const token = out.trim().split(/\s+/).pop() ?? '';
			if (code === 0 && token) res(token);
			else rej(new Error(`vask token failed (${code}): ${out}${err}`));
		});
	});
}

/** A note as the stand-in metadata cache serves it. */
export interface NoteInfo {
	path: string;
	mtime: number;
	aliases: string[];
	tags: string[];
}

/** A YAML list as the sample vault writes them: `[a, b]`, `a`, or `- a` lines. */
function yamlList(front: string, key: string): string[] {
	const inline = new RegExp(`^${key}:[ \\t]*(.+)$`, 'm').exec(front);
	if (inline) {
		const v = inline[1]!.trim();
		const items = v.startsWith('[') ? v.slice(1, -1).split(',') : [v];
		return items.map((x) => x.trim().replace(/^["']|["']$/g, '')).filter(Boolean);
	}
	const block = new RegExp(`^${key}:\\s*\\n((?:[ \\t]*-[^\\n]*\\n?)+)`, 'm').exec(front);
	return block ? [...block[1]!.matchAll(/-\s*(.+)/g)].map((m) => m[1]!.trim().replace(/^["']|["']$/g, '')) : [];
}

/**
 * The vault's notes with their aliases and tags, read from disk: what
 * Obsidian's metadata cache would hold, for the stand-in (the suggestions
 * read it). Hidden folders are skipped, as Obsidian does.
 */
export function readVaultNotes(root: string, dir = ''): NoteInfo[] {
	const out: NoteInfo[] = [];
	for (const d of readdirSync(join(root, dir), { withFileTypes: true })) {
		if (d.name.startsWith('.')) continue;
		const rel = dir ? `${dir}/${d.name}` : d.name;
		if (d.isDirectory()) out.push(...readVaultNotes(root, rel));
		else if (d.name.endsWith('.md')) {
			const text = readFileSync(join(root, rel), 'utf8');
			const front = /^---\n([\s\S]*?)\n---/.exec(text)?.[1] ?? '';
			const body = text.slice(front ? front.length + 8 : 0).replace(/```[\s\S]*?```/g, '');
			const inline = [...body.matchAll(/(?:^|\s)#([\p{L}_\-/][\p{L}\p{N}_\-/]*)/gu)].map((m) => m[1]!);
			const tags = [...new Set([...yamlList(front, 'tags'), ...inline].map((t) => t.replace(/^#/, '')))];
			out.push({ path: rel, mtime: statSync(join(root, rel)).mtimeMs, aliases: yamlList(front, 'aliases'), tags });
		}
	}
	return out;
}

/** Polls GET /v1/health until the index has notes and nothing pending. */
async function waitIndexed(url: string, token: string, timeoutMs = 180_000): Promise<void> {
	const end = Date.now() + timeoutMs;
	let last = '';
	while (Date.now() < end) {
		try {
			const res = await fetch(`${url}/v1/health`, { headers: { Authorization: `Bearer ${token}` } });
			last = await res.text();
			if (res.ok) {
				const h = JSON.parse(last) as { index?: { notes: number; pending: number } };
				if (h.index && h.index.notes > 0 && h.index.pending === 0) return;
			}
		} catch (e) {
			last = String(e);
		}
		await new Promise((r) => setTimeout(r, 300));
	}
	throw new Error(`the vault was not indexed in time; last health: ${last}`);
}

/** Bundles the browser harness with `obsidian` aliased to the stand-in module; returns the page folder. */
export async function buildPage(): Promise<string> {
	const out = mkdtempSync(join(tmpdir(), 'vask-e2e-page-'));
	await esbuild.build({
		entryPoints: [join(here, 'harness.ts')],
		bundle: true,
		format: 'iife',
		platform: 'browser',
		target: 'chrome120',
		alias: { obsidian: join(here, 'obsidian-stub.ts') },
		// As in Obsidian's own bundle: Node's modules are left to a require() that only desktop reaches
		// (src/desktop/localServer.ts, behind Platform.isDesktop, which is false here as on mobile).
		external: ['child_process', 'fs', 'os'],
		sourcemap: 'inline',
		outfile: join(out, 'harness.js'),
		logLevel: 'warning',
	});
	writeFileSync(join(out, 'index.html'), readFileSync(join(here, 'index.html')));
	writeFileSync(join(out, 'theme.css'), readFileSync(join(here, 'theme.css')));
	writeFileSync(join(out, 'styles.css'), readFileSync(join(pluginDir, 'styles.css')));
	writeFileSync(join(out, 'manifest.json'), readFileSync(join(pluginDir, 'manifest.json')));
	return out;
}

const TYPES: Record<string, string> = {
	'.html': 'text/html; charset=utf-8',
	'.js': 'text/javascript; charset=utf-8',
	'.css': 'text/css; charset=utf-8',
	'.json': 'application/json',
};

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection', 'te', 'trailer']);

export interface ProxiedRequest {
	method: string;
	path: string;
	body: string;
	/** The server's HTTP status, once it answered. */
	status?: number;
}

export interface PageServer {
	url: string;
	/** Requests proxied to the server, with their bodies. */
	requests: ProxiedRequest[];
	/** Where /v1/* goes; change it to point the page elsewhere. */
	target: string;
	close(): Promise<void>;
}

/** Every file and folder under `root`, vault-relative with forward slashes. */
function listTree(root: string): { files: string[]; folders: string[] } {
	const files: string[] = [];
	const folders: string[] = [];
	const walk = (dir: string): void => {
		for (const e of readdirSync(dir, { withFileTypes: true })) {
			const abs = join(dir, e.name);
			const rel = relative(root, abs).split(sep).join('/');
			if (e.isDirectory()) {
				folders.push(rel);
				walk(abs);
			} else if (e.isFile()) files.push(rel);
		}
	};
	walk(root);
	return { files, folders };
}

/**
 * The vault on disk for the page's stand-in of Obsidian's vault adapter:
 * /__fs/{list,exists,read,write,mkdir,rename}, paths relative to the vault and
 * kept inside it. Files the plugin writes land in the real vault, where the
 * real server's watcher sees them.
 */
function serveVaultFs(vault: string, op: string, url: URL, req: http.IncomingMessage, res: http.ServerResponse): void {
	const inside = (p: string | null): string => {
		const abs = resolve(vault, p ?? '');
		if (abs !== vault && !abs.startsWith(vault + sep)) throw new Error(`outside the vault: ${p}`);
		return abs;
	};
	let body = '';
	req.on('data', (c: Buffer) => (body += c.toString()));
	req.on('end', () => {
		try {
			const path = url.searchParams.get('path');
			if (op === 'list') {
				res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(listTree(vault)));
			} else if (op === 'exists') {
				res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ exists: existsSync(inside(path)) }));
			} else if (op === 'read') {
				const abs = inside(path);
				if (!existsSync(abs)) res.writeHead(404).end('not found');
				else res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end(readFileSync(abs));
			} else if (op === 'write') {
				const abs = inside(path);
				mkdirSync(dirname(abs), { recursive: true });
				writeFileSync(abs, body);
				res.writeHead(204).end();
			} else if (op === 'mkdir') {
				mkdirSync(inside(path), { recursive: true });
				res.writeHead(204).end();
			} else if (op === 'rename') {
				const to = inside(url.searchParams.get('to'));
				mkdirSync(dirname(to), { recursive: true });
				renameSync(inside(url.searchParams.get('from')), to);
				res.writeHead(204).end();
			} else {
				res.writeHead(404).end('no such operation');
			}
		} catch (err) {
			res.writeHead(400).end(String(err));
		}
	});
}

/**
 * Serves the page folder and proxies /v1/* to `target`, piping bytes as they
 * come (NDJSON and SSE stream through). When the browser aborts, the upstream
 * request is destroyed too, so the server sees the client go away. With
 * `vault`, /__fs/* reads and writes that folder (the stand-in vault adapter).
 */
export async function startPageServer(root: string, target: string, vault?: string): Promise<PageServer> {
	const state = { target };
	const requests: ProxiedRequest[] = [];
	const sockets = new Set<net.Socket>();
	const server = http.createServer((req, res) => {
		const url = new URL(req.url ?? '/', 'http://localhost');
		if (url.pathname.startsWith('/__fs/')) {
			if (!vault) res.writeHead(404).end('no vault');
			else serveVaultFs(vault, url.pathname.slice('/__fs/'.length), url, req, res);
			return;
		}
		if (url.pathname.startsWith('/v1/')) {
			const to = new URL(url.pathname + url.search, state.target);
			const headers: http.OutgoingHttpHeaders = {};
			for (const [k, v] of Object.entries(req.headers)) {
				// The page's Origin/Referer/Host are the test server's; the proxy is the client now.
				if (HOP_BY_HOP.has(k) || k === 'host' || k === 'origin' || k === 'referer') continue;
				headers[k] = v;
			}
			const logged: ProxiedRequest = { method: req.method ?? 'GET', path: url.pathname + url.search, body: '' };
			const up = http.request(
				{ hostname: to.hostname, port: to.port, path: to.pathname + to.search, method: req.method, headers },
				(upRes) => {
					logged.status = upRes.statusCode;
					const h: http.OutgoingHttpHeaders = {};
					for (const [k, v] of Object.entries(upRes.headers)) if (!HOP_BY_HOP.has(k)) h[k] = v;
					res.writeHead(upRes.statusCode ?? 502, h);
					res.flushHeaders();
					upRes.on('data', (chunk: Buffer) => res.write(chunk));
					upRes.on('end', () => res.end());
					upRes.on('error', () => res.destroy());
				},
			);
			up.on('error', (err) => {
				if (res.headersSent) res.destroy();
				else {
					// Behave like a server that is not there: drop the connection.
					res.socket?.destroy();
					void err;
				}
			});
			res.on('close', () => {
				if (!res.writableFinished) up.destroy();
			});
			requests.push(logged);
			req.on('data', (chunk: Buffer) => (logged.body += chunk.toString()));
			req.pipe(up);
			return;
		}
		const file = normalize(join(root, url.pathname === '/' ? 'index.html' : url.pathname));
		if (!file.startsWith(root)) {
			res.writeHead(403).end();
			return;
		}
		try {
			const body = readFileSync(file);
			res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-store' });
			res.end(body);
		} catch {
			res.writeHead(404).end('not found');
		}
	});
	server.on('connection', (s) => {
		sockets.add(s);
		s.on('close', () => sockets.delete(s));
	});
	const port = await freePort();
	await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
	return {
		url: `http://127.0.0.1:${port}`,
		requests,
		get target() {
			return state.target;
		},
		set target(t: string) {
			state.target = t;
		},
		close: () =>
			new Promise<void>((r) => {
				for (const s of sockets) s.destroy();
				server.close(() => r());
			}),
	};
}
