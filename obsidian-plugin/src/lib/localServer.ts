/**
 * Where the `vask` executable and the pair file are on this computer, and the environment the server
 * gets: pure functions of the platform, the environment and the home folder, so that they are tested
 * for Windows, macOS and Linux on any OS.
 */
import type { Launcher, PairFiles } from './supervisor';

export interface Host {
	platform: string; // Node's platform name: 'linux', 'darwin', 'win32', …
	env: Record<string, string | undefined>;
	home: string;
}

/** This computer's processes and files, as the desktop app hands them over (src/desktop/localServer.ts). */
export interface LocalSystem {
	host: Host;
	isFile: (path: string) => boolean;
	launcher: Launcher;
	files: PairFiles;
}

/**
 * The variables of a vask server that others reach over the network: the server this plugin starts
 * listens on loopback over plain HTTP (it pairs with nothing else), so they are not passed on from
 * Obsidian's environment, where they may be set for a server run by hand. (The server sets them
 * aside by itself too, when started with --pair-file.)
 */
export const NETWORK_VARIABLES = ['VASK_HOST', 'VASK_PORT', 'VASK_ALLOW_REMOTE', 'VASK_ALLOWED_HOSTS', 'VASK_TLS_CERT', 'VASK_TLS_KEY'];

/**
 * The environment `vask serve` is started with: this one, without NETWORK_VARIABLES (in any case on
 * Windows, whose names ignore it), and with its output in UTF-8, as the plugin reads it (a pipe on
 * Windows is otherwise in the ANSI code page, which lacks most of the world's letters).
 */
export function serverEnv(host: Host): Record<string, string | undefined> {
	const windows = host.platform === 'win32';
	const dropped = new Set([...NETWORK_VARIABLES, 'PYTHONIOENCODING']);
	const env: Record<string, string | undefined> = {};
	for (const [name, value] of Object.entries(host.env)) if (!dropped.has(windows ? name.toUpperCase() : name)) env[name] = value;
	env.PYTHONIOENCODING = 'utf-8';
	return env;
}

/** How to install vask, as the plugin says it (it never installs anything itself). */
export const INSTALL_HELP =
	'Install vask as a tool, from its repository (a checkout or its git URL): `uv tool install .` ' +
	'(or `pipx install .`) puts `vask` in ~/.local/bin. Then reopen Obsidian, or set the path of `vask` here. ' +
	"The vask README's \"Quick start for Obsidian\" has each step.";

function joiner(platform: string): (...parts: string[]) => string {
	const sep = platform === 'win32' ? '\\' : '/';
	return (...parts) =>
		parts
			.filter((p) => p !== '')
			.map((p, i) => (i === 0 ? p.replace(/[\\/]+$/, '') : p.replace(/^[\\/]+|[\\/]+$/g, '')))
			.join(sep);
}

/** Python versions whose per-user install folders are looked in (vask needs 3.11 or later). */
const PYTHONS = ['3.11', '3.12', '3.13', '3.14'];

/**
 * Where to look for `vask`, in order: the PATH, an active virtual environment, then where `uv tool
 * install`, `pipx` and `pip install --user` put it, and Homebrew's folders: Obsidian started from the
 * Dock, the Start menu or a desktop menu gets a shorter PATH than a terminal, without ~/.local/bin.
 * On Windows only `vask.exe`: a `.cmd` or `.bat` cannot be started without a shell.
 */
export function vaskCandidates(host: Host): string[] {
	const join = joiner(host.platform);
	const windows = host.platform === 'win32';
	const env = (name: string): string => (host.env[name] ?? '').trim();
	const name = windows ? 'vask.exe' : 'vask';
	const pathVar = windows ? env('PATH') || env('Path') : env('PATH');
	const dirs = pathVar
		.split(windows ? ';' : ':')
		.map((d) => d.trim().replace(/^"(.*)"$/, '$1'))
		.filter((d) => d !== '');
	if (env('VIRTUAL_ENV')) dirs.push(join(env('VIRTUAL_ENV'), windows ? 'Scripts' : 'bin'));
	for (const v of ['UV_TOOL_BIN_DIR', 'PIPX_BIN_DIR', 'XDG_BIN_HOME']) if (env(v)) dirs.push(env(v));
	dirs.push(join(host.home, '.local', 'bin'));
	if (windows) {
		const appData = env('APPDATA') || join(host.home, 'AppData', 'Roaming');
		const localAppData = env('LOCALAPPDATA') || join(host.home, 'AppData', 'Local');
		for (const v of PYTHONS) dirs.push(join(appData, 'Python', `Python${v.replace('.', '')}`, 'Scripts'));
		for (const v of PYTHONS) dirs.push(join(localAppData, 'Programs', 'Python', `Python${v.replace('.', '')}`, 'Scripts'));
	} else {
		if (host.platform === 'darwin') for (const v of PYTHONS) dirs.push(join(host.home, 'Library', 'Python', v, 'bin'));
		dirs.push('/opt/homebrew/bin', '/usr/local/bin');
	}
	const out: string[] = [];
	for (const dir of dirs) {
		const path = join(dir, name);
		if (!out.includes(path)) out.push(path);
	}
	return out;
}

/** A path as typed or pasted into the settings: without the quotes Windows' "Copy as path" adds, `~` expanded. */
export function typedPath(host: Host, typed: string): string {
	let path = typed.trim().replace(/^"(.*)"$/, '$1').trim();
	if (path === '~' || path.startsWith('~/') || (host.platform === 'win32' && path.startsWith('~\\'))) path = host.home + path.slice(1);
	return path;
}

/** What a path to `vask` looks like on this system (the setting's placeholder). */
export function executableExample(host: Host): string {
	return host.platform === 'win32' ? `${host.home}\\.local\\bin\\vask.exe` : '/path/to/vask';
}

/** Why the executable set in the settings cannot be started as it is, or null. */
export function executableProblem(host: Host, path: string): string | null {
	if (host.platform === 'win32' && /\.(cmd|bat)$/i.test(path))
		return `${path} is a script that needs a shell: set the path of vask.exe (in the same folder, or a virtual environment's Scripts folder).`;
	return null;
}

/** The `vask` to start: the one set in the settings, else the first found; null when there is none. */
export function findVask(host: Host, isFile: (path: string) => boolean, configured = ''): string | null {
	const set = typedPath(host, configured);
	if (set) return isFile(set) && executableProblem(host, set) === null ? set : null;
	return vaskCandidates(host).find(isFile) ?? null;
}

/** FNV-1a, 64 bits, as 16 hex digits: a short stable name for a vault's path (not a secret). */
export function pathHash(text: string): string {
	let h = 0xcbf29ce484222325n;
	for (const byte of new TextEncoder().encode(text)) {
		h ^= BigInt(byte);
		h = (h * 0x100000001b3n) & 0xffffffffffffffffn;
	}
	return h.toString(16).padStart(16, '0');
}

/**
 * The pair file for a vault: in a per-user folder outside the vault (a vault is often synced to other
 * devices, and the file holds a token): $XDG_RUNTIME_DIR/vask (a private tmpfs) or ~/.cache/vask on Linux,
 * ~/Library/Caches/vask on macOS, %LOCALAPPDATA%\vask on Windows; one file per vault.
 */
export function pairFilePath(host: Host, vaultPath: string): string {
	const join = joiner(host.platform);
	let dir: string;
	if (host.platform === 'win32') dir = join(host.env.LOCALAPPDATA || join(host.home, 'AppData', 'Local'), 'vask');
	else if (host.platform === 'darwin') dir = join(host.home, 'Library', 'Caches', 'vask');
	else dir = host.env.XDG_RUNTIME_DIR ? join(host.env.XDG_RUNTIME_DIR, 'vask') : join(host.env.XDG_CACHE_HOME || join(host.home, '.cache'), 'vask');
	return join(dir, `pair-${pathHash(vaultPath)}.json`);
}
