// A stand-in for `vask serve --pair-file PATH --pair-nonce N --stop-with-stdin`, for the supervisor's
// real-process test: it listens on a free loopback port, answers /v1/health to its token, writes the
// pair file (0600), prints a few lines, and exits when its stdin closes. FAKE_VASK_CRASH_MS makes it
// exit with code 3 after that long (a crash).
import { createServer } from 'node:http';
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

const args = process.argv.slice(2);
const arg = (name) => args.find((a) => a.startsWith(`${name}=`))?.slice(name.length + 1);
const pairFile = arg('--pair-file');
const nonce = arg('--pair-nonce');
const token = randomBytes(16).toString('hex');

const server = createServer((req, res) => {
	const ok = req.headers.authorization === `Bearer ${token}`;
	res.writeHead(ok ? 200 : 401, { 'Content-Type': 'application/json' });
	res.end(JSON.stringify(ok ? { status: 'ok', version: 'fake' } : { error: { code: 'unauthorized', message: 'no', hint: '' } }));
});
server.listen(0, '127.0.0.1', () => {
	const url = `http://127.0.0.1:${server.address().port}`;
	console.log(`vask fake: listening on ${url}`);
	mkdirSync(dirname(pairFile), { recursive: true, mode: 0o700 });
	writeFileSync(pairFile, JSON.stringify({ url, token, nonce, pid: process.pid, version: 'fake' }), { mode: 0o600 });
	console.error('a line on stderr');
});
const stop = () => {
	rmSync(pairFile, { force: true });
	process.exit(0);
};
process.stdin.on('end', stop);
process.stdin.resume();
process.on('SIGTERM', stop);
if (process.env.FAKE_VASK_CRASH_MS) setTimeout(() => process.exit(3), Number(process.env.FAKE_VASK_CRASH_MS));
