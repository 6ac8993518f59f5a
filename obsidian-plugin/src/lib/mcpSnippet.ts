/**
 * What an agent's configuration needs to reach this vault through vask's MCP door (docs/MCP.md):
 * the `mcpServers` entry Claude Desktop, Cursor and LM Studio read, and the `claude mcp add` command.
 * Pure text: the settings tab shows it with a copy button.
 */

export interface McpTarget {
	/** The vault's folder on this computer; null where there is none (Obsidian mobile). */
	vaultPath: string | null;
	/** The vask executable the plugin runs, when it found one; else `vask` from the PATH. */
	executable?: string | null;
	/** The server's address, for an agent on another device (over HTTP, with a token of its own). */
	serverUrl: string;
}

/** The `mcpServers` JSON: `vask mcp` over stdio where the vault is on this computer, else `/mcp` over HTTP. */
export function mcpServersJson(target: McpTarget): string {
	const entry = target.vaultPath
		? { command: target.executable || 'vask', args: ['mcp', '--vault', target.vaultPath] }
		: { url: mcpUrl(target.serverUrl), headers: { Authorization: 'Bearer <a token from `vask token add NAME`>' } };
	return JSON.stringify({ mcpServers: { vask: entry } }, null, 2);
}

/** `claude mcp add …` for Claude Code, as a shell line. */
export function claudeCodeCommand(target: McpTarget): string {
	if (!target.vaultPath) {
		const header = shellWord('Authorization: Bearer TOKEN');
		return `claude mcp add --transport http vask ${shellWord(mcpUrl(target.serverUrl))} --header ${header}`;
	}
	const words = [target.executable || 'vask', 'mcp', '--vault', target.vaultPath].map(shellWord);
	return `claude mcp add vask -- ${words.join(' ')}`;
}

/** The server's `/mcp` address (whatever path or slash the URL ends with). */
export function mcpUrl(serverUrl: string): string {
	return `${serverUrl.trim().replace(/\/+$/, '') || 'http://127.0.0.1:8765'}/mcp`;
}

/** A word as a POSIX shell reads it back: as written when it is plain, else in single quotes. */
export function shellWord(word: string): string {
	if (/^[A-Za-z0-9_./:@%+=,-]+$/.test(word)) return word;
	return `'${word.replace(/'/g, `'\\''`)}'`;
}
