// `npm run package`: the release zip, dist/vask-<version>.zip, after `npm run build`: main.js,
// manifest.json and styles.css, which a user unzips into <vault>/.obsidian/plugins/vask/ (the three
// files are also the assets of a GitHub release, which is what BRAT installs from). It stops when the versions of manifest.json, package.json, versions.json and the
// server (vask_server/__init__.py) disagree: a release is one version everywhere.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { zip } from './zip.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const read = (path) => readFileSync(join(root, path));
const manifest = JSON.parse(read('manifest.json').toString('utf8'));
const pkg = JSON.parse(read('package.json').toString('utf8'));
const versions = JSON.parse(read('versions.json').toString('utf8'));
const server = /__version__\s*=\s*"([^"]+)"/.exec(read('../vask_server/__init__.py').toString('utf8'))?.[1];

const problems = [];
if (pkg.version !== manifest.version) problems.push(`package.json says ${pkg.version}`);
if (server !== manifest.version) problems.push(`vask_server/__init__.py says ${server}`);
if (versions[manifest.version] !== manifest.minAppVersion) {
	problems.push(`versions.json maps ${manifest.version} to ${versions[manifest.version]}, not minAppVersion ${manifest.minAppVersion}`);
}
if (problems.length) {
	console.error(`error: manifest.json says version ${manifest.version}, but ${problems.join('; ')}.`);
	console.error('hint: give every file the same version (and versions.json the minAppVersion), then package again.');
	process.exit(2);
}

const files = ['main.js', 'manifest.json', 'styles.css'];
const archive = zip(files.map((name) => ({ name, data: read(name) })));
const out = join(root, 'dist', `vask-${manifest.version}.zip`);
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, archive);
console.log(`wrote ${out} (${archive.length} bytes): ${files.join(', ')}`);
