import { defineConfig } from 'vitest/config';

export default defineConfig({
	test: {
		include: ['test/e2e/**/*.e2e.test.ts'],
		environment: 'node',
		// One browser and one real server: run the files one after the other.
		fileParallelism: false,
		testTimeout: 120_000,
		hookTimeout: 300_000,
	},
});
