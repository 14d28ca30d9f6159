#!/usr/bin/env node
// The static checks `npm test` runs before the tests: ESLint and the TypeScript compiler, side by
// side. Each runs mostly on one core, so on the 2-core machines the suite runs on the two together
// took 36 s, against 47–48 s one after the other (measured back to back).
// Each one's output is held until it ends and then printed whole, lint's first, so that two
// failures do not interleave; the exit code is non-zero when either failed, and names which.
import { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

const CHECKS = [
  { name: 'lint', command: 'npm', args: ['run', '--silent', 'lint'] },
  { name: 'typecheck', command: 'npm', args: ['run', '--silent', 'typecheck'] },
];

/** Runs one check to its end: its exit code (1 when it could not start) and its output, in the order written. */
function run({ command, args }) {
  return new Promise((resolve) => {
    const chunks = [];
    const child = spawn(command, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], shell: process.platform === 'win32' });
    child.stdout.on('data', (d) => chunks.push(d));
    child.stderr.on('data', (d) => chunks.push(d));
    child.on('error', (err) => resolve({ code: 1, output: Buffer.from(`${err.message}\n`) }));
    // A null code means the check was killed by a signal: a failure.
    child.on('close', (code) => resolve({ code: code ?? 1, output: Buffer.concat(chunks) }));
  });
}

const results = await Promise.all(CHECKS.map(run));
const failed = [];
CHECKS.forEach((check, i) => {
  const { code, output } = results[i];
  if (output.length > 0) process.stdout.write(output);
  if (code !== 0) failed.push(check.name);
});
if (failed.length > 0) {
  process.stderr.write(`checks: ${failed.join(' and ')} failed\n`);
  process.exitCode = 1;
}
