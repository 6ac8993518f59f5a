/**
 * Where the `vask` executable and the pair file are on this computer: pure functions of the platform,
 * the environment and the home folder, so that they are tested on any OS.
 */

export interface Host {
	platform: string; // Node's platform name: 'linux', 'darwin', 'win32', …
	env: Record<string, string | undefined>;
	home: string;
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

/**
 * Where to look for `vask`, in order: the PATH, then where `uv tool install` and `pipx` put it, and
 * Homebrew's folders: Obsidian started from the Dock or a desktop menu gets a shorter PATH than a
 * terminal, without ~/.local/bin.
 */
export function vaskCandidates(host: Host): string[] {
	const join = joiner(host.platform);
	const windows = host.platform === 'win32';
	const names = windows ? ['vask.exe', 'vask.cmd', 'vask'] : ['vask'];
	const pathVar = host.env.PATH ?? host.env.Path ?? '';
	const dirs = pathVar.split(windows ? ';' : ':').filter((d) => d.trim() !== '');
	dirs.push(join(host.home, '.local', 'bin'));
	if (!windows) dirs.push('/opt/homebrew/bin', '/usr/local/bin');
	const out: string[] = [];
	for (const dir of dirs) for (const name of names) {
		const path = join(dir, name);
		if (!out.includes(path)) out.push(path);
	}
	return out;
}

/** The `vask` to start: the one set in the settings, else the first found; null when there is none. */
export function findVask(host: Host, isFile: (path: string) => boolean, configured = ''): string | null {
	const set = configured.trim();
	if (set) return isFile(set) ? set : null;
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
