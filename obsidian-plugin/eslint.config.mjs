// Obsidian's own review of community plugins: eslint-plugin-obsidianmd's recommended config, as the
// review runs it, over the plugin's sources (tests and build scripts are not shipped).
import { defineConfig } from 'eslint/config';
import obsidianmd from 'eslint-plugin-obsidianmd';

export default defineConfig([
	{ ignores: ['main.js', 'node_modules/**', 'test/**', 'esbuild.config.mjs', 'vitest*.config.ts', 'eslint.config.mjs'] },
	...obsidianmd.configs.recommended,
	{
		languageOptions: {
			parserOptions: {
				projectService: true,
				tsconfigRootDir: import.meta.dirname,
			},
		},
	},
]);
