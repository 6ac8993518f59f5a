/** Plain-words summary of GET /v1/health for the "Test connection" button. */
import type { HealthInfo } from './types';

/** One line per fact in /v1/health, for the "Test connection" result. */
export function describeHealth(h: HealthInfo): { ok: boolean; lines: string[] } {
	if (!h.version) {
		return {
			ok: false,
			lines: ['The server is running, but it did not accept the token (no details came back). Check the token.'],
		};
	}
	const lines = [`Connected to vask ${h.version}.`];
	let ok = true;
	if (h.vault) lines.push(`Vault: ${h.vault}`);
	if (h.ollama) {
		lines.push(`Ollama at ${h.ollama.host}: ${h.ollama.reachable ? 'reachable' : 'NOT reachable — start Ollama'}`);
		ok &&= h.ollama.reachable;
	}
	if (h.models) {
		lines.push(`Models: chat ${h.models.chat}, embeddings ${h.models.embed}`);
		for (const m of h.models.missing ?? []) {
			lines.push(`Missing model ${m}: run \`ollama pull ${m}\``);
			ok = false;
		}
	}
	if (h.index) {
		lines.push(
			`Index: ${h.index.notes} notes, ${h.index.chunks} chunks, ${h.index.pending} pending` +
				(h.index.last_sync ? `, last sync ${new Date(h.index.last_sync).toLocaleString()}` : ''),
		);
	}
	return { ok, lines };
}
