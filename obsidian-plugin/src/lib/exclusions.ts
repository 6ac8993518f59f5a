/**
 * Notes kept out of the index, for the status details: how many, by which
 * rule. The server reports counts by rule only (never the notes' paths), and
 * nothing here asks for more.
 */

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
	if (typeof v === 'object' && v !== null && !Array.isArray(v)) {
		for (const [rule, count] of Object.entries(v as Record<string, unknown>)) {
			if (typeof count === 'number' && Number.isFinite(count) && count > 0) rules.push({ rule, count: Math.round(count) });
		}
	}
	rules.sort((a, b) => b.count - a.count || a.rule.localeCompare(b.rule));
	return { total: rules.reduce((n, r) => n + r.count, 0), rules };
}

export function notesCount(n: number): string {
	return `${n} ${n === 1 ? 'note' : 'notes'}`;
}

/** One line for the status table: "5 notes (3 by VASK_EXCLUDE Private/**; 2 by …)", or "none". */
export function exclusionSummary(ex: Exclusions): string {
	if (ex.total === 0) return 'none';
	return `${notesCount(ex.total)} (${ex.rules.map((r) => `${r.count} by ${r.rule}`).join('; ')})`;
}
