import { describe, expect, it } from 'vitest';
import { claudeCodeCommand, mcpServersJson, mcpUrl, shellWord } from '../../src/lib/mcpSnippet';

describe('the MCP snippet for this vault', () => {
	it('runs vask mcp on this vault over stdio, with the executable the plugin found', () => {
		const json = JSON.parse(mcpServersJson({ vaultPath: '/Users/me/My Notes', executable: '/opt/vask/bin/vask', serverUrl: '' }));
		expect(json).toEqual({ mcpServers: { vask: { command: '/opt/vask/bin/vask', args: ['mcp', '--vault', '/Users/me/My Notes'] } } });
		expect(JSON.parse(mcpServersJson({ vaultPath: 'C:\\Notes', serverUrl: '' })).mcpServers.vask.command).toBe('vask');
	});

	it('points a device without the vault on disk at /mcp with a token of its own', () => {
		const json = JSON.parse(mcpServersJson({ vaultPath: null, serverUrl: 'https://vask.home.arpa:8765/' }));
		expect(json.mcpServers.vask.url).toBe('https://vask.home.arpa:8765/mcp');
		expect(json.mcpServers.vask.headers.Authorization).toMatch(/^Bearer /);
		expect(claudeCodeCommand({ vaultPath: null, serverUrl: 'https://h:8765' })).toBe(
			"claude mcp add --transport http vask https://h:8765/mcp --header 'Authorization: Bearer TOKEN'",
		);
	});

	it('quotes what a shell would split or expand in the claude mcp add line', () => {
		expect(claudeCodeCommand({ vaultPath: "/Users/me/Joe's Notes", serverUrl: '' })).toBe(
			"claude mcp add vask -- vask mcp --vault '/Users/me/Joe'\\''s Notes'",
		);
		expect(claudeCodeCommand({ vaultPath: '/srv/notes', executable: '/usr/bin/vask', serverUrl: '' })).toBe(
			'claude mcp add vask -- /usr/bin/vask mcp --vault /srv/notes',
		);
		expect(shellWord('$HOME')).toBe("'$HOME'");
		expect(shellWord('a b')).toBe("'a b'");
	});

	it('the /mcp address from any form of the server URL', () => {
		expect(mcpUrl('http://127.0.0.1:8765')).toBe('http://127.0.0.1:8765/mcp');
		expect(mcpUrl(' http://127.0.0.1:8765// ')).toBe('http://127.0.0.1:8765/mcp');
		expect(mcpUrl('')).toBe('http://127.0.0.1:8765/mcp');
	});
});
