/** Running one case in its own process and sorting its outcome (the verdicts of scripts/hostile-sweep.ts). */
import { spawn } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { BIN, DOCUMENTED_EXITS } from './types.js';
import type { Case, Outcome } from './types.js';

const STACK = /^\s+at .+(\(.*:\d+:\d+\)|:\d+:\d+)$|node:internal|Uncaught|UnhandledPromiseRejection/m;

function runCli(argv: readonly string[], cwd: string, timeoutMs: number): Promise<{ code: number | string; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...argv], { cwd, stdio: ['ignore', 'pipe', 'pipe'], detached: true, env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    const timer = setTimeout(() => {
      try { process.kill(-child.pid!, 'SIGKILL'); } catch { /* already gone */ }
      resolve({ code: 'timeout', stdout, stderr });
    }, timeoutMs);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      // Let the pipes drain.
      setImmediate(() => resolve({ code: code ?? signal ?? -1, stdout, stderr }));
    });
  });
}

async function resultFingerprint(dir: string, c: Case, stdout: string): Promise<string> {
  if (!c.compare) return stdout.split(dir).join('<DIR>');
  const folder = path.join(dir, c.compare);
  const files = (await readdir(folder).catch(() => [] as string[])).filter((f) => f.endsWith('.csv') && f !== 'import_issues.csv').sort();
  const parts = await Promise.all(files.map(async (f) => `== ${f}\n${await readFile(path.join(folder, f), 'utf8')}`));
  return parts.join('\n');
}

/** The first file under `folder` (results, tables) whose name or text holds the planted secret. */
async function secretWritten(folder: string): Promise<string | undefined> {
  const entries = await readdir(folder, { recursive: true, withFileTypes: true }).catch(() => []);
  for (const e of entries) {
    const file = path.join(e.parentPath, e.name);
    if (file.includes('SWEEPSECRET')) return path.relative(folder, file);
    if (e.isFile() && /\.(csv|md|html|json|txt)$/.test(e.name) && (await readFile(file, 'utf8')).includes('SWEEPSECRET')) return path.relative(folder, file);
  }
  return undefined;
}

export async function judge(c: Case, dir: string, timeoutMs: number, baselines: Map<string, string>): Promise<Outcome> {
  let argv: string[];
  try {
    argv = await c.setup(dir);
  } catch (err) {
    return { c, verdict: 'crash', code: 'setup', why: `the sweep could not prepare the case: ${(err as Error).message}`, argv: [], dir, fingerprint: '' };
  }
  const r = await runCli(argv, dir, timeoutMs);
  const all = `${r.stdout}\n${r.stderr}`;
  const o = (verdict: Outcome['verdict'], why: string, fingerprint = ''): Outcome => ({ c, verdict, code: r.code, why, argv, dir, fingerprint });
  if (r.code === 'timeout') return o('hang', `still running after ${timeoutMs / 1000} s`);
  if (all.includes('SWEEPSECRET')) return o('secret', 'a planted secret is in the output');
  const written = c.compare ? await secretWritten(path.join(dir, c.compare)) : undefined;
  if (written) return o('secret', `a planted secret is in a file written: ${written}`);
  if (STACK.test(all)) return o('crash', `stack trace: ${(all.match(STACK)?.[0] ?? '').trim().slice(0, 120)}`);
  if (typeof r.code !== 'number' || !DOCUMENTED_EXITS.has(r.code)) return o('crash', `undocumented exit ${r.code}: ${r.stderr.trim().split('\n')[0]?.slice(0, 160) ?? ''}`);
  if (r.code === 0) {
    if (c.expect === 'refuse') return o('wrong', `accepted (exit 0) where a refusal was due: ${r.stdout.trim().split('\n')[0]?.slice(0, 160) ?? ''}`);
    const fingerprint = await resultFingerprint(dir, c, r.stdout);
    if ((c.expect === 'same' || c.expect === 'same-or-refuse') && c.baseline && c.baseline !== c.name) {
      const want = baselines.get(c.baseline);
      if (want === undefined) return o('wrong', `no baseline ${c.baseline} to compare with`);
      if (want !== fingerprint) return o('wrong', `exit 0, results differ from ${c.baseline}`, fingerprint);
    }
    return o('ok', 'exit 0', fingerprint);
  }
  if (c.expect === 'same') return o('wrong', `refused where the unmutated run succeeds: ${r.stderr.trim().split('\n')[0]?.slice(0, 200) ?? ''}`);
  if (!r.stderr.trim()) return o('vague', `exit ${r.code} with nothing on stderr`);
  if (c.names && !all.includes(c.names)) return o('vague', `exit ${r.code}, the message does not name ${c.names}: ${r.stderr.trim().split('\n')[0]?.slice(0, 200) ?? ''}`);
  return o('ok', `refused: ${r.stderr.trim().split('\n')[0]?.slice(0, 120) ?? ''}`);
}
