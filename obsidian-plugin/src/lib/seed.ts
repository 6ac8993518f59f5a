/**
 * Questions about what connects to a note ("which ideas connect to [[Launch Tidepool app]]?"): the
 * seed the server read, and how each source is linked with it.
 */
import type { SeedInfo, Source } from './types';

/** A `connection` from the server, checked; null when absent or not the expected shape. */
export function toSeed(value: unknown): SeedInfo | null {
	if (typeof value !== 'object' || value === null) return null;
	const v = value as Record<string, unknown>;
	if (typeof v.seed !== 'string' || !v.seed) return null;
	return {
		seed: v.seed,
		title: typeof v.title === 'string' && v.title ? v.title : v.seed,
		words: typeof v.words === 'string' ? v.words : '',
	};
}

/**
 * Whether a source is the seed's own passage (kept when the question may be about the seed itself:
 * "what could help with [[X]]?"), a connection not linked yet (what a person most wants to see),
 * linked, or neither.
 */
export function linkKind(source: Pick<Source, 'linked'>): 'seed' | 'unlinked' | 'linked' | null {
	if (typeof source.linked !== 'string' || !source.linked) return null;
	if (source.linked === 'seed') return 'seed';
	return source.linked === 'unlinked' ? 'unlinked' : 'linked';
}

/** The label beside a source: "not linked yet", or how it is linked with the seed. */
export function linkLabel(source: Pick<Source, 'linked'>, seedTitle: string): string | null {
	switch (source.linked) {
		case 'seed': // (under its own heading: "In X itself")
			return null;
		case 'unlinked':
			return 'not linked yet';
		case 'links to':
			return `${seedTitle} links here`;
		case 'linked from':
			return `links to ${seedTitle}`;
		case 'both':
			return 'linked both ways';
		default:
			return null;
	}
}

/** The heading over a group of sources in an answer about connections. */
export function groupTitle(kind: 'seed' | 'unlinked' | 'linked', seedTitle: string): string {
	if (kind === 'seed') return `In ${seedTitle} itself`;
	return kind === 'unlinked' ? 'Not linked yet' : 'Already linked';
}

/** Sources in groups: the seed's own first, then not linked yet, then linked, each in the server's order. */
export function byLinkKind<T extends Pick<Source, 'linked'>>(sources: T[]): { seed: T[]; unlinked: T[]; linked: T[]; other: T[] } {
	const out = { seed: [] as T[], unlinked: [] as T[], linked: [] as T[], other: [] as T[] };
	for (const s of sources) {
		const kind = linkKind(s);
		(kind === null ? out.other : out[kind]).push(s);
	}
	return out;
}
