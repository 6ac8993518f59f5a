import { defineConfig } from 'vitest/config';

// The supervisor against a real `vask serve` from the repository's environment (../.venv) and the
// fake Ollama of the Python tests: npm run test:sidecar.
export default defineConfig({
	test: {
		include: ['test/sidecar/**/*.test.ts'],
		environment: 'node',
		setupFiles: ['test/helpers/window.ts'],
		testTimeout: 120_000,
		hookTimeout: 60_000,
	},
});
