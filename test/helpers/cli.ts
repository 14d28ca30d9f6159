import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { vi } from 'vitest';
import { main } from '../../lib/cli/main.js';
import { REPO_ROOT } from './campaigns.js';

export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `sondage <argv>` in this process, with stdout and stderr captured instead of printed. */
export async function runMain(argv: readonly string[]): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const capture = (append: (s: string) => void) => (chunk: string | Uint8Array, ...rest: unknown[]) => {
    append(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    const done = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
    done?.();
    return true;
  };
  const out = vi.spyOn(process.stdout, 'write').mockImplementation(capture((s) => (stdout += s)) as typeof process.stdout.write);
  const err = vi.spyOn(process.stderr, 'write').mockImplementation(capture((s) => (stderr += s)) as typeof process.stderr.write);
  try {
    const code = await main(argv);
    return { code, stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}

/** Starts the real `sondage` binary (`node bin/sondage.mjs <argv>`) from the repository root. */
export function spawnCli(argv: readonly string[]): ChildProcess & { output: () => { stdout: string; stderr: string } } {
  const child = spawn(process.execPath, [path.join(REPO_ROOT, 'bin/sondage.mjs'), ...argv], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
  return Object.assign(child, { output: () => ({ stdout, stderr }) });
}

/** Resolves with the exit code (or the signal's name) once the child has exited. */
export function exited(child: ChildProcess): Promise<number | NodeJS.Signals> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  if (child.signalCode !== null) return Promise.resolve(child.signalCode);
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
}

/**
 * Runs `node <args>` from the repository root to its end, killed with SIGKILL after `timeoutMs`:
 * its exit code (null when killed) and its output. For code whose failure would block the test's
 * own thread, and for a vitest of its own.
 */
export function runNode(
  args: readonly string[],
  options: { readonly env?: NodeJS.ProcessEnv; readonly timeoutMs?: number } = {},
): Promise<{ readonly code: number | null; readonly stdout: string; readonly stderr: string }> {
  const child = spawn(process.execPath, args, { cwd: REPO_ROOT, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
  const killer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 30_000);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(killer);
      resolve({ code, stdout, stderr });
    });
  });
}
