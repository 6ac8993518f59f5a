/**
 * Deciding on proposed changes to notes. Where the server reads this very vault, a change is made
 * through Obsidian's own Vault.process (so an open editor has it at once, and Obsidian's own write is
 * never raced), and the server is told, which records it only if the note then has exactly that text;
 * otherwise (a phone, a server reading a synced copy, a new note) the server writes it.
 */
import { TFile, type App } from 'obsidian';
import type { VaskClient } from '../lib/client';
import { StaleChange, processedText, writesInObsidian } from '../lib/proposals';
import type { Proposal } from '../lib/types';

export interface ProposalActionsHost {
	readonly app: App;
	/** The client in effect (rebuilt when the settings change). */
	client(): VaskClient;
	/** The vault folder the server reads (/v1/health), once known. */
	serverVaultPath(): string | null;
	/** This vault's folder on disk (desktop only). */
	vaultPath(): string | null;
}

type Listener = (waiting: number | null) => void;

interface ProcessingVault {
	process?: (file: TFile, fn: (data: string) => string) => Promise<string>;
}

export class ProposalActions {
	private readonly listeners = new Set<Listener>();

	constructor(private readonly host: ProposalActionsHost) {}

	/** Called after every decision, and when the count may have changed: the views refresh. */
	onChange(listener: Listener): () => void {
		this.listeners.add(listener);
		return () => this.listeners.delete(listener);
	}

	changed(waiting: number | null = null): void {
		for (const l of this.listeners) l(waiting);
	}

	private async full(p: Proposal): Promise<Proposal> {
		return p.before === undefined || p.after === undefined ? this.host.client().proposal(p.id) : p;
	}

	/** The note as a file Obsidian can process, when the plugin is to make the change itself. */
	private fileFor(p: Proposal): TFile | null {
		if (!writesInObsidian(this.host.serverVaultPath(), this.host.vaultPath(), p)) return null;
		const vault = this.host.app.vault as unknown as ProcessingVault;
		if (typeof vault.process !== 'function') return null;
		const file = this.host.app.vault.getAbstractFileByPath(p.path);
		return file instanceof TFile ? file : null;
	}

	apply(p: Proposal): Promise<Proposal> {
		return this.write(p, false);
	}

	undo(p: Proposal): Promise<Proposal> {
		return this.write(p, true);
	}

	async reject(p: Proposal): Promise<Proposal> {
		try {
			return await this.host.client().decide(p.id, 'reject');
		} finally {
			this.changed();
		}
	}

	private async write(given: Proposal, undo: boolean): Promise<Proposal> {
		const action = undo ? 'undo' : 'apply';
		try {
			const p = await this.full(given);
			const file = this.fileFor(p);
			if (!file) return await this.host.client().decide(p.id, action);
			const vault = this.host.app.vault as unknown as Required<ProcessingVault>;
			try {
				await vault.process(file, (data) => processedText(data, p, undo));
			} catch (err) {
				// Obsidian reads the note otherwise than its bytes (or it changed): the server decides, by its bytes.
				if (err instanceof StaleChange) return await this.host.client().decide(p.id, action);
				throw err;
			}
			try {
				return await this.host.client().decide(p.id, action, true);
			} catch (err) {
				// Not recorded: the note goes back to what it was, so that nothing changed unseen.
				await vault.process(file, (data) => (data === (undo ? p.before : p.after) ? ((undo ? p.after : p.before) ?? data) : data));
				throw err;
			}
		} finally {
			this.changed();
		}
	}
}
