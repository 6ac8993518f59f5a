/** What the views need from the plugin (kept as an interface to avoid import cycles). */
import type { VaskClient } from '../lib/client';
import type { ErrorContext } from '../lib/errors';
import type { HistoryStore } from '../lib/historyStore';
import type { VaskSettings } from '../lib/settings';
import type { Connection } from '../lib/statusText';
import type { ProposalActions } from './proposalActions';

export interface VaskHost {
	readonly settings: VaskSettings;
	/** Rebuilt when the settings change: read it when you start a request. */
	readonly client: VaskClient;
	readonly connection: Connection;
	errorContext(): ErrorContext;
	/** Registers an in-flight request so that unloading the plugin aborts it. Returns the unregister function. */
	track(ctrl: AbortController): () => void;
	reindexVault(): Promise<void>;
	openStatusModal(): void;
	/** The kept chats. */
	readonly history: HistoryStore;
	openHistory(): void;
	/** Writes the chat (by id) to its note in the vault and opens it. */
	saveChatAsNote(id: string): Promise<void>;
	copyChat(id: string): Promise<void>;
}

/** What the related pane and the proposed-changes view need besides: deciding on proposed changes. */
export interface ProposalHost extends VaskHost {
	readonly proposals: ProposalActions;
	/** Opens (or reveals) the proposed-changes view. */
	openProposals(): Promise<void>;
}
