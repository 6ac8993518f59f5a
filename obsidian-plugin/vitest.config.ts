import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
	// The `obsidian` package holds types only: the view tests (in a happy-dom page) get the same
	// stand-in as the browser test, which also gives the DOM Obsidian's helpers (createDiv, empty, …).
	resolve: { alias: { obsidian: fileURLToPath(new URL('./test/e2e/obsidian-stub.ts', import.meta.url)) } },
	test: {
		include: ['test/unit/**/*.test.ts'],
		environment: 'node',
		setupFiles: ['test/helpers/window.ts'],
	},
});
