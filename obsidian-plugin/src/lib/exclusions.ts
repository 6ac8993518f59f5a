/**
 * Notes kept out of the index, for the status details: how many, by which
 * rule. The server reports counts by rule only (never the notes' paths), and
 * nothing here asks for more.
 */

import { isRecord } from './errors';

export interface ExclusionRule {
	/** The rule as the user wrote it: "VASK_EXCLUDE Private/**", "Obsidian excluded files Journal/", … */
	rule: string;
	count: number;
}

export interface Exclusions {
	total: number;
	/** Most notes first. */
	rules: ExclusionRule[];
}

/** `/v1/status`'s `excluded` ({rule: count}), checked; an older server's missing field is "none". */
export function toExclusions(v: unknown): Exclusions {
	const rules: ExclusionRule[] = [];
	if (isRecord(v)) {
		for (const [rule, count] of Object.entries(v)) {
			if (typeof count === 'number' && Number.isFinite(count) && count > 0) rules.push({ rule, count: Math.round(count) });
		}
	}
	rules.sort((a, b) => b.count - a.count || a.rule.localeCompare(b.rule));
	return { total: rules.reduce((n, r) => n + r.count, 0), rules };
}

export function notesCount(n: number): string {
	return `${n} ${n === 1 ? 'note' : 'notes'}`;
}
