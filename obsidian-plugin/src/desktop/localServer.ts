/**
 * Desktop only: Node's modules for the server supervisor (src/lib/supervisor.ts). They are required
 * here, behind Platform.isDesktop, so that Obsidian mobile (which has no Node) never loads them; the
 * rest of the plugin sees only the interfaces of src/lib/nodeSystem.ts.
 */
import { Platform } from 'obsidian';
import { serverEnv, type Host, type LocalSystem } from '../lib/localServer';
import { nodeIsFile, nodeLauncher, nodePairFiles, type ChildProcessModule, type FsModule } from '../lib/nodeSystem';

// Obsidian desktop's renderer has Node's require and process; src/ is compiled without Node's types.
declare const require: (id: string) => unknown;
declare const process: { platform: string; env: Record<string, string | undefined> };

/** This computer's processes and files, or null on mobile. */
export function localSystem(): LocalSystem | null {
	if (!Platform.isDesktop) return null;
	const childProcess = require('child_process') as ChildProcessModule;
	const fs = require('fs') as FsModule;
	const os = require('os') as { homedir(): string };
	const host: Host = { platform: process.platform, env: { ...process.env }, home: os.homedir() };
	return { host, isFile: nodeIsFile(fs), launcher: nodeLauncher(childProcess, serverEnv(host), host.platform), files: nodePairFiles(fs) };
}
