/**
 * The plugin's code runs where `window` is (Obsidian's renderer, on desktop and mobile) and uses its
 * timers, as Obsidian's review rules ask; tests that run it under Node give Node's global that name.
 */
const node = globalThis as unknown as { window?: unknown };
node.window ??= globalThis;
