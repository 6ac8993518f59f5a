import { describe, expect, it } from 'vitest';
import { byLinkKind, groupTitle, linkKind, linkLabel, toSeed } from '../../src/lib/seed';

describe('toSeed', () => {
	it('keeps a connection with a seed path; null otherwise', () => {
		expect(toSeed({ seed: 'P/Launch.md', title: 'Launch', words: 'connect to' })).toEqual({
			seed: 'P/Launch.md',
			title: 'Launch',
			words: 'connect to',
		});
		expect(toSeed({ seed: 'P/Launch.md' })).toEqual({ seed: 'P/Launch.md', title: 'P/Launch.md', words: '' });
		expect(toSeed(null)).toBeNull();
		expect(toSeed({ title: 'x' })).toBeNull();
		expect(toSeed({ seed: '' })).toBeNull();
		expect(toSeed('P/Launch.md')).toBeNull();
	});
});

describe('how a source is linked with the seed', () => {
	it('labels each kind, and says nothing for a source of an ordinary question', () => {
		expect(linkLabel({ linked: 'unlinked' }, 'Launch')).toBe('not linked yet');
		expect(linkLabel({ linked: 'links to' }, 'Launch')).toBe('Launch links here');
		expect(linkLabel({ linked: 'linked from' }, 'Launch')).toBe('links to Launch');
		expect(linkLabel({ linked: 'both' }, 'Launch')).toBe('linked both ways');
		expect(linkLabel({}, 'Launch')).toBeNull();
		expect(linkKind({ linked: 'both' })).toBe('linked');
		expect(linkKind({ linked: 'unlinked' })).toBe('unlinked');
		expect(linkKind({})).toBeNull();
		// the seed's own passage: its own group, under a heading that says so
		expect(linkKind({ linked: 'seed' })).toBe('seed');
		expect(linkLabel({ linked: 'seed' }, 'Launch')).toBeNull();
		expect(groupTitle('seed', 'Launch')).toBe('In Launch itself');
		expect(groupTitle('unlinked', 'Launch')).toBe('Not linked yet');
		expect(groupTitle('linked', 'Launch')).toBe('Already linked');
	});

	it('groups the seed\'s own passages first, then sources not linked yet, keeping the order within each group', () => {
		const sources = [
			{ path: 'a', linked: 'links to' },
			{ path: 'b', linked: 'unlinked' },
			{ path: 'c', linked: 'linked from' },
			{ path: 'd', linked: 'unlinked' },
			{ path: 'e' },
			{ path: 'f', linked: 'seed' },
		];
		const groups = byLinkKind(sources);
		expect(groups.seed.map((s) => s.path)).toEqual(['f']);
		expect(groups.unlinked.map((s) => s.path)).toEqual(['b', 'd']);
		expect(groups.linked.map((s) => s.path)).toEqual(['a', 'c']);
		expect(groups.other.map((s) => s.path)).toEqual(['e']);
	});
});
