import { describe, expect, it } from 'vitest';
import { PathBatcher, RenderScheduler, Serial, debounce } from '../../src/lib/debounce';
import { FakeTimers, settle } from './fakeTimers';

describe('debounce', () => {
	it('calls once with the last arguments after a quiet period', () => {
		const t = new FakeTimers();
		const calls: number[] = [];
		const d = debounce((n: number) => calls.push(n), 300, t);
		d(1);
		t.advance(200);
		d(2);
		t.advance(200);
		d(3);
		expect(calls).toEqual([]);
		expect(d.pending).toBe(true);
		t.advance(299);
		expect(calls).toEqual([]);
		t.advance(1);
		expect(calls).toEqual([3]);
		expect(d.pending).toBe(false);
	});

	it('cancel drops the pending call; flush runs it now', () => {
		const t = new FakeTimers();
		const calls: string[] = [];
		const d = debounce((s: string) => calls.push(s), 100, t);
		d('a');
		d.cancel();
		t.advance(500);
		expect(calls).toEqual([]);
		d('b');
		d.flush();
		expect(calls).toEqual(['b']);
		t.advance(500);
		expect(calls).toEqual(['b']);
	});
});

describe('PathBatcher', () => {
	it('sends the distinct paths of a burst of changes in one batch, ~1 s after the last change', async () => {
		const t = new FakeTimers();
		const sent: string[][] = [];
		const b = new PathBatcher((p) => void sent.push(p), { wait: 1000, timers: t });
		b.add('a.md');
		t.advance(400);
		b.add('b.md', 'a.md');
		t.advance(400);
		b.add('old.md', 'new.md'); // a rename: both paths
		expect(b.size).toBe(4);
		t.advance(999);
		expect(sent).toEqual([]);
		t.advance(1);
		await settle();
		expect(sent).toEqual([['a.md', 'b.md', 'old.md', 'new.md']]);
		expect(b.size).toBe(0);
		b.add('c.md');
		t.advance(1000);
		await settle();
		expect(sent).toEqual([['a.md', 'b.md', 'old.md', 'new.md'], ['c.md']]);
	});

	it('does not wait longer than maxWait while changes keep coming', async () => {
		const t = new FakeTimers();
		const sent: string[][] = [];
		const b = new PathBatcher((p) => void sent.push(p), { wait: 1000, maxWait: 3000, timers: t });
		for (let i = 0; i < 10; i++) {
			b.add(`n${i}.md`);
			t.advance(500);
		}
		await settle();
		expect(sent.length).toBeGreaterThanOrEqual(1);
		expect(sent[0]).toEqual(['n0.md', 'n1.md', 'n2.md', 'n3.md', 'n4.md', 'n5.md']);
	});

	it('flush sends at once; a failed send goes to onError and does not throw', async () => {
		const t = new FakeTimers();
		const errors: [unknown, string[]][] = [];
		const b = new PathBatcher(
			async () => {
				throw new Error('server down');
			},
			{ timers: t, onError: (e, p) => errors.push([e, p]) },
		);
		b.add('x.md');
		await b.flush();
		expect(errors).toHaveLength(1);
		expect(errors[0]![1]).toEqual(['x.md']);
		expect(t.pending).toBe(0);
	});

	it('cancel drops queued paths; empty paths are ignored', async () => {
		const t = new FakeTimers();
		const sent: string[][] = [];
		const b = new PathBatcher((p) => void sent.push(p), { timers: t });
		b.add('');
		expect(t.pending).toBe(0);
		b.add('a.md');
		b.cancel();
		t.advance(5000);
		await b.flush();
		expect(sent).toEqual([]);
	});
});

describe('RenderScheduler', () => {
	it('renders at once, then at most once per interval, merging requests', async () => {
		const t = new FakeTimers();
		let renders = 0;
		const r = new RenderScheduler(() => void renders++, 60, t);
		r.request();
		await settle();
		expect(renders).toBe(1);
		r.request();
		r.request();
		r.request();
		await settle();
		expect(renders).toBe(1);
		t.advance(60);
		await settle();
		expect(renders).toBe(2);
	});

	it('never runs two renders at a time; a request during a render causes one more', async () => {
		const t = new FakeTimers();
		let active = 0;
		let maxActive = 0;
		let renders = 0;
		const gates: (() => void)[] = [];
		const r = new RenderScheduler(
			() =>
				new Promise<void>((resolve) => {
					active++;
					maxActive = Math.max(maxActive, active);
					renders++;
					gates.push(() => {
						active--;
						resolve();
					});
				}),
			0,
			t,
		);
		r.request();
		r.request();
		r.request();
		expect(renders).toBe(1);
		gates.shift()!();
		await settle();
		expect(renders).toBe(2);
		gates.shift()!();
		await settle();
		expect(renders).toBe(2);
		expect(maxActive).toBe(1);
	});

	it('flush renders now, after the render in progress', async () => {
		const t = new FakeTimers();
		const order: string[] = [];
		let n = 0;
		const r = new RenderScheduler(async () => {
			const k = ++n;
			order.push(`start${k}`);
			await Promise.resolve();
			order.push(`end${k}`);
		}, 1000, t);
		r.request();
		r.request(); // throttled: would wait 1 s
		await r.flush();
		expect(order).toEqual(['start1', 'end1', 'start2', 'end2']);
		expect(t.pending).toBe(0);
	});
});

describe('Serial', () => {
	/** A task whose runs the test ends one by one. */
	function gated() {
		const ends: (() => void)[] = [];
		let active = 0;
		let most = 0;
		let runs = 0;
		const task = async (): Promise<void> => {
			runs++;
			active++;
			most = Math.max(most, active);
			await new Promise<void>((resolve) => ends.push(resolve));
			active--;
		};
		return { task, ends, stats: () => ({ runs, most }) };
	}

	it('never runs twice at once; calls during a run share one more run after it', async () => {
		const g = gated();
		const serial = new Serial(g.task);
		const first = serial.run();
		const second = serial.run();
		const third = serial.run();
		expect(third).toBe(second);
		await settle();
		expect(g.stats()).toEqual({ runs: 1, most: 1 });
		let secondDone = false;
		void second.then(() => (secondDone = true));
		g.ends.shift()!();
		await first;
		await settle();
		expect(g.stats()).toEqual({ runs: 2, most: 1 }); // the second started after the first ended
		expect(secondDone).toBe(false);
		const fourth = serial.run(); // (during the second run: one more after it)
		expect(fourth).not.toBe(second);
		g.ends.shift()!();
		await second;
		await settle();
		expect(g.stats()).toEqual({ runs: 3, most: 1 });
		g.ends.shift()!();
		await fourth;
		expect(serial.busy).toBe(false);
	});

	it('a run that fails does not stop the next one', async () => {
		let calls = 0;
		const serial = new Serial(async () => {
			calls++;
			await Promise.resolve();
			if (calls === 1) throw new Error('first fails');
		});
		const first = serial.run();
		const second = serial.run();
		await expect(first).rejects.toThrow('first fails');
		await second;
		expect(calls).toBe(2);
	});
});
